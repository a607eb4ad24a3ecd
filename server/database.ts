/**
 * The database a process uses: `DATABASE_URL` when set, otherwise the embedded
 * PostgreSQL in `<RAZAO_DATA_DIR>/postgres`. Opening it applies pending migrations
 * and marks imports interrupted by a dead process as FALHOU.
 */
import { join } from 'node:path'
import pg from 'pg'
import { EmbeddedPostgres } from '../core/db/embedded.js'
import { migrate } from '../core/db/migrate.js'
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
    const code = (err as { code?: string }).code
    throw new DatabaseError(`Could not prepare the database${shared.databaseUrl === undefined ? ' (embedded)' : ' given by DATABASE_URL'}: ${code === undefined ? '' : `${code} `}${(err as Error).message}`, { cause: err })
  }
  return { url, pool, embedded: embedded !== undefined, close }
}
