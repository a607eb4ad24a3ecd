/**
 * Starts services in this process: one shared worker pool, one Fastify app per
 * service on its own port, and a clean shutdown on SIGINT/SIGTERM (stop accepting,
 * finish or abort in-flight requests, then destroy the pool).
 */
import type { FastifyInstance } from 'fastify'
import type { Config } from './config.js'
import { openDatabase } from './database.js'
import type { Database } from './database.js'
import { buildImportApp } from './import/app.js'
import { resolveApiKey } from './secrets.js'
import { createPool } from '../workers/pool.js'
import type { WorkerPool } from '../workers/pool.js'

/** Services that exist; `all` starts each of them. */
export const SERVICES = ['import'] as const
export type ServiceName = typeof SERVICES[number]
/** Names the CLI accepts, including services specified but not built yet. */
export const PLANNED_SERVICES = ['import', 'sign', 'extract', 'gateway', 'agent'] as const

export interface RunningServices {
  apps: Array<{ name: ServiceName, app: FastifyInstance, url: string }>
  pool: WorkerPool
  database: Database | undefined
  close: () => Promise<void>
}

export async function startServices (names: readonly ServiceName[], config: Config, log: (line: string) => void): Promise<RunningServices> {
  const pool = createPool({ maxThreads: config.shared.poolSize })
  const apps: RunningServices['apps'] = []
  let database: Database | undefined
  const close = async (): Promise<void> => {
    await Promise.allSettled(apps.map(({ app }) => app.close()))
    await pool.destroy()
    await database?.close()
  }
  try {
    if (names.includes('import')) database = await openDatabase(config.shared, { role: 'server', log })
    for (const name of names) {
      const key = await resolveApiKey(config.import.apiKey, config.shared.dataDir, name)
      if (key.generated) {
        // Printed once, on the terminal, never through the logger.
        log(`Generated a development API key for the ${name} service (kept in ${key.file}):\n  ${key.key}\nSend it in the X-API-Key header. Set IMPORT_API_KEY to use your own.`)
      }
      const app = await buildImportApp({ shared: config.shared, config: config.import, apiKey: key.key, pool, database })
      const url = await app.listen({ host: config.import.host, port: config.import.port })
      apps.push({ name, app, url })
    }
  } catch (err) {
    await close()
    throw err
  }
  return { apps, pool, database, close }
}
