/**
 * The extraction service over real HTTP: a listening app, the real worker pool, PDFs
 * generated in the test and read by the real pdf.js.
 */
import { mkdtemp, readdir, rm } from 'node:fs/promises'
import { connect } from 'node:net'
import { deflateSync } from 'node:zlib'
import { PDFDocument, PDFName } from 'pdf-lib'
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
  it('answers health and info without a key: contract 2.0.0, engine 1.11.0, the active parsers', async () => {
    const health = await fetch(`${base}/api/v1/health`)
    expect(health.status).toBe(200)
    expect(await health.json()).toMatchObject({ status: 'UP', service: 'razao-extract' })
    const info = await (await fetch(`${base}/api/v1/info`)).json() as Record<string, any>
    expect(info).toMatchObject({ version: '2.0.0', engineVersion: '1.11.0' })
    // Every registered plugin, in registry order, each described the same way.
    expect(info.parsers[0]).toMatchObject({ id: 'pgdas-extrato', documentType: 'PGDAS_EXTRATO', family: 'SIMPLES_NACIONAL', status: 'active' })
    expect(info.parsers.map((p: { documentType: string }) => p.documentType)).toEqual(expect.arrayContaining(['PGDAS_EXTRATO', 'PGDAS_DECLARACAO', 'PGDAS_RECIBO', 'RELATORIO_SIMPLES', 'DAS', 'DAS_MEI', 'DARF', 'NFSE_DANFSE', 'DEC_ISSQN_POA']))
    for (const parser of info.parsers) expect(Object.keys(parser).sort()).toEqual(['documentType', 'family', 'id', 'minimumConfidence', 'schemaVersion', 'status', 'version'])
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
    expect(Object.keys(body.engine).sort()).toEqual(['confidence', 'confidenceLevel', 'detector', 'excludedRules', 'family', 'fieldsExpected', 'fieldsFound', 'matchedRules', 'minimumConfidence', 'missingRules', 'ocrPages', 'parser', 'parserBlocked', 'parserExecuted', 'parserStatus', 'parserVersion', 'schemaVersion', 'textSource', 'version'].sort())
  })

  it('adds where each value was read with ?evidence=true', async () => {
    const { pdf } = await generateExtrato({ seed: 22 })
    const { body } = await extract(pdf, '?evidence=true')
    expect(body.evidence.cnpjBasico).toEqual({ page: 1, source: expect.stringMatching(/^CNPJ Básico: /), box: expect.objectContaining({ x: expect.any(Number), width: expect.any(Number) }) })
    // Every plugin's verdict, the winner selected and the others with why they lost.
    const verdicts = body.candidates as Array<{ documentType: string, outcome: string }>
    expect(verdicts.filter((c) => c.outcome === 'selected').map((c) => c.documentType)).toEqual(['PGDAS_EXTRATO'])
    expect(verdicts.length).toBeGreaterThan(5)
  })

  it('reports an unknown document and a scan with success false and a clear reason', async () => {
    const unknown = await extract(await writeTextPdf([[{ text: 'Contrato de locação comercial', x: 40, y: 780 }]], { seed: 1 }))
    expect(unknown.status).toBe(200)
    expect(unknown.body).toMatchObject({ success: false, documentType: 'UNKNOWN', data: null, errors: [{ code: 'PLUGIN_NO_MATCH', message: expect.stringMatching(/no type this service knows.*Supported types: PGDAS_EXTRATO, .*DAS_MEI, DAS, DARF/) }] })
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

  it('refuses a deflate bomb with 422 PDF_CONTENT_TOO_LARGE before pdf.js reads it', async () => {
    const doc = await PDFDocument.create()
    const page = doc.addPage([595, 842])
    const bomb = deflateSync(Buffer.alloc(48 << 20, '0 0 m 1 1 l S\n'), { level: 9 })
    page.node.set(PDFName.of('Contents'), doc.context.register(doc.context.stream(bomb, { Filter: 'FlateDecode' })))
    const started = performance.now()
    const res = await extract(await doc.save())
    expect(res.status).toBe(422)
    expect(res.body).toMatchObject({ success: false, errors: [{ code: 'PDF_CONTENT_TOO_LARGE', message: expect.stringMatching(/\(a page's content\) of the PDF would inflate past 8\.0 MiB/) }] })
    // That message is the raw bound's, applied before pdf.js opens the file. The time is a
    // hang catcher only (54 ms at a load of 3, 68 ms at 14).
    expect(performance.now() - started).toBeLessThan(5_000)
  })

  it('refuses a missing or wrong key with 401', async () => {
    const { pdf } = await generateExtrato({ seed: 23 })
    for (const headers of [{}, { 'x-api-key': 'wrong' }]) {
      const res = await extract(pdf, '', headers)
      expect(res.status).toBe(401)
      expect(res.body).toMatchObject({ success: false, errors: [{ code: 'UNAUTHORIZED', message: expect.stringMatching(/X-API-Key header\. .*EXTRACT_API_KEY.*\.data\/extract-api-key/) }] })
    }
  })
})

async function batch (files: Array<{ name: string, bytes: Uint8Array, field?: string }>, query = '') {
  const form = new FormData()
  for (const f of files) form.append(f.field ?? 'files', new Blob([f.bytes], { type: 'application/pdf' }), f.name)
  const res = await fetch(`${base}/api/v1/pdf/extract-batch${query}`, { method: 'POST', body: form, headers: { 'x-api-key': API_KEY } })
  return { status: res.status, requestId: res.headers.get('x-request-id'), body: await res.json() as Record<string, any> }
}

function oversized (): Uint8Array {
  const big = new Uint8Array(300 * 1024)
  big.set(new TextEncoder().encode('%PDF-1.7\n'))
  return big
}

describe('POST /api/v1/pdf/extract-batch', () => {
  it('answers one result per file in upload order; a bad file does not fail the others', async () => {
    const first = await generateExtrato({ seed: 31 })
    const second = await generateExtrato({ seed: 32, layout: '2.2.27' })
    const files = [
      { name: 'a.pdf', bytes: first.pdf },
      { name: 'not-a-pdf.pdf', bytes: new TextEncoder().encode('just text, no header') },
      { name: 'big.pdf', bytes: oversized() },
      { name: 'broken.pdf', bytes: new TextEncoder().encode('%PDF-1.7\n1 0 obj << /Type') },
      { name: 'b.pdf', bytes: second.pdf }
    ]
    const { status, body, requestId } = await batch(files)
    expect(status).toBe(200)
    expect(body).toMatchObject({ success: false, requestId, total: 5, succeeded: 2, failed: 3 })
    expect(body.results.map((r: any) => [r.fileName, r.status, r.success, r.errors[0]?.code])).toEqual([
      ['a.pdf', 200, true, undefined],
      ['not-a-pdf.pdf', 415, false, 'PDF_NOT_PDF'],
      ['big.pdf', 413, false, 'REQUEST_TOO_LARGE'],
      ['broken.pdf', 422, false, 'PDF_CORRUPT'],
      ['b.pdf', 200, true, undefined]
    ])
    expect(body.results[0].data).toEqual(first.truth)
    expect(body.results[4].data).toEqual(second.truth)
    expect(Object.keys(body.results[0]).sort()).toEqual(['data', 'documentType', 'engine', 'errors', 'fileName', 'pages', 'requestId', 'status', 'success', 'warnings'])
    expect(body.results[0].requestId).toBe(requestId)
    expect(await readdir(uploads)).toEqual([])
  })

  it('adds evidence to each result with ?evidence=true and is all-successful when every file is', async () => {
    const { pdf } = await generateExtrato({ seed: 33 })
    const { body } = await batch([{ name: 'x.pdf', bytes: pdf }], '?evidence=true')
    expect(body).toMatchObject({ success: true, total: 1, succeeded: 1, failed: 0 })
    expect(body.results[0].evidence.cnpjBasico.page).toBe(1)
  })

  it('refuses 11 files with 400 and says the limit, keeping nothing', async () => {
    const { pdf } = await generateExtrato({ seed: 34 })
    const { status, body } = await batch(Array.from({ length: 11 }, (_, i) => ({ name: `f${i}.pdf`, bytes: pdf })))
    expect(status).toBe(400)
    expect(body).toMatchObject({ success: false, errors: [{ code: 'REQUEST_INVALID', message: expect.stringMatching(/at most 10 files/) }] })
    expect(await readdir(uploads)).toEqual([])
  })

  it('accepts exactly 10 files and refuses a request without files or with another field', async () => {
    const { pdf } = await generateExtrato({ seed: 35 })
    const ten = await batch(Array.from({ length: 10 }, (_, i) => ({ name: `f${i}.pdf`, bytes: pdf })))
    expect(ten.status).toBe(200)
    expect(ten.body.results.map((r: any) => r.fileName)).toEqual(Array.from({ length: 10 }, (_, i) => `f${i}.pdf`))
    expect(ten.body.succeeded).toBe(10)
    expect((await batch([])).body.errors[0].code).toBe('REQUEST_INCOMPLETE')
    const wrong = await batch([{ name: 'a.pdf', bytes: pdf, field: 'file' }])
    expect(wrong).toMatchObject({ status: 400, body: { errors: [{ code: 'REQUEST_INVALID', message: expect.stringMatching(/"files"/) }] } })
  })
})

describe('GET /api/v1/diagnostics', () => {
  // An app of its own (on the same pool), so the counters start at zero.
  let fresh: FastifyInstance
  let url: string
  beforeAll(async () => {
    const config = loadConfig({ RAZAO_DATA_DIR: join(dir, 'data'), RAZAO_TMP_DIR: uploads, LOG_LEVEL: 'silent', NODE_ENV: 'test' })
    fresh = await buildExtractApp({ shared: config.shared, config: loadExtractConfig({ EXTRACT_MAX_FILE_BYTES: String(256 * 1024) }), apiKey: API_KEY, pool, logger: false })
    url = await fresh.listen({ host: '127.0.0.1', port: 0 })
  })
  afterAll(async () => { await fresh.close() })

  const post = async (path: string, field: string, files: Uint8Array[]) => {
    const form = new FormData()
    files.forEach((bytes, i) => form.append(field, new Blob([bytes]), `f${i}.pdf`))
    const res = await fetch(`${url}${path}`, { method: 'POST', body: form, headers: { 'x-api-key': API_KEY } })
    return res.status
  }
  const diagnostics = async () => {
    const res = await fetch(`${url}/api/v1/diagnostics`, { headers: { 'x-api-key': API_KEY } })
    expect(res.status).toBe(200)
    return await res.json() as Record<string, any>
  }

  it('needs the key', async () => {
    const res = await fetch(`${url}/api/v1/diagnostics`)
    expect(res.status).toBe(401)
  })

  it('starts at zero with every field of the spec, in the spec\'s envelope with the restart warning', async () => {
    const body = await diagnostics()
    expect(Object.keys(body).sort()).toEqual(['data', 'errors', 'message', 'requestId', 'success', 'warnings'])
    expect(body).toMatchObject({ success: true, errors: [], warnings: [expect.stringMatching(/in memory.*restart/)] })
    expect(body.data).toEqual({
      service: 'razao-extract',
      environment: 'test',
      engineVersion: '1.11.0',
      uptimeSeconds: expect.any(Number),
      processedDocuments: 0,
      successfulDocuments: 0,
      failedDocuments: 0,
      successRate: 0,
      blockedByConfidence: 0,
      unknownDocuments: 0,
      rejectedUploads: 0,
      averageProcessingMs: 0,
      parsers: { total: expect.any(Number), active: expect.any(Number), inactive: expect.any(Number) },
      byDocumentType: {},
      byConfidenceLevel: { HIGH: 0, MEDIUM: 0, LOW: 0 }
    })
    expect(Number.isInteger(body.data.uptimeSeconds)).toBe(true)
    expect(body.data.parsers.total).toBe(body.data.parsers.active + body.data.parsers.inactive)
    expect(body.data.parsers.active).toBeGreaterThanOrEqual(1)
  })

  it('counts each kind of outcome of single and batch requests', async () => {
    const ok = (await generateExtrato({ seed: 41 })).pdf
    const unknown = await writeTextPdf([[{ text: 'Contrato de locação comercial', x: 40, y: 780 }]], { seed: 2 })
    const blocked = await writeTextPdf([[{ text: 'Extrato do Simples Nacional', x: 40, y: 780 }, { text: 'Período de Apuração (PA): 03/2024', x: 40, y: 760 }]], { seed: 3 })
    const big = oversized()
    expect(await post('/api/v1/pdf/extract', 'file', [ok])).toBe(200)
    expect(await post('/api/v1/pdf/extract', 'file', [unknown])).toBe(200)
    expect(await post('/api/v1/pdf/extract', 'file', [await writeScanLikePdf()])).toBe(200)
    expect(await post('/api/v1/pdf/extract', 'file', [blocked])).toBe(200)
    expect(await post('/api/v1/pdf/extract', 'file', [new TextEncoder().encode('PK not a pdf')])).toBe(415)
    expect(await post('/api/v1/pdf/extract', 'file', [big])).toBe(413)
    expect(await post('/api/v1/pdf/extract', 'file', [new TextEncoder().encode('%PDF-1.7\n1 0 obj << /Type')])).toBe(422)
    expect(await post('/api/v1/pdf/extract', 'file', [])).toBe(400)
    expect(await post('/api/v1/pdf/extract-batch', 'files', Array.from({ length: 11 }, () => ok))).toBe(400)
    expect(await post('/api/v1/pdf/extract-batch', 'files', [ok, big, ok])).toBe(200)
    const { data } = await diagnostics()
    expect(data).toMatchObject({
      // ok ×3, unknown, scan, blocked, broken
      processedDocuments: 7,
      successfulDocuments: 3,
      failedDocuments: 4,
      successRate: 0.4286,
      blockedByConfidence: 1,
      unknownDocuments: 2,
      // not a PDF, too large ×2, no file, the batch of 11
      rejectedUploads: 5,
      byDocumentType: { PGDAS_EXTRATO: 4, UNKNOWN: 2 },
      byConfidenceLevel: { HIGH: 3, MEDIUM: 0, LOW: 1 }
    })
    expect(data.averageProcessingMs).toBeGreaterThan(0)
  })
})

describe('GET /openapi.json and /docs', () => {
  it('describes every route from its schemas, publicly: the key, the multipart fields, the spec\'s response fields', async () => {
    const res = await fetch(`${base}/openapi.json`)
    expect(res.status).toBe(200)
    const doc = await res.json() as Record<string, any>
    expect(doc).toMatchObject({ openapi: '3.1.0', info: { version: '2.0.0' }, components: { securitySchemes: { apiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' } } } })
    expect(Object.keys(doc.paths).sort()).toEqual(['/api/v1/diagnostics', '/api/v1/health', '/api/v1/info', '/api/v1/pdf/extract', '/api/v1/pdf/extract-batch', '/openapi.json'])
    const single = doc.paths['/api/v1/pdf/extract'].post
    expect(single.security).toEqual([{ apiKey: [] }])
    expect(single.requestBody.content['multipart/form-data'].schema.required).toEqual(['file'])
    expect(single.parameters).toEqual([expect.objectContaining({ name: 'evidence', in: 'query' })])
    const ok = single.responses['200'].content['application/json'].schema
    expect(ok.required).toEqual(['success', 'documentType', 'pages', 'data', 'warnings', 'errors', 'requestId'])
    // The spec's 15 engine fields, the two counts of expected fields and the two OCR fields beyond it.
    expect(Object.keys(ok.properties.engine.properties)).toHaveLength(19)
    expect(Object.keys(single.responses).sort()).toEqual(['200', '400', '401', '408', '413', '415', '422', '500', '503'])
    const batchFiles = doc.paths['/api/v1/pdf/extract-batch'].post.requestBody.content['multipart/form-data'].schema.properties.files
    expect(batchFiles).toMatchObject({ type: 'array', maxItems: 10 })
    // `data` typed per document type, from each plugin's declaration, in the single and the batch answers.
    const types = (await (await fetch(`${base}/api/v1/info`)).json() as { parsers: Array<{ documentType: string }> }).parsers.map((p) => p.documentType)
    const refs = types.map((t) => `#/components/schemas/${t.toLowerCase().split('_').map((w) => w[0]!.toUpperCase() + w.slice(1)).join('')}Data`)
    expect(ok.properties.data.anyOf).toEqual([...refs.map(($ref) => ({ $ref })), { type: 'null' }])
    expect(doc.paths['/api/v1/pdf/extract-batch'].post.responses['200'].content['application/json'].schema.properties.results.items.properties.data.anyOf).toHaveLength(types.length + 1)
    expect(doc.components.schemas.DarfData).toMatchObject({ type: 'object', additionalProperties: false, properties: { valorTotal: { type: ['number', 'null'] }, tributos: { type: 'array' } } })
    expect(doc.components.schemas.DarfData.required).toContain('linhaDigitavel')
    const diag = doc.paths['/api/v1/diagnostics'].get.responses['200'].content['application/json'].schema
    expect(Object.keys(diag.properties.data.properties)).toHaveLength(15)
    expect(doc.paths['/api/v1/health'].get.security).toEqual([])
  })

  it('serves a plain page listing the operations at /docs/plain (/docs is Swagger UI: swagger-ui.test.ts)', async () => {
    const res = await fetch(`${base}/docs/plain`)
    expect(res.headers.get('content-type')).toMatch(/^text\/html/)
    const html = await res.text()
    for (const op of ['POST /api/v1/pdf/extract-batch', 'GET /api/v1/diagnostics', 'GET /api/v1/info']) expect(html).toContain(op)
    expect(html).toContain('href="/openapi.json"')
  })
})

describe('the in-flight gate (EXTRACT_MAX_IN_FLIGHT=1, EXTRACT_BODY_TIMEOUT_MS=3000)', () => {
  let gated: FastifyInstance
  let url: string
  beforeAll(async () => {
    const config = loadConfig({ RAZAO_DATA_DIR: join(dir, 'data'), RAZAO_TMP_DIR: uploads, LOG_LEVEL: 'silent' })
    gated = await buildExtractApp({ shared: config.shared, config: loadExtractConfig({ EXTRACT_MAX_IN_FLIGHT: '1', EXTRACT_BODY_TIMEOUT_MS: '3000' }), apiKey: API_KEY, pool, logger: false })
    url = await gated.listen({ host: '127.0.0.1', port: 0 })
  })
  afterAll(async () => { await gated.close() })

  it('keeps a second upload waiting while the first one\'s body arrives, lets it in once the first stops sending, and cuts the first with 408', async () => {
    const { pdf } = await generateExtrato({ seed: 61 })
    // A client that sends its headers and the start of its file, then a byte every 100 ms: it holds the one place.
    const { port } = new URL(url)
    const slow = connect(Number(port), '127.0.0.1')
    await new Promise<void>((resolve) => slow.once('connect', resolve))
    let answer = ''
    slow.on('data', (d: Buffer) => { answer += d.toString() })
    const closed = new Promise((resolve) => slow.once('close', resolve))
    slow.write(`POST /api/v1/pdf/extract HTTP/1.1\r\nHost: x\r\nX-API-Key: ${API_KEY}\r\nContent-Type: multipart/form-data; boundary=b\r\nContent-Length: 100000\r\n\r\n--b\r\nContent-Disposition: form-data; name="file"; filename="a.pdf"\r\n\r\n%PDF-1.7\n`)
    const trickle = setInterval(() => { slow.write('%') }, 100)
    // It holds the place once its file is being stored (the body is read only past the gate).
    await expect.poll(async () => (await readdir(uploads)).length).toBe(1)
    const form = new FormData()
    form.append('file', new Blob([pdf]), 'doc.pdf')
    let answered = false
    const second = fetch(`${url}/api/v1/pdf/extract`, { method: 'POST', body: form, headers: { 'x-api-key': API_KEY } }).then((r) => { answered = true; return r })
    await new Promise((resolve) => setTimeout(resolve, 1500))
    expect(answered).toBe(false)
    // The first stops sending: within about a second it gives its place to the second.
    clearInterval(trickle)
    const res = await second
    expect(res.status).toBe(200)
    expect((await res.json() as Record<string, any>).success).toBe(true)
    // And after EXTRACT_BODY_TIMEOUT_MS without a byte it is answered 408 in the service's shape, and closed.
    await closed
    expect(answer).toMatch(/^HTTP\/1\.1 408 /)
    expect(answer).toMatch(/"code":"REQUEST_TIMEOUT"/)
  })

  it('answers every request of a burst, one at a time', async () => {
    const { pdf } = await generateExtrato({ seed: 62 })
    const replies = await Promise.all(Array.from({ length: 4 }, async () => {
      const form = new FormData()
      for (let i = 0; i < 3; i++) form.append('files', new Blob([pdf]), `f${i}.pdf`)
      const res = await fetch(`${url}/api/v1/pdf/extract-batch`, { method: 'POST', body: form, headers: { 'x-api-key': API_KEY } })
      return { status: res.status, body: await res.json() as Record<string, any> }
    }))
    expect(replies.map((r) => [r.status, r.body.succeeded])).toEqual([[200, 3], [200, 3], [200, 3], [200, 3]])
  })
})
