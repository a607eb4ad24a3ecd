/**
 * Keeps a company's certificate out of the authority's "consumo indevido" block
 * (cStat 656, one hour, restarted by every query made during it: NT 2014.002),
 * across every gateway instance on one database and across restarts.
 *
 * - Waiting period: after an answer that says "nothing more now" for a CNPJ (137; 138
 *   with ultNSU = maxNSU) or a 656, the next NF-e query for that CNPJ within the period
 *   is answered here with 429 and Retry-After, without reaching the authority. The period
 *   is a row of `esperas_consulta` (migration 0003), read before every upstream call and
 *   written by the statement that records the answer, on the database's clock.
 * - One call at a time per CNPJ and route, across instances: the same row is a turn an
 *   instance takes before calling and gives back with the answer. Another instance that
 *   finds the turn taken waits for it (polling the row), then meets the waiting period
 *   the first answer may have started. An instance that dies mid-call holds the turn
 *   until its lapse (the call's deadline plus a margin), no longer.
 * - Inside one instance, queries for one CNPJ also queue in arrival order, and a caller
 *   whose query is identical to one already queued or running (same CNPJ, same cursor)
 *   gets that query's answer instead of a second call: the second call could only earn a
 *   656 (an out-of-sequence cursor) or the waiting period. This costs no database work.
 *
 * - An instance keeps a turn it took for the next calls of that CNPJ, for a short while
 *   (issue 24): a client paging through a CNPJ's documents asks again as soon as it has an
 *   answer, and each of those calls would otherwise cost two statements. While the turn is
 *   held no other instance can call for the CNPJ, so no other instance can start a waiting
 *   period for it: what the row said when the turn was taken still holds. The turn is
 *   given back once no local call has come for KEEP_IDLE_MS, at the first answer after
 *   KEEP_AT_MOST_MS (then taken again, so the lapse of a dead instance's turn stays
 *   bounded), and at once after an error or an answer that starts a waiting period (stored
 *   before the caller sees it). Instances are not served in turn: one that polls for a
 *   turn another keeps using gets it when that other instance goes quiet for the CNPJ.
 *
 * No database connection is held during the upstream call: a call costs two short
 * statements (take, give back) or none while the turn is kept; only the take is on the
 * caller's path unless the answer starts a waiting period.
 */
import { randomUUID } from 'node:crypto'
import type { Pool } from 'pg'
import { GatewayError } from './errors.js'

export type GuardedRoute = 'nfe' | 'adn'

export interface QueryGuardOptions {
  pool: Pool
  /** The waiting period; default one hour (NT 2014.002). */
  cooldownMs?: number
  /** The longest an upstream call may take (GATEWAY_TIMEOUT_MS): a turn lapses this long plus a margin after it was taken. */
  callTimeoutMs: number
}

/** What a guarded call returns: its value, and the waiting period its answer starts, if any. */
export interface GuardedAnswer<T> {
  value: T
  cooldown?: { reason: string, cStat: string } | undefined
}

interface Outcome<T> { value: T, released: Promise<void> }

export interface RunOptions {
  /**
   * A point lookup (consNSU, consChNFe): it still waits for the CNPJ's turn and obeys a 656
   * block, but not the wait after "nothing more now", which concerns distNSU (NT 2014.002).
   */
  pointLookup?: boolean
}

/** A turn this instance holds: its token, when it was taken (local clock), and the timer that gives it back when unused. */
interface Turn { route: GuardedRoute, cnpj: string, token: string, takenAt: number, idle?: NodeJS.Timeout }

export const DEFAULT_COOLDOWN_MS = 3_600_000
/** Added to the call's deadline: the time to record the answer after it arrived. */
const TURN_MARGIN_MS = 5000
/** How often a waiting instance looks at a turn another instance holds. */
const POLL_MS = [25, 50, 100, 200, 400]
/** A kept turn is given back when no local call for its CNPJ has come for this long. */
export const KEEP_IDLE_MS = 200
/** A turn is no longer kept once this long has passed since it was taken. */
export const KEEP_AT_MOST_MS = 1000

