/**
 * A child of bench/extract.bench.ts: runs the extraction service in this process (its
 * app, a pool of two threads), sends itself one warm-up request, then one batch of the
 * PDFs named on the command line through POST /api/v1/pdf/extract-batch, and prints
 * `{ files, baselineRss, peakRss, ms }` as JSON. Peak RSS is per process, hence a child.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { basename, join } from 'node:path'
import { loadConfig } from '../../server/config.js'
import { buildExtractApp } from '../../server/extract/app.js'
import { loadExtractConfig } from '../../server/extract/config.js'
import { createPool } from '../../workers/pool.js'

const KEY = 'bench-extract-key-0123456789'

async function main (paths: string[]): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'razao-bench-batch-'))
  const config = loadConfig({ RAZAO_DATA_DIR: join(dir, 'data'), RAZAO_TMP_DIR: join(dir, 'uploads'), LOG_LEVEL: 'silent' })
  const pool = createPool({ maxThreads: 2 })
  const app = await buildExtractApp({ shared: config.shared, config: loadExtractConfig({}), apiKey: KEY, pool, logger: false })
  try {
    const base = await app.listen({ host: '127.0.0.1', port: 0 })
    const files = await Promise.all(paths.map(async (p) => ({ name: basename(p), bytes: await readFile(p) })))
    const post = async (batch: typeof files): Promise<{ succeeded?: unknown }> => {
      const form = new FormData()
      for (const f of batch) form.append('files', new Blob([f.bytes], { type: 'application/pdf' }), f.name)
      const res = await fetch(`${base}/api/v1/pdf/extract-batch`, { method: 'POST', body: form, headers: { 'x-api-key': KEY } })
      return await res.json() as { succeeded?: unknown }
    }
    await post(files.slice(0, 2))
    const baselineRss = process.memoryUsage().rss
    const started = performance.now()
    const body = await post(files)
    const ms = performance.now() - started
    if (body.succeeded !== files.length) throw new Error(`the batch extracted ${String(body.succeeded)} of ${files.length}`)
    process.stdout.write(JSON.stringify({ files: files.length, baselineRss, peakRss: process.resourceUsage().maxRSS * 1024, ms }))
  } finally {
    await app.close()
    await pool.destroy()
    await rm(dir, { recursive: true, force: true })
  }
}

main(process.argv.slice(2)).catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`)
  process.exitCode = 1
})
