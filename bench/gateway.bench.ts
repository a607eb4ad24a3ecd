/**
 * Gateway overhead (issue 15): `POST /nfe/distribuicao-dfe` through the gateway as it runs
 * (buildGatewayApp on PostgreSQL: the key checked against its stored hash, the company and
 * its head office's sealed certificate read from the registry and decrypted (then reused
 * for a few seconds, as in production), the waiting period and per-CNPJ turn read and
 * written in the database for every call, a real HTTP
 * listener on 127.0.0.1, a keep-alive HTTP client) against the same
 * NF-e query sent straight to the loopback fake with the same TLS client (the same agent
 * cache, the same queryNfeDistribution), at concurrency 1 and 16. Overhead = gateway
 * median − direct median of the same run. The fake answers `docs` documents per call with
 * its pacing rules off (a benchmark repeats one query); each lane queries its own branch
 * CNPJ, all under the head office's certificate, so the per-CNPJ serialization never
 * queues a lane behind another and the concurrency is real at the fake. (Sixteen calls for
 * one CNPJ would be a queue by the authority's rule, one upstream call at a time: not ours
 * to cut.) A lane asks again as soon as it has its answer, so the gateway keeps the CNPJ's
 * turn between its calls (core/gateway/query-guard.ts).
 *
 * The database is BENCH_DATABASE_URL's server or an embedded one for the run (as for
 * --only process). The fake and the gateway each run in a child process (bench/gateway/), as the authority
 * and the service would; the client (both the direct TLS client and the HTTP client of
 * the gateway) runs here. Three busy processes share the machine's cores, so at
 * concurrency 16 the latencies are mostly queueing on them. Full TLS handshakes at the
 * fake are counted per measured row: with keep-alive agents they stay at 0 per call.
 *
 *   node --import tsx bench/gateway.bench.ts [--calls 400] [--min-ms 2000] [--docs 10] [--concurrency 1,16]
 *
 * `benchGateway` and `gatewayTable` are exported for bench/run.ts (`--only gateway`).
 */
import { randomBytes } from 'node:crypto'
import { request as httpRequest, Agent as HttpAgent } from 'node:http'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { availableParallelism, loadavg } from 'node:os'
import { isValidCnpj } from '../core/cnpj.js'
import { TlsAgentCache, queryNfeDistribution } from '../core/gateway/index.js'
import { createGatewayPki } from '../fixtures/gateway/pki.js'
import type { FakeStart } from './gateway/fake-process.js'
import type { GatewayCpu, GatewayStart, GatewayStarted } from './gateway/gateway-process.js'
import { startChild } from './gateway/rpc.js'
import { withBenchDatabase } from './import-process.bench.js'
import { spreadOf, type Spread } from './lib/spread.js'

/** The operational key of the benchmark's gateway (stored as its hash, like any). */
const API_KEY = `bench-${randomBytes(16).toString('hex')}`

export interface GatewayBenchOptions {
  /** Measured calls per row, at least; a row also lasts at least `minMs`. */
  calls: number
  minMs: number
  /** Documents in each answer. */
  docs: number
  concurrency: number[]
  /** Alternating direct/gateway rounds per concurrency (each round measures both). */
  rounds: number
  /** PostgreSQL the gateway's registry and store live in; unset: BENCH_DATABASE_URL or an embedded server for the run. */
  adminUrl?: string
}

/** `relay`: the floor, a bare process hop (see bench/gateway/gateway-process.ts). */
export type GatewayPath = 'direct' | 'relay' | 'gateway'

export interface GatewayBenchRow {
  path: GatewayPath
  concurrency: number
  calls: number
  medianMs: number
  p95Ms: number
  /** Of the calls' latencies, for the JSON results (bench/lib/results.ts). */
  spread: Spread | undefined
  perSecond: number
  /** Full TLS handshakes the fake saw during the measured calls. */
  handshakes: number
  /**
   * CPU time per call, ms, of the gateway's process (which also runs the relay) and of the
   * database server; undefined where it cannot be read. Unlike latency it does not grow
   * with the machine's load, so it tells what a path costs on a busy machine.
   */
  cpuMsPerCall: { process: number, database: number | undefined }
}

export interface GatewayBenchResult {
  rows: GatewayBenchRow[]
  docs: number
  answerBytes: number
}

/** Issue 15's goal: under 2 ms of median overhead per call. */
const OVERHEAD_GOAL_MS = 2
/** Issue 24's goal: at most 1 ms of median overhead beyond the bare relay, at concurrency 16. */
const BEYOND_FLOOR_GOAL_MS = 1

