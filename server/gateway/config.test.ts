import { randomBytes } from 'node:crypto'
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadMasterKey, MASTER_KEY_FILE } from '../../core/gateway/index.js'
import type { ConfigError } from '../config.js'
import { OFFICIAL_ENDPOINTS, loadGatewayConfig } from './config.js'

const dev = { environment: 'development' }
let dir: string
beforeAll(async () => { dir = await mkdtemp(join(tmpdir(), 'razao-gateway-config-')) })
afterAll(async () => { await rm(dir, { recursive: true, force: true }) })

function refused (env: NodeJS.ProcessEnv, environment = 'development'): ConfigError {
  try { loadGatewayConfig(env, { environment }) } catch (err) { return err as ConfigError }
  throw new Error('expected a ConfigError')
}

describe('gateway configuration', () => {
  it('defaults to loopback, port 8084, homologation endpoints and a bounded timeout', () => {
    expect(loadGatewayConfig({}, dev)).toEqual({
      host: '127.0.0.1', port: 8084, adminToken: undefined, apiKey: undefined, masterKey: undefined, tpAmb: 2,
      nfeUrl: OFFICIAL_ENDPOINTS[2].nfe, adnUrl: OFFICIAL_ENDPOINTS[2].adn, eventoUrl: OFFICIAL_ENDPOINTS[2].evento, caFile: undefined, timeoutMs: 20_000,
      cooldownMs: 3_600_000, cUFAutor: undefined,
      feed: { enabled: true, concurrency: 8, callsPerTurn: 20, idleMs: 5000, retryMs: 300_000, lookupsPerHour: 20 },
      notifications: { deliver: true, retryLimit: 8, retryDelaySeconds: 30, timeoutMs: 10_000, concurrency: 8, pollMs: 1000, keepDays: 7, eventsPollMs: 1000 }
    })
    expect(loadGatewayConfig({ GATEWAY_FEED: 'off', GATEWAY_FEED_CONCURRENCY: '2' }, dev).feed).toMatchObject({ enabled: false, concurrency: 2 })
    expect(() => loadGatewayConfig({ GATEWAY_FEED_LOOKUPS_PER_HOUR: '21' }, dev)).toThrow(/GATEWAY_FEED_LOOKUPS_PER_HOUR/)
    expect(() => loadGatewayConfig({ GATEWAY_FEED: 'yes' }, dev)).toThrow(/GATEWAY_FEED/)
    expect(loadGatewayConfig({ GATEWAY_WEBHOOKS: 'off', GATEWAY_WEBHOOK_RETRIES: '0' }, dev).notifications).toMatchObject({ deliver: false, retryLimit: 0 })
    expect(() => loadGatewayConfig({ GATEWAY_WEBHOOK_POLL_MS: '100' }, dev)).toThrow(/GATEWAY_WEBHOOK_POLL_MS/)
    expect(loadGatewayConfig({ GATEWAY_COOLDOWN_MS: '60000', GATEWAY_CUF_AUTOR: '43' }, dev)).toMatchObject({ cooldownMs: 60_000, cUFAutor: 43 })
    expect(() => loadGatewayConfig({ GATEWAY_CUF_AUTOR: '7' }, dev)).toThrow(/GATEWAY_CUF_AUTOR/)
    const prod = loadGatewayConfig({ GATEWAY_TP_AMB: '1', GATEWAY_NFE_URL: 'https://127.0.0.1:9443/ws', GATEWAY_MASTER_KEY: 'ab'.repeat(32) }, dev)
    expect(prod).toMatchObject({ tpAmb: 1, nfeUrl: 'https://127.0.0.1:9443/ws', adnUrl: OFFICIAL_ENDPOINTS[1].adn, eventoUrl: 'https://www.nfe.fazenda.gov.br/NFeRecepcaoEvento4/NFeRecepcaoEvento4.asmx' })
    expect(loadGatewayConfig({ GATEWAY_EVENTO_URL: 'https://127.0.0.1:9444/ev' }, dev).eventoUrl).toBe('https://127.0.0.1:9444/ev')
    expect(() => loadGatewayConfig({ GATEWAY_EVENTO_URL: 'http://127.0.0.1:9444/ev' }, dev)).toThrow(/GATEWAY_EVENTO_URL/)
    expect(prod.masterKey?.key.equals(Buffer.alloc(32, 0xab))).toBe(true)
  })

  it('refuses a missing master key in production, and a malformed one anywhere, without echoing it', () => {
    expect(refused({}, 'production')).toMatchObject({ variable: 'GATEWAY_MASTER_KEY', message: expect.stringMatching(/NODE_ENV=production/) })
    const secret = 'short-but-secret-value'
    const bad = refused({ GATEWAY_MASTER_KEY: secret })
    expect(bad.variable).toBe('GATEWAY_MASTER_KEY')
    expect(bad.message).not.toContain(secret)
    expect(loadGatewayConfig({ GATEWAY_MASTER_KEY: randomBytes(32).toString('base64') }, { environment: 'production' }).masterKey).toBeDefined()
  })

  it('names every bad variable', () => {
    const err = refused({ GATEWAY_PORT: 'x', GATEWAY_TP_AMB: '3', GATEWAY_NFE_URL: 'http://insecure', GATEWAY_ADMIN_TOKEN: 'short', GATEWAY_TIMEOUT_MS: '5' })
    for (const name of ['GATEWAY_PORT', 'GATEWAY_TP_AMB', 'GATEWAY_NFE_URL', 'GATEWAY_ADMIN_TOKEN', 'GATEWAY_TIMEOUT_MS']) expect(err.message).toContain(name)
    expect(err.message).not.toContain('short')
    expect(refused({ GATEWAY_CA_FILE: join(dir, 'missing.pem') }).variable).toBe('GATEWAY_CA_FILE')
  })

  it('generates the development master key once, mode 0600, and reuses it', async () => {
    const first = await loadMasterKey(undefined, dir)
    expect(first.generated).toBe(true)
    expect((await stat(join(dir, MASTER_KEY_FILE))).mode & 0o777).toBe(0o600)
    const second = await loadMasterKey(undefined, dir)
    expect(second.generated).toBe(false)
    expect(second.masterKey.key.equals(first.masterKey.key)).toBe(true)
    expect((await readFile(join(dir, MASTER_KEY_FILE), 'utf8')).trim()).toBe(first.masterKey.key.toString('hex'))
  })
})
