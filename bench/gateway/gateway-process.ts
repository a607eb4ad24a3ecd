/**
 * The gateway as it runs, in a process of its own, listening on 127.0.0.1 (see
 * bench/gateway.bench.ts): buildGatewayApp on a fresh database of the benchmark's PostgreSQL,
 * migrated, with the head office and its branches registered in the registry, the head
 * office's certificate sealed in the store (each branch inherits it), and the operational key
 * stored as its hash. Every measured call therefore pays what a real one does: the key check,
 * the registry and store read with the decryption (kept a few seconds per company, as in
 * production), the guard's database round trip, the TLS agent, the SOAP call.
 */
import { randomBytes } from 'node:crypto'
import { createServer } from 'node:http'
import type { Server } from 'node:http'
import { readFileSync, readdirSync } from 'node:fs'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import type { FastifyInstance } from 'fastify'
import { migrate } from '../../core/db/migrate.js'
import { CertificateStore, TlsAgentCache, createGatewayCompany, ensureApiKey, parseMasterKey, queryNfeDistribution } from '../../core/gateway/index.js'
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

/** CPU time used so far, ms: this process, and the database server's processes (undefined where /proc or the data folder cannot be read, e.g. a remote server). */
export interface GatewayCpu { process: number, database: number | undefined }

export interface GatewayStarted {
  port: number
  /** The floor: a bare node:http relay in this process (no Fastify, key, registry, guard or validation). */
  relayPort: number
  /** The generated empresa_codigo of each lane's company, in the order of `cnpjs`. */
  codes: string[]
}

let app: FastifyInstance | undefined
let relay: Server | undefined
let relayAgents: TlsAgentCache | undefined
let pool: pg.Pool | undefined
let dir: string | undefined
let dropDatabase: (() => Promise<void>) | undefined
let postmasterPid: number | undefined
/** CPU this process spent reading /proc for the counters, ms: not the gateway's, left out of its figure. */
let countingMs = 0

const cpuNowMs = (): number => { const u = process.cpuUsage(); return (u.user + u.system) / 1000 }

/** utime + stime of a process from /proc, ms (fields 14 and 15, after the command's closing parenthesis; clock ticks of 10 ms). */
function procCpuMs (pid: string): { ppid: number, ms: number } | undefined {
  let stat: string
  try { stat = readFileSync(`/proc/${pid}/stat`, 'utf8') } catch { return undefined }
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return { ppid: Number(f[1]), ms: (Number(f[11]) + Number(f[12])) * 10 }
}

/**
 * The postmaster and its children (the backends, the WAL writer, …): the whole server's CPU.
 * Read synchronously, so that what the reading costs is measured here and left out.
 */
function databaseCpuMs (): number | undefined {
  if (postmasterPid === undefined) return undefined
  const started = cpuNowMs()
  let total = 0
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue
    const p = procCpuMs(pid)
    if (p !== undefined && (Number(pid) === postmasterPid || p.ppid === postmasterPid)) total += p.ms
  }
  countingMs += cpuNowMs() - started
  return total
}

/** The server's data folder names its postmaster in postmaster.pid; readable when the server runs here, as the bench's embedded one does. */
async function findPostmaster (db: pg.Pool): Promise<number | undefined> {
  const { rows } = await db.query<{ dir: string }>("SELECT current_setting('data_directory') AS dir").catch(() => ({ rows: [] }))
  const dir = rows[0]?.dir
  if (dir === undefined) return undefined
  let first = NaN
  try { first = Number(readFileSync(join(dir, 'postmaster.pid'), 'utf8').split('\n')[0]) } catch {}
  return Number.isInteger(first) && procCpuMs(String(first)) !== undefined ? first : undefined
}

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
    postmasterPid = await findPostmaster(pool)

    const caFile = join(dir, 'gateway-ca.pem')
    await writeFile(caFile, a.rootPem)
    const shared = loadConfig({ LOG_LEVEL: 'silent' }).shared
    const config = loadGatewayConfig({ GATEWAY_NFE_URL: a.fakeUrl, GATEWAY_CA_FILE: caFile, GATEWAY_TIMEOUT_MS: '10000' }, shared)
    app = await buildGatewayApp({ shared, config, adminToken: randomBytes(24).toString('hex'), masterKey, database: { pool }, logger: false })
    await app.listen({ host: '127.0.0.1', port: 0 })
    const address = app.server.address()

    // The floor of any gateway process here: read the JSON, make the same upstream call with
    // the same client and certificate, write the answer; nothing else.
    const agents = relayAgents = new TlsAgentCache({ extraCaPem: a.rootPem })
    const certificate = await store.resolveCertificate(matriz.empresaCodigo)
    relay = createServer((req, res) => {
      const chunks: Buffer[] = []
      req.on('data', (c: Buffer) => chunks.push(c))
      req.on('end', () => {
        const q = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { cnpj_consulta: string, ult_nsu: string }
        agents.agentFor(certificate)
          .then(async (agent) => await queryNfeDistribution({ url: a.fakeUrl, agent, timeoutMs: 10_000, tpAmb: 2, cnpj: q.cnpj_consulta, ultNSU: q.ult_nsu }))
          .then((ret) => {
            const body = JSON.stringify({ success: true, cStat: ret.cStat, xMotivo: ret.xMotivo, ultNSU: ret.ultNSU, maxNSU: ret.maxNSU, documentos: ret.documentos })
            res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body)
          }, (err: Error) => { res.writeHead(500).end(err.message) })
      })
    })
    await new Promise<void>((resolve) => relay!.listen(0, '127.0.0.1', resolve))
    const relayAddress = relay.address()
    return {
      port: typeof address === 'object' && address !== null ? address.port : 0,
      relayPort: typeof relayAddress === 'object' && relayAddress !== null ? relayAddress.port : 0,
      codes
    }
  },
  cpu: async (): Promise<GatewayCpu> => {
    const database = databaseCpuMs()
    return { process: cpuNowMs() - countingMs, database }
  }
}, async () => {
  relay?.closeAllConnections()
  await new Promise((resolve) => relay === undefined ? resolve(undefined) : relay.close(resolve))
  relayAgents?.close()
  await app?.close()
  await pool?.end()
  await dropDatabase?.()
  if (dir !== undefined) await rm(dir, { recursive: true, force: true })
})