function percentile (sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))]!
}

/** Establishments 0001..n of the test root, with their check digits. */
function branchCnpjs (n: number): string[] {
  const out: string[] = []
  for (let order = 1; out.length < n; order++) {
    const base = `11222333${String(order).padStart(4, '0')}`
    for (let dv = 0; dv < 100; dv++) {
      const c = base + String(dv).padStart(2, '0')
      if (isValidCnpj(c)) { out.push(c); break }
    }
  }
  return out
}

type CallOne = (lane: number) => Promise<void>

/** What the children count, read before and after a measured row. */
interface Counters { handshakes: number, cpu: GatewayCpu }

interface Measured { latencies: number[], wallMs: number, handshakes: number, cpuMs: number, databaseCpuMs: number | undefined }

async function measure (call: CallOne, concurrency: number, calls: number, minMs: number, counters: () => Promise<Counters>): Promise<Measured> {
  const latencies: number[] = []
  let next = 0
  const before = await counters()
  const started = performance.now()
  const lane = async (i: number): Promise<void> => {
    while (next < calls || performance.now() - started < minMs) {
      next++
      const t0 = performance.now()
      await call(i)
      latencies.push(performance.now() - t0)
    }
  }
  await Promise.all(Array.from({ length: concurrency }, (_, i) => lane(i)))
  const wallMs = performance.now() - started
  const after = await counters()
  return {
    latencies,
    wallMs,
    handshakes: after.handshakes - before.handshakes,
    cpuMs: after.cpu.process - before.cpu.process,
    databaseCpuMs: after.cpu.database === undefined || before.cpu.database === undefined ? undefined : after.cpu.database - before.cpu.database
  }
}

