import { describe, expect, it } from 'vitest'
import { QueryGuard, nfeCooldownReason } from './query-guard.js'

function deferred<T> (): { promise: Promise<T>, resolve: (v: T) => void, reject: (e: unknown) => void } {
  let resolve!: (v: T) => void
  let reject!: (e: unknown) => void
  const promise = new Promise<T>((res, rej) => { resolve = res; reject = rej })
  return { promise, resolve, reject }
}

describe('QueryGuard.run', () => {
  it('runs the tasks of one key one after the other, in arrival order, even when one fails', async () => {
    const guard = new QueryGuard()
    const log: string[] = []
    const first = deferred<string>()
    const a = guard.run('k', '1', async () => { log.push('a start'); const v = await first.promise; log.push('a end'); return v })
    const b = guard.run('k', '2', async () => { log.push('b start'); throw new Error('b failed') })
    const c = guard.run('k', '3', async () => { log.push('c start'); return 'c' })
    await new Promise((resolve) => setImmediate(resolve))
    expect(log).toEqual(['a start'])
    first.resolve('a')
    expect(await a).toBe('a')
    await expect(b).rejects.toThrow('b failed')
    expect(await c).toBe('c')
    expect(log).toEqual(['a start', 'a end', 'b start', 'c start'])
  })

  it('runs different keys side by side', async () => {
    const guard = new QueryGuard()
    const gate = deferred<void>()
    let started = 0
    const a = guard.run('x', '1', async () => { started++; await gate.promise })
    const b = guard.run('y', '1', async () => { started++; await gate.promise })
    await new Promise((resolve) => setImmediate(resolve))
    expect(started).toBe(2)
    gate.resolve()
    await Promise.all([a, b])
  })

  it('shares a queued or running identical query instead of running it twice, and forgets it once settled', async () => {
    const guard = new QueryGuard()
    let calls = 0
    const gate = deferred<void>()
    const task = async (): Promise<number> => { calls++; await gate.promise; return calls }
    const a = guard.run('k', 'same', task)
    const b = guard.run('k', 'same', task)
    expect(b).toBe(a)
    gate.resolve()
    expect(await Promise.all([a, b])).toEqual([1, 1])
    await new Promise((resolve) => setImmediate(resolve))
    expect(await guard.run('k', 'same', task)).toBe(2)
  })
})

describe('QueryGuard waiting period', () => {
  it('refuses with 429 and Retry-After inside the period, and lets through after it', () => {
    let t = 1_000_000
    const guard = new QueryGuard({ cooldownMs: 3_600_000, now: () => t })
    guard.assertOpen('k', 'CNPJ 11222333000181')
    guard.startCooldown('k', 'the tax authority answered cStat 137 (no documents after this NSU).')
    t += 600_000
    let error: unknown
    try { guard.assertOpen('k', 'CNPJ 11222333000181') } catch (e) { error = e }
    expect(error).toMatchObject({ status: 429, code: 'GATEWAY_COOLDOWN', retryAfterS: 3000 })
    expect((error as Error).message).toMatch(/^No NF-e query for CNPJ 11222333000181 before .*cStat 137/)
    expect(guard.remainingS('other')).toBe(0)
    t += 3_000_000
    expect(() => guard.assertOpen('k', 'x')).not.toThrow()
    expect(guard.remainingS('k')).toBe(0)
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
