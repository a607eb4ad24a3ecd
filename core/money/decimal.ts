/**
 * Cents as SQL `numeric(18,2)` text and back: the only way amounts cross into and
 * out of PostgreSQL, so no float ever touches a stored value.
 */

/** `-123456` → `"-1234.56"`. */
export function centsToDecimal (cents: number): string {
  if (!Number.isSafeInteger(cents)) throw new RangeError(`not a whole number of cents: ${cents}`)
  const abs = Math.abs(cents)
  const units = Math.floor(abs / 100)
  const rest = abs - units * 100
  return `${cents < 0 ? '-' : ''}${units}.${rest < 10 ? '0' : ''}${rest}`
}

const DECIMAL = /^(-?)(\d+)(?:\.(\d{1,2}))?$/

/** `"-1234.5"` → `-123450`; null (an SQL sum over no rows) → 0. Refuses more than two decimals. */
export function decimalToCents (text: string | null): number {
  if (text === null) return 0
  const m = DECIMAL.exec(text)
  if (m === null) throw new RangeError(`not a numeric(…,2) value: "${text}"`)
  const cents = Number(m[2]) * 100 + Number((m[3] ?? '').padEnd(2, '0'))
  if (!Number.isSafeInteger(cents)) throw new RangeError(`amount out of range: "${text}"`)
  return m[1] === '-' ? -cents : cents
}