export async function benchGateway (options: Partial<GatewayBenchOptions> = {}, log: (line: string) => void = () => {}): Promise<GatewayBenchResult> {
  if (options.adminUrl === undefined) return await withBenchDatabase(async (adminUrl) => await benchGateway({ ...options, adminUrl }, log))
  const o: GatewayBenchOptions = { calls: 400, minMs: 2000, docs: 10, concurrency: [1, 16], rounds: 3, ...options }
  const lanes = Math.max(...o.concurrency)
  const cnpjs = branchCnpjs(lanes)
  const pki = createGatewayPki()
  const fakeProcess = startChild('./fake-process.ts')
  const gatewayProcess = startChild('./gateway-process.ts')
  const agents = new TlsAgentCache({ extraCaPem: pki.rootPem })
  const httpAgent = new HttpAgent({ keepAlive: true, maxSockets: lanes })
  const fakeUrl = await fakeProcess.call<string>('start', { pki: { clientCaPem: pki.clientCaPem, server: { keyPem: pki.server.keyPem, certPem: pki.server.certPem } }, cnpjs, docs: o.docs } satisfies FakeStart)
  const { client } = pki
  const { port, relayPort, codes } = await gatewayProcess.call<GatewayStarted>('start', {
    adminUrl: options.adminUrl, rootPem: pki.rootPem, cnpjs, fakeUrl, apiKey: API_KEY,
    client: { pfxBase64: client.pfx.toString('base64'), password: client.password, cnpj: client.cnpj }
  } satisfies GatewayStart)
  const counters = async (): Promise<Counters> => ({ handshakes: await fakeProcess.call<number>('handshakes'), cpu: await gatewayProcess.call<GatewayCpu>('cpu') })
  const ZERO = '0'.repeat(15)
  let answerBytes = 0

  const direct: CallOne = async (lane) => {
    const ret = await queryNfeDistribution({ url: fakeUrl, agent: await agents.agentFor(client, `E${lane}`), timeoutMs: 10_000, tpAmb: 2, cnpj: cnpjs[lane]!, ultNSU: ZERO })
    if (ret.cStat !== '138' || ret.documentos.length !== o.docs) throw new Error(`direct call answered cStat ${ret.cStat} with ${ret.documentos.length} documents`)
  }
  const payloads = cnpjs.map((c, i) => JSON.stringify({ empresa_codigo: codes[i], cnpj_consulta: c, ult_nsu: ZERO }))
  const overHttp = (target: number): CallOne => (lane) => new Promise<void>((resolve, reject) => {
    const body = payloads[lane]!
    const req = httpRequest({
      host: '127.0.0.1', port: target, path: '/nfe/distribuicao-dfe', method: 'POST', agent: httpAgent,
      headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), 'x-api-key': API_KEY }
    }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8')
        answerBytes = text.length
        const json = JSON.parse(text) as { cStat?: string, documentos?: unknown[] }
        if (res.statusCode !== 200 || json.cStat !== '138' || json.documentos?.length !== o.docs) reject(new Error(`gateway answered ${res.statusCode}: ${text.slice(0, 200)}`))
        else resolve()
      })
      res.on('error', reject)
    })
    req.on('error', reject)
    req.end(body)
  })
  const viaGateway = overHttp(port)
  const viaRelay = overHttp(relayPort)

  const rows: GatewayBenchRow[] = []
  try {
    for (const concurrency of o.concurrency) {
      // Warm-up: JIT, and every lane's TLS connection opened before anything is measured.
      for (const call of [direct, viaRelay, viaGateway]) await measure(call, concurrency, concurrency * 50, 500, counters)
      const empty = (): Measured => ({ latencies: [], wallMs: 0, handshakes: 0, cpuMs: 0, databaseCpuMs: 0 })
      const collected: Record<GatewayPath, Measured> = { direct: empty(), relay: empty(), gateway: empty() }
      for (let round = 0; round < o.rounds; round++) {
        for (const [path, call] of [['direct', direct], ['relay', viaRelay], ['gateway', viaGateway]] as const) {
          const m = await measure(call, concurrency, Math.ceil(o.calls / o.rounds), o.minMs / o.rounds, counters)
          const c = collected[path]
          c.latencies.push(...m.latencies)
          c.wallMs += m.wallMs
          c.handshakes += m.handshakes
          c.cpuMs += m.cpuMs
          c.databaseCpuMs = c.databaseCpuMs === undefined || m.databaseCpuMs === undefined ? undefined : c.databaseCpuMs + m.databaseCpuMs
        }
      }
      for (const path of ['direct', 'relay', 'gateway'] as const) {
        const c = collected[path]
        c.latencies.sort((a, b) => a - b)
        const row: GatewayBenchRow = {
          path, concurrency, calls: c.latencies.length, medianMs: percentile(c.latencies, 0.5), p95Ms: percentile(c.latencies, 0.95), spread: spreadOf(c.latencies),
          perSecond: c.latencies.length / (c.wallMs / 1000), handshakes: c.handshakes,
          cpuMsPerCall: { process: c.cpuMs / c.latencies.length, database: c.databaseCpuMs === undefined ? undefined : c.databaseCpuMs / c.latencies.length }
        }
        rows.push(row)
        log(`  ${path.padEnd(7)} c=${concurrency}: ${row.calls} calls, median ${row.medianMs.toFixed(2)} ms, p95 ${row.p95Ms.toFixed(2)} ms, ${row.perSecond.toFixed(0)}/s, ${row.handshakes} handshakes, ` +
          `CPU/call ${row.cpuMsPerCall.process.toFixed(3)} ms gateway process, ${row.cpuMsPerCall.database?.toFixed(3) ?? '?'} ms database`)
      }
    }
  } finally {
    httpAgent.destroy()
    agents.close()
    await gatewayProcess.stop()
    await fakeProcess.stop()
  }
  return { rows, docs: o.docs, answerBytes }
}

