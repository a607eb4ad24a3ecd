/**
 * Typed values of a ledger row. Each reader returns either the value or a
 * problem code; the analyzer decides what a problem does to the totals.
 */
import { amountFromNumber, parseAmountText } from '../money/index.js'
import type { AmountParse } from '../money/index.js'
import { DateCell, EXCEL_MAX_CELL_CHARS, ErrorCell, UncomputedFormula, serialToISO } from '../xlsx/index.js'
import type { Cell } from '../xlsx/index.js'

/*
 * An uncomputed formula reads as empty in every reader below: its value is unknown,
 * and the analyzer reports it (UNCOMPUTED_FORMULA) instead of a type problem.
 */

export function readAmount (cell: Cell | undefined): AmountParse {
  if (cell === null || cell === undefined || cell instanceof UncomputedFormula) return EMPTY
  if (typeof cell === 'number') return amountFromNumber(cell)
  if (typeof cell === 'string') return parseAmountText(cell)
  return INVALID
}

export type IntegerParse = { kind: 'empty' } | { kind: 'ok', value: number } | { kind: 'invalid' }
// Shared results: the per-cell readers run for every row and should not allocate for these.
const EMPTY = { kind: 'empty' } as const
const INVALID = { kind: 'invalid' } as const
const DIGITS = /^-?\d{1,15}$/

export function readInteger (cell: Cell | undefined): IntegerParse {
  if (cell === null || cell === undefined || cell instanceof UncomputedFormula) return EMPTY
  if (typeof cell === 'number') return Number.isSafeInteger(cell) ? { kind: 'ok', value: cell } : INVALID
  if (typeof cell === 'string') {
    // Text of digits only, as every id of a CSV ledger is: read without trimming or a regex.
    const value = plainDigits(cell)
    if (value >= 0) return { kind: 'ok', value }
    const s = cell.trim()
    if (s === '') return EMPTY
    return DIGITS.test(s) ? { kind: 'ok', value: Number(s) } : INVALID
  }
  return INVALID
}

/** The value of 1 to 15 ASCII digits and nothing else, or -1. */
function plainDigits (s: string): number {
  const n = s.length
  if (n === 0 || n > 15) return -1
  let value = 0
  for (let i = 0; i < n; i++) {
    const d = s.charCodeAt(i) - 48
    if (d < 0 || d > 9) return -1
    value = value * 10 + d
  }
  return value
}

export type DateParse = { kind: 'empty' } | { kind: 'ok', iso: string } | { kind: 'invalid' }
const BR_DATE = /^(\d{1,2})\/(\d{1,2})\/(\d{4})(?:\s+\d{1,2}:\d{2}(?::\d{2})?)?$/
const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/
/** Excel's calendar ends at 9999-12-31, serial 2,958,465. */
const MAX_SERIAL = 2_958_465

/**
 * A movement date as ISO `YYYY-MM-DD`: from a date cell, an Excel serial number,
 * or text `dd/mm/yyyy` or ISO. Only the calendar day is kept; a time of day is
 * dropped, never converted through the local time zone.
 */
export function readDate (cell: Cell | undefined): DateParse {
  if (cell === null || cell === undefined || cell instanceof UncomputedFormula) return EMPTY
  if (cell instanceof DateCell) return fromSerial(cell.serial)
  if (typeof cell === 'number') return fromSerial(cell)
  if (typeof cell !== 'string') return INVALID
  if (cell === lastText) return lastTextParsed
  // Short texts only: a longer one may be a slice of a whole chunk of a CSV file, which a
  // cache entry would keep alive. Dates (`dd/mm/yyyy`, ISO) have 10 characters.
  if (cell.length > TEXT_CACHE_MAX_CHARS) return parseDateText(cell)
  let parsed = textDateCache.get(cell)
  if (parsed === undefined) {
    if (textDateCache.size >= DATE_CACHE_LIMIT) textDateCache.clear()
    parsed = parseDateText(cell)
    textDateCache.set(cell, parsed)
  }
  lastText = cell
  lastTextParsed = parsed
  return parsed
}

function parseDateText (text: string): DateParse {
  const s = text.trim()
  if (s === '') return EMPTY
  const br = BR_DATE.exec(s)
  if (br !== null) return fromParts(Number(br[3]), Number(br[2]), Number(br[1]))
  const iso = ISO_DATE.exec(s)
  if (iso !== null) return fromParts(Number(iso[1]), Number(iso[2]), Number(iso[3]))
  return INVALID
}

/** Text dates repeat as serials do (CSV ledgers hold every date as text): parsed once each. */
const textDateCache = new Map<string, DateParse>()
const TEXT_CACHE_MAX_CHARS = 12
let lastText: string | undefined
let lastTextParsed: DateParse = INVALID

/** A ledger's dates repeat (a few hundred days over many rows): keep the parsed ones. */
const dateCache = new Map<number, DateParse>()
const DATE_CACHE_LIMIT = 50_000

/** Rows of a ledger come in date order more often than not: the last day is checked first. */
let lastDay = Number.NaN
let lastParsed: DateParse = INVALID

function fromSerial (serial: number): DateParse {
  if (!(serial >= 1 && serial <= MAX_SERIAL)) return INVALID
  const day = Math.floor(serial)
  if (day === lastDay) return lastParsed
  let parsed = dateCache.get(day)
  if (parsed === undefined) {
    if (dateCache.size >= DATE_CACHE_LIMIT) dateCache.clear()
    parsed = { kind: 'ok', iso: serialToISO(day) }
    dateCache.set(day, parsed)
  }
  lastDay = day
  lastParsed = parsed
  return parsed
}

/** Days in each month of a common year. */
const MONTH_DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]

/** A calendar date of the Gregorian calendar from 1900 on (the regexes allow four-digit years only). */
function fromParts (year: number, month: number, day: number): DateParse {
  if (year < 1900 || month < 1 || month > 12 || day < 1) return INVALID
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0)
  if (day > (month === 2 && leap ? 29 : MONTH_DAYS[month - 1]!)) return INVALID
  return { kind: 'ok', iso: `${year}-${month < 10 ? '0' : ''}${month}-${day < 10 ? '0' : ''}${day}` }
}

/** Text of a descriptive cell, trimmed; numbers and booleans as they print; null when empty. */
export function readText (cell: Cell | undefined): string | null {
  if (cell === null || cell === undefined || cell instanceof UncomputedFormula) return null
  if (cell instanceof DateCell) return cell.toISO()
  if (cell instanceof ErrorCell) return cell.text
  const s = String(cell).trim()
  return s === '' ? null : s
}

/** Longer texts are shown shortened in reports (a crafted file may hold megabytes in one cell). */
const SHOWN_TEXT_CHARS = 200

/** The cell as a person would type it back, for problem reports; a formula shows as `=...`. */
export function displayCell (cell: Cell | undefined): string {
  if (cell === null || cell === undefined) return ''
  if (cell instanceof DateCell) return cell.toISO()
  if (cell instanceof ErrorCell) return cell.text
  return shortened(String(cell))
}

/**
 * Text for a listing: as it is, unless it is longer than a cell can hold, which only
 * a damaged or crafted file has; then its start and its length.
 */
export function listedText (text: string | null): string | null {
  return text === null || text.length <= EXCEL_MAX_CELL_CHARS ? text : shortened(text)
}

function shortened (text: string): string {
  return text.length <= SHOWN_TEXT_CHARS ? text : `${text.slice(0, SHOWN_TEXT_CHARS)}… (${text.length} characters)`
}
