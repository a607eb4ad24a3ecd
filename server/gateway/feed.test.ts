/**
 * The managed feed's scheduler (issue 35, item 1) against the loopback fakes over real mutual
 * TLS and a real PostgreSQL: the cursor, the wait after "nothing more", gaps refilled, two
 * schedulers on one database never polling one company at once, a lapsed lease taken over, a
 * stale commit refused, consChNFe on demand within its hourly limit, and never a 656.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Fastify from 'fastify'
import type { FastifyInstance } from 'fastify'
import pg from 'pg'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { cnpjCheckDigits } from '../../core/cnpj.js'
import { makeNfeDocuments, makeNfseDocuments } from '../../fixtures/gateway/documents.js'
import type { FakeNfeDocument, FakeNfseDocument } from '../../fixtures/gateway/documents.js'
import { keyOf, startNfeFake } from '../../fixtures/gateway/nfe-fake.js'
import type { NfeFake, NfeFakeOptions } from '../../fixtures/gateway/nfe-fake.js'
import { startAdnFake } from '../../fixtures/gateway/adn-fake.js'
import type { AdnFake } from '../../fixtures/gateway/adn-fake.js'
import { createGatewayPki } from '../../fixtures/gateway/pki.js'
import type { GatewayPki } from '../../fixtures/gateway/pki.js'
import { freshDatabase } from '../../fixtures/db/test-database.js'
import type { TestDatabase } from '../../fixtures/db/test-database.js'
import { registerFeed } from './feed-routes.js'
import { GATEWAY_STATUSES } from './errors.js'
import { registerErrorHandler } from '../http-errors.js'
import { FeedScheduler, TlsAgentCache, queryNfeDistribution } from '../../core/gateway/index.js'
import type { FeedChange, FeedSchedulerOptions } from '../../core/gateway/index.js'

let pki: GatewayPki
let db: TestDatabase
let agents: TlsAgentCache
let dir: string
const open: Array<{ close: () => Promise<void> }> = []
/** Every fake NF-e answer of the file: none may be a 656. */
const nfeFakes: NfeFake[] = []

beforeAll(async () => {
  pki = createGatewayPki()
  db = await freshDatabase()
  agents = new TlsAgentCache({ extraCaPem: pki.rootPem })
  dir = await mkdtemp(join(tmpdir(), 'razao-feed-'))
})
afterEach(async () => {
  for (const o of open.splice(0)) await o.close()
  await db.pool.query('DELETE FROM feed_empresas; DELETE FROM esperas_consulta; DELETE FROM eventos_documentos; DELETE FROM documentos_fiscais; DELETE FROM consultas_pontuais; DELETE FROM empresas')
})
afterAll(async () => {
  expect(nfeFakes.flatMap((f) => f.requests).filter((r) => r.cStat === '656')).toEqual([])
  agents?.close()
  await db?.drop()
  await rm(dir, { recursive: true, force: true })
})

const pad = (n: number): string => String(n).padStart(15, '0')
/** A branch CNPJ of the test certificate's root (11222333), order `n`. */
function branchCnpj (n: number): string {
  const base = `11222333${String(n).padStart(4, '0')}`
  return base + cnpjCheckDigits(base)
}

/** `count` NF-e for a CNPJ, NSU 1..count, keys unique to `series`. */
function nfeDocs (cnpj: string, series: number, count: number): FakeNfeDocument[] {
  return makeNfeDocuments(cnpj, series * 10_000 + 1, count).map((d, i) => ({ ...d, nsu: pad(i + 1) }))
}

async function addCompanies (cnpjs: string[], servico: 'nfe' | 'adn' = 'nfe'): Promise<string[]> {
  const { rows } = await db.pool.query<{ id: string }>(
    `WITH e AS (INSERT INTO empresas (nome, cnpj) SELECT 'Filial ' || c, c FROM unnest($1::text[]) AS c RETURNING id)
     INSERT INTO feed_empresas (empresa_id, servico, ativo, proxima_consulta) SELECT id, $2, true, now() FROM e RETURNING empresa_id AS id`, [cnpjs, servico])
  return rows.map((r) => r.id)
}

