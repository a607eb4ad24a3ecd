import { describe, expect, it } from 'vitest'
import { addCents, amountFromNumber, centsToNumber, parseAmountText } from './cents.js'

describe('parseAmountText', () => {
  it.each([
    ['1.234,56', 123456], ['1234,56', 123456], ['1234,5', 123450], ['0,01', 1], ['12.345.678,90', 1234567890],
    ['1234.56', 123456], ['1234', 123400], ['R$ 1.234,56', 123456], ['  -1.234,56 ', -123456], ['1.234', 123400],
    ['1\u00a0234,56', 123456], ['10,', 1000]
  ])('reads %j as %d cents', (text, cents) => {
    expect(parseAmountText(text)).toEqual({ kind: 'ok', cents, rounded: false })
  })

  it('rounds more than two decimals half away from zero and says so', () => {
    expect(parseAmountText('1,005')).toEqual({ kind: 'ok', cents: 101, rounded: true })
    expect(parseAmountText('-1,005')).toEqual({ kind: 'ok', cents: -101, rounded: true })
    expect(parseAmountText('1.2341')).toEqual({ kind: 'ok', cents: 123, rounded: true })
  })

  it.each(['abc', '1,234.56', '12a', '--1', '1.23.4', '1,2,3', 'R$'])('rejects %j instead of guessing', (text) => {
    expect(parseAmountText(text).kind).toBe('invalid')
  })

  it('treats blank text as empty', () => {
    expect(parseAmountText('   ')).toEqual({ kind: 'empty' })
  })
})

describe('amountFromNumber', () => {
  it('rounds binary noise the way the typed decimal reads', () => {
    expect(amountFromNumber(1.005)).toEqual({ kind: 'ok', cents: 101, rounded: true })
    expect(amountFromNumber(0.1 + 0.2)).toEqual({ kind: 'ok', cents: 30, rounded: false })
    expect(amountFromNumber(1234.56)).toEqual({ kind: 'ok', cents: 123456, rounded: false })
    expect(amountFromNumber(-0.07)).toEqual({ kind: 'ok', cents: -7, rounded: false })
  })

  it('refuses values that cannot be held exactly in cents', () => {
    expect(amountFromNumber(1e20).kind).toBe('invalid')
    expect(amountFromNumber(Number.NaN).kind).toBe('invalid')
  })
})

describe('sums', () => {
  it('sums a million 0.10 amounts to exactly 100000.00', () => {
    let total = 0
    let floats = 0
    for (let i = 0; i < 1_000_000; i++) {
      const parsed = amountFromNumber(0.1)
      if (parsed.kind !== 'ok') throw new Error('unreadable')
      total = addCents(total, parsed.cents)
      floats += 0.1
    }
    expect(centsToNumber(total)).toBe(100000)
    // The float sum drifts; this is what integer cents protect against.
    expect(floats).not.toBe(100000)
  })

  it('refuses totals beyond the exact integer range', () => {
    expect(() => addCents(Number.MAX_SAFE_INTEGER, 1)).toThrow(RangeError)
  })
})
