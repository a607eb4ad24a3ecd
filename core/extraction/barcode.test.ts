import { describe, expect, it } from 'vitest'
import { buildCollectionLine, collectionLineOf, readCollectionLine, rfbFreeField } from './barcode.js'

describe('FEBRABAN collection line', () => {
  it('verifies a real DAS-MEI line (documents.md §0.3): value, issuer, every check digit', () => {
    const line = readCollectionLine('85880000000 8 65600328230 2 20070822358 6 63950711622 8')!
    expect(line.valid).toBe(true)
    expect(line.barcode).toHaveLength(44)
    expect(line.amountCents).toBe(6560)
    expect(line.issuer).toBe('0328')
  })

  it('names the block whose digit was changed, and the general digit', () => {
    const line = readCollectionLine('85880000000 8 65600328230 2 20070822358 6 63950711623 8')!
    expect(line.valid).toBe(false)
    expect(line.failures).toContain('block 4')
    expect(line.failures).toContain('general')
  })

  it('builds lines that verify under modulo 10 and modulo 11', () => {
    for (const code of ['85800000001234503280000000000000000000000000', '81600000001234500000000000000000000000000000']) {
      const line = readCollectionLine(collectionLineOf(code))!
      expect(line.valid).toBe(true)
      expect(line.amountCents).toBe(123_45)
    }
  })

  it('is null for what is not a 48-digit line starting with 8', () => {
    expect(readCollectionLine('1234')).toBeNull()
    expect(readCollectionLine('2'.repeat(48))).toBeNull()
  })

  it('builds an RFB guide line from its parts, with the due date and document number inside', () => {
    const free = rfbFreeField('2023-01-20', '07082235863950711', '622')
    expect(free).toBe('2302007082235863950711622')
    const built = buildCollectionLine({ segment: '5', valueId: '8', amountCents: 6560, issuer: '0328', free })
    // The real DAS-MEI of documents.md §0.3, rebuilt digit for digit.
    expect(built.line).toBe('85880000000 8 65600328230 2 20070822358 6 63950711622 8')
    expect(built.digits).toHaveLength(48)
    expect(readCollectionLine(built.digits)).toMatchObject({ valid: true, barcode: built.barcode, amountCents: 6560, issuer: '0328' })
  })

  it('refuses parts that do not make 44 digits', () => {
    expect(() => buildCollectionLine({ segment: '5', valueId: '8', amountCents: 1e12, issuer: '0328', free: '0'.repeat(25) })).toThrow(RangeError)
    expect(() => rfbFreeField('20/01/2023', '1'.repeat(17))).toThrow(RangeError)
  })
})
