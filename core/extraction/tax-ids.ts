/**
 * Brazilian taxpayer numbers for the extraction engine: CPF (people) here, CNPJ (companies)
 * from the one CNPJ module of razao, core/cnpj.ts, re-exported so that plugins keep one
 * import. CPF: 9 digits and two modulo-11 check digits (weights 10..2, then 11..2),
 * all-equal numbers refused.
 */
export { cnpjCheckDigits, cnpjChars, isValidCnpj, CNPJ_PATTERN } from '../cnpj.js'

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
