/**
 * The managed feed's scheduler (issue 35, item 1): every gateway instance runs one; together
 * they poll each company whose feed is on (`feed_empresas.ativo`, migration 0007) at the pace
 * the authority allows, and store what arrives (documents.ts).
 *
 * - Who polls: a lease on the feed's row. An instance claims due rows with one statement
 *   (FOR UPDATE SKIP LOCKED, so instances never wait for each other's claims), writing its
 *   token and when the lease lapses; it renews the lease before each upstream call and
 *   clears it when done. A row whose lease lapsed (its instance died) is due again.
 * - Calls: through the QueryGuard, so the CNPJ's turn and the authority's waits
 *   (esperas_consulta, migration 0003) hold for the feed as for the one-off query routes.
 *   The cursor is read and written inside the CNPJ's turn: the next call for the CNPJ,
 *   from any instance, starts from what the last one stored (the authority's sequence rule).
 * - The cursor moves compare-and-set (`ult_nsu` as read) in the transaction that stores the
 *   answer's documents: it moves only past stored NSUs, only forward, and an instance whose
 *   lease and turn lapsed mid-poll stores nothing once another has moved it.
 * - Gaps: NSUs inside an answer's range that it did not carry go to `feed_lacunas` and are
 *   asked for one at a time (NF-e consNSU, ADN `lote=false`) within the point-lookup
 *   allowance (point-lookups.ts); given up after GAP_ATTEMPTS answers without the document,
 *   or once older than the 90 days the authority distributes.
 *
 * Pacing, as docs/gateway.md "Managed feed" states with its sources: NF-e distNSU again at
 * once while ultNSU < maxNSU (up to `callsPerTurn` calls a turn, then the company goes to
 * the back of the queue); after cStat 137 or ultNSU = maxNSU, the waiting period (one hour);
 * after 656, the hour of the block. ADN: again at once while answers hold documents; after
 * "no document" (404 NENHUM_DOCUMENTO_LOCALIZADO), one hour; after HTTP 429, its Retry-After.
 */
import type { Agent } from 'node:https'
import type { Pool, PoolClient } from 'pg'
import { queryAdnDistribution } from './adn-distribution.js'
import type { AdnDocument } from './adn-distribution.js'
import type { NfeDocument, RetDistDFeInt } from './dist-answer.js'
import { DocumentRefused, openNfeDocument, openNfseDocument } from './doc-zip.js'
import type { OpenedDocument } from './doc-zip.js'
import { storeDocumentsIn } from './documents.js'
import type { ReceivedDocument } from './documents.js'
import { GatewayError, isGatewayError } from './errors.js'
import type { FeedService } from './feed-state.js'
import { assertAnswered, queryNfeDistribution } from './nfe-distribution.js'
import { takePointLookup, POINT_LOOKUPS_PER_HOUR } from './point-lookups.js'
import { DEFAULT_COOLDOWN_MS, QueryGuard, nfeCooldownReason } from './query-guard.js'
import { inTransaction } from '../db/transaction.js'

/** A gap is given up after this many answers without its document (each in another turn). */
export const GAP_ATTEMPTS = 3
/** The authority distributes what it received in the last 90 days; an older gap can never be filled. */
const GAP_MAX_AGE_DAYS = 90
/** A gap is asked for again no sooner than this after an attempt. */
const GAP_RETRY_MS = 600_000
/** The most gaps one answer may record (an answer covers at most 50 documents; more is a resynchronisation). */
const MAX_GAPS_PER_ANSWER = 500
const NSU_WIDTH = 15

export interface FeedCompany {
  empresaId: string
  empresaCodigo: string
  cnpj: string
  servico: FeedService
  cienciaAutomatica: boolean
}

/** What the scheduler reports after each step of a feed. */
export interface FeedChange {
  company: FeedCompany
  /** `stored`: the cursor moved and documents were kept; `waiting`: the feed sleeps until `proximaConsulta`; `error`: the last call failed. */
  event: 'stored' | 'waiting' | 'error'
  ultNsu: string
  inserted: number
  repeated: number
  gapsAdded: number
  cStat?: string
  error?: { code: string, message: string }
}

