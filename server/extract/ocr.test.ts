/**
 * A scan through the two doors users have: POST /api/v1/pdf/extract on the app as `razao
 * serve` starts it (listening on 127.0.0.1, the real pool, EXTRACT_WARM=on) and `razao
 * extract` as a child process. Both read the same image-only PDF by OCR and answer the same
 * values. The scan is a generated DARF printed to a JPEG at 200 dpi, a little askew
 * (fixtures/extraction/scans.ts). The scan is read over HTTP once, by the warmed service: the
 * route, its evidence and the pool task are the same warm or cold, and a cold thread's first
 * scan is read in workers/extract-document.ocr.test.ts and by `razao extract` below.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { FastifyInstance } from 'fastify'
import { scanOf } from '../../fixtures/extraction/scans.js'
import { runRazao } from '../../fixtures/razao-cli.js'
import { generateDarf } from '../../plugins/darf/fixtures/generate.js'
import type { Darf } from '../../plugins/darf/index.js'
import { createPool } from '../../workers/pool.js'
import type { WorkerPool } from '../../workers/pool.js'
import { loadConfig } from '../config.js'
import { startServices } from '../serve.js'
import { buildExtractApp } from './app.js'
import type { ExtractApp } from './app.js'
import { loadExtractConfig } from './config.js'

const API_KEY = 'extract-ocr-test-key-0123456789'
/** OCR of a page takes seconds; a machine running several test files at once needs more than the 20 s default. */
const TIMEOUT_ENV = { EXTRACT_DOCUMENT_TIMEOUT_MS: '120000' }
/** Values the DARF scan is read with (workers/extract-document.ocr.test.ts reads every key value of it). */
const KEYS = ['cnpjCpf', 'periodoApuracao', 'dataVencimento', 'numeroDocumento', 'valorTotal'] as const

let dir: string
let scanPath: string
let scan: Uint8Array
let truth: Darf
let pool: WorkerPool
let app: FastifyInstance

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'razao-extract-ocr-'))
  const darf = await generateDarf({ seed: 11, layout: 'SENDA' })
  truth = darf.truth
  scan = await scanOf(darf.pdf, { dpi: 200, skew: 1.2, noise: 0.001, quality: 70, seed: 5 })
  scanPath = join(dir, 'DARF digitalizado.pdf')
  await writeFile(scanPath, scan)
  const config = loadConfig({ RAZAO_DATA_DIR: join(dir, 'data'), RAZAO_TMP_DIR: join(dir, 'uploads'), LOG_LEVEL: 'silent' })
  pool = createPool({ maxThreads: 1 })
  app = await buildExtractApp({ shared: config.shared, config: loadExtractConfig(TIMEOUT_ENV), apiKey: API_KEY, pool, logger: false })
}, 120_000)

afterAll(async () => {
  await app.close()
  await pool.destroy()
  await rm(dir, { recursive: true, force: true })
})

/** What both doors must answer for the scan. */
function expectScanRead (body: Record<string, any>): void {
  expect(body).toMatchObject({ success: true, documentType: 'DARF', pages: 1, engine: { textSource: 'OCR', ocrPages: [1] } })
  for (const key of KEYS) expect({ key, value: body.data[key] }).toEqual({ key, value: truth[key] })
  for (const key of KEYS) expect(body.evidence[key].confidence).toBeGreaterThan(0)
}

