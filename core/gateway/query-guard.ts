/**
 * Keeps a company's certificate out of the authority's "consumo indevido" block
 * (cStat 656, one hour, restarted by every query made during it: tax-protocols.md 1.7).
 *
 * - Waiting period: after an answer that says "nothing more now" for a CNPJ (137; 138
 *   with ultNSU = maxNSU) or a 656, the next NF-e query for that CNPJ within the period
 *   is answered here with 429 and Retry-After, without reaching the authority.
 * - Serialization: queries for one CNPJ run one at a time, in arrival order. A caller
 *   whose query is identical to one already running (same CNPJ, same cursor) gets that
 *   query's answer instead of a second call: the second call could only earn a 656
 *   (an out-of-sequence cursor) or the waiting period. A different query waits its turn
 *   and then meets the waiting period check like any other.
 *
 * State is in memory, per process: a restart forgets the waiting periods (the authority
 * does not), so one gateway process should front a set of companies.
 */
import { GatewayError } from './errors.js'

export interface QueryGuardOptions {
  /** The waiting period; default one hour (tax-protocols.md 1.6-1.7). */
  cooldownMs?: number
  now?: () => number
}

interface Cooldown {
  until: number
  reason: string
}

export const DEFAULT_COOLDOWN_MS = 3_600_000

export class QueryGuard {
  readonly cooldownMs: number
  private readonly now: () => number
  private readonly cooldowns = new Map<string, Cooldown>()
  /** Tail of each key's queue: the promise the next caller waits for. */
  private readonly tails = new Map<string, Promise<unknown>>()
  /** Queries running or queued, by their identity, for sharing. */
  private readonly pending = new Map<string, Promise<unknown>>()

  constructor (options: QueryGuardOptions = {}) {
    this.cooldownMs = options.cooldownMs ?? DEFAULT_COOLDOWN_MS
    this.now = options.now ?? Date.now
  }

  /**
   * Runs `task` for `key` (a CNPJ) after every earlier task of that key has settled.
   * When a task with the same `identity` is already queued or running, its promise is
   * returned instead (its answer, or its error, is shared).
   */
  run<T> (key: string, identity: string, task: () => Promise<T>): Promise<T> {
    const shareKey = `${key}\u0000${identity}`
    const running = this.pending.get(shareKey)
    if (running !== undefined) return running as Promise<T>
    const before = this.tails.get(key) ?? Promise.resolve()
    const result = before.then(task, task)
    const tail = result.then(() => undefined, () => undefined)
    this.tails.set(key, tail)
    this.pending.set(shareKey, result)
    void tail.then(() => {
      if (this.pending.get(shareKey) === result) this.pending.delete(shareKey)
      if (this.tails.get(key) === tail) this.tails.delete(key)
    })
    return result
  }

  /** Throws the 429 when `key` is inside its waiting period. */
  assertOpen (key: string, label: string): void {
    const c = this.cooldowns.get(key)
    if (c === undefined) return
    const left = c.until - this.now()
    if (left <= 0) {
      this.cooldowns.delete(key)
      return
    }
    const retryAfterS = Math.ceil(left / 1000)
    throw new GatewayError(429, 'GATEWAY_COOLDOWN',
      `No NF-e query for ${label} before ${new Date(c.until).toISOString()} (${retryAfterS} s): ${c.reason} ` +
      'The tax authority requires this wait, and a query made during it gets the certificate blocked for an hour (cStat 656); the gateway held this one back.',
      { retryAfterS })
  }

  /** Starts (or restarts) the waiting period of `key`. */
  startCooldown (key: string, reason: string): void {
    this.cooldowns.set(key, { until: this.now() + this.cooldownMs, reason })
    this.sweep()
  }

  /** Seconds left in `key`'s waiting period, 0 when none. */
  remainingS (key: string): number {
    const c = this.cooldowns.get(key)
    return c === undefined ? 0 : Math.max(0, Math.ceil((c.until - this.now()) / 1000))
  }

  private sweep (): void {
    if (this.cooldowns.size < 1024) return
    const t = this.now()
    for (const [key, c] of this.cooldowns) if (c.until <= t) this.cooldowns.delete(key)
  }
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