export interface FeedSchedulerOptions {
  pool: Pool
  /** The TLS agent of the company's certificate; throws a GatewayError when it cannot be used (expired, other root). */
  agentFor: (company: FeedCompany) => Promise<Agent>
  tpAmb: 1 | 2
  nfeUrl: string
  adnUrl: string
  cUFAutor?: number | undefined
  /** Bound of one upstream call (GATEWAY_TIMEOUT_MS). */
  timeoutMs: number
  /** The waiting period after "nothing more now" and 656 (GATEWAY_COOLDOWN_MS); default one hour. */
  cooldownMs?: number | undefined
  /** Shared with the query routes when given; otherwise the scheduler makes its own (same database, same turns). */
  guard?: QueryGuard
  /** Feeds polled at once by this instance (GATEWAY_FEED_CONCURRENCY). */
  concurrency?: number
  /** Distribution calls per company per turn before it goes to the back of the queue (GATEWAY_FEED_CALLS_PER_TURN). */
  callsPerTurn?: number
  /** How long the scheduler sleeps when no feed is due (GATEWAY_FEED_IDLE_MS); it also wakes when a poll ends. */
  idleMs?: number
  /** A feed whose call failed (authority down, unusable certificate) is due again after this long (GATEWAY_FEED_RETRY_MS). */
  retryMs?: number
  /** Point lookups per CNPJ per hour (consNSU + consChNFe); the authority's 20 unless lowered. */
  lookupsPerHour?: number
  /** How long a claim holds a company; renewed before each call. Default: twice the call's bound plus 10 s. */
  leaseMs?: number
  /** Every step of a feed (stored, waiting, error). */
  onFeedChanged?: (change: FeedChange) => void
  /**
   * The automatic Ciência (issue 35, item 3): called after new resNFe summaries of a company whose
   * `ciencia_automatica` is on were stored (their access keys), once the transaction committed. Errors are logged, never stop the feed.
   */
  onSummariesStored?: (pool: Pool, company: FeedCompany, keys: string[]) => Promise<void>
  log?: { info: (o: object, msg: string) => void, warn: (o: object, msg: string) => void }
}

interface Lease { company: FeedCompany, token: string }

/** After a step: more to read now; done for this turn; blocked (656 or a wait the guard holds); lost (another instance moved the cursor). */
type StepOutcome = 'more' | 'done' | 'blocked' | 'lost'

/** The outcome of one committed step. */
interface Step { moved: boolean, inserted: number, repeated: number, gapsAdded: number, summaries: string[] }

const CLAIM_SQL = `
WITH devidas AS (
  SELECT f.empresa_id, f.servico
  FROM feed_empresas f JOIN empresas e ON e.id = f.empresa_id
  LEFT JOIN esperas_consulta w ON w.servico = f.servico AND w.cnpj = e.cnpj
  WHERE f.ativo AND e.ativo AND e.cnpj IS NOT NULL
    AND (f.proxima_consulta IS NULL OR f.proxima_consulta <= now())
    AND (f.lease_ate IS NULL OR f.lease_ate <= now())
    AND (w.espera_ate IS NULL OR w.espera_ate <= now())
  ORDER BY f.proxima_consulta NULLS FIRST, f.empresa_id, f.servico
  LIMIT $1
  FOR UPDATE OF f SKIP LOCKED)
UPDATE feed_empresas f SET lease_por = gen_random_uuid(), lease_ate = now() + $2 * interval '1 millisecond'
FROM devidas d, empresas e
WHERE f.empresa_id = d.empresa_id AND f.servico = d.servico AND e.id = f.empresa_id
RETURNING f.empresa_id, e.empresa_codigo, e.cnpj, f.servico, f.ciencia_automatica, f.lease_por::text`

/** Milliseconds to the next due feed (0 when one is due), or null when none is on. */
const NEXT_DUE_SQL = `
SELECT ceil(greatest(0, extract(epoch FROM min(greatest(coalesce(f.proxima_consulta, now()), coalesce(f.lease_ate, now()), coalesce(w.espera_ate, now())) - now())) * 1000))::text AS ms
FROM feed_empresas f JOIN empresas e ON e.id = f.empresa_id
LEFT JOIN esperas_consulta w ON w.servico = f.servico AND w.cnpj = e.cnpj
WHERE f.ativo AND e.ativo AND e.cnpj IS NOT NULL`

