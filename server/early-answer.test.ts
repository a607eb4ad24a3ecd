/**
 * An answer given before the body was read reaches the client as its status, not as a
 * broken pipe (issue 22, item 11): every upload route, a large body, a wrong key; and a
 * body over the limit. Run on Node 26 too (`bash .ci/node-line 26 npx vitest run
 * server/early-answer.test.ts`), whose fetch reported EPIPE before the bounded read.
 */
import { randomBytes } from 'node:crypto'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parseMasterKey } from '../core/gateway/index.js'
import { freshDatabase } from '../fixtures/db/test-database.js'
import type { TestDatabase } from '../fixtures/db/test-database.js'
import { createPool } from '../workers/pool.js'
import type { WorkerPool } from '../workers/pool.js'
import { loadConfig } from './config.js'
import { DRAIN_IDLE_MS } from './early-answer.js'
import { buildExtractApp } from './extract/app.js'
import { loadExtractConfig } from './extract/config.js'
import { buildGatewayApp } from './gateway/app.js'
import { loadGatewayConfig } from './gateway/config.js'
import { buildImportApp } from './import/app.js'
import { buildSignApp } from './sign/app.js'
import { loadSignConfig } from './sign/config.js'

const MIB = 1024 * 1024
let dir: string
let pool: WorkerPool
let db: TestDatabase
const apps: FastifyInstance[] = []
const url: Record<'import' | 'sign' | 'extract' | 'gateway', string> = { import: '', sign: '', extract: '', gateway: '' }

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'razao-early-answer-'))
  const env = { RAZAO_DATA_DIR: join(dir, 'data'), RAZAO_TMP_DIR: join(dir, 'uploads'), LOG_LEVEL: 'silent', IMPORT_MAX_UPLOAD_BYTES: String(64 * MIB), EXTRACT_MAX_FILE_BYTES: String(MIB) }
  const config = loadConfig(env)
  pool = createPool({ maxThreads: 1 })
  db = await freshDatabase()
  const built = {
    import: await buildImportApp({ shared: config.shared, config: config.import, apiKey: 'import-key-0123456789abcdef', pool, logger: false }),
    sign: await buildSignApp({ shared: config.shared, config: loadSignConfig({ ...env, SIGN_MAX_PDF_BYTES: String(2 * MIB) }, config.shared), apiKey: 'sign-key-0123456789abcdef0123456789', pool, logger: false }),
    extract: await buildExtractApp({ shared: config.shared, config: loadExtractConfig(env), apiKey: 'extract-key-0123456789', pool, logger: false }),
    gateway: await buildGatewayApp({ shared: config.shared, config: loadGatewayConfig({}, config.shared), adminToken: `admin-${randomBytes(16).toString('hex')}`, masterKey: parseMasterKey(randomBytes(32).toString('hex'))!, database: { pool: db.pool }, logger: false })
  }
  for (const [name, app] of Object.entries(built)) {
    apps.push(app)
    url[name as keyof typeof url] = await app.listen({ host: '127.0.0.1', port: 0 })
  }
}, 120_000)

afterAll(async () => {
  await Promise.all(apps.map(async (app) => { await app.close() }))
  await pool?.destroy()
  await db?.drop()
  await rm(dir, { recursive: true, force: true })
})

function multipart (field: string, bytes: number, name = 'big.bin'): FormData {
  const form = new FormData()
  form.append(field, new Blob([new Uint8Array(bytes)], { type: 'application/octet-stream' }), name)
  return form
}

const wrongKey = { 'x-api-key': 'wrong-key-0123456789abcdef0123456789' }

