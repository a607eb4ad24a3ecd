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

/** The rules as regexes, as parseAmountText applied them before its one-pass road for plain digit texts. */
function byRegex (text: string): ReturnType<typeof parseAmountText> {
  let s = text.replace(/[\s\u00a0]+/g, '')
  if (s === '') return { kind: 'empty' }
  s = s.replace(/^R\$\s*/i, '')
  let negative = false
  if (s.startsWith('-')) { negative = true; s = s.slice(1) }
  const br = s.includes(',') || /^\d{1,3}(?:\.\d{3})+$/.test(s) ? /^(\d{1,3}(?:\.\d{3})+|\d+)(?:,(\d*))?$/.exec(s) : null
  const plain = br === null ? /^(\d+)(?:\.(\d+))?$/.exec(s) : null
  if (br === null && plain === null) return { kind: 'invalid' }
  const whole = br !== null ? br[1]!.replaceAll('.', '') : plain![1]!
  const fraction = (br !== null ? br[2] : plain![2]) ?? ''
  let cents = Number(whole) * 100 + Number((fraction + '00').slice(0, 2))
  const rest = fraction.slice(2)
  if (rest.length > 0 && rest.charCodeAt(0) >= 0x35) cents += 1
  if (!Number.isSafeInteger(cents)) return { kind: 'invalid' }
  return { kind: 'ok', cents: negative && cents !== 0 ? -cents : cents, rounded: /[1-9]/.test(rest) }
}

describe('parseAmountText on texts of digits and separators only (every CSV amount)', () => {
  it('reads each as the rules read it, over every short text of those characters and random long ones', () => {
    const alphabet = '0123456789.,-'
    const texts: string[] = ['']
    for (let length = 1; length <= 4; length++) {
      const count = alphabet.length ** length
      for (let k = 0; k < count; k++) {
        let text = ''
        for (let n = k, i = 0; i < length; i++, n = Math.floor(n / alphabet.length)) text += alphabet[n % alphabet.length]
        texts.push(text)
      }
    }
    // Longer ones weighted towards digits, as amounts are (a fixed LCG: the same texts every run).
    let seed = 12345
    const next = (): number => { seed = (seed * 1103515245 + 12345) % 2 ** 31; return seed / 2 ** 31 }
    for (let k = 0; k < 100_000; k++) {
      let text = ''
      const length = 5 + Math.floor(next() * 18)
      for (let i = 0; i < length; i++) text += next() < 0.8 ? String(Math.floor(next() * 10)) : alphabet[10 + Math.floor(next() * 3)]
      texts.push(text)
    }
    texts.push('99999999999999999999,99', '90071992547409,91', '90071992547409,92', '-0,00', '0.001', '1.234.567,891')
    const differing = texts.filter((t) => JSON.stringify(parseAmountText(t)) !== JSON.stringify(byRegex(t)))
    expect(differing.slice(0, 10)).toEqual([])
    // The texts cover each outcome.
    expect(new Set(texts.map((t) => parseAmountText(t).kind))).toEqual(new Set(['empty', 'ok', 'invalid']))
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