export class FeedScheduler {
  private readonly pool: Pool
  private readonly o: FeedSchedulerOptions
  private readonly guard: QueryGuard
  private readonly ownGuard: boolean
  private readonly cooldownMs: number
  private readonly concurrency: number
  private readonly callsPerTurn: number
  private readonly idleMs: number
  private readonly retryMs: number
  private readonly leaseMs: number
  private readonly lookupsPerHour: number
  private readonly active = new Set<Promise<void>>()
  private running = false
  private loop: Promise<void> | undefined
  private wake: (() => void) | undefined

  constructor (options: FeedSchedulerOptions) {
    this.o = options
    this.pool = options.pool
    this.cooldownMs = options.cooldownMs ?? DEFAULT_COOLDOWN_MS
    this.ownGuard = options.guard === undefined
    this.guard = options.guard ?? new QueryGuard({ pool: options.pool, callTimeoutMs: options.timeoutMs, cooldownMs: this.cooldownMs })
    this.concurrency = options.concurrency ?? 4
    this.callsPerTurn = options.callsPerTurn ?? 20
    this.idleMs = options.idleMs ?? 5000
    this.retryMs = options.retryMs ?? 300_000
    this.leaseMs = options.leaseMs ?? 2 * options.timeoutMs + 10_000
    this.lookupsPerHour = Math.min(options.lookupsPerHour ?? POINT_LOOKUPS_PER_HOUR, POINT_LOOKUPS_PER_HOUR)
  }

  /** Starts polling in the background. */
  start (): void {
    if (this.running) return
    this.running = true
    this.loop = this.run()
  }

  /** Stops claiming, lets the polls under way finish (each call is bounded), gives their leases back. */
  async stop (): Promise<void> {
    this.running = false
    this.wake?.()
    await this.loop
    await Promise.all([...this.active])
    if (this.ownGuard) await this.guard.close()
  }

  /**
   * One round: claims up to `concurrency` due feeds and polls them to the end of their turn.
   * Returns how many were claimed. (The background loop does the same without waiting for
   * the whole round; tests call this to step the scheduler.)
   */
  async runOnce (): Promise<number> {
    const leases = await this.claim(this.concurrency)
    await Promise.all(leases.map(async (lease) => await this.poll(lease)))
    return leases.length
  }

  private async run (): Promise<void> {
    while (this.running) {
      const free = this.concurrency - this.active.size
      let claimed = 0
      if (free > 0) {
        try {
          const leases = await this.claim(free)
          claimed = leases.length
          for (const lease of leases) {
            const task: Promise<void> = this.poll(lease).finally(() => {
              this.active.delete(task)
              this.wake?.()
            })
            this.active.add(task)
          }
        } catch (err) {
          this.o.log?.warn({ err }, 'feed: claiming due feeds failed')
        }
      }
      if (!this.running) break
      if (free > 0 && claimed === free) continue
      await this.sleep(free > 0 && claimed === 0 ? await this.idleFor() : this.idleMs)
    }
  }

  private async idleFor (): Promise<number> {
    try {
      const ms = (await this.pool.query<{ ms: string | null }>(NEXT_DUE_SQL)).rows[0]?.ms
      return ms === null || ms === undefined ? this.idleMs : Math.max(10, Math.min(this.idleMs, Number(ms)))
    } catch {
      return this.idleMs
    }
  }

  private async sleep (ms: number): Promise<void> {
    await new Promise<void>((resolve) => {
      const timer = setTimeout(done, ms)
      function done (): void { clearTimeout(timer); resolve() }
      this.wake = done
    })
    this.wake = undefined
  }

  private async claim (n: number): Promise<Lease[]> {
    const { rows } = await this.pool.query<{ empresa_id: string, empresa_codigo: string, cnpj: string, servico: FeedService, ciencia_automatica: boolean, lease_por: string }>(
      { name: 'feed-claim', text: CLAIM_SQL, values: [n, this.leaseMs] })
    return rows.map((r) => ({
      token: r.lease_por,
      company: { empresaId: r.empresa_id, empresaCodigo: r.empresa_codigo, cnpj: r.cnpj, servico: r.servico, cienciaAutomatica: r.ciencia_automatica }
    }))
  }

