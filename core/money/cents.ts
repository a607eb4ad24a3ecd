/**
 * Money as integer cents. Amounts are summed as integers and only turned into
 * decimal numbers at the edge (JSON), so a total is exact to the cent whatever
 * the number of rows.
 */

export type AmountParse =
  | { kind: 'empty' }
  | { kind: 'ok', cents: number, rounded: boolean }
  | { kind: 'invalid' }

/** Brazilian notation: `.` groups thousands, `,` separates decimals (`1.234,56`, `1234,5`). */
const BRAZILIAN = /^(\d{1,3}(?:\.\d{3})+|\d+)(?:,(\d*))?$/
/** Plain notation: digits and an optional `.` decimal part (`1234.56`). */
const PLAIN = /^(\d+)(?:\.(\d+))?$/
/** Thousands grouping with dots and no decimals (`1.234`, `12.345.678`): read as Brazilian. */
const DOT_GROUPED = /^\d{1,3}(?:\.\d{3})+$/
const CURRENCY = /^R\$\s*/i
const SPACES = /[\s\u00a0]+/g

/**
 * Cents from a text amount. Accepts `R$`, surrounding spaces, a leading minus,
 * Brazilian (`1.234,56`) and plain (`1234.56`) notation. A text with both
 * separators in US order (`1,234.56`) is invalid, never guessed. A dot followed by
 * exactly three digits and no comma (`1.234`) is thousands grouping: ledgers in
 * this firm never carry three decimal places, and the Brazilian reading is the one
 * an accountant means. More than two decimals round half away from zero.
 */
export function parseAmountText (text: string): AmountParse {
  // Digits and separators only, as every amount of a CSV ledger: one pass, no regex.
  if (onlyNumberCharacters(text)) return text === '' ? { kind: 'empty' } : parseDigitsAndSeparators(text)
  let s = text.replace(SPACES, '')
  if (s === '') return { kind: 'empty' }
  s = s.replace(CURRENCY, '')
  let negative = false
  if (s.startsWith('-')) { negative = true; s = s.slice(1) }
  let whole: string
  let fraction: string
  const br = s.includes(',') || DOT_GROUPED.test(s) ? BRAZILIAN.exec(s) : null
  if (br !== null) {
    whole = br[1]!.replaceAll('.', '')
    fraction = br[2] ?? ''
  } else {
    const plain = PLAIN.exec(s)
    if (plain === null) return { kind: 'invalid' }
    whole = plain[1]!
    fraction = plain[2] ?? ''
  }
  return fromDigits(negative, whole, fraction)
}

/** Whether the text holds nothing but ASCII digits, `.`, `,` and `-`. */
function onlyNumberCharacters (text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if ((c < 48 || c > 57) && c !== 46 && c !== 44 && c !== 45) return false
  }
  return true
}

/**
 * parseAmountText's rules for a text of digits, `.`, `,` and `-` only, in one pass that
 * builds no substring: an optional leading minus; with a comma, a whole part of plain or
 * dot-grouped digits and decimals after it; without one, dot-grouped digits (`1.234`), or
 * plain digits with an optional `.` and decimals.
 */
function parseDigitsAndSeparators (s: string): AmountParse {
  const n = s.length
  let i = s.charCodeAt(0) === 45 ? 1 : 0
  const negative = i === 1
  let whole = 0
  let digits = 0
  let dots = 0
  /** Value and digit count before the first dot: the whole part when the dot is a decimal point. */
  let beforeDot = 0
  let firstGroup = 0
  let groupDigits = 0
  let grouped = true
  let comma = -1
  for (; i < n; i++) {
    const c = s.charCodeAt(i)
    if (c >= 48 && c <= 57) {
      whole = whole * 10 + (c - 48)
      digits++
      groupDigits++
    } else if (c === 46) {
      if (dots === 0) {
        beforeDot = whole
        firstGroup = groupDigits
      } else if (groupDigits !== 3) {
        grouped = false
      }
      dots++
      groupDigits = 0
    } else if (c === 44) {
      comma = i
      break
    } else {
      return { kind: 'invalid' }
    }
  }
  if (dots > 0) grouped = grouped && groupDigits === 3 && firstGroup >= 1 && firstGroup <= 3
  if (comma !== -1) {
    if (digits === 0 || (dots > 0 && !grouped)) return { kind: 'invalid' }
    return centsOf(negative, whole, s, comma + 1, n)
  }
  if (dots === 0) return digits === 0 ? { kind: 'invalid' } : centsOf(negative, whole, s, n, n)
  if (grouped) return centsOf(negative, whole, s, n, n)
  if (dots > 1 || firstGroup === 0 || groupDigits === 0) return { kind: 'invalid' }
  return centsOf(negative, beforeDot, s, n - groupDigits, n)
}