interface Rig { nfe: NfeFake, adn: AdnFake, changes: FeedChange[], scheduler: (o?: Partial<FeedSchedulerOptions>) => FeedScheduler }

async function rig (o: { nfeDocs?: Map<string, FakeNfeDocument[]>, adnDocs?: Map<string, FakeNfseDocument[]>, nfe?: Partial<NfeFakeOptions>, adnWithheld?: Map<string, Set<number>>, expect656?: boolean } = {}): Promise<Rig> {
  const nfe = await startNfeFake({ pki, tpAmb: 2, documents: o.nfeDocs ?? new Map(), ...o.nfe })
  if (o.expect656 !== true) nfeFakes.push(nfe)
  open.push(nfe)
  const adn = await startAdnFake({ pki, tpAmb: 2, documents: o.adnDocs ?? new Map(), ...(o.adnWithheld === undefined ? {} : { withheld: o.adnWithheld }) })
  open.push(adn)
  const changes: FeedChange[] = []
  const scheduler = (s: Partial<FeedSchedulerOptions> = {}): FeedScheduler => {
    const made = new FeedScheduler({
      pool: db.pool,
      agentFor: async () => await agents.agentFor(pki.client),
      tpAmb: 2,
      nfeUrl: nfe.url,
      adnUrl: adn.baseUrl,
      timeoutMs: 5000,
      onFeedChanged: (c) => changes.push(c),
      ...s
    })
    open.push({ close: async () => { await made.stop() } })
    return made
  }
  return { nfe, adn, changes, scheduler }
}

async function feedRow (id: string, servico = 'nfe'): Promise<{ ult_nsu: string, max_nsu: string | null, ultimo_cstat: string | null, espera_s: number, lease_por: string | null, ultimo_erro: string | null }> {
  return (await db.pool.query(
    `SELECT ult_nsu::text, max_nsu::text, ultimo_cstat, extract(epoch FROM proxima_consulta - now())::int AS espera_s, lease_por, ultimo_erro
     FROM feed_empresas WHERE empresa_id = $1 AND servico = $2`, [id, servico])).rows[0]
}

