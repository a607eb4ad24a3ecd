/**
 * One transaction on a connection of the pool: BEGIN, the work, COMMIT; ROLLBACK when the
 * work throws. A deadlock or a serialization failure cancels the transaction whole, so the
 * work is run again from the start (up to three times): it must keep its results inside its
 * own closure, as everything it read or wrote in the cancelled attempt is gone.
 */
import type { PoolClient, Pool } from 'pg'
import { sqlState } from './pg-errors.js'

/** Deadlock and serialization failure: the transaction was cancelled whole and may simply run again. */
const RETRYABLE = new Set(['40P01', '40001'])
const ATTEMPTS = 3

export async function inTransaction<T> (pool: Pool, work: (client: PoolClient) => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    const client = await pool.connect()
    try {
      await client.query('BEGIN')
      const result = await work(client)
      await client.query('COMMIT')
      return result
    } catch (err) {
      await client.query('ROLLBACK').catch(() => undefined)
      if (attempt < ATTEMPTS && RETRYABLE.has(sqlState(err) ?? '')) continue
      throw err
    } finally {
      client.release()
    }
  }
}
