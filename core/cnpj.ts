/**
 * CNPJ as the registry and the gateway take it: 14 positions, letters allowed in the
 * first 12 (IN RFB 2.229/2024), two numeric check digits (tax-protocols.md 3.5-3.6).
 * Minimal placeholder for the gateway's query routes; the registry's branch owns the
 * full module and replaces this one at merge (same names, same meaning). The routine is
 * the one the extraction engine already uses, not a second copy.
 */
import { cnpjChars, isValidCnpj } from './extraction/cnpj.js'

export { cnpjChars, isValidCnpj }

/** A CNPJ as a person types it (`12.abc.345/0001-88`) → the 14 stored characters, or null when it is not a valid CNPJ (shape or check digits). */
export function normalizeCnpj (text: string): string | null {
  const c = cnpjChars(text)
  return c !== null && isValidCnpj(c) ? c : null
}