async function keptFor (cnpj: string): Promise<number> {
  return (await db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM documentos_fiscais WHERE cnpjs @> ARRAY[$1::text]', [cnpj])).rows[0]!.n
}

describe('the managed feed', () => {
  it('reads the NSUs in pages of 50 until ultNSU = maxNSU, stores each document once, then waits the hour', async () => {
    const cnpj = branchCnpj(1)
    const r = await rig({ nfeDocs: new Map([[cnpj, nfeDocs(cnpj, 1, 120)]]) })
    const [id] = await addCompanies([cnpj])
    await db.pool.query('UPDATE feed_empresas SET ciencia_automatica = true WHERE empresa_id = $1', [id])
    const summaries: string[] = []
    const scheduler = r.scheduler({ onSummariesStored: async (_pool, company, keys) => { expect(company.cnpj).toBe(cnpj); summaries.push(...keys) } })
    expect(await scheduler.runOnce()).toBe(1)
    expect(r.nfe.requests.map((q) => [q.ultNSU, q.cStat])).toEqual([[pad(0), '138'], [pad(50), '138'], [pad(100), '138']])
    expect(await feedRow(id!)).toMatchObject({ ult_nsu: '120', max_nsu: '120', ultimo_cstat: '138', lease_por: null, ultimo_erro: null })
    // The hour: the feed's own pace and the authority's wait (shared with the query routes).
    expect((await feedRow(id!)).espera_s).toBeGreaterThan(3500)
    const wait = (await db.pool.query("SELECT extract(epoch FROM espera_ate - now())::int AS s FROM esperas_consulta WHERE servico = 'nfe' AND cnpj = $1", [cnpj])).rows[0]
    expect(wait.s).toBeGreaterThan(3500)
    expect(await keptFor(cnpj)).toBe(120)
    // Each new document is announced (the webhooks' outbox) in the transaction that stored it.
    expect((await db.pool.query("SELECT count(*)::int AS n FROM eventos_documentos WHERE cnpj = $1 AND tipo = 'documento.novo'", [cnpj])).rows[0].n).toBe(120)
    // The automatic Ciência's hook: every new summary (resNFe, one document in two here), once.
    expect(summaries).toHaveLength(60)
    expect(new Set(summaries).size).toBe(60)
    expect(r.changes.filter((c) => c.event === 'stored').map((c) => [c.ultNsu, c.inserted])).toEqual([[pad(50), 50], [pad(100), 50], [pad(120), 20]])
    // Nothing is due during the hour: no call goes out.
    expect(await scheduler.runOnce()).toBe(0)
    expect(r.nfe.requests).toHaveLength(3)
  })

  it('bounds a turn: after callsPerTurn calls the company goes to the back of the queue, due at once', async () => {
    const cnpj = branchCnpj(2)
    const r = await rig({ nfeDocs: new Map([[cnpj, nfeDocs(cnpj, 2, 120)]]) })
    const [id] = await addCompanies([cnpj])
    const scheduler = r.scheduler({ callsPerTurn: 2 })
    await scheduler.runOnce()
    expect(await feedRow(id!)).toMatchObject({ ult_nsu: '100' })
    expect((await feedRow(id!)).espera_s).toBeLessThanOrEqual(0)
    await scheduler.runOnce()
    expect(await feedRow(id!)).toMatchObject({ ult_nsu: '120', ultimo_cstat: '138' })
    expect(r.nfe.requests.map((q) => q.ultNSU)).toEqual([pad(0), pad(50), pad(100)])
  })

  it('records the NSUs an answer skipped as gaps and refills them with consNSU in the same turn; an NSU never found is given up after 3 attempts', async () => {
    const cnpj = branchCnpj(3)
    // NSU 30 does not exist (consNSU answers 137); 5 and 17 are withheld by distNSU, served by consNSU.
    const docs = nfeDocs(cnpj, 3, 60).filter((d) => d.nsu !== pad(30))
    const clock = { t: Date.now() }
    const r = await rig({ nfeDocs: new Map([[cnpj, docs]]), nfe: { now: () => clock.t, withheld: new Map([[cnpj, new Set([pad(5), pad(17)])]]) } })
    const [id] = await addCompanies([cnpj])
    const scheduler = r.scheduler()
    await scheduler.runOnce()
    expect(await feedRow(id!)).toMatchObject({ ult_nsu: '60' })
    expect(r.nfe.requests.filter((q) => q.query.kind === 'consNSU').map((q) => [q.query, q.cStat]))
      .toEqual([[{ kind: 'consNSU', nsu: pad(5) }, '138'], [{ kind: 'consNSU', nsu: pad(17) }, '138'], [{ kind: 'consNSU', nsu: pad(30) }, '137']])
    expect(await keptFor(cnpj)).toBe(59)
    const gaps = async (): Promise<unknown[]> => (await db.pool.query('SELECT nsu::text, tentativas, desistida_em IS NOT NULL AS desistida FROM feed_lacunas WHERE empresa_id = $1', [id])).rows
    expect(await gaps()).toEqual([{ nsu: '30', tentativas: 1, desistida: false }])
    expect((await db.pool.query('SELECT count(*)::int AS n FROM consultas_pontuais WHERE cnpj = $1', [cnpj])).rows[0].n).toBe(3)
    // Two more turns (the hour passed, the retry spacing too): the third answer without it gives the gap up.
    for (let turn = 0; turn < 2; turn++) {
      await db.pool.query("UPDATE feed_lacunas SET ultima_tentativa = now() - interval '1 hour'")
      await db.pool.query('UPDATE feed_empresas SET proxima_consulta = now(); UPDATE esperas_consulta SET espera_ate = NULL, motivo = NULL')
      clock.t += 2 * 3_600_000
      await scheduler.runOnce()
    }
    expect(await gaps()).toEqual([{ nsu: '30', tentativas: 3, desistida: true }])
  })

  it('ADN: the same cursor model, pages of up to 50 until none comes, a withheld NSU refilled with lote=false', async () => {
    const cnpj = branchCnpj(4)
    const docs = makeNfseDocuments(cnpj, 1, 120)
    const r = await rig({ adnDocs: new Map([[cnpj, docs]]), adnWithheld: new Map([[cnpj, new Set([7])]]) })
    const [id] = await addCompanies([cnpj], 'adn')
    await r.scheduler().runOnce()
    expect(r.adn.requests.map((q) => [q.nsu, q.lote, q.status])).toEqual([['0', 'true', 200], ['50', 'true', 200], ['100', 'true', 200], ['120', 'true', 404], ['7', 'false', 200]])
    expect(await feedRow(id!, 'adn')).toMatchObject({ ult_nsu: '120', ultimo_cstat: 'NENHUM_DOCUMENTO_LOCALIZADO', ultimo_erro: null })
    expect((await feedRow(id!, 'adn')).espera_s).toBeGreaterThan(3500)
    expect(await keptFor(cnpj)).toBe(120)
    expect(r.adn.maxConcurrentPerCnpj()).toBe(1)
  })

  it('takes over a lease whose instance died, and leaves a live one alone', async () => {
    const dead = branchCnpj(5)
    const alive = branchCnpj(6)
    const r = await rig({ nfeDocs: new Map([[dead, nfeDocs(dead, 5, 10)], [alive, nfeDocs(alive, 6, 10)]]) })
    const [deadId, aliveId] = await addCompanies([dead, alive])
    await db.pool.query("UPDATE feed_empresas SET lease_por = gen_random_uuid(), lease_ate = now() - interval '1 second' WHERE empresa_id = $1", [deadId])
    await db.pool.query("UPDATE feed_empresas SET lease_por = gen_random_uuid(), lease_ate = now() + interval '1 hour' WHERE empresa_id = $1", [aliveId])
    expect(await r.scheduler().runOnce()).toBe(1)
    expect(await feedRow(deadId!)).toMatchObject({ ult_nsu: '10', lease_por: null })
    expect(await feedRow(aliveId!)).toMatchObject({ ult_nsu: '0' })
    expect(r.nfe.requests.map((q) => q.cnpj)).toEqual([dead])
  })

  it('an instance whose lease lapsed mid-call stores nothing once another moved the cursor, and never moves it back', async () => {
    const cnpj = branchCnpj(7)
    let moveUnder: (() => Promise<void>) | undefined
    const r = await rig({
      nfeDocs: new Map([[cnpj, nfeDocs(cnpj, 7, 80)]]),
      nfe: { beforeAnswer: async () => { const move = moveUnder; moveUnder = undefined; await move?.() } }
    })
    const [id] = await addCompanies([cnpj])
    // While the first call is in flight, another instance (its lease taken after this one's lapsed) stores up to NSU 50.
    moveUnder = async () => { await db.pool.query("UPDATE feed_empresas SET ult_nsu = 50, lease_por = gen_random_uuid(), lease_ate = now() + interval '1 hour' WHERE empresa_id = $1", [id]) }
    await r.scheduler().runOnce()
    expect(r.nfe.requests).toHaveLength(1)
    expect(await feedRow(id!)).toMatchObject({ ult_nsu: '50' })
    expect(await keptFor(cnpj)).toBe(0)
  })

  it('after a 656 (another reader broke the sequence) follows the NSU the authority names, the skipped range as gaps, and waits out the block', async () => {
    const cnpj = branchCnpj(8)
    const r = await rig({ nfeDocs: new Map([[cnpj, nfeDocs(cnpj, 8, 80)]]), expect656: true })
    const [id] = await addCompanies([cnpj])
    // Another client reads the CNPJ's first page behind the feed's back.
    await queryNfeDistribution({ url: r.nfe.url, agent: await agents.agentFor(pki.client), timeoutMs: 5000, tpAmb: 2, cnpj, ultNSU: pad(0) })
    await r.scheduler().runOnce()
    expect(r.nfe.requests.map((q) => [q.ultNSU, q.cStat])).toEqual([[pad(0), '138'], [pad(0), '656']])
    const row = await feedRow(id!)
    expect(row).toMatchObject({ ult_nsu: '50', ultimo_cstat: '656' })
    expect(row.ultimo_erro).toMatch(/656.*expects NSU 000000000000050 next/)
    expect(row.espera_s).toBeGreaterThan(3500)
    // The block holds every query, point lookups too: the 50 NSUs the other reader took wait as gaps.
    expect((await db.pool.query('SELECT count(*)::int AS n FROM feed_lacunas WHERE empresa_id = $1', [id])).rows[0].n).toBe(50)
    expect(await r.scheduler().runOnce()).toBe(0)
    expect(r.nfe.requests).toHaveLength(2)
  })

  it('two schedulers with their own pools on one database: 20 companies × 10 documents, never two calls for one CNPJ at once, no duplicate, no gap', async () => {
    const cnpjs = Array.from({ length: 20 }, (_, i) => branchCnpj(100 + i))
    const r = await rig({ nfeDocs: new Map(cnpjs.map((c, i) => [c, nfeDocs(c, 100 + i, 10)])), nfe: { answerDelayMs: 5 } })
    await addCompanies(cnpjs)
    const pools = [0, 1].map(() => new pg.Pool({ connectionString: db.url, max: 4 }))
    open.push({ close: async () => { await Promise.all(pools.map(async (p) => await p.end())) } })
    const done = new Set<string>()
    const byInstance = [new Set<string>(), new Set<string>()]
    let finished: () => void = () => undefined
    const allDone = new Promise<void>((resolve) => { finished = resolve })
    const schedulers = pools.map((pool, i) => r.scheduler({
      pool,
      concurrency: 3,
      idleMs: 50,
      onFeedChanged: (c) => {
        byInstance[i]!.add(c.company.cnpj)
        if (c.event === 'stored' && c.ultNsu === pad(10)) done.add(c.company.cnpj)
        if (done.size === cnpjs.length) finished()
      }
    }))
    for (const s of schedulers) s.start()
    await allDone
    await Promise.all(schedulers.map(async (s) => await s.stop()))
    expect(r.nfe.maxConcurrentPerCnpj()).toBe(1)
    expect(r.nfe.requests.filter((q) => q.cStat !== '138')).toEqual([])
    expect(r.nfe.requests).toHaveLength(20)
    const kept = (await db.pool.query<{ n: number, distinct: number }>('SELECT count(*)::int AS n, count(DISTINCT (chave, esquema))::int AS distinct FROM documentos_fiscais')).rows[0]!
    expect(kept).toEqual({ n: 200, distinct: 200 })
    expect((await db.pool.query('SELECT count(*)::int AS n FROM feed_lacunas')).rows[0].n).toBe(0)
    expect((await db.pool.query("SELECT count(*)::int AS n FROM feed_empresas WHERE ult_nsu = 10 AND lease_por IS NULL")).rows[0].n).toBe(20)
    // Both instances polled (the claim skips what the other holds, it does not wait for it).
    expect(byInstance[0]!.size).toBeGreaterThan(0)
    expect(byInstance[1]!.size).toBeGreaterThan(0)
  })
})

describe('POST /v1/documents/{chave}/buscar (consChNFe)', () => {
  let app: FastifyInstance
  let r: Rig
  const cnpj = branchCnpj(9)
  const docs = (): FakeNfeDocument[] => nfeDocs(cnpj, 9, 4)

  async function buscar (chave: string, empresaCodigo: string): Promise<{ status: number, body: Record<string, unknown>, retryAfter: string | undefined }> {
    const res = await app.inject({ method: 'POST', url: `/v1/documents/${chave}/buscar`, headers: { 'x-api-key': 'k' }, payload: { empresa_codigo: empresaCodigo } })
    return { status: res.statusCode, body: res.json(), retryAfter: res.headers['retry-after'] as string | undefined }
  }

  it('fetches a note by key, keeps it, answers it; unknown keys are the authority\'s 217; the 21st lookup of the hour is held back', async () => {
    r = await rig({ nfeDocs: new Map([[cnpj, docs()]]) })
    await addCompanies([cnpj])
    const codigo = (await db.pool.query('SELECT empresa_codigo FROM empresas WHERE cnpj = $1', [cnpj])).rows[0].empresa_codigo as string
    app = Fastify()
    registerErrorHandler(app, GATEWAY_STATUSES)
    await registerFeed(app, {
      pool: db.pool,
      config: { tpAmb: 2, nfeUrl: r.nfe.url, adnUrl: r.adn.baseUrl, timeoutMs: 5000, feed: { enabled: false, concurrency: 1, callsPerTurn: 1, idleMs: 1000, retryMs: 1000, lookupsPerHour: 20 } },
      agents,
      runScheduler: false,
      checkApiKey: (request) => request.headers['x-api-key'] === 'k',
      resolveCertificate: async (empresaCodigo) => ({ empresa: { empresaCodigo, cnpj, ativo: true }, pfx: pki.client.pfx, password: pki.client.password, fingerprint: pki.client.fingerprint, validUntil: pki.client.validUntil })
    })
    open.push(app)
    const procNFe = docs()[1]!
    const chave = keyOf(procNFe)!
    const got = await buscar(chave, codigo)
    expect(got.status).toBe(200)
    expect(got.body).toMatchObject({ chave, tipo: 'procNFe', nsu: null, cnpjs: [cnpj] })
    expect(r.nfe.requests.map((q) => [q.query, q.cStat])).toEqual([[{ kind: 'consChNFe', chNFe: chave }, '138']])
    // Kept in full: asked again, answered from the database.
    expect((await buscar(chave, codigo)).status).toBe(200)
    expect(r.nfe.requests).toHaveLength(1)
    const unknown = await buscar('3'.repeat(44), codigo)
    expect(unknown).toMatchObject({ status: 422, body: { code: 'GATEWAY_QUERY_REFUSED', cStat: '217' } })
    // 18 more lookups by other instances this hour: the 21st is held back here, never sent.
    await db.pool.query("INSERT INTO consultas_pontuais (servico, cnpj, motivo) SELECT 'nfe', $1, 'chave' FROM generate_series(1, 18)", [cnpj])
    const held = await buscar(keyOf(docs()[3]!)!, codigo)
    expect(held).toMatchObject({ status: 429, body: { code: 'GATEWAY_LOOKUP_LIMIT' } })
    expect(Number(held.retryAfter)).toBeGreaterThan(3000)
    expect(r.nfe.requests).toHaveLength(2)
    expect((await buscar('123', codigo)).status).toBe(400)
    const keyless = await app.inject({ method: 'POST', url: `/v1/documents/${chave}/buscar`, payload: { empresa_codigo: codigo } })
    expect([keyless.statusCode, keyless.json().code]).toEqual([401, 'UNAUTHORIZED'])
    expect(r.nfe.requests).toHaveLength(2)
  })
})