  /** Renews the lease; false when it is no longer ours (it lapsed and another instance took the company). */
  private async renew (lease: Lease): Promise<boolean> {
    const { rowCount } = await this.pool.query(
      `UPDATE feed_empresas SET lease_ate = now() + $4 * interval '1 millisecond'
       WHERE empresa_id = $1 AND servico = $2 AND lease_por = $3 AND ativo`, [lease.company.empresaId, lease.company.servico, lease.token, this.leaseMs])
    return rowCount === 1
  }

  private async release (lease: Lease): Promise<void> {
    await this.pool.query('UPDATE feed_empresas SET lease_por = NULL, lease_ate = NULL WHERE empresa_id = $1 AND servico = $2 AND lease_por = $3',
      [lease.company.empresaId, lease.company.servico, lease.token]).catch(() => undefined)
  }

  /**
   * One company's turn: the distribution until it says "nothing more now" or the turn's calls
   * are spent, then the company's gaps (point lookups, which the wait after "nothing more"
   * does not hold back), unless the CNPJ is blocked.
   */
  private async poll (lease: Lease): Promise<void> {
    const { company } = lease
    try {
      const agent = await this.o.agentFor(company)
      let outcome: StepOutcome = 'more'
      for (let call = 0; call < this.callsPerTurn && outcome === 'more'; call++) {
        if (!this.running && this.loop !== undefined) return
        if (!await this.renew(lease)) return
        outcome = company.servico === 'nfe' ? await this.nfeStep(lease, agent) : await this.adnStep(lease, agent)
      }
      // The turn's calls are spent with documents still behind: due again, behind the others waiting.
      if (outcome === 'more') await this.setNext(lease, 0)
      if (outcome !== 'blocked' && outcome !== 'lost') await this.refillGaps(lease, agent)
    } catch (err) {
      await this.recordError(lease, err)
    } finally {
      await this.release(lease)
    }
  }

  /** One distNSU call and its commit, inside the CNPJ's turn. */
  private async nfeStep (lease: Lease, agent: Agent): Promise<StepOutcome> {
    const { company } = lease
    const cursor = await this.cursorOf(company)
    let step: Step | undefined
    let ret: RetDistDFeInt
    let from = cursor
    try {
      // Its own identity: never handed a query route's answer for the same NSU, which would skip this commit.
      ret = await this.guard.run('nfe', company.cnpj, `feed:${cursor}`, `CNPJ ${company.cnpj}`, async () => {
        // Read again inside the turn: another instance may have moved it since.
        from = await this.cursorOf(company)
        const answer = await queryNfeDistribution({ url: this.o.nfeUrl, agent, timeoutMs: this.o.timeoutMs, tpAmb: this.o.tpAmb, ...cUF(this.o.cUFAutor), cnpj: company.cnpj, ultNSU: from })
        const reason = nfeCooldownReason(answer)
        if (answer.cStat === '138' || answer.cStat === '137') {
          step = await this.commitNfe(lease, from, answer, reason !== undefined)
        }
        return { value: answer, cooldown: reason === undefined ? undefined : { reason, cStat: answer.cStat } }
      })
    } catch (err) {
      if (isGatewayError(err) && err.code === 'GATEWAY_COOLDOWN') {
        await this.setNext(lease, (err.retryAfterS ?? 60) * 1000)
        return 'blocked'
      }
      throw err
    }
    if (ret.cStat === '656') {
      await this.resync(lease, ret)
      return 'blocked'
    }
    assertAnswered(ret)
    if (step === undefined) return 'done'
    if (!step.moved) return 'lost'
    await this.afterCommit(lease, step, ret.cStat)
    if (nfeCooldownReason(ret) !== undefined) return 'done'
    // "More behind" without moving past the NSU sent: asking again at once would only repeat it.
    if (BigInt(ret.ultNSU) <= BigInt(from)) {
      await this.setNext(lease, this.retryMs)
      return 'done'
    }
    return 'more'
  }

