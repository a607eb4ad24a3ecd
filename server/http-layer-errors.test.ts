/**
 * Every answer of a service has that service's error shape, including those given before
 * any route runs (issue 22, item 10): Node's parser refusals (headers over 16 KiB, a
 * malformed request line, broken framing) through the clientErrorHandler of
 * server/http-errors.ts, and Fastify's own (no route, a body that is not JSON, a media
 * type a route does not take) through each service's handlers. All five apps listen in
 * this process, each on its own port, and are spoken to over raw sockets.
 */
import { randomBytes } from 'node:crypto'
import { mkdtemp, rm } from 'node:fs/promises'
import { connect } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freshDatabase } from '../fixtures/db/test-database.js'
import type { TestDatabase } from '../fixtures/db/test-database.js'
import { ensureApiKey, parseMasterKey } from '../core/gateway/index.js'
import { createPool } from '../workers/pool.js'
import type { WorkerPool } from '../workers/pool.js'
import { buildAgentApp } from './agent/app.js'
import { loadAgentConfig } from './agent/config.js'
import { loadConfig } from './config.js'
import { buildExtractApp } from './extract/app.js'
import { loadExtractConfig } from './extract/config.js'
import { buildGatewayApp } from './gateway/app.js'
import { loadGatewayConfig } from './gateway/config.js'
import { buildImportApp } from './import/app.js'
import { buildSignApp } from './sign/app.js'
import { loadSignConfig } from './sign/config.js'

const KEY = `key-${randomBytes(16).toString('hex')}`
let dir: string
let db: TestDatabase
let pool: WorkerPool
const closers: Array<() => Promise<unknown>> = []

interface Service {
  url: string
  /** True when `body` is this service's error shape. */
  shaped: (body: any) => boolean
  /** A request Fastify refuses before the route's code: a body that is not JSON, or a media type the route does not take. */
  refusedBody: { path: string, headers: Record<string, string>, body: string }
}
const services: Record<string, Service> = {}

const detail = (b: any): boolean => typeof b?.detail === 'string' && b.detail.length > 0 && b.statusCode === undefined
const extractShape = (b: any): boolean => b?.success === false && typeof b.requestId === 'string' && typeof b.errors?.[0]?.code === 'string' && typeof b.errors[0].message === 'string'
const signShape = (b: any): boolean => b?.success === false && typeof b.code === 'string' && typeof b.requestId === 'string' && typeof b.errors?.[0]?.message === 'string' && /^\//.test(b.path) && typeof b.timestamp === 'string'
const agentShape = (b: any): boolean => typeof b?.error === 'string' && b.error !== 'Bad Request' && b.statusCode === undefined

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'razao-http-layer-'))
  db = await freshDatabase()
  pool = createPool({ maxThreads: 1 })
  const env = { RAZAO_DATA_DIR: join(dir, 'data'), RAZAO_TMP_DIR: join(dir, 'tmp'), LOG_LEVEL: 'warn' }
  const shared = loadConfig(env, dir).shared
  const listen = async (app: { listen: (o: { host: string, port: number }) => Promise<string>, close: () => Promise<unknown> }): Promise<string> => {
    closers.push(async () => await app.close())
    return await app.listen({ host: '127.0.0.1', port: 0 })
  }
  const config = loadConfig(env, dir)
  services.import = {
    url: await listen(await buildImportApp({ shared, config: config.import, apiKey: KEY, pool, logger: false })),
    shaped: detail,
    refusedBody: { path: '/v1/analyze', headers: { 'x-api-key': KEY, 'content-type': 'application/json' }, body: '{}' }
  }
  services.sign = {
    url: await listen(await buildSignApp({ shared, config: loadSignConfig(env, shared, dir), apiKey: KEY, pool, logger: false })),
    shaped: signShape,
    refusedBody: { path: '/api/v1/sign', headers: { 'x-api-key': KEY, 'content-type': 'application/json' }, body: '{"pdfBase64": ' }
  }
  services.extract = {
    url: await listen(await buildExtractApp({ shared, config: loadExtractConfig({}), apiKey: KEY, pool, logger: false })),
    shaped: extractShape,
    refusedBody: { path: '/api/v1/pdf/extract', headers: { 'x-api-key': KEY, 'content-type': 'application/json' }, body: '{}' }
  }
  await ensureApiKey(db.pool, KEY)
  services.gateway = {
    url: await listen(await buildGatewayApp({ shared, config: loadGatewayConfig({}, shared), adminToken: KEY, masterKey: parseMasterKey(randomBytes(32).toString('hex'))!, database: { pool: db.pool }, logger: false })),
    shaped: detail,
    refusedBody: { path: '/admin/empresas', headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' }, body: '{"razao_social": ' }
  }
  const agentConfig = loadAgentConfig({ AUTOMATIONS_ROOT: dir, AGENT_API_KEY: KEY, PORT: '0' }, dir)
  services.agent = {
    url: await listen(await buildAgentApp({ shared, config: agentConfig, apiKey: agentConfig.apiKey, logger: false, env: { PATH: process.env.PATH ?? '' } })),
    shaped: agentShape,
    refusedBody: { path: '/api/v1/automations/nada/run', headers: { 'x-agent-api-key': KEY, 'content-type': 'application/json' }, body: '{"input": ' }
  }
}, 120_000)

