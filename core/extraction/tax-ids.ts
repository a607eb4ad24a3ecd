/**
 * Brazilian taxpayer numbers: CNPJ (companies) and CPF (people), their check digits and
 * their printed forms.
 *
 * CNPJ, numeric and alphanumeric (IN RFB 2.229/2024, from July 2026): the first 12
 * positions may hold letters, each worth its ASCII code minus 48 in the same modulo-11
 * routine; the two check digits stay numeric (tax-protocols.md 3.5-3.6). CPF: 9 digits and
 * two modulo-11 check digits (weights 10..2, then 11..2), all-equal numbers refused.
 */

const WEIGHTS_1 = [5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2]
const WEIGHTS_2 = [6, 5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2]

function checkDigit (chars: string, weights: number[]): number {
  let sum = 0
  for (let i = 0; i < weights.length; i++) sum += (chars.charCodeAt(i) - 48) * weights[i]!
  const r = sum % 11
  return r < 2 ? 0 : 11 - r
}

/** The two check digits of a CNPJ's first 12 positions (digits or letters), as a 2-character string. */
export function cnpjCheckDigits (base12: string): string {
  const c = base12.toUpperCase()
  if (!/^[0-9A-Z]{12}$/.test(c)) throw new RangeError('a CNPJ base has 12 positions, digits or letters')
  const d1 = checkDigit(c, WEIGHTS_1)
  return `${d1}${checkDigit(c + String(d1), WEIGHTS_2)}`
}

/** True for a 14-position CNPJ (letters allowed in 1-12) whose check digits verify; all-equal numbers are refused. */
export function isValidCnpj (cnpj: string): boolean {
  const c = cnpj.toUpperCase()
  if (!/^[0-9A-Z]{12}[0-9]{2}$/.test(c) || /^(.)\1{13}$/.test(c)) return false
  return c.endsWith(cnpjCheckDigits(c.slice(0, 12)))
}

/**
 * A printed CNPJ (`12.ABC.345/01DE-35`, `11.222.333/0001-81`, with stray spaces as some
 * extractors leave them) → its 14 bare characters upper-cased, or null when it has not
 * 14 positions. Check digits are not verified here: see isValidCnpj.
 */
export function cnpjChars (text: string): string | null {
  const c = text.toUpperCase().replace(/[\s./-]+/g, '')
  return /^[0-9A-Z]{12}[0-9]{2}$/.test(c) ? c : null
}

/** Pattern source of a printed CNPJ (mask optional, letters allowed in the first 12 positions). */
export const CNPJ_PATTERN = String.raw`[0-9A-Z]{2}\.?\s?[0-9A-Z]{3}\.?\s?[0-9A-Z]{3}\/?[0-9A-Z]{4}-?[0-9]{2}`

/** The two check digits of a CPF's first 9 digits, as a 2-character string. */
export function cpfCheckDigits (base9: string): string {
  if (!/^\d{9}$/.test(base9)) throw new RangeError('a CPF base has 9 digits')
  const dv = (digits: string): number => {
    let sum = 0
    for (let i = 0; i < digits.length; i++) sum += Number(digits[i]) * (digits.length + 1 - i)
    const r = sum % 11
    return r < 2 ? 0 : 11 - r
  }
  const d1 = dv(base9)
  return `${d1}${dv(base9 + String(d1))}`
}

/** True for 11 digits whose check digits verify; all-equal numbers (`111.111.111-11`) are refused. */
export function isValidCpf (cpf: string): boolean {
  if (!/^\d{11}$/.test(cpf) || /^(\d)\1{10}$/.test(cpf)) return false
  return cpf.endsWith(cpfCheckDigits(cpf.slice(0, 9)))
}

/** A printed CPF (`123.456.789-09`, bare, stray spaces) → its 11 digits, or null. Check digits: isValidCpf. */
export function cpfDigits (text: string): string | null {
  const c = text.replace(/[\s.-]+/g, '')
  return /^\d{11}$/.test(c) ? c : null
}

/** Pattern source of a printed CPF (mask optional). */
export const CPF_PATTERN = String.raw`\d{3}\.?\d{3}\.?\d{3}-?\d{2}`
