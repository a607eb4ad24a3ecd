import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { freshDatabase } from '../../fixtures/db/test-database.js'
import type { TestDatabase } from '../../fixtures/db/test-database.js'
import { KEEP_AT_MOST_MS, KEEP_IDLE_MS, QueryGuard, nfeCooldownReason } from './query-guard.js'
import type { GuardedAnswer } from './query-guard.js'

const CNPJ = '11222333000181'
const OTHER = '11222333000262'

let db: TestDatabase
beforeAll(async () => { db = await freshDatabase() })
afterEach(async () => { await db.pool.query('DELETE FROM esperas_consulta') })
afterAll(async () => { await db?.drop() })

function deferred<T> (): { promise: Promise<T>, resolve: (v: T) => void, reject: (e: unknown) => void } {
  let resolve!: (v: T) => void
  let reject!: (e: unknown) => void
  const promise = new Promise<T>((res, rej) => { resolve = res; reject = rej })
  return { promise, resolve, reject }
}

const plain = <T>(value: T): GuardedAnswer<T> => ({ value })
const guardOf = (cooldownMs = 3_600_000): QueryGuard => new QueryGuard({ pool: db.pool, callTimeoutMs: 2000, cooldownMs })
const tick = async (ms = 0): Promise<void> => { await new Promise((resolve) => setTimeout(resolve, ms)) }
async function until (condition: () => boolean): Promise<void> {
  for (const started = Date.now(); !condition(); await tick(10)) if (Date.now() - started > 10_000) throw new Error('condition not met in 10 s')
}

describe('QueryGuard.run in one instance', () => {
  it('runs the calls of one CNPJ one after the other, in arrival order, even when one fails', async () => {
    const guard = guardOf()
    const log: string[] = []
    const first = deferred<string>()
    const a = guard.run('nfe', CNPJ, '1', 'x', async () => { log.push('a start'); const v = await first.promise; log.push('a end'); return plain(v) })
    const b = guard.run('nfe', CNPJ, '2', 'x', async () => { log.push('b start'); throw new Error('b failed') })
    const c = guard.run('nfe', CNPJ, '3', 'x', async () => { log.push('c start'); return plain('c') })
    // Wait for a to start (its turn is a database round trip: slow on a loaded machine),
    // then give b and c time to start wrongly.
    await until(() => log.length > 0)
    await tick(100)
    expect(log).toEqual(['a start'])
    first.resolve('a')
    expect(await a).toBe('a')
    await expect(b).rejects.toThrow('b failed')
    expect(await c).toBe('c')
    expect(log).toEqual(['a start', 'a end', 'b start', 'c start'])
  })

  it('runs different CNPJs and routes side by side', async () => {
    const guard = guardOf()
    const gate = deferred<void>()
    let started = 0
    const calls = [guard.run('nfe', CNPJ, '1', 'x', async () => { started++; await gate.promise; return plain(1) }),
      guard.run('nfe', OTHER, '1', 'x', async () => { started++; await gate.promise; return plain(2) }),
      guard.run('adn', CNPJ, '1', 'x', async () => { started++; await gate.promise; return plain(3) })]
    await until(() => started === 3)
    gate.resolve()
    expect(await Promise.all(calls)).toEqual([1, 2, 3])
  })

  it('shares a queued or running identical query instead of running it twice, and forgets it once settled', async () => {
    const guard = guardOf()
    let calls = 0
    const gate = deferred<void>()
    const task = async (): Promise<GuardedAnswer<number>> => { calls++; await gate.promise; return plain(calls) }
    const a = guard.run('nfe', CNPJ, 'same', 'x', task)
    const b = guard.run('nfe', CNPJ, 'same', 'x', task)
    expect(b).toBe(a)
    gate.resolve()
    expect(await Promise.all([a, b])).toEqual([1, 1])
    await tick()
    expect(await guard.run('nfe', CNPJ, 'same', 'x', task)).toBe(2)
  })
})

