/**
 * The signature service over real HTTP: listening Fastify apps, the real worker pool,
 * a real RFC 3161 responder on loopback, certificates generated for the run. Every
 * error code and status of spec 2 §7 that a request can produce is exercised, and
 * every signed answer goes through pdfsig and OpenSSL.
 */
import { createHash } from 'node:crypto'
import { mkdir, mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PassThrough } from 'node:stream'
import type { FastifyInstance } from 'fastify'
import { connect } from 'node:net'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createDevChain } from '../../core/sign/index.js'
import { createTestPki } from '../../fixtures/pdf/pki.js'
import type { TestPki } from '../../fixtures/pdf/pki.js'
import { makePdf, makeTextPdf, qpdf } from '../../fixtures/pdf/samples.js'
import { startLocalTsa } from '../../fixtures/pdf/tsa-server.js'
import type { LocalTsa } from '../../fixtures/pdf/tsa-server.js'
import { checkSignedPdf, findSignatures, opensslVerifyToken, padesAttributeProblems, toolsAvailable } from '../../fixtures/pdf/verify.js'
import { createPool } from '../../workers/pool.js'
import type { WorkerPool } from '../../workers/pool.js'
import { loadConfig } from '../config.js'
import { SUPPORTED_NODE_LINES, unsupportedLineWarning } from '../runtime.js'
import { buildSignApp } from './app.js'
import { loadSignConfig } from './config.js'

const API_KEY = 'chave-de-teste-0123456789abcdefghijklmnop'
const ISO_OFFSET = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?[+-]\d{2}:\d{2}$/
let dir: string
let pki: TestPki
let tsa: LocalTsa
let pool: WorkerPool
const apps: FastifyInstance[] = []
const base: Record<'b' | 't' | 'expired' | 'expiring' | 'dev' | 'broken' | 'slow' | 'drain', string> = { b: '', t: '', expired: '', expiring: '', dev: '', broken: '', slow: '', drain: '' }
/** base.drain's RAZAO_DRAIN_MAX_MS: a body answered early is read this long at most (the default is 10 s). */
const DRAIN_MAX_MS = 500
const logs = new PassThrough()
let logText = ''
logs.on('data', (chunk: Buffer) => { logText += chunk.toString() })
let onePage: Uint8Array
/** Slow enough to sign (about a second) that a thread can be stopped mid-signature on any machine. */
let thousandPages: Uint8Array
let doomed: WorkerPool

async function start (env: Record<string, string>, appPool: WorkerPool = pool): Promise<string> {
  const fullEnv = { RAZAO_DATA_DIR: join(dir, 'data'), LOG_LEVEL: 'info', SIGN_MAX_PDF_BYTES: String(256 * 1024), ...env }
  const shared = loadConfig(fullEnv).shared
  const app = await buildSignApp({ shared, config: loadSignConfig(fullEnv, shared), apiKey: API_KEY, pool: appPool, logStream: logs })
  apps.push(app)
  return await app.listen({ host: '127.0.0.1', port: 0 })
}

const tools = toolsAvailable('pdfsig', 'openssl', 'qpdf')

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'razao-sign-app-'))
  pki = await createTestPki(dir)
  tsa = await startLocalTsa({ dir, certPath: pki.tsa.certPath, keyPath: pki.tsa.keyPath, rootPemPath: pki.tsa.rootPemPath })
  pool = createPool({ maxThreads: 2 })
  const cert = { SIGN_CERT_PATH: pki.p12Path, SIGN_CERT_PASSWORD: pki.password }
  base.b = await start({ ...cert, SIGN_VISUAL_MODE: 'STAMP_AND_PAGE', SIGN_MAX_IN_FLIGHT: '1' })
  base.drain = await start({ ...cert, RAZAO_DRAIN_MAX_MS: String(DRAIN_MAX_MS) })
  base.t = await start({ ...cert, SIGN_VISUAL_MODE: 'NONE', SIGN_TSA_URL: tsa.url, SIGN_TSA_TIMEOUT_MS: '10000' })
  const old = createDevChain({ password: 'velha', signerNotBefore: new Date(Date.now() - 400 * 86_400_000), signerNotAfter: new Date(Date.now() - 86_400_000) })
  await writeFile(join(dir, 'old.p12'), old.pkcs12)
  // A certificate that expires while the service runs: started with a valid one, then the
  // expired one renamed over it (an expired one at start is refused: "refuses to start" below).
  await writeFile(join(dir, 'expired.p12'), createDevChain({ password: 'velha' }).pkcs12)
  base.expired = await start({ SIGN_CERT_PATH: join(dir, 'expired.p12'), SIGN_CERT_PASSWORD: 'velha' })
  await writeFile(join(dir, 'expired.p12.new'), old.pkcs12)
  await rename(join(dir, 'expired.p12.new'), join(dir, 'expired.p12'))
  const expiring = createDevChain({ password: 'x', signerNotAfter: new Date(Date.now() + 10 * 86_400_000 - 3_600_000) })
  await writeFile(join(dir, 'expiring.p12'), expiring.pkcs12)
  base.expiring = await start({ SIGN_CERT_PATH: join(dir, 'expiring.p12'), SIGN_CERT_PASSWORD: 'x' })
  base.dev = await start({ RAZAO_DATA_DIR: join(dir, 'dev-data'), SIGN_ACTUATOR_AUTH: 'api-key', SIGN_UNAUTHORIZED_STATUS: '403', SIGN_VISUAL_MODE: 'PAGE_ONLY' })
  // A pool of its own whose worker thread the test kills in the middle of a signature.
  doomed = createPool({ maxThreads: 1 })
  base.broken = await start({ ...cert, SIGN_MAX_PDF_BYTES: String(4 * 1024 * 1024), SIGN_VISUAL_MODE: 'STAMP_AND_PAGE' }, doomed)
  // Same pool, a time limit far below what a 100-page STAMP_AND_PAGE signature takes.
  base.slow = await start({ ...cert, SIGN_MAX_PDF_BYTES: String(4 * 1024 * 1024), SIGN_VISUAL_MODE: 'STAMP_AND_PAGE', SIGN_TASK_TIMEOUT_MS: '40' }, doomed)
  thousandPages = await makeTextPdf(1000)
  onePage = await makePdf([{}, { rotate: 90 }])
}, 120_000)

