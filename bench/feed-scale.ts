/**
 * Issue 35, "Speed and scale": N companies × M NF-e each, fetched and stored by the managed
 * feed of two gateway instances (two processes, each with its own scheduler and its own pool)
 * from the NF-e fake (a process of its own, with the authority's pacing rules on: a query
 * out of sequence, within the hour after "nothing more" or during a block is a 656), on one
 * PostgreSQL (BENCH_DATABASE_URL's server or an embedded one for the run).
 *
 * Prints the wall time from the schedulers' start to the last cursor at M, the processor
 * time of each instance (per document stored), and checks: no 656, never two calls for one
 * CNPJ at once, no query repeated, every company's M documents stored once, no gap left.
 * Exit 1 when a check fails.
 *
 *   node --import tsx bench/feed-scale.ts [--companies 1000] [--docs 50] [--concurrency 8] [--withheld 0]
 * `--withheld N`: the fake leaves N NSUs of each company (7, 14, …) out of its distNSU answers
 * and serves them to consNSU only: the run then also covers gaps found and refilled.
 *   (on the shared machine: chrt -r 10 node --import tsx bench/feed-scale.ts)
 *
 * The companies are branches of one CNPJ root under one certificate (one TLS agent per
 * instance): what is measured is the scheduler, the distribution client and the store, not
 * 1,000 TLS handshakes.
 */
import { randomBytes } from 'node:crypto'
import { parseArgs } from 'node:util'
import pg from 'pg'
import { cnpjCheckDigits } from '../core/cnpj.js'
import { migrate } from '../core/db/migrate.js'
import { databaseUrl, withClient } from '../fixtures/db/admin.js'
import { createGatewayPki } from '../fixtures/gateway/pki.js'
import type { FeedFakeStart, FeedFakeStats } from './gateway/feed-fake-process.js'
import type { FeedInstanceStart, FeedInstanceStats } from './gateway/feed-instance-process.js'
import { startChild } from './gateway/rpc.js'
import { withBenchDatabase } from './import-process.bench.js'

const { values } = parseArgs({ options: { companies: { type: 'string', default: '1000' }, docs: { type: 'string', default: '50' }, concurrency: { type: 'string', default: '8' }, withheld: { type: 'string', default: '0' } } })
const companies = Number(values.companies)
const docs = Number(values.docs)
const concurrency = Number(values.concurrency)
const withheld = Number(values.withheld)
/** A hang catcher, far above the run's few minutes. */
const GIVE_UP_MS = 30 * 60_000

function branchCnpj (n: number): string {
  const base = `11222333${String(n).padStart(4, '0')}`
  return base + cnpjCheckDigits(base)
}

await withBenchDatabase(async (adminUrl) => {
  const name = `razao_feed_bench_${randomBytes(4).toString('hex')}`
  await withClient(adminUrl, async (c) => { await c.query(`CREATE DATABASE ${name}`) })
  const url = databaseUrl(adminUrl, name)
  const pool = new pg.Pool({ connectionString: url, max: 2 })
  const children: Array<{ stop: () => Promise<void> }> = []
  let failed = false
  try {
    const client = await pool.connect()
    try { await migrate(client) } finally { client.release() }
    const cnpjs = Array.from({ length: companies }, (_, i) => branchCnpj(i + 1))
    await pool.query(
      `WITH e AS (INSERT INTO empresas (nome, cnpj) SELECT 'Filial ' || c, c FROM unnest($1::text[]) AS c RETURNING id)
       INSERT INTO feed_empresas (empresa_id, servico, ativo, proxima_consulta) SELECT id, 'nfe', true, now() FROM e`, [cnpjs])

    const pki = createGatewayPki()
    const fake = startChild('./feed-fake-process.ts')
    children.push(fake)
    const nfeUrl = await fake.call<string>('start', { pki: { clientCaPem: pki.clientCaPem, server: { keyPem: pki.server.keyPem, certPem: pki.server.certPem } }, cnpjs, docs, withheld } satisfies FeedFakeStart)
    const instances = [0, 1].map(() => startChild('./feed-instance-process.ts'))
    children.push(...instances)
    const start: FeedInstanceStart = {
      databaseUrl: url, nfeUrl, rootPem: pki.rootPem, concurrency,
      client: { pfxBase64: pki.client.pfx.toString('base64'), password: pki.client.password, fingerprint: pki.client.fingerprint }
    }
    const t0 = performance.now()
    await Promise.all(instances.map(async (i) => await i.call('start', start)))
    for (;;) {
      const { done, gaps } = (await pool.query<{ done: number, gaps: number }>(
        'SELECT (SELECT count(*)::int FROM feed_empresas WHERE ult_nsu = $1) AS done, (SELECT count(*)::int FROM feed_lacunas) AS gaps', [docs])).rows[0]!
      if (done === companies && gaps === 0) break
      if (performance.now() - t0 > GIVE_UP_MS) throw new Error(`only ${done} of ${companies} feeds reached NSU ${docs} after ${GIVE_UP_MS / 60_000} minutes`)
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    const wallMs = performance.now() - t0
    const stats = await Promise.all(instances.map(async (i) => await i.call<FeedInstanceStats>('stats')))
    const fakeStats = await fake.call<FeedFakeStats>('stats')
    const kept = (await pool.query<{ n: number, distintos: number }>('SELECT count(*)::int AS n, count(DISTINCT (chave, esquema, evento))::int AS distintos FROM documentos_fiscais')).rows[0]!
    const wrongCount = (await pool.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM (SELECT c, count(*) FROM documentos_fiscais, unnest(cnpjs) AS c GROUP BY c HAVING count(*) <> $1) x', [docs])).rows[0]!.n
    const gaps = (await pool.query<{ n: number }>('SELECT count(*)::int AS n FROM feed_lacunas')).rows[0]!.n
    const checks: Array<[string, boolean]> = [
      ['no 656', (fakeStats.byStatus['656'] ?? 0) === 0],
      ['never two calls for one CNPJ at once', fakeStats.maxConcurrentPerCnpj === 1],
      ['no query repeated', fakeStats.repeatedQueries === 0],
      [`${companies * docs} documents stored, each once`, kept.n === companies * docs && kept.distintos === kept.n],
      [`every company has its ${docs}`, wrongCount === 0],
      ['no gap', gaps === 0]
    ]
    const storedTotal = stats.reduce((s, x) => s + x.stored, 0)
    console.log(`feed scale: ${companies} companies × ${docs} documents${withheld > 0 ? ` (${withheld} of each withheld: gaps)` : ''}, two instances (concurrency ${concurrency} each)`)
    console.log(`  wall time: ${(wallMs / 1000).toFixed(1)} s (${Math.round(storedTotal / (wallMs / 1000))} documents/s)`)
    stats.forEach((s, i) => console.log(`  instance ${i + 1}: ${s.polled} companies, ${s.stored} documents stored, CPU ${(s.cpuMs / 1000).toFixed(1)} s (${(s.cpuMs / Math.max(1, s.stored)).toFixed(2)} ms per document, fetch and parse included)`))
    console.log(`  fake: ${fakeStats.requests} queries ${JSON.stringify(fakeStats.byStatus)}, ${fakeStats.handshakes} TLS handshakes`)
    for (const [what, ok] of checks) console.log(`  ${ok ? 'PASS' : 'FAIL'} ${what}`)
    failed = checks.some(([, ok]) => !ok)
  } finally {
    for (const c of children.reverse()) await c.stop().catch(() => undefined)
    await pool.end()
    await withClient(adminUrl, async (c) => { await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) })
  }
  if (failed) process.exitCode = 1
})
