import { describe, expect, it } from 'vitest'
import { withIterations } from '../fixtures/pdf/pkcs12-iterations.js'
import { createDevChain, loadPkcs12 } from '../core/sign/index.js'
import { openPkcs12Isolated } from './pkcs12-isolate.js'

const chain = createDevChain({ password: 'segredo' })

describe('openPkcs12Isolated', () => {
  it('gives the material loadPkcs12 gives, from a thread of its own', async () => {
    const here = loadPkcs12(chain.pkcs12, 'segredo')
    const there = await openPkcs12Isolated(chain.pkcs12, 'segredo')
    expect(there.leaf.fingerprint256).toBe(here.leaf.fingerprint256)
    expect(there.chain).toEqual(here.chain)
    expect(there.leaf.checkPrivateKey(there.key)).toBe(true)
    expect(there.identity.signerDocument).toBe(here.identity.signerDocument)
  }, 60_000)

  it('refuses a wrong password, a crafted count (before starting a thread) and a file past its deadline with SIGN_CERT_INVALID', async () => {
    await expect(openPkcs12Isolated(chain.pkcs12, 'errada')).rejects.toMatchObject({ code: 'SIGN_CERT_INVALID', message: expect.stringMatching(/wrong password/) })
    const crafted = withIterations(chain.pkcs12, { mac: 2 ** 31 - 1 })
    const started = performance.now()
    await expect(openPkcs12Isolated(crafted, 'segredo')).rejects.toMatchObject({ code: 'SIGN_CERT_INVALID', message: expect.stringMatching(/iterations/) })
    // No thread is started for it: a thread's start alone takes longer than this.
    expect(performance.now() - started).toBeLessThan(500)
    await expect(openPkcs12Isolated(chain.pkcs12, 'segredo', { deadlineMs: 1, heapMb: 256 })).rejects.toMatchObject({ code: 'SIGN_CERT_INVALID', message: expect.stringMatching(/took too long/) })
  }, 60_000)
})