describe('the OCR settings', () => {
  it('EXTRACT_OCR=off leaves a scan without text: PDF_NO_TEXT_LAYER, as before OCR', async () => {
    const config = loadConfig({ RAZAO_DATA_DIR: join(dir, 'data'), RAZAO_TMP_DIR: join(dir, 'uploads-off'), LOG_LEVEL: 'silent' })
    const off = await buildExtractApp({ shared: config.shared, config: loadExtractConfig({ ...TIMEOUT_ENV, EXTRACT_OCR: 'off' }), apiKey: API_KEY, pool, logger: false })
    try {
      const form = new FormData()
      form.append('file', new Blob([scan], { type: 'application/pdf' }), 'DARF digitalizado.pdf')
      const res = await fetch(`${await off.listen({ host: '127.0.0.1', port: 0 })}/api/v1/pdf/extract`, { method: 'POST', body: form, headers: { 'x-api-key': API_KEY } })
      expect(await res.json()).toMatchObject({ success: false, documentType: 'UNKNOWN', errors: [{ code: 'PDF_NO_TEXT_LAYER' }] })
    } finally {
      await off.close()
    }
  })

  it('refuses values it does not know, naming the variable', () => {
    expect(loadExtractConfig({})).toMatchObject({ ocr: true, ocrDpi: 200 })
    expect(loadExtractConfig({ EXTRACT_OCR: 'off', EXTRACT_OCR_DPI: '300' })).toMatchObject({ ocr: false, ocrDpi: 300 })
    expect(() => loadExtractConfig({ EXTRACT_OCR: 'no' })).toThrow(/EXTRACT_OCR\b/)
    expect(() => loadExtractConfig({ EXTRACT_OCR_DPI: '50' })).toThrow(/EXTRACT_OCR_DPI/)
  })
})

describe('EXTRACT_WARM=on, through razao serve\'s start-up', () => {
  it('starts every extraction thread at once, warms each (text, then scans), and reads a scan after it', async () => {
    const env = { RAZAO_DATA_DIR: join(dir, 'data'), RAZAO_TMP_DIR: join(dir, 'uploads-warm'), LOG_LEVEL: 'silent', RAZAO_POOL_SIZE: '2', EXTRACT_PORT: '0', EXTRACT_API_KEY: API_KEY, EXTRACT_WARM: 'on', ...TIMEOUT_ENV }
    const running = await startServices(['extract'], loadConfig(env), () => undefined, env)
    try {
      // Both threads exist from the start: the pool keeps them (none ends idle).
      expect(running.pools.get('extract')!.threads).toHaveLength(2)
      const { app, url } = running.apps[0]!
      const warm = await (app as ExtractApp).warmUp
      expect(warm?.threads).toHaveLength(2)
      expect(new Set(warm!.threads.map((t) => t.threadId)).size).toBe(2)
      for (const t of warm!.threads) expect(t).toMatchObject({ textReads: 8, scanReads: 2 })
      const form = new FormData()
      form.append('file', new Blob([scan], { type: 'application/pdf' }), 'DARF digitalizado.pdf')
      const res = await fetch(`${url}/api/v1/pdf/extract?evidence=true`, { method: 'POST', body: form, headers: { 'x-api-key': API_KEY } })
      expectScanRead(await res.json() as Record<string, any>)
      // A thread that ends (as one stopped at a document's hard limit does) is replaced, and the new one warmed: one more task runs with no request.
      const pool = running.pools.get('extract')!
      const completed = pool.completed
      await pool.threads[0]!.terminate()
      for (let i = 0; i < 1200 && pool.completed === completed; i++) await new Promise((r) => setTimeout(r, 50))
      expect(pool.completed).toBe(completed + 1)
      expect(pool.threads).toHaveLength(2)
    } finally {
      await running.close()
    }
  }, 240_000)

  it('is off unless asked, and a value it does not know stops the start naming it', async () => {
    expect(loadExtractConfig({}).warm).toBe(false)
    expect(loadExtractConfig({ EXTRACT_WARM: 'on' }).warm).toBe(true)
    expect(() => loadExtractConfig({ EXTRACT_WARM: 'yes' })).toThrow(/EXTRACT_WARM/)
    // Off: the app's warmUp settles at once with nothing done.
    expect(await (app as ExtractApp).warmUp).toBeUndefined()
  })
})

describe('a scan through razao extract', () => {
  it('prints the same answer and exits 0', async () => {
    const run = await runRazao(['extract', scanPath, '--evidence'], {
      cwd: join(import.meta.dirname, '..', '..'),
      env: { ...process.env, RAZAO_DATA_DIR: join(dir, 'data'), RAZAO_POOL_SIZE: '1', ...TIMEOUT_ENV }
    })
    expect(run.stderr).toBe('')
    expect(run.code).toBe(0)
    expectScanRead(JSON.parse(run.stdout) as Record<string, any>)
  }, 180_000)
})
