/**
 * FEBRABAN collection ("arrecadação") barcodes, the 48-digit printed line of DAS,
 * DAS-MEI, DARF and municipal guides (documents.md §0.3): four blocks of 11 digits,
 * each followed by its check digit; the 44-digit code is the blocks without them.
 * Position 3 of the code chooses modulo 10 (6, 7) or modulo 11 (8, 9) for every check
 * digit; position 4 is the general check digit over the other 43.
 */

export interface CollectionLine {
  /** The 44-digit barcode. */
  barcode: string
  /** Amount in integer cents (positions 5-15). */
  amountCents: number
  /** Issuer code (positions 16-19): `0328` DAS, `0385` DARF. */
  issuer: string
  /** Every block check digit and the general one verify. */
  valid: boolean
  /** What failed, when something did (`block 2`, `general`, `value id`). */
  failures: string[]
}

function mod10 (digits: string): number {
  let sum = 0
  let factor = 2
  for (let i = digits.length - 1; i >= 0; i--) {
    const p = Number(digits[i]) * factor
    sum += p > 9 ? Math.floor(p / 10) + (p % 10) : p
    factor = factor === 2 ? 1 : 2
  }
  const r = sum % 10
  return r === 0 ? 0 : 10 - r
}

/** FEBRABAN's modulo 11 for collection codes: weights 2..9 from the right; remainders 0 and 1 give 0, 10 gives 1. */
function mod11 (digits: string): number {
  let sum = 0
  let weight = 2
  for (let i = digits.length - 1; i >= 0; i--) {
    sum += Number(digits[i]) * weight
    weight = weight === 9 ? 2 : weight + 1
  }
  const r = sum % 11
  if (r === 0 || r === 1) return 0
  if (r === 10) return 1
  return 11 - r
}

/**
 * Reads a printed collection line (48 digits with any spaces, dots or dashes between
 * them) or returns null when it has not 48 digits or does not start with 8.
 */
export function readCollectionLine (text: string): CollectionLine | null {
  const digits = text.replace(/\D+/g, '')
  if (digits.length !== 48 || digits[0] !== '8') return null
  const blocks = [0, 1, 2, 3].map((i) => digits.slice(i * 12, i * 12 + 11))
  const dvs = [0, 1, 2, 3].map((i) => Number(digits[i * 12 + 11]))
  const barcode = blocks.join('')
  const failures: string[] = []
  const valueId = barcode[2]!
  const dv = valueId === '6' || valueId === '7' ? mod10 : valueId === '8' || valueId === '9' ? mod11 : undefined
  if (dv === undefined) {
    failures.push('value id')
  } else {
    blocks.forEach((b, i) => { if (dv(b) !== dvs[i]) failures.push(`block ${i + 1}`) })
    if (dv(barcode.slice(0, 3) + barcode.slice(4)) !== Number(barcode[3])) failures.push('general')
  }
  return { barcode, amountCents: Number(barcode.slice(4, 15)), issuer: barcode.slice(15, 19), valid: failures.length === 0, failures }
}

/**
 * The printed 48-digit line of a 44-digit code (block check digits computed), for
 * generators and tests that need a line that verifies. The code's own general digit
 * (position 4) is recomputed too.
 */
export function collectionLineOf (code44: string): string {
  return buildCollectionLine(code44).line
}

/** A collection code with its check digits, as `buildCollectionLine` returns it. */
export interface BuiltCollectionLine {
  /** The 44-digit barcode, general check digit (position 4) included. */
  barcode: string
  /** The four 11-digit blocks and the check digit of each. */
  blocks: Array<{ digits: string, dv: number }>
  /** The line as the RFB prints it: `85890000012 3 45600328251 ...` (48 digits, a space before each check digit). */
  line: string
  /** The 48 digits without spaces. */
  digits: string
}

/**
 * Builds a collection line that verifies, for fixtures and tests: from a 44-digit code
 * (its position 4 is replaced by the computed general digit), or from its parts. RFB
 * guides (2021+) use segment 5, value id 8, and a free field of YYDDD + the 17-digit
 * document number + 3 digits (`rfbFreeField`).
 */
export function buildCollectionLine (code: string | { segment: string, valueId: '6' | '7' | '8' | '9', amountCents: number, issuer: string, free: string }): BuiltCollectionLine {
  const raw = typeof code === 'string'
    ? code
    : `8${code.segment}${code.valueId}0${String(code.amountCents).padStart(11, '0')}${code.issuer}${code.free}`
  if (!/^8\d{43}$/.test(raw)) throw new RangeError('a collection code has 44 digits and starts with 8 (amount up to 11 digits, issuer 4, free field 25)')
  const valueId = raw[2]!
  const dv = valueId === '6' || valueId === '7' ? mod10 : mod11
  const barcode = raw.slice(0, 3) + String(dv(raw.slice(0, 3) + raw.slice(4))) + raw.slice(4)
  const blocks = [0, 1, 2, 3].map((i) => { const digits = barcode.slice(i * 11, i * 11 + 11); return { digits, dv: dv(digits) } })
  return {
    barcode,
    blocks,
    line: blocks.map((b) => `${b.digits} ${b.dv}`).join(' '),
    digits: blocks.map((b) => `${b.digits}${b.dv}`).join('')
  }
}

/**
 * The 25-digit free field of an RFB guide (documents.md §0.3, positions 20-44): the due
 * date as YYDDD (year, day of the year), the 17-digit document number, three more digits.
 */
export function rfbFreeField (dueDateIso: string, numero17: string, tail3 = '000'): string {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(dueDateIso)
  if (m === null || !/^\d{17}$/.test(numero17) || !/^\d{3}$/.test(tail3)) throw new RangeError('an ISO date, 17 digits and 3 digits')
  const day = (Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])) - Date.UTC(Number(m[1]), 0, 1)) / 86_400_000 + 1
  return `${m[1]!.slice(2)}${String(day).padStart(3, '0')}${numero17}${tail3}`
}
