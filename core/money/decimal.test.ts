import { describe, expect, it } from 'vitest'
import { centsToDecimal, decimalToCents } from './decimal.js'

describe('cents ⇄ numeric text', () => {
  it('writes two decimals with the sign in front', () => {
    expect(centsToDecimal(0)).toBe('0.00')
    expect(centsToDecimal(5)).toBe('0.05')
    expect(centsToDecimal(-5)).toBe('-0.05')
    expect(centsToDecimal(123456)).toBe('1234.56')
    expect(centsToDecimal(-100)).toBe('-1.00')
    expect(centsToDecimal(9_007_199_254_740_991)).toBe('90071992547409.91')
  })

  it('reads what PostgreSQL prints, and refuses anything else', () => {
    expect(decimalToCents('1234.56')).toBe(123456)
    expect(decimalToCents('-0.05')).toBe(-5)
    expect(decimalToCents('7.5')).toBe(750)
    expect(decimalToCents('12')).toBe(1200)
    expect(decimalToCents(null)).toBe(0)
    expect(() => decimalToCents('1.234')).toThrow(RangeError)
    expect(() => decimalToCents('1e5')).toThrow(RangeError)
    expect(() => centsToDecimal(0.5)).toThrow(RangeError)
  })

  it('round-trips every value around the unit boundaries', () => {
    for (const cents of [-10001, -10000, -9999, -101, -100, -99, -1, 0, 1, 99, 100, 101, 9999, 10000, 10001]) {
      expect(decimalToCents(centsToDecimal(cents))).toBe(cents)
    }
  })
})