describe('QueryGuard across instances (two guards on one database)', () => {
  it('never lets two instances call for one CNPJ at once: the second waits for the first to give its turn back', async () => {
    const [one, two] = [guardOf(), guardOf()]
    const gate = deferred<void>()
    const log: string[] = []
    const a = one.run('nfe', CNPJ, '1', 'x', async () => { log.push('one start'); await gate.promise; log.push('one end'); return plain('one') })
    await until(() => log.length > 0)
    const b = two.run('nfe', CNPJ, '1', 'x', async () => { log.push('two start'); return plain('two') })
    await tick(200)
    expect(log).toEqual(['one start'])
    gate.resolve()
    expect(await Promise.all([a, b])).toEqual(['one', 'two'])
    expect(log).toEqual(['one start', 'one end', 'two start'])
  })

  it('holds every instance, and a new one, to the waiting period an answer started, with 429 and Retry-After', async () => {
    const one = guardOf()
    const reason = nfeCooldownReason({ cStat: '137', ultNSU: '1', maxNSU: '1' })!
    expect(await one.run('nfe', CNPJ, '1', 'x', async () => ({ value: '137', cooldown: { reason, cStat: '137' } }))).toBe('137')
    let called = false
    for (const guard of [one, guardOf()]) {
      let error: unknown
      try { await guard.run('nfe', CNPJ, '2', 'CNPJ 11222333000181', async () => { called = true; return plain('no') }) } catch (e) { error = e }
      expect(error).toMatchObject({ status: 429, code: 'GATEWAY_COOLDOWN' })
      expect((error as { retryAfterS: number }).retryAfterS).toBeGreaterThan(3590)
      expect((error as Error).message).toMatch(/^No NF-e query for CNPJ 11222333000181 before .*cStat 137/)
    }
    expect(called).toBe(false)
    // Another CNPJ and the other route are not held.
    expect(await one.run('nfe', OTHER, '1', 'x', async () => plain('ok'))).toBe('ok')
    expect(await one.run('adn', CNPJ, '1', 'x', async () => plain('ok'))).toBe('ok')
    const { rows } = await db.pool.query('SELECT cstat, em_curso_por FROM esperas_consulta WHERE servico = $1 AND cnpj = $2', ['nfe', CNPJ])
    expect(rows).toEqual([{ cstat: '137', em_curso_por: null }])
  })

  it('gives two instances racing for one CNPJ one call; the other meets the waiting period it started', async () => {
    const guards = [guardOf(), guardOf()]
    let calls = 0
    const results = await Promise.allSettled(guards.map(async (g) => await g.run('nfe', CNPJ, '1', 'x', async () => {
      calls++
      await tick(50)
      return { value: 'answered', cooldown: { reason: 'cStat 137', cStat: '137' } }
    })))
    expect(calls).toBe(1)
    expect(results.map((r) => r.status).sort()).toEqual(['fulfilled', 'rejected'])
  })

  it('stores the reason and the cStat as given, whatever characters they hold', async () => {
    const reason = "the authority's answer; DROP TABLE esperas_consulta; --"
    await guardOf().run('nfe', CNPJ, '1', 'x', async () => ({ value: 1, cooldown: { reason, cStat: "1'37" } }))
    const { rows } = await db.pool.query('SELECT motivo, cstat FROM esperas_consulta')
    expect(rows).toEqual([{ motivo: reason, cstat: "1'37" }])
  })

  it('lets the next call through once the waiting period has passed', async () => {
    const guard = guardOf(300)
    await guard.run('nfe', CNPJ, '1', 'x', async () => ({ value: 1, cooldown: { reason: 'cStat 137', cStat: '137' } }))
    await expect(guard.run('nfe', CNPJ, '2', 'x', async () => plain(2))).rejects.toMatchObject({ status: 429 })
    await tick(400)
    expect(await guard.run('nfe', CNPJ, '3', 'x', async () => plain(3))).toBe(3)
  })

  it('takes over the turn of an instance that died mid-call once the turn lapses (deadline plus margin)', async () => {
    // A turn taken by an instance that never gave it back, lapsing in 300 ms.
    await db.pool.query(`INSERT INTO esperas_consulta (servico, cnpj, em_curso_por, em_curso_ate)
      VALUES ('nfe', $1, gen_random_uuid(), now() + interval '300 milliseconds')`, [CNPJ])
    const started = Date.now()
    expect(await guardOf().run('nfe', CNPJ, '1', 'x', async () => plain('after'))).toBe('after')
    expect(Date.now() - started).toBeGreaterThanOrEqual(250)
  })
})

