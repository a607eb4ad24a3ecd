import { describe, expect, it } from 'vitest'
import { makePdf, withObjectStreams } from '../../fixtures/pdf/samples.js'
import { objectStreamCountBomb, pageCountBomb, predictorRowBomb, xrefIndexBomb, xrefShortDataBomb } from '../../fixtures/pdf/declared-bombs.js'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { declaredSizeFault } from './declared-sizes.js'

describe('declaredSizeFault', () => {
  it('finds nothing in ordinary files, with and without object and cross-reference streams', async () => {
    const plain = await makePdf([{}, {}])
    expect(declaredSizeFault(plain)).toBeUndefined()
    expect(declaredSizeFault(await makePdf([{}], { objectStreams: true }))).toBeUndefined()
    const dir = await mkdtemp(join(tmpdir(), 'declared-'))
    try {
      expect(declaredSizeFault(await withObjectStreams(dir, plain, 'qpdf'))).toBeUndefined()
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })

  it('refuses, quickly, what the attack run sent: /Index [0 2147483647] in about 500 bytes', () => {
    const bomb = xrefIndexBomb()
    expect(bomb.length).toBeLessThan(600)
    const started = performance.now()
    expect(declaredSizeFault(bomb)).toMatch(/\/Size|\/W|\/Index|entries/)
    // A hang catcher only (under a millisecond at a load of 3 as of 12): the refusal is read from the
    // declarations, and a table of 2³¹ entries built first would not end.
    expect(performance.now() - started).toBeLessThan(500)
  })

  it.each([
    ['entries without the data they need', xrefShortDataBomb, /entries/],
    ['an object stream of more objects than fit before /First', objectStreamCountBomb, /object stream/],
    ['a predictor row of 2 GB', predictorRowBomb, /rows of/],
    ['a page tree /Count beyond the objects held', pageCountBomb, /\/Count/]
  ])('refuses %s', (_what, make, reason) => {
    expect(declaredSizeFault(make())).toMatch(reason)
  })
})
