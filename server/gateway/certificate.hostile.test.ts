/**
 * Hostile certificates at the gateway's upload (issue 22, item 1): a PKCS#12 asking for
 * 10,000,000 key-derivation iterations is refused before any is run, and a file at the
 * cap is opened off the main thread, so that another service of the same process (the
 * agent here, as under `serve all`) keeps answering while it is derived. Both are seen
 * as events, not as durations: the key derivations run on this thread (forge's, watched),
 * the threads started (workers/paths.ts's startWorker, watched), and the agent's answers
 * counted between the moment the certificate's thread comes online and its result.
 */
import { randomBytes } from 'node:crypto'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { WorkerOptions } from 'node:worker_threads'
import forge from 'node-forge'
import type { FastifyInstance } from 'fastify'
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest'
import { freshDatabase } from '../../fixtures/db/test-database.js'
import type { TestDatabase } from '../../fixtures/db/test-database.js'
import { withIterations } from '../../fixtures/pdf/pkcs12-iterations.js'
import { ensureApiKey, parseMasterKey } from '../../core/gateway/index.js'
import { MAX_PKCS12_ITERATIONS, createDevChain } from '../../core/sign/index.js'
import type { DevChain } from '../../core/sign/index.js'
import { loadConfig } from '../config.js'
import { buildAgentApp } from '../agent/app.js'
import type { AgentApp } from '../agent/app.js'
import { loadAgentConfig } from '../agent/config.js'
import { buildGatewayApp } from './app.js'
import { loadGatewayConfig } from './config.js'
import { startWorker } from '../../workers/paths.js'
import type * as PathsModule from '../../workers/paths.js'

/** The agent's /health answers so far, and, for each thread started, that count when it came online and when it sent its result. */
const watch = vi.hoisted(() => ({ healthAnswers: 0, threads: [] as Array<{ name: string, online?: number, result?: number }> }))

// The threads started (each still starts and works as it would), with the moments above.
vi.mock('../../workers/paths.js', async (importOriginal) => {
  const paths = await importOriginal<typeof PathsModule>()
  return {
    ...paths,
    startWorker: vi.fn((name: string, options: WorkerOptions) => {
      const worker = paths.startWorker(name, options)
      const thread: { name: string, online?: number, result?: number } = { name }
      watch.threads.push(thread)
      worker.once('online', () => { thread.online = watch.healthAnswers })
      worker.once('message', () => { thread.result = watch.healthAnswers })
      return worker
    })
  }
})

/** Every way forge derives a key from a password (the PKCS#12 KDF, PBKDF2), watched on this thread. */
function watchDerivations (): () => number {
  const pbe = (forge.pki as unknown as { pbe: { generatePkcs12Key: (...args: unknown[]) => unknown } }).pbe
  const spies = [vi.spyOn(forge.pkcs12, 'generateKey'), vi.spyOn(pbe, 'generatePkcs12Key'), vi.spyOn(forge.pkcs5, 'pbkdf2')]
  return () => spies.reduce((n, spy) => n + spy.mock.calls.length, 0)
}

const ADMIN = `admin-${randomBytes(16).toString('hex')}`
const admin = { authorization: `Bearer ${ADMIN}` }
let db: TestDatabase
let gateway: FastifyInstance
let agent: AgentApp
let agentUrl: string
let dir: string
let chain: DevChain
let empresa: string

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'razao-cert-hostile-'))
  db = await freshDatabase()
  await ensureApiKey(db.pool, `op-${randomBytes(16).toString('hex')}`)
  const shared = loadConfig({ LOG_LEVEL: 'warn', RAZAO_DATA_DIR: join(dir, '.data') }, dir).shared
  gateway = await buildGatewayApp({ shared, config: loadGatewayConfig({}, shared), adminToken: ADMIN, masterKey: parseMasterKey(randomBytes(32).toString('hex'))!, database: { pool: db.pool }, logger: false })
  const agentConfig = loadAgentConfig({ AUTOMATIONS_ROOT: dir, AGENT_API_KEY: 'k'.repeat(32), PORT: '0' }, dir)
  agent = await buildAgentApp({ shared, config: agentConfig, apiKey: agentConfig.apiKey, logger: false, env: { PATH: process.env.PATH ?? '' } })
  agentUrl = await agent.listen({ host: '127.0.0.1', port: 0 })
  chain = createDevChain({ document: '11222333000181', password: 'senha' })
  const created = await gateway.inject({ method: 'POST', url: '/admin/empresas', headers: admin, payload: { razao_social: 'Hostil Ltda', cnpj: '11222333000181' } })
  empresa = created.json().empresa_codigo
}, 60_000)

