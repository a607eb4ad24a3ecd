/**
 * The database a process uses: `DATABASE_URL` when set, otherwise the embedded
 * PostgreSQL in `<RAZAO_DATA_DIR>/postgres`. Opening it checks that a `DATABASE_URL`
 * gives sessions of their own (no pooler in transaction mode), applies pending migrations
 * and marks imports interrupted by a dead process as FALHOU.
 */
import { join } from 'node:path'
import pg from 'pg'
import { EmbeddedPostgres } from '../core/db/embedded.js'
import { migrate } from '../core/db/migrate.js'
import { sessionStateSurvives } from '../core/db/pooler.js'
import { recoverInterruptedImports } from '../core/importer/process-ledger.js'
import type { SharedConfig } from './config.js'

export interface Database {
  /** Connection URL for worker threads (holds the password: never log it). */
  url: string
  /** For the main thread's short queries (registry, recovery). */
  pool: pg.Pool
  embedded: boolean
  close: () => Promise<void>
}

export interface OpenOptions {
  /** The CLI leaves an embedded cluster running when a server is using it. */
  role: 'server' | 'cli'
  log: (line: string) => void
}

export class DatabaseError extends Error {
  constructor (message: string, options?: ErrorOptions) {
    super(message, options)
    this.name = 'DatabaseError'
  }
}

export async function openDatabase (shared: SharedConfig, options: OpenOptions): Promise<Database> {
  const embedded = shared.databaseUrl === undefined
    ? new EmbeddedPostgres({ dir: join(shared.dataDir, 'postgres'), log: options.log })
    : undefined
  let url: string
  try {
    url = shared.databaseUrl ?? await embedded!.ensureRunning()
  } catch (err) {
    throw new DatabaseError(`Could not start the embedded PostgreSQL: ${(err as Error).message}`, { cause: err })
  }
  const pool = new pg.Pool({ connectionString: url, max: 4, application_name: `razao-${options.role}` })
  // An idle client's error (the server restarted) must not crash the process; the next query reconnects.
  pool.on('error', () => undefined)
  const close = async (): Promise<void> => {
    await pool.end().catch(() => undefined)
    await embedded?.stop({ onlyIfIdle: options.role === 'cli' })
  }
  if (shared.databaseUrl !== undefined) {
    let pinned: boolean
    try {
      pinned = await sessionStateSurvives(pool)
    } catch (err) {
      await close()
      throw prepareFailure(shared.databaseUrl, err)
    }
    if (!pinned) {
      await close()
      throw new DatabaseError(POOLED_SESSIONS)
    }
  }
  try {
    const client = await pool.connect()
    try {
      await migrate(client)
      const recovered = await recoverInterruptedImports(client)
      if (recovered > 0) options.log(`marked ${recovered} interrupted import${recovered > 1 ? 's' : ''} as FALHOU`)
    } finally {
      client.release()
    }
  } catch (err) {
    await close()
    throw prepareFailure(shared.databaseUrl, err)
  }
  return { url, pool, embedded: embedded !== undefined, close }
}

function prepareFailure (databaseUrl: string | undefined, err: unknown): DatabaseError {
  const code = (err as { code?: string }).code
  return new DatabaseError(`Could not prepare the database${databaseUrl === undefined ? ' (embedded)' : ' given by DATABASE_URL'}: ${code === undefined ? '' : `${code} `}${(err as Error).message}`, { cause: err })
}

/** The refusal when DATABASE_URL leads to a pooler that shares server connections between statements (core/db/pooler.ts). */
export const POOLED_SESSIONS = 'DATABASE_URL leads to a connection pooler that does not keep each client on one server connection ' +
  '(PgBouncer with pool_mode = transaction or statement): a session setting made by one statement was gone at the next. ' +
  'razao keeps advisory locks and its loads on one session from statement to statement, so it needs session pooling: ' +
  'set pool_mode = session in pgbouncer.ini (or pool_mode=session on this database\'s line under [databases]), ' +
  'or point DATABASE_URL at PostgreSQL itself. See docs/scaling.md, "Connection poolers".'