  /** One ADN call (up to 50 documents after the cursor) and its commit, inside the CNPJ's turn. */
  private async adnStep (lease: Lease, agent: Agent): Promise<StepOutcome> {
    const { company } = lease
    const cursor = await this.cursorOf(company)
    let step: Step | undefined
    let more = false
    try {
      await this.guard.run('adn', company.cnpj, `feed:${cursor}`, `CNPJ ${company.cnpj}`, async () => {
        const from = await this.cursorOf(company)
        const answer = await queryAdnDistribution({ baseUrl: this.o.adnUrl, tpAmb: this.o.tpAmb, cnpj: company.cnpj, nsu: Number(from), agent, timeoutMs: this.o.timeoutMs })
        // Only an empty answer ends the run: a batch may hold fewer than 50 when the ADN left an NSU out (a gap).
        more = answer.documentos.length > 0
        step = await this.commitAdn(lease, from, answer.documentos, !more)
        return { value: undefined }
      })
    } catch (err) {
      if (isGatewayError(err) && err.status === 429) {
        await this.setNext(lease, (err.retryAfterS ?? 300) * 1000, err)
        return 'blocked'
      }
      throw err
    }
    if (!step!.moved) return 'lost'
    await this.afterCommit(lease, step!, more ? 'DOCUMENTOS_LOCALIZADOS' : 'NENHUM_DOCUMENTO_LOCALIZADO')
    return more ? 'more' : 'done'
  }

  private async cursorOf (company: FeedCompany): Promise<string> {
    const { rows } = await this.pool.query<{ ult_nsu: string }>('SELECT ult_nsu::text FROM feed_empresas WHERE empresa_id = $1 AND servico = $2', [company.empresaId, company.servico])
    return nsuText(rows[0]?.ult_nsu ?? '0')
  }

  private async commitNfe (lease: Lease, from: string, answer: RetDistDFeInt, drained: boolean): Promise<Step> {
    const received = openNfe(answer.documentos)
    // The next distNSU must send the ultNSU this answer returned (the sequence rule), so the cursor follows it, with a gap for every NSU it did not carry.
    const to = BigInt(answer.ultNSU) > BigInt(from) ? answer.ultNSU : from
    const present = new Set(answer.documentos.flatMap((d) => d.nsu === null ? [] : [BigInt(d.nsu)]))
    const gaps: bigint[] = []
    for (let n = BigInt(from) + 1n; n <= BigInt(to) && gaps.length < MAX_GAPS_PER_ANSWER; n++) if (!present.has(n)) gaps.push(n)
    return await this.commit(lease, { from, to, maxNsu: answer.maxNSU, cStat: answer.cStat, received, gaps, drained })
  }

  private async commitAdn (lease: Lease, from: string, documentos: AdnDocument[], drained: boolean): Promise<Step> {
    const received = openAdn(documentos)
    const nsus = documentos.flatMap((d) => typeof d.NSU === 'number' ? [BigInt(d.NSU)] : [])
    const top = nsus.reduce((a, b) => a > b ? a : b, BigInt(from))
    const present = new Set(nsus)
    const gaps: bigint[] = []
    for (let n = BigInt(from) + 1n; n < top && gaps.length < MAX_GAPS_PER_ANSWER; n++) if (!present.has(n)) gaps.push(n)
    return await this.commit(lease, { from, to: nsuText(top.toString()), maxNsu: null, cStat: documentos.length === 0 ? 'NENHUM_DOCUMENTO_LOCALIZADO' : 'DOCUMENTOS_LOCALIZADOS', received, gaps, drained })
  }

  /**
   * The cursor and the documents in one transaction. The cursor is written compare-and-set
   * (as read inside the turn, and only forward): when another instance moved it, nothing is
   * stored here, and the step reports `moved: false`.
   */
  private async commit (lease: Lease, c: { from: string, to: string, maxNsu: string | null, cStat: string, received: ReceivedDocument[], gaps: bigint[], drained: boolean }): Promise<Step> {
    const { company } = lease
    return await inTransaction(this.pool, async (client) => {
      const moved = await client.query(
        `UPDATE feed_empresas SET ult_nsu = $4::bigint, max_nsu = coalesce($5::bigint, max_nsu), ultima_consulta = now(), ultimo_cstat = $6,
           proxima_consulta = now() + $7 * interval '1 millisecond',
           ultimo_erro_codigo = NULL, ultimo_erro = NULL, ultimo_erro_em = NULL, atualizado_em = now()
         WHERE empresa_id = $1 AND servico = $2 AND ult_nsu = $3::bigint AND $4::bigint >= ult_nsu`,
        [company.empresaId, company.servico, c.from, c.to, c.maxNsu, c.cStat, c.drained ? this.cooldownMs : 0])
      if (moved.rowCount !== 1) {
        // Nothing was written: the transaction commits empty.
        this.o.log?.warn({ empresa_codigo: company.empresaCodigo, servico: company.servico }, 'feed: the cursor moved under this poll (its lease lapsed); nothing stored')
        return { moved: false, inserted: 0, repeated: 0, gapsAdded: 0, summaries: [] }
      }
      const summaries: string[] = []
      const stored = await storeDocumentsIn(client, company.cnpj, c.received, (d, inserted) => {
        if (inserted && d.opened.facts.kind === 'resNFe') summaries.push(d.opened.facts.chave)
      })
      const gapsAdded = await this.addGaps(client, company, c.gaps)
      return { moved: true, ...stored, gapsAdded, summaries }
    })
  }

