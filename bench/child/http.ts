/**
 * The HTTP case: the import service built from dist/ listening on 127.0.0.1, and
 * a client process posting the ledger to /v1/analyze. The client is a process of
 * its own because a real client is another machine: sharing the server's event
 * loop would charge the multipart encoding to the server's upload phase, and its
 * memory would count as the service's.
 */
import { randomBytes } from 'node:crypto'
import { mkdir } from 'node:fs/promises'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { importDist, type App, type Config, type Pool } from './dist.js'
import { startClient } from './http-client.js'
import type { ClientSetup } from './http-client.js'
import type { MeasureJob, Pass } from './protocol.js'

export async function httpPass (job: MeasureJob): Promise<Pass> {
  const { buildImportApp } = await importDist<App>(job.distDir, 'server/import/app.js')
  const { loadConfig } = await importDist<Config>(job.distDir, 'server/config.js')
  const { createPool } = await importDist<Pool>(job.distDir, 'workers/pool.js')

  // Uploads land on the same disk as in production, not in a tmpfs /tmp.
  await mkdir(job.scratchDir, { recursive: true })
  const config = loadConfig({
    NODE_ENV: 'production',
    LOG_LEVEL: 'silent',
    RAZAO_TMP_DIR: join(job.scratchDir, 'uploads'),
    RAZAO_DATA_DIR: join(job.scratchDir, 'data')
  }, job.scratchDir)
  const apiKey = randomBytes(24).toString('hex')
  // Created once and kept, as the service does: its threads stay warm between requests.
  const pool = createPool({ maxThreads: config.shared.poolSize })
  const app = await buildImportApp({ shared: config.shared, config: config.import, apiKey, pool, logger: false })
  await app.listen({ host: '127.0.0.1', port: 0 })
  const { port } = app.server.address() as AddressInfo

  const setup: ClientSetup = { url: `http://127.0.0.1:${port}/v1/analyze`, apiKey, file: job.file }
  const client = startClient(setup)
  return async () => ({ rows: (await client.post()) + 1, cells: 0, xmlBytes: 0, helperCpuMs: client.lastCpuMs() })
}
