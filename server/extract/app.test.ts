/**
 * The extraction service over real HTTP: a listening app, the real worker pool, PDFs
 * generated in the test and read by the real pdf.js.
 */
import { mkdtemp, readdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { FastifyInstance } from 'fastify'
import { writePasswordPdf, writeScanLikePdf, writeTextPdf } from '../../fixtures/extraction/pdf-writer.js'
import { generateExtrato } from '../../plugins/pgdas-extrato/fixtures/generate.js'
import { createPool } from '../../workers/pool.js'
import type { WorkerPool } from '../../workers/pool.js'
import { loadConfig } from '../config.js'
import { buildExtractApp } from './app.js'
import { loadExtractConfig } from './config.js'

const API_KEY = 'extract-test-key-0123456789'
let dir: string
let uploads: string
let pool: WorkerPool
let app: FastifyInstance
let base: string

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'razao-extract-app-'))
  uploads = join(dir, 'uploads')
  const config = loadConfig({ RAZAO_DATA_DIR: join(dir, 'data'), RAZAO_TMP_DIR: uploads, LOG_LEVEL: 'silent' })
  pool = createPool({ maxThreads: 2 })
  app = await buildExtractApp({ shared: config.shared, config: loadExtractConfig({ EXTRACT_MAX_FILE_BYTES: String(256 * 1024) }), apiKey: API_KEY, pool, logger: false })
  base = await app.listen({ host: '127.0.0.1', port: 0 })
})

afterAll(async () => {
  await app.close()
  await pool.destroy()
  await rm(dir, { recursive: true, force: true })
})

async function extract (bytes: Uint8Array | undefined, query = '', headers: Record<string, string> = { 'x-api-key': API_KEY }) {
  const form = new FormData()
  if (bytes !== undefined) form.append('file', new Blob([bytes], { type: 'application/pdf' }), 'doc.pdf')
  const res = await fetch(`${base}/api/v1/pdf/extract${query}`, { method: 'POST', body: form, headers })
  return { status: res.status, requestId: res.headers.get('x-request-id'), body: await res.json() as Record<string, any> }
}

describe('public routes', () => {
  it('answers health and info without a key: contract 2.0.0, engine 1.10.0, the active parsers', async () => {
    const health = await fetch(`${base}/api/v1/health`)
    expect(health.status).toBe(200)
    expect(await health.json()).toMatchObject({ status: 'UP', service: 'razao-extract' })
    const info = await (await fetch(`${base}/api/v1/info`)).json() as Record<string, any>
    expect(info).toMatchObject({ version: '2.0.0', engineVersion: '1.10.0', parsers: [{ id: 'pgdas-extrato', documentType: 'PGDAS_EXTRATO', family: 'SIMPLES_NACIONAL', status: 'active' }] })
  })
})

describe('POST /api/v1/pdf/extract', () => {
  it('extracts a PGDAS-D extract: the spec\'s response, request id in body and header, no evidence unless asked', async () => {
    const { pdf, truth } = await generateExtrato({ seed: 21 })
    const { status, body, requestId } = await extract(pdf, '', { 'x-api-key': API_KEY, 'x-request-id': 'client-req-1' })
    expect(status).toBe(200)
    expect(requestId).toBe('client-req-1')
    expect(Object.keys(body).sort()).toEqual(['data', 'documentType', 'engine', 'errors', 'pages', 'requestId', 'success', 'warnings'])
    expect(body).toMatchObject({ success: true, documentType: 'PGDAS_EXTRATO', pages: 1, requestId: 'client-req-1', errors: [], warnings: [] })
    expect(body.data).toEqual(truth)
    expect(Object.keys(body.engine).sort()).toEqual(['confidence', 'confidenceLevel', 'detector', 'excludedRules', 'family', 'matchedRules', 'minimumConfidence', 'missingRules', 'parser', 'parserBlocked', 'parserExecuted', 'parserStatus', 'parserVersion', 'schemaVersion', 'version'].sort())
  })

  it('adds where each value was read with ?evidence=true', async () => {
    const { pdf } = await generateExtrato({ seed: 22 })
    const { body } = await extract(pdf, '?evidence=true')
    expect(body.evidence.cnpjBasico).toEqual({ page: 1, source: expect.stringMatching(/^CNPJ Básico: /), box: expect.objectContaining({ x: expect.any(Number), width: expect.any(Number) }) })
  })

  it('reports an unknown document and a scan with success false and a clear reason', async () => {
    const unknown = await extract(await writeTextPdf([[{ text: 'Contrato de locação comercial', x: 40, y: 780 }]], { seed: 1 }))
    expect(unknown.status).toBe(200)
    expect(unknown.body).toMatchObject({ success: false, documentType: 'UNKNOWN', data: null, errors: [{ code: 'PLUGIN_NO_MATCH', message: expect.stringMatching(/no type this service knows/) }] })
    const scan = await extract(await writeScanLikePdf())
    expect(scan.body).toMatchObject({ success: false, documentType: 'UNKNOWN', errors: [{ code: 'PDF_NO_TEXT_LAYER' }] })
  })

  it('refuses by the file\'s bytes, encrypted and damaged PDFs, a missing file, and too large a file', async () => {
    const notPdf = await extract(new TextEncoder().encode('PK\u0003\u0004 not a pdf at all'))
    expect(notPdf.status).toBe(415)
    expect(notPdf.body).toMatchObject({ success: false, errors: [{ code: 'PDF_NOT_PDF' }], requestId: notPdf.requestId })
    expect((await extract(await writePasswordPdf())).body.errors[0].code).toBe('PDF_ENCRYPTED')
    const broken = await extract(new TextEncoder().encode('%PDF-1.7\n1 0 obj << /Type'))
    expect(broken).toMatchObject({ status: 422, body: { errors: [{ code: 'PDF_CORRUPT' }] } })
    expect((await extract(undefined)).status).toBe(400)
    const big = new Uint8Array(300 * 1024)
    big.set(new TextEncoder().encode('%PDF-1.7\n'))
    const tooBig = await extract(big)
    expect(tooBig.status).toBe(413)
    expect(JSON.stringify(tooBig.body)).not.toMatch(/at .*\.ts/)
    expect(await readdir(uploads)).toEqual([])
  })

  it('refuses a missing or wrong key with 401', async () => {
    const { pdf } = await generateExtrato({ seed: 23 })
    for (const headers of [{}, { 'x-api-key': 'wrong' }]) {
      const res = await extract(pdf, '', headers)
      expect(res.status).toBe(401)
      expect(res.body).toMatchObject({ success: false, errors: [{ code: 'UNAUTHORIZED' }] })
    }
  })
})