type Cooldown = NonNullable<GuardedAnswer<unknown>['cooldown']>

interface TurnRow { ok: boolean, motivo: string | null, espera_ms: string | null, em_curso_ms: string | null }

/**
 * A statement's commit that does not wait for its WAL record to reach the disk (about 7 ms
 * per commit on our machines): a turn is a lease that lapses anyway, and a database crash
 * ends every query in progress. A waiting period is different (losing it risks the 656 it
 * prevents), so the statement that records one commits durably. `set_config(..., true)`
 * holds for the statement's own transaction, whose commit follows.
 */
const NO_FLUSH = "set_config('synchronous_commit', 'off', true) AS sem_espera_do_disco"

/**
 * Takes the turn when no waiting period runs and nobody holds it. Otherwise reports the
 * row as it was: the remaining wait, or how long the holder's turn may still last. $5: a
 * point lookup (consNSU, consChNFe), which the wait after "nothing more now" does not
 * hold back (that wait is distNSU's rule); a 656 block holds back every query.
 */
const TAKE_TURN_SQL = `
WITH antes AS (SELECT espera_ate, motivo, em_curso_ate,
                      espera_ate > now() AND NOT ($5 AND cstat IS DISTINCT FROM '656') AS espera_vale
               FROM esperas_consulta WHERE servico = $1 AND cnpj = $2),
vez AS (
  INSERT INTO esperas_consulta AS e (servico, cnpj, em_curso_por, em_curso_ate)
  VALUES ($1, $2, $3, now() + $4 * interval '1 millisecond')
  ON CONFLICT (servico, cnpj) DO UPDATE SET em_curso_por = EXCLUDED.em_curso_por, em_curso_ate = EXCLUDED.em_curso_ate, atualizado_em = now()
    WHERE (e.espera_ate IS NULL OR e.espera_ate <= now() OR ($5 AND e.cstat IS DISTINCT FROM '656'))
      AND (e.em_curso_ate IS NULL OR e.em_curso_ate <= now())
  RETURNING 1)
SELECT EXISTS (SELECT 1 FROM vez) AS ok,
       (SELECT motivo FROM antes WHERE espera_vale) AS motivo,
       (SELECT ceil(extract(epoch FROM espera_ate - now()) * 1000)::text FROM antes WHERE espera_vale) AS espera_ms,
       (SELECT ceil(extract(epoch FROM em_curso_ate - now()) * 1000)::text FROM antes WHERE em_curso_ate > now()) AS em_curso_ms,
       ${NO_FLUSH}`

/**
 * Gives the turn back (only if it is still ours: a lapsed turn may belong to another call
 * now) and records the waiting period the answer starts, whoever holds the turn. $7 says
 * whether the commit waits for the disk: only when a waiting period is recorded.
 */
const GIVE_TURN_SQL = `
WITH vez AS (
  UPDATE esperas_consulta SET
    em_curso_por = CASE WHEN em_curso_por = $3 THEN NULL ELSE em_curso_por END,
    em_curso_ate = CASE WHEN em_curso_por = $3 THEN NULL ELSE em_curso_ate END,
    espera_ate = CASE WHEN $4::text IS NULL THEN espera_ate ELSE greatest(espera_ate, now() + $6 * interval '1 millisecond') END,
    motivo = coalesce($4, motivo),
    cstat = coalesce($5, cstat),
    atualizado_em = now()
  WHERE servico = $1 AND cnpj = $2
  RETURNING 1)
SELECT count(*) FROM vez, (SELECT set_config('synchronous_commit', $7, true)) AS durabilidade`

