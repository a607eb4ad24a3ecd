/**
 * Where batches of encoded rows go (binary COPY, see movement-rows.ts). Two ways, both measured by the process benchmark:
 * - `stream` (the default): one COPY for the whole load, one write per batch; the
 *   server stores rows while we read the next part of the file.
 * - `per-batch`: one COPY statement per batch, the next batch prepared while the
 *   previous one runs (at most two in flight).
 * Either way the reader waits (backpressure) instead of buffering the file.
 */
import type { ClientBase } from 'pg'
import { from as copyFrom } from 'pg-copy-streams'
import { COPY_HEADER, COPY_MOVEMENTS_SQL, COPY_TRAILER } from './movement-rows.js'

export type CopyMode = 'stream' | 'per-batch'

export interface BatchSink {
  /** Queues one batch of encoded rows (MovementEncoder.take()). */
  write: (rows: Buffer) => void
  /** What the reader must await before going on, if anything (or a rejection: stop reading). */
  backpressure: () => Promise<void> | undefined
  /** All batches written and acknowledged by the server. */
  finish: () => Promise<void>
  /** Abandons the COPY; the transaction is then rolled back by the caller. */
  abort: (reason: Error) => Promise<void>
  /** The first server-side failure, once there is one (stop producing rows). */
  readonly failure: Error | undefined
}

export function openBatchSink (db: ClientBase, mode: CopyMode): BatchSink {
  return mode === 'stream' ? new SharedCopy(db) : new CopyPerBatch(db)
}

class SharedCopy implements BatchSink {
  failure: Error | undefined
  private readonly copy
  private readonly done: Promise<void>
  private drained: Promise<void> | undefined

  constructor (db: ClientBase) {
    this.copy = db.query(copyFrom(COPY_MOVEMENTS_SQL))
    this.done = new Promise<void>((resolve, reject) => {
      this.copy.on('finish', resolve)
      this.copy.on('error', (err: Error) => { this.failure ??= err; reject(err) })
    })
    this.done.catch(() => undefined)
    this.copy.write(COPY_HEADER)
  }

  write (rows: Buffer): void {
    // Once the server has refused the COPY, pg-copy-streams has let go of the connection
    // and a further write would throw a TypeError of its own instead of that refusal.
    if (this.failure !== undefined) return
    if (!this.copy.write(rows)) {
      // Settles on 'drain' or on the COPY failing: a dead connection never drains, and a
      // wait on it alone would leave the read pending forever.
      if (this.drained === undefined) {
        this.drained = Promise.race([new Promise<void>((resolve) => this.copy.once('drain', resolve)), this.done])
        this.drained.catch(() => undefined)
      }
    }
  }

  backpressure (): Promise<void> | undefined {
    if (this.failure !== undefined) return Promise.reject(this.failure)
    const wait = this.drained
    this.drained = undefined
    return wait
  }

  async finish (): Promise<void> {
    // The same: after a refusal, ending the stream would throw instead of reporting it.
    if (this.failure !== undefined) throw this.failure
    try {
      this.copy.end(COPY_TRAILER)
    } catch (err) {
      throw this.failure ?? err
    }
    await this.done
  }

  async abort (reason: Error): Promise<void> {
    this.copy.destroy(reason)
    await this.done.catch(() => undefined)
  }
}

class CopyPerBatch implements BatchSink {
  failure: Error | undefined
  private chain: Promise<void> = Promise.resolve()
  private inFlight = 0

  constructor (private readonly db: ClientBase) {}

  write (rows: Buffer): void {
    this.inFlight++
    this.chain = this.chain.then(async () => {
      if (this.failure !== undefined) return
      const copy = this.db.query(copyFrom(COPY_MOVEMENTS_SQL))
      await new Promise<void>((resolve, reject) => {
        copy.on('finish', resolve)
        copy.on('error', reject)
        copy.write(COPY_HEADER)
        copy.write(rows)
        copy.end(COPY_TRAILER)
      })
    }).catch((err: Error) => { this.failure ??= err }).finally(() => { this.inFlight-- })
  }

  backpressure (): Promise<void> | undefined {
    if (this.failure !== undefined) return Promise.reject(this.failure)
    return this.inFlight > 1 ? this.chain : undefined
  }

  async finish (): Promise<void> {
    await this.chain
    if (this.failure !== undefined) throw this.failure
  }

  async abort (): Promise<void> {
    await this.chain
  }
}
