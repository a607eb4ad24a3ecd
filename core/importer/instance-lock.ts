/**
 * What tells a live import instance from a dead one, for the jobs it holds before a worker
 * runs them (RECEBIDO: the upload is on this instance's disk, no load session exists yet).
 *
 * Each instance keeps one connection holding a session-level advisory lock on a number of its
 * own, written into every RECEBIDO row it creates (`importacoes.instancia`). PostgreSQL frees
 * the lock when that session ends (the process was killed, its host vanished, the connection
 * dropped), and recovery (load-state.ts) then marks the instance's waiting jobs FALHOU: none
 * of them can run anywhere else, since their uploads were on that instance.
 *
 * The number is random in 31 bits and taken with pg_try_advisory_lock, so two live instances
 * never share one; a dead instance's number is free and a later instance may draw it again,
 * which is harmless (its RECEBIDO rows were marked once its lock was free). A lost connection
 * is opened again and the same number taken again; in between, recovery may fail the jobs
 * waiting here, and their loads then refuse to start (adoptImportation).
 */
import { randomInt } from 'node:crypto'
import pg from 'pg'

/** Arbitrary, fixed: the lock space of instance numbers (beside LOAD_LOCK_SPACE). */
export const INSTANCE_LOCK_SPACE = 73_018_464

const RECONNECT_MS = 1000

export class InstanceLock {
  private client: pg.Client | undefined
  private closed = false
  private reconnecting: NodeJS.Timeout | undefined

  private constructor (private readonly url: string, readonly number: number, private readonly log: (line: string) => void) {}

  /** Opens the connection and takes a free instance number. */
  static async acquire (url: string, log: (line: string) => void = () => undefined): Promise<InstanceLock> {
    const client = await openLockClient(url)
    try {
      for (;;) {
        const candidate = randomInt(1, 2 ** 31 - 1)
        if (await tryLock(client, candidate)) {
          const lock = new InstanceLock(url, candidate, log)
          lock.watch(client)
          return lock
        }
      }
    } catch (err) {
      await client.end().catch(() => undefined)
      throw err
    }
  }

  /** Whether this instance holds its number right now (false while a lost connection is opened again). */
  get held (): boolean {
    return this.client !== undefined
  }

  private watch (client: pg.Client): void {
    this.client = client
    const lost = (): void => {
      if (this.client !== client) return
      this.client = undefined
      if (!this.closed) {
        this.log(`the instance lock's database connection was lost; taking instance ${this.number} again`)
        this.retry()
      }
    }
    client.on('error', lost)
    client.on('end', lost)
  }

  private retry (): void {
    this.reconnecting = setTimeout(() => {
      this.reconnecting = undefined
      void this.retake()
    }, RECONNECT_MS)
    this.reconnecting.unref()
  }

  private async retake (): Promise<void> {
    if (this.closed) return
    let client: pg.Client | undefined
    try {
      client = await openLockClient(this.url)
      if (!await tryLock(client, this.number)) throw new Error(`instance number ${this.number} is held by another session`)
      if (this.closed) {
        await client.end()
        return
      }
      this.watch(client)
      this.log(`instance ${this.number} taken again`)
    } catch {
      await client?.end().catch(() => undefined)
      this.retry()
    }
  }

  /** Gives the number back (ending the session frees the lock). */
  async close (): Promise<void> {
    this.closed = true
    clearTimeout(this.reconnecting)
    const client = this.client
    this.client = undefined
    await client?.end().catch(() => undefined)
  }
}

async function openLockClient (url: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: url, application_name: 'razao-import-instance' })
  client.on('error', () => undefined)
  await client.connect()
  return client
}

async function tryLock (client: pg.Client, n: number): Promise<boolean> {
  const { rows } = await client.query<{ ok: boolean }>('SELECT pg_try_advisory_lock($1, $2) AS ok', [INSTANCE_LOCK_SPACE, n])
  return rows[0]?.ok === true
}
