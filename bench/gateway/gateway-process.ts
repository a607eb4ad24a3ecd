/**
 * The gateway as it runs, in a process of its own, listening on 127.0.0.1 (see
 * bench/gateway.bench.ts): buildGatewayApp on a fresh database of the benchmark's PostgreSQL,
 * migrated, with the head office and its branches registered in the registry, the head
 * office's certificate sealed in the store (each branch inherits it), and the operational key
 * stored as its hash. Every measured call therefore pays what a real one does: the key check,
 * the registry and store read with the decryption, the guard, the TLS agent, the SOAP call.
 */
import { randomBytes } from 'node:crypto'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import type { FastifyInstance } from 'fastify'
import { migrate } from '../../core/db/migrate.js'
import { CertificateStore, createGatewayCompany, ensureApiKey, parseMasterKey } from '../../core/gateway/index.js'
import { loadConfig } from '../../server/config.js'
import { buildGatewayApp } from '../../server/gateway/app.js'
import { loadGatewayConfig } from '../../server/gateway/config.js'
import { serveRpc } from './rpc.js'

export interface GatewayStart {
  /** The benchmark's PostgreSQL (an admin connection that may create databases). */
  adminUrl: string
  rootPem: string
  client: { pfxBase64: string, password: string, cnpj: string }
  /** One CNPJ per lane; the first is the head office (the certificate's), the others its branches. */
  cnpjs: string[]
  fakeUrl: string
  apiKey: string
}

export interface GatewayStarted {
  port: number
  /** The generated empresa_codigo of each lane's company, in the order of `cnpjs`. */
  codes: string[]
}

let app: FastifyInstance | undefined
let pool: pg.Pool | undefined
let dir: string | undefined
let dropDatabase: (() => Promise<void>) | undefined

async function adminQuery (adminUrl: string, sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl })
  await client.connect()
  try { await client.query(sql) } finally { await client.end() }
}

serveRpc({
  start: async (a: GatewayStart): Promise<GatewayStarted> => {
    dir = await mkdtemp(join(tmpdir(), 'razao-bench-gateway-'))
    const name = `razao_bench_gateway_${randomBytes(5).toString('hex')}`
    await adminQuery(a.adminUrl, `CREATE DATABASE ${name}`)
    dropDatabase = async () => { await adminQuery(a.adminUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) }
    const url = new URL(a.adminUrl)
    url.pathname = `/${name}`
    pool = new pg.Pool({ connectionString: url.href, max: 8 })
    const client = await pool.connect()
    try { await migrate(client) } finally { client.release() }

    const masterKey = parseMasterKey(randomBytes(32).toString('hex'))!
    const store = new CertificateStore({ pool, masterKey })
    const [headOffice, ...branches] = a.cnpjs
    if (headOffice !== a.client.cnpj) throw new Error('the first lane must be the certificate\'s head office')
    const matriz = await createGatewayCompany(pool, { razaoSocial: 'EMPRESA TESTE GATEWAY LTDA', cnpj: headOffice })
    await store.putCertificate(matriz.empresaCodigo, Buffer.from(a.client.pfxBase64, 'base64'), a.client.password)
    const codes = [matriz.empresaCodigo]
    for (const cnpj of branches) {
      const filial = await createGatewayCompany(pool, { razaoSocial: `EMPRESA TESTE GATEWAY LTDA ${cnpj.slice(8, 12)}`, cnpj, matrizEmpresaCodigo: matriz.empresaCodigo, herdaCertificadoMatriz: true })
      codes.push(filial.empresaCodigo)
    }
    await ensureApiKey(pool, a.apiKey)

    const caFile = join(dir, 'gateway-ca.pem')
    await writeFile(caFile, a.rootPem)
    const shared = loadConfig({ LOG_LEVEL: 'silent' }).shared
    const config = loadGatewayConfig({ GATEWAY_NFE_URL: a.fakeUrl, GATEWAY_CA_FILE: caFile, GATEWAY_TIMEOUT_MS: '10000' }, shared)
    app = await buildGatewayApp({ shared, config, adminToken: randomBytes(24).toString('hex'), masterKey, database: { pool }, logger: false })
    await app.listen({ host: '127.0.0.1', port: 0 })
    const address = app.server.address()
    return { port: typeof address === 'object' && address !== null ? address.port : 0, codes }
  }
}, async () => {
  await app?.close()
  await pool?.end()
  await dropDatabase?.()
  if (dir !== undefined) await rm(dir, { recursive: true, force: true })
})