afterAll(async () => {
  await Promise.allSettled(apps.map((a) => a.close()))
  await pool.destroy()
  await doomed.destroy()
  await tsa.close()
  await rm(dir, { recursive: true, force: true })
})

async function call (url: string, init: RequestInit = {}): Promise<{ status: number, body: any, headers: Headers }> {
  const res = await fetch(url, init)
  const text = await res.text()
  return { status: res.status, body: text === '' ? undefined : JSON.parse(text), headers: res.headers }
}

/** Polls `done` every 5 ms; throws after 20 s. */
async function until (done: () => boolean): Promise<void> {
  const end = Date.now() + 20_000
  while (!done()) {
    if (Date.now() > end) throw new Error('the pool never reached the state the test waits for')
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
}

function sign (target: string, body: unknown, headers: Record<string, string> = {}): Promise<{ status: number, body: any, headers: Headers }> {
  return call(`${target}/api/v1/sign`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': API_KEY, ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body)
  })
}

function expectError (res: { status: number, body: any, headers: Headers }, status: number, code: string, field: string | null = null): void {
  expect(res.status).toBe(status)
  expect(res.body).toMatchObject({ success: false, data: null, code, errors: [{ code, field }], warnings: [] })
  expect(typeof res.body.message).toBe('string')
  expect(res.body.requestId).toBe(res.headers.get('x-request-id'))
  expect(res.body.timestamp).toMatch(ISO_OFFSET)
  // The request path, without its query string.
  expect(res.body.path).toEqual(expect.stringMatching(/^\/[^?]*$/))
}

describe('GET /api/v1/health', () => {
  it('answers without a key with the spec\'s fields and the Node.js runtime as javaVersion', async () => {
    const res = await call(`${base.b}/api/v1/health`)
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({
      success: true,
      data: { service: 'razao-sign', status: 'UP', environment: 'development', javaVersion: `Node.js ${process.versions.node}` },
      // A line past its end of life (the machines' Node 20) is said in the warnings, and only that.
      warnings: unsupportedLineWarning() === undefined ? [] : [unsupportedLineWarning()],
      version: '1.0.0'
    })
    expect(Number.isInteger(res.body.executionTimeMs)).toBe(true)
    expect(res.body.timestamp).toMatch(ISO_OFFSET)
    expect(res.headers.get('x-request-id')).toMatch(/.+/)
    expect(res.body.requestId).toBe(res.headers.get('x-request-id'))
  })

  it('says DOWN with a warning when the certificate has expired', async () => {
    const res = await call(`${base.expired}/api/v1/health`)
    expect(res.body.data.status).toBe('DOWN')
    expect(res.body.warnings.join(' ')).toMatch(/expired/)
  })

  it('reports the certificate\'s end and days left, and warns from 30 days before it', async () => {
    const now = Date.now()
    const healthy = (await call(`${base.b}/api/v1/health`)).body.data
    // createDevChain: valid for 365 days from an hour before the test started.
    expect(healthy.certificateDaysLeft).toBe(Math.floor((Date.parse(healthy.certificateValidUntil) - now) / 86_400_000))
    expect(healthy.certificateDaysLeft).toBeGreaterThan(300)
    const res = await call(`${base.expiring}/api/v1/health`)
    expect(res.body.data).toMatchObject({ status: 'UP', certificateDaysLeft: 9 })
    expect(res.body.warnings.join(' ')).toMatch(/expires on .* \(in 9 days\): install the renewed A1 certificate/)
    expect((await call(`${base.expiring}/actuator/health`)).body.components.certificate.details).toMatchObject({ daysLeft: 9 })
  })

  it('refuses to start with an expired certificate, saying so', async () => {
    await expect(start({ SIGN_CERT_PATH: join(dir, 'old.p12'), SIGN_CERT_PASSWORD: 'velha' })).rejects.toThrow(/SIGN_CERT_PATH: the signing certificate in .*old\.p12 expired on \d{4}-.*does not start with an expired certificate/)
  })

  it('reports the development certificate it created in the data folder', async () => {
    const res = await call(`${base.dev}/api/v1/health`)
    expect(res.body.data.status).toBe('UP')
    expect(res.body.warnings.join(' ')).toMatch(/DEVELOPMENT certificate in .*sign-dev/)
    expect(await readFile(join(dir, 'dev-data', 'sign-dev', 'README.txt'), 'utf8')).toMatch(/NOT VALID/)
  })
})

