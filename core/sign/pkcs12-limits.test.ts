import forge from 'node-forge'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { withIterations } from '../../fixtures/pdf/pkcs12-iterations.js'
import { loadPkcs12 } from './certificate.js'
import { createDevChain, toPkcs12 } from './dev-chain.js'
import { MAX_PKCS12_ITERATIONS } from './pkcs12-limits.js'

const chain = createDevChain({ password: 'segredo' })

/**
 * Every way forge derives a key from a password, watched: the PKCS#12 KDF (the MAC's, and
 * the PKCS#12 PBE ciphers') and PBKDF2 (PBES2). Their calls are what a crafted count costs.
 */
function watchDerivations (): () => number {
  const pbe = (forge.pki as unknown as { pbe: { generatePkcs12Key: (...args: unknown[]) => unknown } }).pbe
  const spies = [vi.spyOn(forge.pkcs12, 'generateKey'), vi.spyOn(pbe, 'generatePkcs12Key'), vi.spyOn(forge.pkcs5, 'pbkdf2')]
  return () => spies.reduce((n, spy) => n + spy.mock.calls.length, 0)
}
afterEach(() => { vi.restoreAllMocks() })

describe('PKCS#12 iteration caps', () => {
  it('opens files at the counts real certificates use', () => {
    expect(loadPkcs12(chain.pkcs12, 'segredo').identity.documentKind).toBe('CNPJ')
    expect(loadPkcs12(toPkcs12(chain.signer, [chain.intermediate], 'x', '3des'), 'x').chain).toHaveLength(2)
  })

  it.each([
    ['the MAC', { mac: 10_000_000 }],
    ['the private key', { key: 10_000_000 }],
    ['the MAC, at 2³¹−1', { mac: 2 ** 31 - 1 }],
    ['the MAC, one past the cap', { mac: MAX_PKCS12_ITERATIONS + 1 }]
  ])('refuses a crafted count for %s before deriving any key', (_what, counts) => {
    const crafted = withIterations(chain.pkcs12, counts)
    const derivations = watchDerivations()
    const started = performance.now()
    expect(() => loadPkcs12(crafted, 'segredo')).toThrow(expect.objectContaining({
      code: 'SIGN_CERT_INVALID', message: expect.stringMatching(/iterations/) as unknown
    }))
    expect(derivations()).toBe(0)
    // A hang catcher only (the refusal took 0-12 ms at a load of 3, up to 50 ms at 11): the derivation
    // itself is what the count above rules out.
    expect(performance.now() - started).toBeLessThan(2000)
  })

  it('still derives at the cap (the MAC then fails as a wrong password would)', () => {
    const derivations = watchDerivations()
    expect(() => loadPkcs12(withIterations(chain.pkcs12, { mac: 4096 }), 'segredo')).toThrow(/wrong password/)
    // The watch sees a derivation when there is one.
    expect(derivations()).toBeGreaterThan(0)
  })
})