export function gatewayTable (result: GatewayBenchResult): string {
  const lines = [
    `### Gateway overhead: POST /nfe/distribuicao-dfe vs the same query straight to the loopback fake (${result.docs} documents per answer, ${Math.round(result.answerBytes / 1024)} KB of JSON)`,
    '',
    `Fake, gateway (with PostgreSQL) and client in their own processes on ${availableParallelism()} cores, machine load average ${loadavg()[0]!.toFixed(1)} at the end; the overhead includes the client's HTTP hop to the gateway over loopback. Each lane queries its own CNPJ again as soon as it has an answer, as a client paging through a CNPJ's documents does: the gateway takes that CNPJ's turn in the database (shared by instances, with the waiting period) on the first call and keeps it for the next calls, taking it again every second. ` +
      'CPU ms per call: the gateway\'s process (which also runs the relay) and the database server, from the kernel\'s counters; unlike latency they do not grow with the machine\'s load.',
    '',
    '| path | concurrency | calls | median ms | p95 ms | calls/s | median overhead ms | p95 overhead ms | TLS handshakes (per call) | CPU ms/call, gateway process | CPU ms/call, database |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|'
  ]
  const targets: string[] = []
  for (const r of result.rows) {
    const d = result.rows.find((x) => x.path === 'direct' && x.concurrency === r.concurrency)
    const over = r.path !== 'direct' && d !== undefined
    const name = r.path === 'direct' ? 'direct (same TLS client)' : r.path === 'relay' ? 'through a bare relay (floor)' : 'through the gateway'
    lines.push(`| ${name} | ${r.concurrency} | ${r.calls} | ${r.medianMs.toFixed(2)} | ${r.p95Ms.toFixed(2)} | ${r.perSecond.toFixed(0)} | ` +
      `${over ? (r.medianMs - d.medianMs).toFixed(2) : '—'} | ${over ? (r.p95Ms - d.p95Ms).toFixed(2) : '—'} | ${r.handshakes} (${(r.handshakes / r.calls).toFixed(3)}) | ` +
      `${r.cpuMsPerCall.process.toFixed(3)} | ${r.cpuMsPerCall.database?.toFixed(3) ?? '—'} |`)
    if (over && r.path === 'relay') {
      targets.push(`| (floor: a bare process hop with the same client, no key, registry or guard; median overhead at concurrency ${r.concurrency}) | ${(r.medianMs - d.medianMs).toFixed(2)} ms | — |`)
    }
    const relay = result.rows.find((x) => x.path === 'relay' && x.concurrency === r.concurrency)
    if (over && r.path === 'gateway' && relay !== undefined) {
      const beyond = r.medianMs - relay.medianMs
      const goal = r.concurrency >= 16 ? BEYOND_FLOOR_GOAL_MS : OVERHEAD_GOAL_MS
      targets.push(`| gateway overhead beyond that floor, concurrency ${r.concurrency}, goal ≤ ${goal} ms | ${beyond.toFixed(2)} ms | ${beyond <= goal ? 'PASS' : 'FAIL'} |`)
      // Latency on a loaded machine is mostly queueing for the cores; the CPU the gateway adds is not.
      const cpu = (x: GatewayBenchRow): number => x.cpuMsPerCall.process + (x.cpuMsPerCall.database ?? 0)
      targets.push(`| (CPU the gateway adds per call beyond the relay, its process and the database, concurrency ${r.concurrency}) | ${(cpu(r) - cpu(relay)).toFixed(3)} ms | — |`)
    }
    if (over && r.path === 'gateway') {
      const overhead = r.medianMs - d.medianMs
      const floor = relay === undefined ? undefined : relay.medianMs - d.medianMs
      const beyondMachine = floor !== undefined && floor >= OVERHEAD_GOAL_MS
      targets.push(`| median overhead under ${OVERHEAD_GOAL_MS} ms, concurrency ${r.concurrency} | ${overhead.toFixed(2)} ms${beyondMachine ? ` (the bare hop alone: ${floor.toFixed(2)} ms)` : ''} | ${overhead < OVERHEAD_GOAL_MS ? 'PASS' : beyondMachine ? 'FAIL: beyond this machine (floor over the goal)' : 'FAIL'} |`)
    }
    // Connections are reused when handshakes are a rare event (a keep-alive socket the fake closed
    // while idle between rounds), not one per call.
    targets.push(`| no new TLS handshake per call, ${r.path} c=${r.concurrency} | ${r.handshakes} in ${r.calls} calls | ${r.handshakes / r.calls < 0.01 ? 'PASS' : 'FAIL'} |`)
  }
  lines.push('', '| target | measured | verdict |', '|---|---|---|', ...targets)
  return lines.join('\n')
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const { values } = parseArgs({
    options: { calls: { type: 'string' }, 'min-ms': { type: 'string' }, docs: { type: 'string' }, concurrency: { type: 'string' }, rounds: { type: 'string' } },
    strict: true
  })
  const result = await benchGateway({
    ...(values.calls === undefined ? {} : { calls: Number(values.calls) }),
    ...(values['min-ms'] === undefined ? {} : { minMs: Number(values['min-ms']) }),
    ...(values.docs === undefined ? {} : { docs: Number(values.docs) }),
    ...(values.concurrency === undefined ? {} : { concurrency: values.concurrency.split(',').map(Number) }),
    ...(values.rounds === undefined ? {} : { rounds: Number(values.rounds) })
  }, (line) => process.stderr.write(`${line}\n`))
  process.stdout.write(`${gatewayTable(result)}\n`)
}
