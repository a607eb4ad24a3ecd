import { describe, expect, it } from 'vitest'
import { withIterations } from '../../fixtures/pdf/pkcs12-iterations.js'
import { loadPkcs12 } from './certificate.js'
import { createDevChain, toPkcs12 } from './dev-chain.js'
import { MAX_PKCS12_ITERATIONS } from './pkcs12-limits.js'

const chain = createDevChain({ password: 'segredo' })

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
    const started = performance.now()
    expect(() => loadPkcs12(withIterations(chain.pkcs12, counts), 'segredo')).toThrow(expect.objectContaining({
      code: 'SIGN_CERT_INVALID', message: expect.stringMatching(/iterations/) as unknown
    }))
    expect(performance.now() - started).toBeLessThan(1000)
  })

  it('still derives at the cap (the MAC then fails as a wrong password would)', () => {
    expect(() => loadPkcs12(withIterations(chain.pkcs12, { mac: 4096 }), 'segredo')).toThrow(/wrong password/)
  })
})
