/**
 * Value helpers for extraction plugins: the formats Brazilian tax PDFs print
 * (documents.md §0.2) turned into the forms the `data` objects carry. Each returns
 * null for text it cannot read exactly; none guesses.
 */
import { centsToNumber } from '../money/index.js'

/** `1.234,56`, `1234,56`, `R$ 0,00`, `-40,25`: two decimals always, as these documents print money. */
const MONEY = /^(-)?\s*(?:R\$\s*)?(\d{1,3}(?:\.\d{3})+|\d+),(\d{2})$/

/**
 * Integer cents of a Brazilian money text, or null. Sums are made on these integers
 * and only the final value becomes a JSON number (`moneyNumber`), so no float is ever added.
 */
export function moneyCents (text: string): number | null {
  const m = MONEY.exec(text.replace(/[\s\u00a0]+/g, ' ').trim())
  if (m === null) return null
  const cents = Number(m[2]!.replaceAll('.', '')) * 100 + Number(m[3])
  if (!Number.isSafeInteger(cents)) return null
  return m[1] === '-' ? -cents : cents
}

/** A money text as the JSON number of `data` (`1.234,56` → 1234.56), or null. */
export function moneyNumber (text: string): number | null {
  const cents = moneyCents(text)
  return cents === null ? null : centsToNumber(cents)
}

/** Integer cents back to the JSON number (exact to the cent: the division is the last step). */
export function centsToMoney (cents: number): number {
  return centsToNumber(cents)
}

/**
 * A JSON money number of `data` back to integer cents, for checks that add values up
 * (the number came from two-decimal text, so rounding to the cent is exact).
 */
export function numberToCents (n: number): number {
  return Math.round(n * 100)
}

/**
 * A printed percentage → number (`3,00 %` → 3, `6,0000000000000` → 6, `2.00%` → 2,
 * `0,28` → 0.28), or null. A comma is the decimal mark; a dot is one only when no comma
 * is printed (generator libraries' `2.00%`). No thousands separators: no rate has them.
 */
export function percentNumber (text: string): number | null {
  const t = text.replace(/[\s\u00a0]+/g, '').replace(/%$/, '')
  const m = /^(-)?(\d+)(?:,(\d+))?$/.exec(t) ?? /^(-)?(\d+)\.(\d+)$/.exec(t)
  if (m === null) return null
  const n = Number(`${m[2]!}.${m[3] ?? '0'}`)
  return m[1] === '-' ? -n : n
}

/** Pattern source of a money value, for plugins building their regular expressions. */
export const MONEY_PATTERN = String.raw`-?(?:\d{1,3}(?:\.\d{3})+|\d+),\d{2}`

function validDate (y: number, m: number, d: number): boolean {
  if (m < 1 || m > 12 || d < 1 || y < 1900 || y > 2200) return false
  return d <= new Date(Date.UTC(y, m, 0)).getUTCDate()
}

/** `dd/mm/aaaa` → `aaaa-mm-dd`, or null (a day that does not exist is null, not rolled over). */
export function isoDate (text: string): string | null {
  const m = /^(\d{2})\/(\d{2})\/(\d{4})$/.exec(text.trim())
  if (m === null) return null
  const [d, mo, y] = [Number(m[1]), Number(m[2]), Number(m[3])]
  return validDate(y, mo, d) ? `${m[3]}-${m[2]}-${m[1]}` : null
}

/**
 * `dd/mm/aaaa hh:mm[:ss]`, with `às` or a dash between if printed (`05/08/2026 - 18:11:11`)
 * → `aaaa-mm-ddThh:mm:ss`, local time as printed, or null.
 */
export function isoDateTime (text: string): string | null {
  const m = /^(\d{2}\/\d{2}\/\d{4})\s*(?:\s(?:às|as)\s+|-\s*|\s)(\d{2}):(\d{2})(?::(\d{2}))?$/i.exec(text.trim())
  if (m === null) return null
  const date = isoDate(m[1]!)
  const [h, mi, s] = [Number(m[2]), Number(m[3]), Number(m[4] ?? '0')]
  if (date === null || h > 23 || mi > 59 || s > 59) return null
  return `${date}T${m[2]}:${m[3]}:${m[4] ?? '00'}`
}

const MONTHS = ['JANEIRO', 'FEVEREIRO', 'MARCO', 'ABRIL', 'MAIO', 'JUNHO', 'JULHO', 'AGOSTO', 'SETEMBRO', 'OUTUBRO', 'NOVEMBRO', 'DEZEMBRO']

/**
 * A competence → `AAAA-MM`, or null: `MM/AAAA`, `Dezembro/2022`, `março/2025`, `Jul/2026`
 * (month names accent- and case-blind, three-letter abbreviations accepted); the 13th
 * month some documents print for the year-end bonus (`13/2025`, DCTFWeb, eSocial) →
 * `2025-13`; an annual period (`Anual/2025`, `Ano-calendário 2025`) → `2025`.
 */
export function competence (text: string): string | null {
  const t = normalizeText(text)
  let m = /^(\d{2})\/(\d{4})$/.exec(t)
  if (m !== null) {
    const month = Number(m[1])
    return month >= 1 && month <= 13 ? `${m[2]}-${m[1]}` : null
  }
  const annual = /^(?:ANUAL\s*\/\s*|ANO(?:-|\s)CALENDARIO:?\s*|ANO:?\s*)(\d{4})$/.exec(t)
  if (annual !== null) return annual[1]!
  m = /^([A-Z]+)\s*\/\s*(\d{4})$/.exec(t)
  if (m === null) return null
  const name = m[1]!
  const index = name.length === 3 ? MONTHS.findIndex((n) => n.startsWith(name)) : MONTHS.indexOf(name)
  return index < 0 ? null : `${m[2]}-${String(index + 1).padStart(2, '0')}`
}

/**
 * A printed text as a value: whitespace runs made one space, trimmed; null when nothing is
 * left (an empty cell is not a value read). The converter every name, address and
 * description goes through.
 */
export function textValue (text: string): string | null {
  const t = text.replace(/\s+/g, ' ').trim()
  return t === '' ? null : t
}

/**
 * The detection form of a text (documents.md §0.1): accents stripped, upper case,
 * every run of whitespace one space, trimmed.
 */
export function normalizeText (text: string): string {
  return text.normalize('NFD').replace(/\p{M}+/gu, '').toUpperCase().replace(/\s+/g, ' ').trim()
}

/** Keeps only the digits of a printed number (an alphanumeric CNPJ goes through `cnpjChars`, which keeps its letters). */
export function onlyDigits (text: string): string {
  return text.replace(/\D+/g, '')
}
