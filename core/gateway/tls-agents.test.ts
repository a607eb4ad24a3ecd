import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createGatewayPki } from '../../fixtures/gateway/pki.js'
import type { GatewayPki } from '../../fixtures/gateway/pki.js'
import { startMtlsServer } from '../../fixtures/gateway/mtls-server.js'
import type { MtlsServer } from '../../fixtures/gateway/mtls-server.js'
import { callHttps } from './https-call.js'
import { TlsAgentCache, splitPem } from './tls-agents.js'

let pki: GatewayPki
let server: MtlsServer

beforeAll(async () => {
  pki = createGatewayPki()
  server = await startMtlsServer(pki, (_req, res, cnpj) => { res.end(cnpj ?? 'none') })
})
afterAll(async () => { await server.close() })

async function get (agents: TlsAgentCache, cert = pki.client, owner?: string): Promise<string> {
  const answer = await callHttps({ url: `${server.origin}/who`, method: 'GET', headers: {}, agent: await agents.agentFor(cert, owner), timeoutMs: 5000, service: 'fake' })
  return answer.body
}

describe('TlsAgentCache', () => {
  it('presents the certificate, trusts the extra root, and reuses one connection across calls', async () => {
    const agents = new TlsAgentCache({ extraCaPem: pki.rootPem })
    const before = server.handshakes()
    for (let i = 0; i < 5; i++) expect(await get(agents)).toBe('11222333000181')
    expect(server.handshakes() - before).toBe(1)
    expect(agents.size).toBe(1)
    agents.close()
  })

  it('does not trust the fake without GATEWAY_CA_FILE: Node\'s roots alone do not cover it', async () => {
    const agents = new TlsAgentCache()
    await expect(get(agents)).rejects.toMatchObject({ status: 503, message: expect.stringMatching(/TLS handshake .* failed .*GATEWAY_CA_FILE/) })
    agents.close()
  })

  it('closes the old agent when a company\'s certificate is replaced, but not while another company still uses it', async () => {
    const agents = new TlsAgentCache({ extraCaPem: pki.rootPem })
    const headOffice = await agents.agentFor(pki.client, 'MATRIZ')
    expect(await agents.agentFor(pki.client, 'FILIAL')).toBe(headOffice)
    await agents.agentFor(pki.alphanumeric, 'MATRIZ')
    expect(agents.size).toBe(2)
    expect(await agents.agentFor(pki.client, 'FILIAL')).toBe(headOffice)
    await agents.agentFor(pki.alphanumeric, 'FILIAL')
    expect(agents.size).toBe(1)
    const before = server.handshakes()
    expect(await get(agents, pki.client, 'MATRIZ')).toBe('11222333000181')
    expect(server.handshakes() - before).toBe(1)
    agents.evict(pki.client.fingerprint)
    expect(await get(agents, pki.client, 'MATRIZ')).toBe('11222333000181')
    expect(server.handshakes() - before).toBe(2)
    agents.close()
  })

  it('drops an agent, and the key it holds, once unused for the idle period', async () => {
    let t = 0
    const agents = new TlsAgentCache({ extraCaPem: pki.rootPem, agentIdleMs: 60_000, now: () => t })
    const first = await agents.agentFor(pki.client)
    t = 30_000
    expect(await agents.agentFor(pki.client)).toBe(first)
    t = 80_000
    expect(await agents.agentFor(pki.alphanumeric)).not.toBe(first)
    expect(agents.size).toBe(2)
    t = 200_000
    expect(await agents.agentFor(pki.client)).not.toBe(first)
    expect(agents.size).toBe(1)
    agents.close()
  })

  it('refuses a PKCS#12 its password does not open with 422, naming no secret', async () => {
    const agents = new TlsAgentCache()
    let error: unknown
    try { await agents.agentFor({ ...pki.client, password: 'senha-errada' }) } catch (e) { error = e }
    expect(error).toMatchObject({ status: 422, code: 'GATEWAY_CERTIFICATE_INCOMPATIBLE' })
    expect((error as Error).message).not.toContain('senha-errada')
    expect(agents.size).toBe(0)
  })
})

describe('splitPem', () => {
  it('keeps every certificate of a bundle and nothing else', () => {
    expect(splitPem(`junk\n${pki.rootPem}\n# comment\n${pki.server.certPem}`)).toHaveLength(2)
    expect(splitPem('')).toEqual([])
  })
})