afterAll(async () => {
  for (const close of closers) await close().catch(() => undefined)
  await pool?.destroy()
  await db?.drop()
  await rm(dir, { recursive: true, force: true })
})

/** Sends `raw` on a fresh connection and reads the whole answer until the server closes it (or 5 s pass). */
async function rawRequest (url: string, raw: string): Promise<{ status: number, headers: string, body: any }> {
  const { hostname, port } = new URL(url)
  const text = await new Promise<string>((resolve, reject) => {
    const socket = connect({ host: hostname, port: Number(port) })
    let got = ''
    socket.setEncoding('latin1')
    socket.on('data', (c: string) => { got += c })
    socket.on('error', (err) => { if (got === '') reject(err); else resolve(got) })
    socket.on('close', () => resolve(got))
    socket.setTimeout(5000, () => socket.destroy())
    socket.write(raw, 'latin1')
  })
  const [head = '', body = ''] = text.split('\r\n\r\n')
  return { status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1]), headers: head, body: body === '' ? undefined : JSON.parse(body) }
}

describe.each(['import', 'sign', 'extract', 'gateway', 'agent'])('the %s service, before any route runs', (name) => {
  it('answers headers over 16 KiB with 431 in its own error shape, with a request id', async () => {
    const s = services[name]!
    const res = await rawRequest(s.url, `GET /health HTTP/1.1\r\nHost: x\r\nX-Filler: ${'a'.repeat(20_000)}\r\n\r\n`)
    expect(res.status).toBe(431)
    expect(s.shaped(res.body)).toBe(true)
    expect(JSON.stringify(res.body)).toMatch(/16 KiB/)
    expect(res.headers).toMatch(/x-request-id: [0-9a-f-]{36}/i)
  })

  it.each([
    ['a malformed request line', 'GARBAGE\r\n\r\n'],
    ['a header line without a colon', 'GET /health HTTP/1.1\r\nHost: x\r\nnot a header\r\n\r\n'],
    ['a Content-Length that is not a number', 'POST /health HTTP/1.1\r\nHost: x\r\nContent-Length: dez\r\n\r\n']
  ])('answers %s with 400 in its own error shape', async (_what, raw) => {
    const s = services[name]!
    const res = await rawRequest(s.url, raw)
    expect(res.status).toBe(400)
    expect(s.shaped(res.body)).toBe(true)
  })

  it('answers a route that does not exist, and a body its route refuses before reading it, in its own shape', async () => {
    const s = services[name]!
    const missing = await fetch(`${s.url}/nao-existe`)
    expect(missing.status).toBeGreaterThanOrEqual(400)
    expect(s.shaped(await missing.json())).toBe(true)
    const { path, headers, body } = s.refusedBody
    const refused = await fetch(`${s.url}${path}`, { method: 'POST', headers, body })
    expect(refused.status).toBeGreaterThanOrEqual(400)
    expect(refused.status).toBeLessThan(500)
    expect(s.shaped(await refused.json())).toBe(true)
  })
})
