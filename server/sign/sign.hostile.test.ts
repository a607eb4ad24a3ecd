/**
 * The signature service's hostile group (issue 22): PDFs that declare far more than they
 * hold, sent over HTTP to the real app and pool (the signer opens files as extraction
 * does, through core/pdf/open.ts). Each is refused quickly with 400 INVALID_PDF, the
 * service keeps signing, and the process's peak memory stays bounded.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DECLARED_BOMBS } from '../../fixtures/pdf/declared-bombs.js'
import { makePdf } from '../../fixtures/pdf/samples.js'
import { peakRssMiB } from '../../fixtures/peak-rss.js'
import { createPool } from '../../workers/pool.js'
import type { WorkerPool } from '../../workers/pool.js'
import { loadConfig } from '../config.js'
import { buildSignApp } from './app.js'
import { loadSignConfig } from './config.js'

const API_KEY = 'chave-sign-hostil-0123456789abcdef'
let dir: string
let pool: WorkerPool
let app: FastifyInstance
let base: string

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'razao-sign-hostile-'))
  pool = createPool({ maxThreads: 1 })
  // No certificate configured: the service signs with its development chain, made in the data folder.
  const env = { RAZAO_DATA_DIR: join(dir, 'data'), LOG_LEVEL: 'silent' }
  const shared = loadConfig(env, dir).shared
  app = await buildSignApp({ shared, config: loadSignConfig(env, shared, dir), apiKey: API_KEY, pool, logger: false })
  base = await app.listen({ host: '127.0.0.1', port: 0 })
}, 120_000)

afterAll(async () => {
  console.log(`sign service, hostile group: peak RSS ${peakRssMiB()} MiB`)
  await app?.close()
  await pool?.destroy()
  await rm(dir, { recursive: true, force: true })
})

async function sign (pdf: Uint8Array): Promise<{ status: number, body: any, ms: number }> {
  const started = performance.now()
  const res = await fetch(`${base}/api/v1/sign`, { method: 'POST', headers: { 'x-api-key': API_KEY, 'content-type': 'application/json' }, body: JSON.stringify({ pdfBase64: Buffer.from(pdf).toString('base64') }) })
  return { status: res.status, body: await res.json(), ms: performance.now() - started }
}

describe('signature, hostile', () => {
  it.each(DECLARED_BOMBS)('refuses %s with 400 INVALID_PDF, fast', async (_what, make) => {
    const { status, body, ms } = await sign(make())
    expect(status).toBe(400)
    expect(body).toMatchObject({ success: false, code: 'INVALID_PDF', errors: [{ code: 'INVALID_PDF', field: 'pdfBase64' }] })
    expect(body.message).toMatch(/declares more than it holds/)
    // A hang catcher only: 0.1 s at a load of 3 and 0.14 s at 15 for the first (the pool's
    // thread starting), a few ms for the others.
    expect(ms).toBeLessThan(10_000)
  })

  it('still signs an ordinary file afterwards, and the process stayed under 600 MB', async () => {
    const { status, body } = await sign(await makePdf([{}]))
    expect(status).toBe(200)
    expect(body.success).toBe(true)
    expect(peakRssMiB()).toBeLessThan(600)
  })
})