  private async addGaps (client: PoolClient, company: FeedCompany, gaps: bigint[]): Promise<number> {
    if (gaps.length === 0) return 0
    const { rowCount } = await client.query(
      `INSERT INTO feed_lacunas (empresa_id, servico, nsu) SELECT $1, $2, n FROM unnest($3::bigint[]) AS n ON CONFLICT DO NOTHING`,
      [company.empresaId, company.servico, gaps.map(String)])
    return rowCount ?? 0
  }

  private async afterCommit (lease: Lease, step: Step, cStat: string): Promise<void> {
    const { company } = lease
    if (!step.moved) return
    if (step.summaries.length > 0 && company.cienciaAutomatica && this.o.onSummariesStored !== undefined) {
      await this.o.onSummariesStored(this.pool, company, step.summaries).catch((err: unknown) => {
        this.o.log?.warn({ err, empresa_codigo: company.empresaCodigo }, 'feed: automatic Ciência failed; the summaries are kept')
      })
    }
    this.emit({ company, event: 'stored', ultNsu: await this.cursorOf(company), inserted: step.inserted, repeated: step.repeated, gapsAdded: step.gapsAdded, cStat })
  }

  /**
   * After a 656: the block is already recorded by the guard (one hour, restarted by any
   * call). The answer carries the NSU the authority expects next: the cursor follows it,
   * and when it is ahead (another client read that range), the NSUs skipped become gaps.
   */
  private async resync (lease: Lease, ret: RetDistDFeInt): Promise<void> {
    const { company } = lease
    const from = await this.cursorOf(company)
    const server = /^[0-9]{15}$/.test(ret.ultNSU) && BigInt(ret.ultNSU) > 0n ? ret.ultNSU : undefined
    const error = new GatewayError(422, 'GATEWAY_QUERY_REFUSED', `NF-e distribution answered cStat 656 (${ret.xMotivo}): the CNPJ is blocked for an hour.` +
      (server !== undefined && server !== from ? ` The authority expects NSU ${server} next; the feed continues from there.` : ''))
    await inTransaction(this.pool, async (client) => {
      await client.query(
        `UPDATE feed_empresas SET ult_nsu = coalesce($4::bigint, ult_nsu), ultimo_cstat = '656', ultima_consulta = now(),
           proxima_consulta = now() + $5 * interval '1 millisecond', ultimo_erro_codigo = $6, ultimo_erro = $7, ultimo_erro_em = now(), atualizado_em = now()
         WHERE empresa_id = $1 AND servico = $2 AND ult_nsu = $3::bigint`,
        [company.empresaId, company.servico, from, server ?? null, this.cooldownMs, error.code, error.detail])
      if (server !== undefined && BigInt(server) > BigInt(from)) {
        const gaps: bigint[] = []
        for (let n = BigInt(from) + 1n; n <= BigInt(server) && gaps.length < MAX_GAPS_PER_ANSWER; n++) gaps.push(n)
        await this.addGaps(client, company, gaps)
      }
    })
    this.emit({ company, event: 'error', ultNsu: await this.cursorOf(company), inserted: 0, repeated: 0, gapsAdded: 0, cStat: '656', error: { code: error.code, message: error.detail } })
  }