describe('an early refusal reaches the client as its status', () => {
  // Each route with a body of `bytes` (the gateway's within its 1 MiB limit).
  // Each case first asks the service's health route, so that fetch sends the upload on a
  // connection it keeps alive (how Node 26's fetch met the reset: on a reused connection).
  const cases: Array<{ route: string, health: () => string, request: (bytes: number) => Promise<Response> }> = [
    { route: 'import POST /v1/analyze', health: () => `${url.import}/health`, request: async (bytes) => await fetch(`${url.import}/v1/analyze`, { method: 'POST', headers: wrongKey, body: multipart('file', bytes, 'a.xlsx') }) },
    { route: 'import POST /v1/process', health: () => `${url.import}/health`, request: async (bytes) => await fetch(`${url.import}/v1/process`, { method: 'POST', headers: wrongKey, body: multipart('file', bytes, 'a.xlsx') }) },
    { route: 'sign POST /api/v1/sign', health: () => `${url.sign}/api/v1/health`, request: async (bytes) => await fetch(`${url.sign}/api/v1/sign`, { method: 'POST', headers: { ...wrongKey, 'content-type': 'application/json' }, body: JSON.stringify({ pdfBase64: Buffer.alloc(bytes).toString('base64') }) }) },
    { route: 'extract POST /api/v1/pdf/extract', health: () => `${url.extract}/api/v1/health`, request: async (bytes) => await fetch(`${url.extract}/api/v1/pdf/extract`, { method: 'POST', headers: wrongKey, body: multipart('file', bytes, 'a.pdf') }) },
    { route: 'extract POST /api/v1/pdf/extract-batch', health: () => `${url.extract}/api/v1/health`, request: async (bytes) => await fetch(`${url.extract}/api/v1/pdf/extract-batch`, { method: 'POST', headers: wrongKey, body: multipart('files', bytes, 'a.pdf') }) },
    { route: 'gateway POST /admin/certificados', health: () => `${url.gateway}/health`, request: async (bytes) => await fetch(`${url.gateway}/admin/certificados`, { method: 'POST', headers: { authorization: 'Bearer wrong', 'content-type': 'application/json' }, body: JSON.stringify({ empresa_codigo: 'X', pfx_base64: Buffer.alloc(Math.min(bytes, 700 * 1024)).toString('base64'), senha: 's' }) }) }
  ]
  for (const { route, health, request } of cases) {
    it(`${route}: a wrong key is answered 401 whatever the body's size (a few KB to several MB), five times each`, async () => {
      for (const bytes of [20 * 1024, 2 * MIB]) {
        for (let i = 0; i < 5; i++) {
          await (await fetch(health())).arrayBuffer()
          const res = await request(bytes)
          expect(res.status).toBe(401)
          expect(res.headers.get('connection')).toBe('close')
          await res.arrayBuffer()
        }
      }
    })
  }

  it('a file over the limit is answered 413 (extract, multipart) and a body over the limit too (sign, JSON)', async () => {
    const extract = await fetch(`${url.extract}/api/v1/pdf/extract`, { method: 'POST', headers: { 'x-api-key': 'extract-key-0123456789' }, body: multipart('file', 6 * MIB, 'a.pdf') })
    expect(extract.status).toBe(413)
    expect(await extract.json()).toMatchObject({ errors: [{ code: 'REQUEST_TOO_LARGE' }] })
    const sign = await fetch(`${url.sign}/api/v1/sign`, { method: 'POST', headers: { 'x-api-key': 'sign-key-0123456789abcdef0123456789', 'content-type': 'application/json' }, body: JSON.stringify({ pdfBase64: Buffer.alloc(4 * MIB).toString('base64') }) })
    expect(sign.status).toBe(413)
    expect(await sign.json()).toMatchObject({ code: 'FILE_TOO_LARGE' })
  })

  it('still closes on a client that announces a body and stops sending it, about a second later', async () => {
    const { connect } = await import('node:net')
    const socket = connect(Number(new URL(url.extract).port), '127.0.0.1')
    let answer = ''
    socket.on('data', (d: Buffer) => { answer += d.toString() })
    const closed = new Promise((resolve) => socket.once('close', resolve))
    const started = performance.now()
    socket.write('POST /api/v1/pdf/extract HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=b\r\nContent-Length: 100000\r\n\r\n--b\r\n')
    await closed
    expect(answer).toMatch(/^HTTP\/1\.1 401 /)
    expect(performance.now() - started).toBeGreaterThanOrEqual(DRAIN_IDLE_MS - 50)
  })
})

describe('what is drained', () => {
  it('nothing of a request that declares no body or whose body was read to its end, injected or not', async () => {
    const { default: Fastify } = await import('fastify')
    const { drainUnreadBodies } = await import('./early-answer.js')
    const app = Fastify()
    drainUnreadBodies(app, MIB, 10_000)
    app.get('/', async () => ({ ok: true }))
    app.post('/', async (request) => ({ got: request.body }))
    try {
      // A drained answer goes out with Connection: close; these go out as they are.
      const get = await app.inject({ method: 'GET', url: '/' })
      const post = await app.inject({ method: 'POST', url: '/', payload: { a: 1 } })
      expect([get.statusCode, post.statusCode]).toEqual([200, 200])
      expect(post.json()).toEqual({ got: { a: 1 } })
      expect([get.headers.connection, post.headers.connection]).toEqual(['keep-alive', 'keep-alive'])
      await app.listen({ port: 0, host: '127.0.0.1' })
      const over = await fetch(`http://127.0.0.1:${(app.server.address() as { port: number }).port}/`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"b":2}' })
      expect(await over.json()).toEqual({ got: { b: 2 } })
      expect(over.headers.get('connection')).not.toBe('close')
    } finally {
      await app.close()
    }
  })
})