export class QueryGuard {
  readonly cooldownMs: number
  private readonly pool: Pool
  private readonly turnMs: number
  /** Tail of each key's queue in this instance: the promise the next caller waits for. */
  private readonly tails = new Map<string, Promise<unknown>>()
  /** Queries running or queued in this instance, by their identity, for sharing. */
  private readonly pending = new Map<string, Promise<unknown>>()
  /** Turns kept after their call for the next local call of the same key. */
  private readonly kept = new Map<string, Turn>()
  /** A kept turn being given back because it went unused: a new call for the key waits for it. */
  private readonly returning = new Map<string, Promise<void>>()
  /** Once closing, no turn is kept: calls still running give theirs back with their answer. */
  private closing = false

  constructor (options: QueryGuardOptions) {
    this.pool = options.pool
    this.cooldownMs = options.cooldownMs ?? DEFAULT_COOLDOWN_MS
    // The last call started under a kept turn may start KEEP_AT_MOST_MS + KEEP_IDLE_MS after
    // the turn was taken, and still has its whole deadline and the margin before the lapse.
    this.turnMs = options.callTimeoutMs + TURN_MARGIN_MS + KEEP_AT_MOST_MS + KEEP_IDLE_MS
  }

  /** Gives back every kept turn (on shutdown, so that other instances need not wait for their lapse). */
  async close (): Promise<void> {
    this.closing = true
    const turns = [...this.kept.values()]
    this.kept.clear()
    await Promise.all([...this.returning.values(), ...turns.map(async (turn) => {
      clearTimeout(turn.idle)
      await this.giveTurn(turn, undefined).catch(() => undefined)
    })])
  }

  /**
   * Runs `call` for (`route`, `cnpj`) once this instance's earlier calls for it have
   * settled, no waiting period runs and no other instance is calling. When a call with
   * the same `identity` is already queued or running here, its promise is returned
   * instead (its answer, or its error, is shared). `label` names the CNPJ in a 429.
   */
  run<T> (route: GuardedRoute, cnpj: string, identity: string, label: string, call: () => Promise<GuardedAnswer<T>>, options: RunOptions = {}): Promise<T> {
    const key = `${route}:${cnpj}`
    const shareKey = `${key}\u0000${identity}`
    const running = this.pending.get(shareKey)
    if (running !== undefined) return running as Promise<T>
    const task = async (): Promise<Outcome<T>> => await this.guarded(route, cnpj, label, call, options.pointLookup === true)
    const before = this.tails.get(key) ?? Promise.resolve()
    const outcome = before.then(task, task)
    const result = outcome.then((o) => o.value)
    // The next call here starts once this one has given its turn back, even when its
    // caller already has the answer.
    const tail = outcome.then(async (o) => { await o.released.catch(() => undefined) }, () => undefined)
    this.tails.set(key, tail)
    this.pending.set(shareKey, result)
    // Shared until answered; a later identical call is a new call, queued behind this one's turn.
    void result.then(() => undefined, () => undefined).then(() => { if (this.pending.get(shareKey) === result) this.pending.delete(shareKey) })
    void tail.then(() => { if (this.tails.get(key) === tail) this.tails.delete(key) })
    return result
  }

  /**
   * Takes the turn (or reuses the one kept), calls, and keeps the turn or gives it back. An
   * answer that starts a waiting period is returned only once that period is stored; any
   * other answer is returned at once and the turn given back meanwhile (the turn is still
   * held until then, so no other call for the CNPJ can start before it is given back).
   */
  private async guarded<T> (route: GuardedRoute, cnpj: string, label: string, call: () => Promise<GuardedAnswer<T>>, pointLookup: boolean): Promise<Outcome<T>> {
    const key = `${route}:${cnpj}`
    const turn = this.reuse(key) ?? await this.takeTurn(route, cnpj, label, pointLookup)
    let answer: GuardedAnswer<T>
    try {
      answer = await call()
    } catch (err) {
      await this.giveTurn(turn, undefined).catch(() => undefined)
      throw err
    }
    if (answer.cooldown === undefined && !this.closing && performance.now() - turn.takenAt < KEEP_AT_MOST_MS) {
      this.keep(key, turn)
      return { value: answer.value, released: Promise.resolve() }
    }
    const released = this.giveTurn(turn, answer.cooldown)
    if (answer.cooldown !== undefined) await released
    return { value: answer.value, released }
  }

