import { describe, expect, it, vi } from 'vitest'
import { withIterations } from '../fixtures/pdf/pkcs12-iterations.js'
import { createDevChain, loadPkcs12 } from '../core/sign/index.js'
import { startWorker } from './paths.js'
import { openPkcs12Isolated } from './pkcs12-isolate.js'
import type * as PathsModule from './paths.js'

// The threads the module starts, counted (each still starts as it would).
vi.mock('./paths.js', async (importOriginal) => {
  const paths = await importOriginal<typeof PathsModule>()
  return { ...paths, startWorker: vi.fn(paths.startWorker) }
})

const chain = createDevChain({ password: 'segredo' })

describe('openPkcs12Isolated', () => {
  it('gives the material loadPkcs12 gives, from a thread of its own', async () => {
    const here = loadPkcs12(chain.pkcs12, 'segredo')
    const there = await openPkcs12Isolated(chain.pkcs12, 'segredo')
    expect(startWorker).toHaveBeenCalledWith('pkcs12-isolate', expect.anything())
    expect(there.leaf.fingerprint256).toBe(here.leaf.fingerprint256)
    expect(there.chain).toEqual(here.chain)
    expect(there.leaf.checkPrivateKey(there.key)).toBe(true)
    expect(there.identity.signerDocument).toBe(here.identity.signerDocument)
  }, 60_000)

  it('refuses a wrong password, a crafted count (before starting a thread) and a file past its deadline with SIGN_CERT_INVALID', async () => {
    await expect(openPkcs12Isolated(chain.pkcs12, 'errada')).rejects.toMatchObject({ code: 'SIGN_CERT_INVALID', message: expect.stringMatching(/wrong password/) })
    const crafted = withIterations(chain.pkcs12, { mac: 2 ** 31 - 1 })
    vi.mocked(startWorker).mockClear()
    const started = performance.now()
    await expect(openPkcs12Isolated(crafted, 'segredo')).rejects.toMatchObject({ code: 'SIGN_CERT_INVALID', message: expect.stringMatching(/iterations/) })
    // No thread is started for it.
    expect(startWorker).not.toHaveBeenCalled()
    // A hang catcher only (15 ms at a load of 3 as of 11).
    expect(performance.now() - started).toBeLessThan(2000)
    await expect(openPkcs12Isolated(chain.pkcs12, 'segredo', { deadlineMs: 1, heapMb: 256 })).rejects.toMatchObject({ code: 'SIGN_CERT_INVALID', message: expect.stringMatching(/took too long/) })
  }, 60_000)
})
