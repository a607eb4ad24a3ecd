/**
 * The one CNPJ module of razao: the registry, the gateway, `razao companies` and the
 * extraction plugins (through plugin-api.ts) all use it.
 *
 * Numeric and alphanumeric CNPJs (IN RFB 2.229/2024, from July 2026): the first 12
 * positions may hold letters, each worth its ASCII code minus 48 in the same modulo-11
 * routine; the two check digits stay numeric (the Receita Federal CNPJ rules). Input may be
 * printed (`12.abc.345/01de-35`); it is stored and sent as 14 upper-case characters.
 */

const WEIGHTS_1 = [5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2]
const WEIGHTS_2 = [6, 5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2]

/** 14 bare characters: 12 of `[0-9A-Z]`, then two numeric check digits. */
export const CNPJ_CHARS = /^[0-9A-Z]{12}[0-9]{2}$/

function checkDigit (chars: string, weights: number[]): number {
  let sum = 0
  for (let i = 0; i < weights.length; i++) sum += (chars.charCodeAt(i) - 48) * weights[i]!
  const r = sum % 11
  return r < 2 ? 0 : 11 - r
}

/** The two check digits for the first 12 characters (upper-cased), e.g. to make test CNPJs. */
export function cnpjCheckDigits (base12: string): string {
  const c = base12.toUpperCase()
  if (!/^[0-9A-Z]{12}$/.test(c)) throw new RangeError('a CNPJ base is 12 characters 0-9 or A-Z')
  const d1 = checkDigit(c, WEIGHTS_1)
  return `${d1}${checkDigit(c + String(d1), WEIGHTS_2)}`
}

/** True for a 14-position CNPJ (letters allowed in 1-12) whose check digits verify; all-equal numbers are refused. */
export function isValidCnpj (cnpj: string): boolean {
  const c = cnpj.toUpperCase()
  if (!CNPJ_CHARS.test(c) || /^(.)\1{13}$/.test(c)) return false
  return c.endsWith(cnpjCheckDigits(c.slice(0, 12)))
}

/**
 * A printed CNPJ (`12.ABC.345/01DE-35`, `11.222.333/0001-81`, with stray spaces as some
 * extractors leave them) → its 14 bare characters upper-cased, or null when it has not
 * 14 positions. Check digits are not verified here: see isValidCnpj and normalizeCnpj.
 */
export function cnpjChars (text: string): string | null {
  const c = text.toUpperCase().replace(/[\s./-]+/g, '')
  return CNPJ_CHARS.test(c) ? c : null
}

/** A CNPJ as a person types it → the 14 stored characters, or null when it is not a valid CNPJ (shape or check digits). */
export function normalizeCnpj (text: string): string | null {
  const c = cnpjChars(text)
  return c !== null && isValidCnpj(c) ? c : null
}

/** The root (raiz): the first 8 characters, shared by a head office and its branches. */
export function cnpjRoot (cnpj: string): string {
  return cnpj.slice(0, 8)
}

/** Pattern source of a printed CNPJ (mask optional, letters allowed in the first 12 positions). */
export const CNPJ_PATTERN = String.raw`[0-9A-Z]{2}\.?\s?[0-9A-Z]{3}\.?\s?[0-9A-Z]{3}\/?[0-9A-Z]{4}-?[0-9]{2}`