describe('QueryGuard keeps a turn for the next local call (issue 24)', () => {
  const holder = async (): Promise<string | null> => {
    const { rows } = await db.pool.query<{ em_curso_por: string | null }>('SELECT em_curso_por FROM esperas_consulta WHERE servico = $1 AND cnpj = $2', ['nfe', CNPJ])
    return rows[0]?.em_curso_por ?? null
  }

  it('reuses the turn for calls that follow at once, and gives it back once none has come for a while', async () => {
    const guard = guardOf()
    expect(await guard.run('nfe', CNPJ, '1', 'x', async () => plain(1))).toBe(1)
    const token = await holder()
    expect(token).not.toBeNull()
    expect(await guard.run('nfe', CNPJ, '2', 'x', async () => plain(2))).toBe(2)
    expect(await holder()).toBe(token)
    await tick(KEEP_IDLE_MS)
    for (const started = Date.now(); await holder() !== null;) {
      if (Date.now() - started > 5000) throw new Error('the turn was not given back')
      await tick(20)
    }
  })

  it('takes a new turn at least every KEEP_AT_MOST_MS while calls keep coming, so its lapse stays bounded', async () => {
    const guard = guardOf()
    const tokens: Array<string | null> = []
    const started = Date.now()
    for (let i = 0; Date.now() - started < 2.5 * KEEP_AT_MOST_MS; i++) {
      await guard.run('nfe', CNPJ, String(i), 'x', async () => { await tick(10); return plain(i) })
      tokens.push(await holder())
    }
    // Right after the turn is given back (it is taken again by the next call) the row shows no holder.
    const distinct = new Set(tokens.filter((t) => t !== null))
    expect(distinct.size).toBeGreaterThanOrEqual(2)
    expect(distinct.size).toBeLessThan(tokens.length / 2)
    await guard.close()
  })

  it('gives the turn back at once after a failed call, and on close', async () => {
    const guard = guardOf()
    await expect(guard.run('nfe', CNPJ, '1', 'x', async () => { throw new Error('upstream down') })).rejects.toThrow('upstream down')
    expect(await holder()).toBeNull()
    await guard.run('nfe', CNPJ, '2', 'x', async () => plain(2))
    expect(await holder()).not.toBeNull()
    await guard.close()
    expect(await holder()).toBeNull()
  })
})

describe('nfeCooldownReason', () => {
  it('starts the period after 137, 656 and a batch that reached maxNSU, not while documents remain', () => {
    expect(nfeCooldownReason({ cStat: '137', ultNSU: '1', maxNSU: '1' })).toMatch(/137/)
    expect(nfeCooldownReason({ cStat: '656', ultNSU: '1', maxNSU: '9' })).toMatch(/656/)
    expect(nfeCooldownReason({ cStat: '138', ultNSU: '000000000000009', maxNSU: '000000000000009' })).toMatch(/ultNSU = maxNSU/)
    expect(nfeCooldownReason({ cStat: '138', ultNSU: '000000000000005', maxNSU: '000000000000009' })).toBeUndefined()
    expect(nfeCooldownReason({ cStat: '593', ultNSU: '', maxNSU: '' })).toBeUndefined()
  })
})

describe('QueryGuard.run for a point lookup (consNSU, consChNFe)', () => {
  it('goes through the wait after "nothing more" (a distNSU rule), never through a 656 block', async () => {
    const guard = guardOf()
    await guard.run('nfe', CNPJ, 'dist', 'x', async () => ({ value: 1, cooldown: { reason: 'the tax authority answered cStat 137.', cStat: '137' } }))
    await expect(guard.run('nfe', CNPJ, 'dist-2', 'x', async () => plain(2))).rejects.toMatchObject({ status: 429, code: 'GATEWAY_COOLDOWN' })
    expect(await guard.run('nfe', CNPJ, 'consNSU:5', 'x', async () => plain(3), { pointLookup: true })).toBe(3)
    await guard.run('nfe', CNPJ, 'consNSU:6', 'x', async () => ({ value: 4, cooldown: { reason: 'the tax authority answered cStat 656.', cStat: '656' } }), { pointLookup: true })
    let called = false
    await expect(guard.run('nfe', CNPJ, 'consNSU:7', 'x', async () => { called = true; return plain(5) }, { pointLookup: true })).rejects.toMatchObject({ status: 429, code: 'GATEWAY_COOLDOWN' })
    expect(called).toBe(false)
    await guard.close()
  })
})