describe('actuator', () => {
  it('is open by default outside production', async () => {
    const health = await call(`${base.b}/actuator/health`)
    expect(health.status).toBe(200)
    expect(health.body).toMatchObject({ status: 'UP', components: { certificate: { status: 'UP' } } })
    const info = await call(`${base.b}/actuator/info`)
    expect(info.body).toMatchObject({ app: { name: 'razao-sign', apiVersion: '1.0.0' }, signature: { standard: 'PAdES-B', visualMode: 'STAMP_AND_PAGE' } })
    const line = Number(process.versions.node.split('.')[0])
    expect(info.body.runtime).toEqual({ name: 'Node.js', version: process.versions.node, supported: SUPPORTED_NODE_LINES.includes(line), testedLines: SUPPORTED_NODE_LINES })
    expect(JSON.stringify(info.body)).not.toContain(pki.password)
  })

  it('answers 503 when the certificate is unusable', async () => {
    expect((await call(`${base.expired}/actuator/health`)).status).toBe(503)
  })

  it('requires the key when SIGN_ACTUATOR_AUTH=api-key, refusing with the configured 403', async () => {
    for (const path of ['/actuator/info', '/actuator/health', '/%61ctuator/health']) {
      expectError(await call(`${base.dev}${path}`), 403, 'UNAUTHORIZED')
    }
    expect((await call(`${base.dev}/actuator/info`, { headers: { 'x-api-key': API_KEY } })).status).toBe(200)
    expect((await call(`${base.dev}/actuator/health`, { headers: { 'x-api-key': API_KEY } })).status).toBe(200)
  })
})

/** Opens a raw connection, writes `text`, then a byte every 50 ms; resolves with what came back once the server closes it. */
async function rawUntilClosed (url: string, text: string): Promise<string> {
  const socket = connect(Number(new URL(url).port), '127.0.0.1')
  let answer = ''
  socket.on('data', (d: Buffer) => { answer += d.toString() })
  const closed = new Promise((resolve) => socket.on('close', resolve))
  socket.write(text)
  const trickle = setInterval(() => { if (!socket.destroyed) socket.write('A') }, 50)
  await closed
  clearInterval(trickle)
  return answer
}

describe('requests in flight', () => {
  it('gives a place back when the connection of a pipelined request drops before its turn', async () => {
    // base.b lets one sign request in at a time. A signature and a second request pipelined
    // on one connection, which then drops: the second never gets a reply that closes.
    // A thousand pages with stamps: still signing when the connection drops.
    const body = JSON.stringify({ pdfBase64: Buffer.from(thousandPages).toString('base64') })
    const head = (length: number): string => `POST /api/v1/sign HTTP/1.1\r\nHost: x\r\nX-API-Key: ${API_KEY}\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\n\r\n`
    // The requests base.b's server has read, counted: a connection drops once it has both.
    const server = apps.find((a) => base.b.endsWith(`:${(a.server.address() as AddressInfo).port}`))!.server
    let seen = 0
    const count = (): void => { seen++ }
    server.on('request', count)
    try {
      for (let round = 0; round < 3; round++) {
        const socket = connect(Number(new URL(base.b).port), '127.0.0.1')
        await new Promise((resolve) => socket.once('connect', resolve))
        socket.write(head(body.length) + body + head(2) + '{}')
        await expect.poll(() => seen).toBe(2 * (round + 1))
        socket.destroy()
      }
    } finally {
      server.off('request', count)
    }
    const after = await sign(base.b, { pdfBase64: Buffer.from(onePage).toString('base64') })
    expect(after.status).toBe(200)
  }, 20_000)

  // Both refusals on one pair of connections at once: each waits out the drain's bound
  // (RAZAO_DRAIN_MAX_MS, server/early-answer.ts) against a client that keeps sending, a byte
  // every 50 ms (the idle bound, a second, never comes). Measured: 0.53 s for both.
  it('answers a route that does not exist, and a refused key, before reading the body, and closes the connection while the client still sends, after RAZAO_DRAIN_MAX_MS', async () => {
    const started = performance.now()
    const [notFound, refused] = await Promise.all([
      rawUntilClosed(base.drain, 'POST /nope HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{'),
      rawUntilClosed(base.drain, 'POST /api/v1/sign HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 400000\r\n\r\n{"pdfBase64":"')
    ])
    const elapsed = performance.now() - started
    // Read for the bound set, not cut at once, and not for the default 10 s.
    expect(elapsed).toBeGreaterThanOrEqual(DRAIN_MAX_MS - 50)
    expect(elapsed).toBeLessThan(10_000)
    expect(notFound).toMatch(/^HTTP\/1\.1 404 /)
    expect(notFound).toMatch(/"code":"RESOURCE_NOT_FOUND"/)
    expect(refused).toMatch(/^HTTP\/1\.1 401 /)
  })

  it('lets one sign request in at a time (SIGN_MAX_IN_FLIGHT=1) and answers every one of a burst', async () => {
    const body = { pdfBase64: Buffer.from(onePage).toString('base64') }
    const replies = await Promise.all(Array.from({ length: 5 }, () => sign(base.b, body)))
    expect(replies.map((r) => r.status)).toEqual([200, 200, 200, 200, 200])
    expect(new Set(replies.map((r) => r.body.data.documentIdentifier)).size).toBe(5)
  })
})