  /**
   * Asks for each open gap of the company, oldest NSU first, while the hour's point lookups
   * allow. A document that arrives is stored and its gap closed in one transaction; an
   * answer without it counts an attempt. Stops when the CNPJ is blocked (656).
   */
  private async refillGaps (lease: Lease, agent: Agent): Promise<void> {
    const { company } = lease
    await this.pool.query(
      `UPDATE feed_lacunas SET desistida_em = now(), ultimo_erro = coalesce(ultimo_erro, 'older than the ${GAP_MAX_AGE_DAYS} days the authority distributes')
       WHERE empresa_id = $1 AND servico = $2 AND desistida_em IS NULL AND detectada_em < now() - interval '${GAP_MAX_AGE_DAYS} days'`, [company.empresaId, company.servico])
    const { rows } = await this.pool.query<{ nsu: string }>(
      `SELECT nsu::text FROM feed_lacunas WHERE empresa_id = $1 AND servico = $2 AND desistida_em IS NULL
         AND (ultima_tentativa IS NULL OR ultima_tentativa <= now() - $3 * interval '1 millisecond')
       ORDER BY feed_lacunas.nsu LIMIT $4`, [company.empresaId, company.servico, GAP_RETRY_MS, this.lookupsPerHour])
    for (const { nsu } of rows) {
      if (!await this.renew(lease)) return
      const taken = await takePointLookup(this.pool, company.servico, company.cnpj, 'lacuna', this.lookupsPerHour)
      if (!taken.ok) return
      let found: ReceivedDocument[] = []
      let why: string | undefined
      try {
        if (company.servico === 'nfe') {
          const ret = await this.guard.run('nfe', company.cnpj, `consNSU:${nsu}`, `CNPJ ${company.cnpj}`, async () => {
            const answer = await queryNfeDistribution({ url: this.o.nfeUrl, agent, timeoutMs: this.o.timeoutMs, tpAmb: this.o.tpAmb, ...cUF(this.o.cUFAutor), cnpj: company.cnpj, consNSU: nsuText(nsu) })
            return { value: answer, cooldown: answer.cStat === '656' ? { reason: nfeCooldownReason(answer)!, cStat: '656' } : undefined }
          }, { pointLookup: true })
          if (ret.cStat === '656') {
            await this.resync(lease, { ...ret, ultNSU: '' })
            return
          }
          found = openNfe(ret.documentos.filter((d) => d.nsu === null || BigInt(d.nsu) === BigInt(nsu)))
          if (found.length === 0) why = `cStat ${ret.cStat} (${ret.xMotivo})`
        } else {
          const answer = await this.guard.run('adn', company.cnpj, `lote=false:${nsu}`, `CNPJ ${company.cnpj}`, async () => ({
            value: await queryAdnDistribution({ baseUrl: this.o.adnUrl, tpAmb: this.o.tpAmb, cnpj: company.cnpj, nsu: Number(nsu), lote: false, agent, timeoutMs: this.o.timeoutMs })
          }), { pointLookup: true })
          found = openAdn(answer.documentos.filter((d) => d.NSU === Number(nsu)))
          if (found.length === 0) why = answer.statusProcessamento
        }
      } catch (err) {
        if (isGatewayError(err) && err.code === 'GATEWAY_COOLDOWN') return
        why = err instanceof Error ? err.message : String(err)
      }
      await this.closeGap(lease, nsu, found, why)
    }
  }

  private async closeGap (lease: Lease, nsu: string, found: ReceivedDocument[], why: string | undefined): Promise<void> {
    const { company } = lease
    const step = await inTransaction(this.pool, async (client): Promise<Step> => {
      if (found.length > 0) {
        const summaries: string[] = []
        const stored = await storeDocumentsIn(client, company.cnpj, found, (d, inserted) => {
          if (inserted && d.opened.facts.kind === 'resNFe') summaries.push(d.opened.facts.chave)
        })
        await client.query('DELETE FROM feed_lacunas WHERE empresa_id = $1 AND servico = $2 AND nsu = $3::bigint', [company.empresaId, company.servico, nsu])
        return { moved: true, ...stored, gapsAdded: 0, summaries }
      }
      await client.query(
        `UPDATE feed_lacunas SET tentativas = tentativas + 1, ultima_tentativa = now(), ultimo_erro = $4,
           desistida_em = CASE WHEN tentativas + 1 >= $5 THEN now() END
         WHERE empresa_id = $1 AND servico = $2 AND nsu = $3::bigint`, [company.empresaId, company.servico, nsu, why ?? 'not in the answer', GAP_ATTEMPTS])
      return { moved: false, inserted: 0, repeated: 0, gapsAdded: 0, summaries: [] }
    })
    if (step.moved) await this.afterCommit(lease, step, 'LACUNA_PREENCHIDA')
  }