  /** The turn kept for `key`, if it is still young enough to cover a whole call. */
  private reuse (key: string): Turn | undefined {
    const turn = this.kept.get(key)
    if (turn === undefined) return undefined
    this.kept.delete(key)
    clearTimeout(turn.idle)
    if (performance.now() - turn.takenAt <= KEEP_AT_MOST_MS + KEEP_IDLE_MS) return turn
    this.giveBackUnused(key, turn)
    return undefined
  }

  private keep (key: string, turn: Turn): void {
    turn.idle = setTimeout(() => {
      if (this.kept.get(key) !== turn) return
      this.kept.delete(key)
      this.giveBackUnused(key, turn)
    }, KEEP_IDLE_MS)
    turn.idle.unref()
    this.kept.set(key, turn)
  }

  private giveBackUnused (key: string, turn: Turn): void {
    const done = this.giveTurn(turn, undefined).catch(() => undefined)
    this.returning.set(key, done)
    void done.then(() => { if (this.returning.get(key) === done) this.returning.delete(key) })
  }

  /** Waits for the turn; throws the 429 when a waiting period runs. */
  private async takeTurn (route: GuardedRoute, cnpj: string, label: string, pointLookup: boolean): Promise<Turn> {
    await this.returning.get(`${route}:${cnpj}`)
    const token = randomUUID()
    for (let attempt = 0; ; attempt++) {
      // Before the statement: the database's clock starts the lapse later, never earlier.
      const takenAt = performance.now()
      const { rows } = await this.pool.query<TurnRow>({ name: 'gateway-take-turn', text: TAKE_TURN_SQL, values: [route, cnpj, token, this.turnMs, pointLookup] })
      const row = rows[0]!
      if (row.ok) return { route, cnpj, token, takenAt }
      if (row.espera_ms !== null) throw cooldownError(label, Number(row.espera_ms), row.motivo ?? '')
      // Another instance is calling: look again shortly, never later than its turn lapses.
      const left = row.em_curso_ms === null ? 0 : Number(row.em_curso_ms)
      await new Promise((resolve) => setTimeout(resolve, Math.max(1, Math.min(left, POLL_MS[Math.min(attempt, POLL_MS.length - 1)]!))))
    }
  }

  private async giveTurn ({ route, cnpj, token }: Turn, cooldown: Cooldown | undefined): Promise<void> {
    await this.pool.query({
      name: 'gateway-give-turn',
      text: GIVE_TURN_SQL,
      values: [route, cnpj, token, cooldown?.reason ?? null, cooldown?.cStat ?? null, this.cooldownMs, cooldown === undefined ? 'off' : 'on']
    })
  }
}

function cooldownError (label: string, leftMs: number, reason: string): GatewayError {
  const retryAfterS = Math.max(1, Math.ceil(leftMs / 1000))
  const until = new Date(Date.now() + leftMs)
  return new GatewayError(429, 'GATEWAY_COOLDOWN',
    `No NF-e query for ${label} before ${until.toISOString()} (${retryAfterS} s): ${reason} ` +
    'The tax authority requires this wait, and a query made during it gets the certificate blocked for an hour (cStat 656); the gateway held this one back.',
    { retryAfterS })
}

/**
 * Why an NF-e answer starts the waiting period, or undefined when the next query may
 * follow at once (138 with more documents behind: ultNSU < maxNSU).
 */
export function nfeCooldownReason (answer: { cStat: string, ultNSU: string, maxNSU: string }): string | undefined {
  if (answer.cStat === '137') return 'the tax authority answered cStat 137 (no documents after this NSU).'
  if (answer.cStat === '656') return 'the tax authority answered cStat 656 (consumo indevido: the CNPJ is blocked for an hour).'
  if (answer.cStat === '138' && answer.ultNSU !== '' && answer.ultNSU === answer.maxNSU) {
    return 'the last answer reached the newest document (ultNSU = maxNSU).'
  }
  return undefined
}