afterEach(() => {
  vi.restoreAllMocks()
  vi.mocked(startWorker).mockClear()
  watch.threads.length = 0
})

afterAll(async () => {
  await gateway?.close()
  await agent?.close()
  await db?.drop()
  await rm(dir, { recursive: true, force: true })
})

/** Uploads `pfx` while polling the agent's /health every 20 ms; the slowest answer is the freeze. */
async function uploadWatchingHealth (pfx: Buffer): Promise<{ status: number, body: Record<string, unknown>, ms: number, slowestHealthMs: number }> {
  let slowest = 0
  let done = false
  const poll = (async () => {
    while (!done) {
      const started = performance.now()
      const res = await fetch(`${agentUrl}/health`)
      await res.arrayBuffer()
      watch.healthAnswers++
      slowest = Math.max(slowest, performance.now() - started)
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
  })()
  const started = performance.now()
  const res = await gateway.inject({ method: 'POST', url: '/admin/certificados', headers: admin, payload: { empresa_codigo: empresa, pfx_base64: pfx.toString('base64'), senha: 'senha' } })
  const ms = performance.now() - started
  done = true
  await poll
  return { status: res.statusCode, body: res.json(), ms, slowestHealthMs: slowest }
}

describe('certificate upload, hostile', () => {
  it('refuses a PKCS#12 whose MAC asks for 10,000,000 iterations, fast, with the 422 of an unreadable certificate', async () => {
    const crafted = withIterations(chain.pkcs12, { mac: 10_000_000 })
    const derivations = watchDerivations()
    const { status, body, ms, slowestHealthMs } = await uploadWatchingHealth(crafted)
    expect(status).toBe(422)
    expect(body.detail).toMatch(/10,000,000 key-derivation iterations/)
    // Before: 13 s of derivation on the main thread. Now: an ASN.1 walk, no key derived
    // and no thread started.
    expect(derivations()).toBe(0)
    expect(startWorker).not.toHaveBeenCalled()
    // Hang catchers only: about 1 s and 30 ms, at a load of 3 as of 11.
    expect(ms).toBeLessThan(20_000)
    expect(slowestHealthMs).toBeLessThan(1000)
  })

  it('opens a slow file (30,000 iterations, below the cap) off the main thread: the agent\'s /health answers promptly meanwhile', async () => {
    // A file at the cap takes forge tens of seconds to make and as long to open; 30,000
    // iterations take a second or more, enough to see whether the main thread is held.
    const p12 = forge.pkcs12.toPkcs12Asn1(forge.pki.privateKeyFromPem(chain.signer.keyPem), [forge.pki.certificateFromPem(chain.signer.certPem)], 'senha', { algorithm: 'aes256', count: 30_000 })
    const atCap = Buffer.from(forge.asn1.toDer(p12).getBytes(), 'binary')
    const derivations = watchDerivations()
    const { status } = await uploadWatchingHealth(atCap)
    expect(status).toBe(201)
    // The file was opened in a thread of its own, and no key was derived on this one.
    expect(watch.threads.map((t) => t.name)).toEqual(['pkcs12-isolate'])
    expect(derivations()).toBe(0)
    // The agent kept answering while that thread worked: answers arrived between the
    // thread coming online and its result (a main thread held by the derivation, as
    // before, would answer none in between).
    const [thread] = watch.threads
    expect(thread!.result! - thread!.online!).toBeGreaterThanOrEqual(3)
  }, 120_000)

  it(`refuses one count past the cap (${MAX_PKCS12_ITERATIONS.toLocaleString('en')}) with the same 422`, async () => {
    const { status, body } = await uploadWatchingHealth(withIterations(chain.pkcs12, { key: MAX_PKCS12_ITERATIONS + 1 }))
    expect(status).toBe(422)
    expect(body.detail).toMatch(/iterations/)
  })
})
