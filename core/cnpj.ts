/**
 * CNPJ as the registry and the gateway take it: 14 positions, letters allowed in the
 * first 12 (IN RFB 2.229/2024), two numeric check digits (tax-protocols.md 3.5-3.6).
 * Minimal placeholder for the gateway's query routes; the registry's branch owns the
 * full module and replaces this one at merge. The check-digit routine is the one the
 * extraction engine already uses, not a second copy.
 */
import { cnpjChars, isValidCnpj } from './extraction/cnpj.js'

export { isValidCnpj }

/** `12.abc.345/01de-35` → `12ABC34501DE35`; null when it has not 14 positions (check digits are not verified here). */
export function normalizeCnpj (text: string): string | null {
  return cnpjChars(text)
}