describe('authentication', () => {
  it('refuses a missing, wrong, Bearer-wrapped or quoted key with 401 UNAUTHORIZED', async () => {
    const body = { pdfBase64: Buffer.from(onePage).toString('base64') }
    for (const headers of [{ 'x-api-key': '' }, { 'x-api-key': 'errada' }, { 'x-api-key': `Bearer ${API_KEY}` }, { 'x-api-key': `"${API_KEY}"` }]) {
      const res = await sign(base.b, body, headers)
      expectError(res, 401, 'UNAUTHORIZED')
      expect(res.body.message).toMatch(/^API key missing or invalid\. Send the key in the X-API-Key header\. .*SIGN_API_KEY.*\.data\/sign-api-key/)
    }
    const noHeader = await call(`${base.b}/api/v1/sign`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: API_KEY }, body: JSON.stringify(body) })
    expectError(noHeader, 401, 'UNAUTHORIZED')
  })

  it('answers a URL with a bad percent-escape in the envelope, with its request id', async () => {
    const res = await call(`${base.b}/api/v1/%zz`, { headers: { 'x-api-key': API_KEY } })
    expectError(res, 400, 'INVALID_REQUEST')
    expect(res.body.path).toBe('/api/v1/%zz')
  })

  it('refuses a keyless request whose path reaches a protected route only once percent-decoded', async () => {
    const body = JSON.stringify({ pdfBase64: Buffer.from(onePage).toString('base64') })
    // The router decodes "%61" to "a" and "%31" to "1": a check on the raw URL would let these through.
    for (const path of ['/%61pi/v1/sign', '/api/v%31/sign']) {
      const res = await call(`${base.b}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body })
      expectError(res, 401, 'UNAUTHORIZED')
    }
  })
})

describe.skipIf(!tools)('POST /api/v1/sign', () => {
  it('signs plain Base64: every data field, the bytes verified by pdfsig and OpenSSL', async () => {
    const res = await sign(base.b, { pdfBase64: Buffer.from(onePage).toString('base64'), originalFileName: 'Contrato março.pdf' })
    expect(res.status).toBe(200)
    const { data } = res.body
    expect(res.body).toMatchObject({ success: true, errors: [], warnings: [], requestId: res.headers.get('x-request-id') })
    expect(data).toMatchObject({
      signatureStandard: 'PAdES-B', signatureFormat: 'PAdES', timestampApplied: false,
      certificate: {
        signerName: 'EMPRESA DESENVOLVIMENTO RAZAO TESTE LTDA', signerDocument: '11222333000181',
        certificateAuthority: 'AC RAZAO DESENVOLVIMENTO v1 - TESTE', certificateSerialNumber: expect.stringMatching(/^[0-9A-F]+$/)
      },
      document: { originalFileName: 'Contrato março.pdf', signedFileName: 'Contrato março_assinado.pdf', mimeType: 'application/pdf' }
    })
    expect(data.documentIdentifier).toMatch(/^RZ-/)
    expect(data.documentIdentifier).not.toBe(res.body.requestId)
    for (const t of [data.signedAt, data.certificate.validFrom, data.certificate.validUntil]) expect(t).toMatch(ISO_OFFSET)
    const pdf = Buffer.from(data.signedPdfBase64, 'base64')
    expect(data.document.sizeBytes).toBe(pdf.length)
    expect(data.document.sha256).toBe(createHash('sha256').update(pdf).digest('hex'))
    const check = await checkSignedPdf(dir, pdf, pki.rootPemPath, 'http-b')
    expect(padesAttributeProblems(check.attributes[0]!, check.signatures[0]!.dictionary)).toEqual([])
    expect(pdf.toString('latin1')).toContain('razao-stamp-' + data.documentIdentifier)
  })

  it('answers 200 with a warning naming the pages too small for a legible stamp', async () => {
    // ImageMagick writes 3.84 pt pages; the stamp used to land outside them without a word.
    const pdf = await makePdf([{}, { size: [3.84, 3.84] }, { size: [3.84, 3.84] }, { size: [3.84, 3.84] }])
    const res = await sign(base.b, { pdfBase64: Buffer.from(pdf).toString('base64') })
    expect(res.status).toBe(200)
    expect(res.body.warnings).toEqual([expect.stringMatching(/^Pages 2-4 \(3 pages\) are too small for a legible signature stamp \(smallest 3\.84 x 3\.84 pt\) and were left without one/)])
    await checkSignedPdf(dir, Buffer.from(res.body.data.signedPdfBase64, 'base64'), pki.rootPemPath, 'http-tiny')
  })

  it('accepts a data:application/pdf;base64, URI and omits the file names when none was sent', async () => {
    const res = await sign(base.b, { pdfBase64: `data:application/pdf;base64,${Buffer.from(onePage).toString('base64')}` })
    expect(res.status).toBe(200)
    expect(res.body.data.document).toEqual({ mimeType: 'application/pdf', sizeBytes: expect.any(Number), sha256: expect.stringMatching(/^[0-9a-f]{64}$/) })
    await checkSignedPdf(dir, Buffer.from(res.body.data.signedPdfBase64, 'base64'), pki.rootPemPath, 'http-datauri')
  })

  it('gives each document its own identifier, also under concurrent requests', async () => {
    const body = { pdfBase64: Buffer.from(onePage).toString('base64') }
    const results = await Promise.all([1, 2, 3, 4].map(async () => await sign(base.b, body)))
    expect(results.map((r) => r.status)).toEqual([200, 200, 200, 200])
    expect(new Set(results.map((r) => r.body.data.documentIdentifier)).size).toBe(4)
  })

  it('keeps a well-formed X-Request-Id sent by the client', async () => {
    const res = await sign(base.b, { pdfBase64: 'AAAA' }, { 'x-request-id': 'cliente-123' })
    expect(res.headers.get('x-request-id')).toBe('cliente-123')
    expect(res.body.requestId).toBe('cliente-123')
  })

  it('signs PAdES-T with the local authority\'s token, verified by openssl ts -verify', async () => {
    tsa.mode = 'ok'
    const res = await sign(base.t, { pdfBase64: Buffer.from(onePage).toString('base64') })
    expect(res.status).toBe(200)
    expect(res.body.data).toMatchObject({ signatureStandard: 'PAdES-T', timestampApplied: true })
    const pdf = Buffer.from(res.body.data.signedPdfBase64, 'base64')
    await checkSignedPdf(dir, pdf, pki.rootPemPath, 'http-t')
    expect(await opensslVerifyToken(dir, findSignatures(pdf)[0]!.cms, pki.tsa.rootPemPath, 'http-t')).toMatch(/Verification: OK/)
  })

  it('signs an owner-password file that came with leading bytes and a damaged table, saying what it repaired (issue 13)', async () => {
    const encrypted = Buffer.from(await qpdf(dir, onePage, ['--encrypt', '', 'dono', '256', '--'], 'http-enc')).toString('latin1')
    const damaged = Buffer.from(encrypted.replace(/startxref\n\d+/, 'startxref\n40'), 'latin1')
    const res = await sign(base.b, { pdfBase64: Buffer.concat([Buffer.from('X-Gateway: ok\r\n\r\n'), damaged]).toString('base64') })
    expect(res.status).toBe(200)
    expect(res.body.warnings).toEqual([
      expect.stringMatching(/^The 17 bytes before the PDF header/),
      expect.stringMatching(/cross-reference data was damaged .* rebuilt from its objects/)
    ])
    await checkSignedPdf(dir, Buffer.from(res.body.data.signedPdfBase64, 'base64'), pki.rootPemPath, 'http-enc-repaired')
  })

  it('refuses an owner-password file whose permissions forbid the final page with 400 INVALID_REQUEST naming the permission', async () => {
    const restricted = await qpdf(dir, onePage, ['--encrypt', '', 'dono', '256', '--assemble=n', '--'], 'http-enc-no-assembly')
    const res = await sign(base.b, { pdfBase64: Buffer.from(restricted).toString('base64') })
    expectError(res, 400, 'INVALID_REQUEST')
    expect(res.body.message).toMatch(/opens without a password.*bit 11 "assemble the document"/)
  })

  it('signs with the development chain when no certificate is configured, and says so', async () => {
    const res = await sign(base.dev, { pdfBase64: Buffer.from(onePage).toString('base64') })
    expect(res.status).toBe(200)
    expect(res.body.warnings.join(' ')).toMatch(/DEVELOPMENT/)
    await checkSignedPdf(dir, Buffer.from(res.body.data.signedPdfBase64, 'base64'), join(dir, 'dev-data', 'sign-dev', 'root.pem'), 'http-dev')
  })
})

describe('errors (spec 2 §7)', () => {
  it('VALIDATION_ERROR 400 for a missing, mistyped or non-Base64 field, naming the field', async () => {
    expectError(await sign(base.b, {}), 400, 'VALIDATION_ERROR', 'pdfBase64')
    expectError(await sign(base.b, { pdfBase64: 12 }), 400, 'VALIDATION_ERROR', 'pdfBase64')
    expectError(await sign(base.b, { pdfBase64: 'JVBER***' }), 400, 'VALIDATION_ERROR', 'pdfBase64')
    expectError(await sign(base.b, { pdfBase64: 'data:image/png;base64,AAAA' }), 400, 'VALIDATION_ERROR', 'pdfBase64')
    expectError(await sign(base.b, { pdfBase64: 'AAAA', originalFileName: 7 }), 400, 'VALIDATION_ERROR', 'originalFileName')
    expectError(await sign(base.b, []), 400, 'VALIDATION_ERROR', null)
  })

  it('INVALID_JSON 400 for a malformed body, without echoing it', async () => {
    const secretish = Buffer.from(onePage).toString('base64').slice(0, 200)
    const res = await sign(base.b, `{"pdfBase64": "${secretish}`)
    expectError(res, 400, 'INVALID_JSON')
    expect(JSON.stringify(res.body)).not.toContain(secretish.slice(100))
    expectError(await sign(base.b, ''), 400, 'INVALID_JSON')
  })

  it.skipIf(!tools)('INVALID_PDF 400 on pdfBase64 for content that is not a PDF and a truncated PDF', async () => {
    expectError(await sign(base.b, { pdfBase64: Buffer.from('olá, mundo').toString('base64') }), 400, 'INVALID_PDF', 'pdfBase64')
    expectError(await sign(base.b, { pdfBase64: Buffer.from(onePage.subarray(0, 900)).toString('base64') }), 400, 'INVALID_PDF', 'pdfBase64')
  })

  it.skipIf(!tools)('INVALID_REQUEST 400 for a PDF that needs a user password, or whose owner forbids all changes', async () => {
    const protectedPdf = await qpdf(dir, onePage, ['--encrypt', 'usuario', 'dono', '256', '--'], 'http-protected')
    const res = await sign(base.b, { pdfBase64: Buffer.from(protectedPdf).toString('base64') })
    expectError(res, 400, 'INVALID_REQUEST')
    expect(res.body.message).toMatch(/needs a password to be opened/)
    const locked = await qpdf(dir, onePage, ['--encrypt', '', 'dono', '256', '--modify=none', '--'], 'http-locked')
    const refused = await sign(base.b, { pdfBase64: Buffer.from(locked).toString('base64') })
    expectError(refused, 400, 'INVALID_REQUEST')
    expect(refused.body.message).toMatch(/opens without a password; its owner's permissions do not allow/)
  })

  it('FILE_TOO_LARGE 413 above SIGN_MAX_PDF_BYTES, whether the JSON fits the body limit or not', async () => {
    expectError(await sign(base.b, { pdfBase64: Buffer.alloc(300 * 1024, 7).toString('base64') }), 413, 'FILE_TOO_LARGE', 'pdfBase64')
    expectError(await sign(base.b, { pdfBase64: Buffer.alloc(600 * 1024, 7).toString('base64') }), 413, 'FILE_TOO_LARGE')
  })

  it('UNSUPPORTED_MEDIA_TYPE 415 for a body that is neither JSON nor a multipart form', async () => {
    // A multipart form is a sign request since issue 34 ("signing from files" below).
    for (const init of [
      { body: 'pdfBase64=AAAA', headers: { 'content-type': 'text/plain', 'x-api-key': API_KEY } },
      { body: 'pdfBase64=AAAA', headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-api-key': API_KEY } }
    ]) {
      expectError(await call(`${base.b}/api/v1/sign`, { method: 'POST', ...init }), 415, 'UNSUPPORTED_MEDIA_TYPE')
    }
  })

  it.skipIf(!tools)('TIMESTAMP_ERROR 500 when the authority fails', async () => {
    tsa.mode = 'http-error'
    try {
      const res = await sign(base.t, { pdfBase64: Buffer.from(onePage).toString('base64') })
      expectError(res, 500, 'TIMESTAMP_ERROR')
      expect(res.body.message).toMatch(/timestamp authority/)
    } finally {
      tsa.mode = 'ok'
    }
  })

  it('VALIDATION_ERROR 400 on level for an unknown level, or a timestamped one on a service without an authority', async () => {
    const pdfBase64 = Buffer.from(onePage).toString('base64')
    expectError(await sign(base.t, { pdfBase64, level: 'B-LT' }), 400, 'VALIDATION_ERROR', 'level')
    expectError(await sign(base.t, { pdfBase64, level: 3 }), 400, 'VALIDATION_ERROR', 'level')
    const res = await sign(base.b, { pdfBase64, level: 'T' })
    expectError(res, 400, 'VALIDATION_ERROR', 'level')
    expect(res.body.message).toMatch(/SIGN_TSA_URL/)
  })

  it('signs at the level asked for: B on a service whose default is T', async () => {
    const res = await sign(base.t, { pdfBase64: Buffer.from(onePage).toString('base64'), level: 'B' })
    expect(res.status).toBe(200)
    expect(res.body.data).toMatchObject({ signatureStandard: 'PAdES-B', timestampApplied: false })
  })

  it.skipIf(!tools)('REVOCATION_ERROR 500 for level LT when the chain names no OCSP responder nor CRL', async () => {
    const res = await sign(base.t, { pdfBase64: Buffer.from(onePage).toString('base64'), level: 'LT' })
    expectError(res, 500, 'REVOCATION_ERROR')
    expect(res.body.message).toMatch(/names no OCSP responder and no CRL distribution point/)
  })

  it('INVALID_CERTIFICATE 500 when the configured certificate has expired', async () => {
    const res = await sign(base.expired, { pdfBase64: Buffer.from(onePage).toString('base64') })
    expectError(res, 500, 'INVALID_CERTIFICATE')
    expect(res.body.message).toMatch(/expired/)
  })

  it('INTERNAL_ERROR 500 with only the request id when the worker thread dies mid-signature', async () => {
    // The pool's one thread, started and idle, so that "busy" below means: it has our task.
    await until(() => doomed.idleThreads === 1)
    const pending = sign(base.broken, { pdfBase64: Buffer.from(thousandPages).toString('base64') })
    // Not a fixed delay: on a loaded machine the upload alone can outlast one, and the
    // thread would die before the task reached it (a new thread then signs: 200).
    await until(() => doomed.idleThreads === 0)
    // The thread has the task (a 1000-page STAMP_AND_PAGE signature, hundreds of ms at
    // least): it dies with it now, not after a fixed delay that a loaded machine's late
    // timer could stretch past the signature's end.
    await Promise.all(doomed.threads.map(async (t) => await t.terminate()))
    const res = await pending
    expectError(res, 500, 'INTERNAL_ERROR')
    expect(res.body.message).toContain(res.body.requestId)
    expect(res.body.message).not.toMatch(/at |Error:|worker/i)
  })

  it('INTERNAL_ERROR 500 when a signature passes SIGN_TASK_TIMEOUT_MS; its thread is stopped and the pool keeps serving', async () => {
    const res = await sign(base.slow, { pdfBase64: Buffer.from(thousandPages).toString('base64') })
    expectError(res, 500, 'INTERNAL_ERROR')
    expect(res.body.message).toMatch(/did not finish within 40 ms/)
    const after = await sign(base.broken, { pdfBase64: Buffer.from(onePage).toString('base64') })
    expect(after.status).toBe(200)
  })

  it('reads application/json with a charset parameter as JSON', async () => {
    expectError(await sign(base.b, {}, { 'content-type': 'application/json; charset=utf-8' }), 400, 'VALIDATION_ERROR', 'pdfBase64')
  })

  it('RESOURCE_NOT_FOUND 404 for an unknown path', async () => {
    const missing = await call(`${base.b}/api/v1/nothing?x=1`, { headers: { 'x-api-key': API_KEY } })
    expectError(missing, 404, 'RESOURCE_NOT_FOUND')
    expect(missing.body.path).toBe('/api/v1/nothing')
  })
})

describe('signing from files (issue 34)', () => {
  function form (parts: Array<[string, string | Blob, string?]>): FormData {
    const data = new FormData()
    for (const [name, value, fileName] of parts) {
      if (typeof value === 'string') data.append(name, value)
      else data.append(name, value, fileName)
    }
    return data
  }
  const pdfBlob = (): Blob => new Blob([Buffer.from(onePage)], { type: 'application/pdf' })
  const post = (body: FormData | string, headers: Record<string, string> = {}): Promise<Response> =>
    fetch(`${base.b}/api/v1/sign`, { method: 'POST', headers: { 'x-api-key': API_KEY, ...headers }, body })

  it('takes the PDF as a multipart file part and answers the same JSON, naming the file after the part', async () => {
    const res = await post(form([['file', pdfBlob(), 'Contrato março.pdf']]))
    expect(res.status).toBe(200)
    const body = await res.json() as any
    expect(body).toMatchObject({ success: true, data: { signatureStandard: 'PAdES-B', document: { originalFileName: 'Contrato março.pdf', signedFileName: 'Contrato março_assinado.pdf' } } })
    await checkSignedPdf(dir, Buffer.from(body.data.signedPdfBase64, 'base64'), pki.rootPemPath, 'http-multipart')
  })

  it('answers the signed PDF itself when Accept asks for application/pdf, from a form or from JSON', async () => {
    const fromForm = await post(form([['originalFileName', 'nota fiscal.pdf'], ['file', pdfBlob(), 'ignored.pdf']]), { accept: 'application/pdf' })
    expect(fromForm.status).toBe(200)
    expect(fromForm.headers.get('content-type')).toBe('application/pdf')
    expect(fromForm.headers.get('content-disposition')).toBe('attachment; filename="nota fiscal_assinado.pdf"; filename*=UTF-8\'\'nota%20fiscal_assinado.pdf')
    const pdf = Buffer.from(await fromForm.arrayBuffer())
    expect(fromForm.headers.get('x-document-sha256')).toBe(createHash('sha256').update(pdf).digest('hex'))
    expect(fromForm.headers.get('x-document-identifier')).toMatch(/^RZ-/)
    expect(fromForm.headers.get('x-signature-standard')).toBe('PAdES-B')
    expect(fromForm.headers.get('x-signed-at')).toMatch(ISO_OFFSET)
    expect(JSON.parse(fromForm.headers.get('x-signature-warnings')!)).toEqual([])
    const check = await checkSignedPdf(dir, pdf, pki.rootPemPath, 'http-accept-pdf')
    expect(padesAttributeProblems(check.attributes[0]!, check.signatures[0]!.dictionary)).toEqual([])

    const fromJson = await post(JSON.stringify({ pdfBase64: Buffer.from(onePage).toString('base64') }), { 'content-type': 'application/json', accept: 'application/json;q=0.5, application/pdf' })
    expect(fromJson.headers.get('content-type')).toBe('application/pdf')
    expect(Buffer.from(await fromJson.arrayBuffer()).subarray(0, 5).toString('latin1')).toBe('%PDF-')
    // JSON preferred, or any type: the JSON contract as before.
    const json = await post(JSON.stringify({ pdfBase64: Buffer.from(onePage).toString('base64') }), { 'content-type': 'application/json', accept: 'application/json, application/pdf;q=0.9, */*' })
    expect(json.headers.get('content-type')).toMatch(/^application\/json/)
  })

  it('keeps errors in the JSON envelope even when the PDF was asked for', async () => {
    const res = await post(form([['file', new Blob(['not a pdf']), 'x.pdf']]), { accept: 'application/pdf' })
    expect(res.status).toBe(400)
    expect(res.headers.get('content-type')).toMatch(/^application\/json/)
    expect(await res.json()).toMatchObject({ success: false, code: 'INVALID_PDF' })
  })

  it('refuses forms it cannot use with MULTIPART_ERROR, FILE_TOO_LARGE or VALIDATION_ERROR, naming the field', async () => {
    const answer = async (res: Response): Promise<{ status: number, body: any, headers: Headers }> => ({ status: res.status, body: await res.json(), headers: res.headers })
    expectError(await answer(await post(form([['originalFileName', 'a.pdf']]))), 400, 'MULTIPART_ERROR', 'file')
    expectError(await answer(await post(form([['documento', pdfBlob(), 'a.pdf']]))), 400, 'MULTIPART_ERROR', 'documento')
    expectError(await answer(await post(form([['file', pdfBlob(), 'a.pdf'], ['file', pdfBlob(), 'b.pdf']]))), 400, 'MULTIPART_ERROR', 'file')
    expectError(await answer(await post(form([['file', new Blob([]), 'a.pdf']]))), 400, 'VALIDATION_ERROR', 'file')
    expectError(await answer(await post(form([['originalFileName', ' '], ['file', pdfBlob(), 'a.pdf']]))), 400, 'VALIDATION_ERROR', 'originalFileName')
    // SIGN_MAX_PDF_BYTES is 256 KiB on these test servers.
    expectError(await answer(await post(form([['file', new Blob([Buffer.alloc(300 * 1024, 0x20)]), 'big.pdf']]))), 413, 'FILE_TOO_LARGE', 'file')
    const broken = await post('--xyz\r\nContent-Disposition: form-data; name="file"; filename="a.pdf"\r\n\r\n%PDF-1.7 and no end', { 'content-type': 'multipart/form-data; boundary=xyz' })
    expectError(await answer(broken), 400, 'MULTIPART_ERROR')
    const text = await answer(await post('%PDF-1.7', { 'content-type': 'text/plain' }))
    expectError(text, 415, 'UNSUPPORTED_MEDIA_TYPE')
    expect(text.body.message).toMatch(/multipart\/form-data/)
    // Still serving.
    expect((await post(form([['file', pdfBlob(), 'a.pdf']]))).status).toBe(200)
  })
})

describe('logs', () => {
  it('never contain document Base64, the API key or the certificate password', async () => {
    const b64 = Buffer.from(await makePdf([{}, {}, {}])).toString('base64')
    const res = await sign(base.b, { pdfBase64: b64 })
    const cut = await sign(base.b, `{"pdfBase64": "${b64}`)
    // Both requests' last lines written (the log follows the answer), not a fixed pause.
    const completed = (id: string | null): boolean => logText.split('\n').some((l) => l.includes(`"reqId":"${id ?? ''}"`) && l.includes('"request completed"'))
    await expect.poll(() => [res, cut].every((r) => completed(r.headers.get('x-request-id')))).toBe(true)
    expect(logText).toContain('"reqId"')
    const middle = (s: string): string => s.slice(Math.floor(s.length / 2), Math.floor(s.length / 2) + 64)
    expect(logText).not.toContain(middle(b64))
    expect(res.status).toBe(200)
    expect(logText).not.toContain(middle(res.body.data.signedPdfBase64))
    expect(logText).not.toContain(API_KEY)
    expect(logText).not.toContain(pki.password)
    // The failures above (a killed thread, a time limit) were logged, without a stack.
    expect(logText).toContain('"request failed"')
    expect(logText).not.toContain('"stack"')
  })
})

describe('POST /api/v1/verify', () => {
  let trusted: string
  let signedT: Buffer
  const verify = (target: string, pdf: Uint8Array, name = 'assinado.pdf', headers: Record<string, string> = { 'x-api-key': API_KEY }): Promise<{ status: number, body: any, headers: Headers }> => {
    const form = new FormData()
    form.append('file', new Blob([pdf], { type: 'application/pdf' }), name)
    return call(`${target}/api/v1/verify`, { method: 'POST', headers, body: form })
  }
  beforeAll(async () => {
    const trustDir = join(dir, 'verify-trust')
    await mkdir(trustDir)
    await writeFile(join(trustDir, 'signer-root.pem'), pki.signer.root.certPem)
    await writeFile(join(trustDir, 'tsa-root.pem'), pki.tsa.root.certPem)
    trusted = await start({ SIGN_CERT_PATH: pki.p12Path, SIGN_CERT_PASSWORD: pki.password, SIGN_TRUST_DIR: trustDir })
    const res = await sign(base.t, { pdfBase64: Buffer.from(onePage).toString('base64') })
    expect(res.status).toBe(200)
    signedT = Buffer.from(res.body.data.signedPdfBase64, 'base64')
  })

  it('takes a multipart file: VALID against SIGN_TRUST_DIR, PAdES-B-T, the signer and every date with its offset', async () => {
    const res = await verify(trusted, signedT)
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ success: true, message: 'Every signature is valid.', errors: [], requestId: res.headers.get('x-request-id') })
    const { data } = res.body
    expect(data).toMatchObject({ verdict: 'VALID', fileName: 'assinado.pdf', sizeBytes: signedT.length, pageCount: 2, trustStore: { anchors: ['signer-root.pem', 'tsa-root.pem'] } })
    const [s] = data.signatures
    expect(s).toMatchObject({
      verdict: 'VALID', subFilter: 'ETSI.CAdES.detached',
      signer: { name: 'EMPRESA DESENVOLVIMENTO RAZAO TESTE LTDA', document: '11222333000181', documentKind: 'CNPJ' },
      integrity: { coverage: 'WHOLE_FILE', digestMatches: true, signatureValid: true },
      chain: { trusted: true, anchor: 'signer-root.pem' },
      timestamp: { valid: true, trusted: true },
      pades: { level: 'B-T' }
    })
    for (const t of [s.claimedSigningTime, s.timestamp.time, s.validity.signingTime, s.signer.certificate.validUntil]) expect(t).toMatch(ISO_OFFSET)
  })

  it('takes the sign request\'s JSON; against the shipped ICP-Brasil roots the development chain is INDETERMINATE', async () => {
    const res = await call(`${base.t}/api/v1/verify`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': API_KEY }, body: JSON.stringify({ pdfBase64: signedT.toString('base64') }) })
    expect(res.status).toBe(200)
    expect(res.body.data.verdict).toBe('INDETERMINATE')
    expect(res.body.data.trustStore.anchors).toEqual(['ICP-Brasilv10.pem', 'ICP-Brasilv11.pem', 'ICP-Brasilv12.pem', 'ICP-Brasilv5.pem'])
    expect(res.body.data.signatures[0].problems.join(' ')).toContain('not in the trust store')
  })

  it('answers 200 INVALID for a tampered file, and refuses what is not a PDF, no file, too large a file and a missing key', async () => {
    const tampered = Buffer.from(signedT)
    tampered[400] = tampered[400] === 0x20 ? 0x21 : 0x20
    const bad = await verify(trusted, tampered)
    expect(bad.status).toBe(200)
    expect(bad.body.data.verdict).toBe('INVALID')
    expect(bad.body.data.signatures[0].integrity.digestMatches).toBe(false)
    expectError(await verify(trusted, Buffer.from('isto não é um PDF')), 400, 'INVALID_PDF', 'file')
    const empty = new FormData()
    empty.append('nota', 'sem arquivo')
    expectError(await call(`${trusted}/api/v1/verify`, { method: 'POST', headers: { 'x-api-key': API_KEY }, body: empty }), 400, 'VALIDATION_ERROR', 'file')
    expectError(await verify(trusted, Buffer.alloc(300 * 1024, 0x25)), 413, 'FILE_TOO_LARGE', 'file')
    expectError(await verify(trusted, signedT, 'x.pdf', {}), 401, 'UNAUTHORIZED')
    expectError(await call(`${trusted}/api/v1/verify`, { method: 'POST', headers: { 'content-type': 'multipart/form-data; boundary=x', 'x-api-key': API_KEY }, body: '--x\r\nContent-Disposition: form-data; name="file"; filename="a.pdf"\r\n\r\n%PDF-1.7 cortado' }), 400, 'MULTIPART_ERROR')
  })

  it('a SIGN_TRUST_DIR that cannot be read, or that holds an intermediate, stops the start naming the variable', async () => {
    await expect(start({ SIGN_TRUST_DIR: join(dir, 'nao-existe') })).rejects.toThrow(/SIGN_TRUST_DIR/)
    const withIntermediate = join(dir, 'verify-trust-bad')
    await mkdir(withIntermediate)
    await writeFile(join(withIntermediate, 'ac.pem'), pki.signer.intermediate.certPem)
    await expect(start({ SIGN_TRUST_DIR: withIntermediate })).rejects.toThrow(/ac\.pem .*not self-signed/)
  })
})
