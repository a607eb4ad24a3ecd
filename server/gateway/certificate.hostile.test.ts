/**
 * Hostile certificates at the gateway's upload (issue 22, item 1): a PKCS#12 asking for
 * 10,000,000 key-derivation iterations is refused before any is run, and a file at the
 * cap is opened off the main thread, so that another service of the same process (the
 * agent here, as under `serve all`) keeps answering while it is derived.
 */
import { randomBytes } from 'node:crypto'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import forge from 'node-forge'
import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
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
    const { status, body, ms, slowestHealthMs } = await uploadWatchingHealth(crafted)
    expect(status).toBe(422)
    expect(body.detail).toMatch(/10,000,000 key-derivation iterations/)
    // Before: 13 s of derivation on the main thread. Now: a worker's start and an ASN.1 walk.
    expect(ms).toBeLessThan(5000)
    expect(slowestHealthMs).toBeLessThan(1000)
  })

  it('opens a slow file (30,000 iterations, below the cap) off the main thread: the agent\'s /health answers promptly meanwhile', async () => {
    // A file at the cap takes forge tens of seconds to make and as long to open; 30,000
    // iterations take a second or more, enough to see whether the main thread is held.
    const p12 = forge.pkcs12.toPkcs12Asn1(forge.pki.privateKeyFromPem(chain.signer.keyPem), [forge.pki.certificateFromPem(chain.signer.certPem)], 'senha', { algorithm: 'aes256', count: 30_000 })
    const atCap = Buffer.from(forge.asn1.toDer(p12).getBytes(), 'binary')
    const { status, ms, slowestHealthMs } = await uploadWatchingHealth(atCap)
    expect(status).toBe(201)
    // The derivation takes a second or more; the main thread stays free all along.
    expect(ms).toBeGreaterThan(300)
    expect(slowestHealthMs).toBeLessThan(Math.max(250, ms / 4))
  }, 120_000)

  it(`refuses one count past the cap (${MAX_PKCS12_ITERATIONS.toLocaleString('en')}) with the same 422`, async () => {
    const { status, body } = await uploadWatchingHealth(withIterations(chain.pkcs12, { key: MAX_PKCS12_ITERATIONS + 1 }))
    expect(status).toBe(422)
    expect(body.detail).toMatch(/iterations/)
  })
})
