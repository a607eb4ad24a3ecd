/**
 * Whether a database connection is a session of its own (issue 32, item 13). razao keeps
 * state on its sessions from one statement to the next: the advisory lock that guards a load
 * until it has settled (recovery reads it from other instances), the migration lock, the COPY
 * and the queries that validate it. A pooler that hands each statement or transaction to
 * whichever server connection is free (PgBouncer's `pool_mode = transaction` or `statement`)
 * breaks that silently, so this is checked at start.
 *
 * The check asks what the application relies on, not what the pooler is called: two
 * connections each set a session-level setting to a token of their own, one after the other,
 * and each then reads its setting back. On PostgreSQL itself, and behind a pooler in session
 * mode, each connection is one backend for its whole life, so both read their own token.
 * Behind transaction pooling the first connection's backend is free again as soon as its
 * statement ends; PgBouncer hands out the most recently freed server connection first (its
 * default, `server_round_robin = 0`), so the second connection's setting lands on the first
 * one's backend and the first reads the second's token. With round-robin handing out, a
 * statement lands on another backend and reads no token at all. Three rounds, each with new
 * tokens, leave a pooler shared with other clients no realistic way to pass by chance.
 */
import { randomBytes } from 'node:crypto'
import type pg from 'pg'

/** A placeholder setting (any name with a dot is one): PostgreSQL keeps it per session, nothing reads it. */
const SETTING = 'razao.session_probe'
const ROUNDS = 3

/**
 * True when session state set by a statement is still there at the connection's next
 * statement, on two connections of `pool` used in turn. The two connections are closed
 * afterwards rather than returned to the pool, so the probe leaves nothing behind.
 */
export async function sessionStateSurvives (pool: pg.Pool): Promise<boolean> {
  const first = await pool.connect()
  let second: pg.PoolClient | undefined
  try {
    second = await pool.connect()
    const clients = [first, second]
    for (let round = 0; round < ROUNDS; round++) {
      const tokens = clients.map(() => randomBytes(8).toString('hex'))
      for (const [i, client] of clients.entries()) await client.query('SELECT set_config($1, $2, false)', [SETTING, tokens[i]])
      for (const [i, client] of clients.entries()) {
        const { rows } = await client.query<{ value: string | null }>('SELECT current_setting($1, true) AS value', [SETTING])
        if (rows[0]?.value !== tokens[i]) return false
      }
    }
    return true
  } finally {
    first.release(true)
    second?.release(true)
  }
}
