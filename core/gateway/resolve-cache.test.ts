import { describe, expect, it } from 'vitest'
import { EngineError } from '../errors.js'
import { ResolvedCertificateCache } from './resolve-cache.js'
import type { ResolvedCertificate } from './store.js'

/** A resolver that counts its reads and answers what `answers` says for each company. */
function counting (answers: Record<string, () => Promise<ResolvedCertificate>>): { resolve: (code: string) => Promise<ResolvedCertificate>, reads: string[] } {
  const reads: string[] = []
  return { reads, resolve: async (code) => { reads.push(code); return await answers[code]!() } }
}

const certificate = (fingerprint: string): ResolvedCertificate => ({ fingerprint } as unknown as ResolvedCertificate)

describe('ResolvedCertificateCache', () => {
  it('reads a company once within the lifetime, shares concurrent misses, and reads again after it', async () => {
    let t = 0
    const r = counting({ A: async () => certificate('1') })
    const cache = new ResolvedCertificateCache(r.resolve, 5000, () => t)
    const [x, y] = await Promise.all([cache.get('A'), cache.get('A')])
    expect(x).toBe(y)
    t = 5000
    await cache.get('A')
    expect(r.reads).toEqual(['A'])
    t = 5001
    await cache.get('A')
    expect(r.reads).toEqual(['A', 'A'])
  })

  it('keeps no failure, and forgets everything on clear()', async () => {
    let fail = true
    const r = counting({
      A: async () => { if (fail) throw new EngineError('GATEWAY_CERT_MISSING', 'no certificate'); return certificate('2') },
      B: async () => certificate('3')
    })
    const cache = new ResolvedCertificateCache(r.resolve, 5000, () => 0)
    await expect(cache.get('A')).rejects.toMatchObject({ code: 'GATEWAY_CERT_MISSING' })
    fail = false
    expect((await cache.get('A')).fingerprint).toBe('2')
    await cache.get('B')
    cache.clear()
    await cache.get('A')
    await cache.get('B')
    expect(r.reads).toEqual(['A', 'A', 'B', 'A', 'B'])
  })
})