  private async setNext (lease: Lease, inMs: number, error?: GatewayError): Promise<void> {
    const { company } = lease
    await this.pool.query(
      `UPDATE feed_empresas SET proxima_consulta = now() + $3 * interval '1 millisecond', atualizado_em = now(),
         ultimo_erro_codigo = CASE WHEN $4::text IS NULL THEN ultimo_erro_codigo ELSE $4 END,
         ultimo_erro = CASE WHEN $4::text IS NULL THEN ultimo_erro ELSE $5 END,
         ultimo_erro_em = CASE WHEN $4::text IS NULL THEN ultimo_erro_em ELSE now() END
       WHERE empresa_id = $1 AND servico = $2`, [company.empresaId, company.servico, inMs, error?.code ?? null, error?.detail ?? null])
    this.emit({ company, event: error === undefined ? 'waiting' : 'error', ultNsu: await this.cursorOf(company), inserted: 0, repeated: 0, gapsAdded: 0,
      ...(error === undefined ? {} : { error: { code: error.code, message: error.detail } }) })
  }

  private async recordError (lease: Lease, err: unknown): Promise<void> {
    const gateway = isGatewayError(err) ? err : undefined
    const code = gateway?.code ?? (err instanceof DocumentRefused ? err.code : 'FEED_FAILED')
    const message = gateway?.detail ?? (err instanceof Error ? err.message : String(err))
    this.o.log?.warn({ empresa_codigo: lease.company.empresaCodigo, servico: lease.company.servico, code, err: gateway === undefined ? err : undefined }, 'feed: poll failed')
    const retry = gateway?.retryAfterS !== undefined ? gateway.retryAfterS * 1000 : this.retryMs
    try {
      await this.setNext(lease, retry, gateway ?? new GatewayError(503, 'GATEWAY_UPSTREAM_UNAVAILABLE', message))
    } catch (e) {
      this.o.log?.warn({ err: e }, 'feed: recording a failure failed')
    }
  }

  private emit (change: FeedChange): void {
    try {
      this.o.onFeedChanged?.(change)
    } catch (err) {
      this.o.log?.warn({ err }, 'feed: the change hook threw')
    }
  }
}

function cUF (cUFAutor: number | undefined): { cUFAutor?: number } {
  return cUFAutor === undefined ? {} : { cUFAutor }
}

function nsuText (n: string): string {
  return n.padStart(NSU_WIDTH, '0')
}

/**
 * Opens every document of an answer before any is stored; one that breaks a bound refuses
 * the whole answer (nothing stored, the cursor stays: the same NSUs are asked again next
 * turn). A well-formed document of a kind not kept is skipped, as the query routes do.
 */
function openAll (items: Array<{ nsu: string | null, esquema: string, open: () => OpenedDocument }>): ReceivedDocument[] {
  const out: ReceivedDocument[] = []
  for (const item of items) {
    try {
      out.push({ nsu: item.nsu, esquema: item.esquema, opened: item.open() })
    } catch (e) {
      if (!(e instanceof DocumentRefused)) throw e
      if (e.code === 'DOCZIP_UNKNOWN') continue
      throw new GatewayError(503, e.code, `The tax authority sent a document (NSU ${item.nsu ?? 'none'}) that ${e.message}; nothing of this answer was kept, and the feed asks for it again next turn.`)
    }
  }
  return out
}

export function openNfe (documentos: NfeDocument[]): ReceivedDocument[] {
  return openAll(documentos.map((d) => ({ nsu: d.nsu, esquema: d.schema.split('_v')[0]!, open: () => openNfeDocument(d.docZip, d.schema) })))
}

export function openAdn (documentos: AdnDocument[]): ReceivedDocument[] {
  return openAll(documentos.map((d) => ({
    nsu: typeof d.NSU === 'number' || typeof d.NSU === 'string' ? String(d.NSU) : null,
    esquema: typeof d.TipoDocumento === 'string' ? d.TipoDocumento.slice(0, 40) : '?',
    open: () => openNfseDocument(d)
  })))
}