/** Cents of a whole part and the decimal digits s[from, to), as fromDigits computes them. */
function centsOf (negative: boolean, whole: number, s: string, from: number, to: number): AmountParse {
  let cents = whole * 100
  let rounded = false
  for (let k = from; k < to; k++) {
    const d = s.charCodeAt(k) - 48
    if (d < 0 || d > 9) return { kind: 'invalid' }
    if (k === from) cents += d * 10
    else if (k === from + 1) cents += d
    else {
      if (k === from + 2 && d >= 5) cents += 1
      if (d !== 0) rounded = true
    }
  }
  if (!Number.isSafeInteger(cents)) return { kind: 'invalid' }
  return { kind: 'ok', cents: negative && cents !== 0 ? -cents : cents, rounded }
}

function fromDigits (negative: boolean, whole: string, fraction: string): AmountParse {
  const padded = (fraction + '00').slice(0, 2)
  let cents = Number(whole) * 100 + Number(padded)
  const rest = fraction.slice(2)
  const rounded = /[1-9]/.test(rest)
  if (rest.length > 0 && rest.charCodeAt(0) >= 0x35) cents += 1
  if (!Number.isSafeInteger(cents)) return { kind: 'invalid' }
  return { kind: 'ok', cents: negative && cents !== 0 ? -cents : cents, rounded }
}

/**
 * Cents from a numeric cell. The product with 100 is taken to 15 significant digits
 * first, so binary noise such as 1.005 * 100 = 100.49999999999999 rounds as the
 * decimal the user typed (101 cents), not as its binary neighbour.
 */
export function amountFromNumber (value: number): AmountParse {
  if (!Number.isFinite(value)) return { kind: 'invalid' }
  const whole = wholeCents(Math.abs(value))
  if (whole >= 0) return { kind: 'ok', cents: value < 0 && whole !== 0 ? -whole : whole, rounded: false }
  const scaled = Number((Math.abs(value) * 100).toPrecision(15))
  const cents = Math.round(scaled)
  if (!Number.isSafeInteger(cents)) return { kind: 'invalid' }
  return { kind: 'ok', cents: value < 0 && cents !== 0 ? -cents : cents, rounded: scaled !== cents }
}

/**
 * Cents of a non-negative number that is a whole number of cents but for binary
 * noise far below what toPrecision(15) would keep (so amountFromNumber's general
 * road would give the same cents), or -1 when that road must decide. Builds no
 * object: the analyzer calls it for every amount cell.
 */
export function wholeCents (value: number): number {
  const scaled = value * 100
  const cents = Math.round(scaled)
  return cents >= 0 && Math.abs(scaled - cents) <= cents * 4e-16 && Number.isSafeInteger(cents) ? cents : -1
}

/** Cents as a JSON number with at most two decimals (exact: cents / 100 round-trips). */
export function centsToNumber (cents: number): number {
  return cents / 100
}

/** Adds cents, refusing totals past 2^53 rather than losing precision. */
export function addCents (total: number, cents: number): number {
  const sum = total + cents
  if (!Number.isSafeInteger(sum)) throw new RangeError('amount total exceeds the exact integer range')
  return sum
}
