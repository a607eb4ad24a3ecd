/** The gateway's query routes in a process of their own, listening on 127.0.0.1 (see bench/gateway.bench.ts). */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { FastifyInstance } from 'fastify'
import { buildQueryApp } from '../../fixtures/gateway/query-app.js'
import type { TestCompany } from '../../fixtures/gateway/query-app.js'
import { serveRpc } from './rpc.js'

export interface GatewayStart {
  rootPem: string
  client: { pfxBase64: string, password: string, fingerprint: string, cnpj: string, validUntil: string }
  cnpjs: string[]
  fakeUrl: string
}


let app: FastifyInstance | undefined
let dir: string | undefined

serveRpc({
  start: async (a: GatewayStart) => {
    dir = await mkdtemp(join(tmpdir(), 'razao-bench-gateway-'))
    const cert = { pfx: Buffer.from(a.client.pfxBase64, 'base64'), password: a.client.password, fingerprint: a.client.fingerprint, cnpj: a.client.cnpj, validUntil: new Date(a.client.validUntil) }
    const companies: Record<string, TestCompany> = Object.fromEntries(a.cnpjs.map((c, i) => [`E${i}`, { cnpj: c, cert }]))
    app = await buildQueryApp({ pki: { rootPem: a.rootPem }, dir, companies, config: { nfeUrl: a.fakeUrl, timeoutMs: 10_000 } })
    await app.listen({ host: '127.0.0.1', port: 0 })
    const address = app.server.address()
    return typeof address === 'object' && address !== null ? address.port : 0
  }
}, async () => {
  await app?.close()
  if (dir !== undefined) await rm(dir, { recursive: true, force: true })
})
