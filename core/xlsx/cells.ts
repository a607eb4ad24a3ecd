/**
 * Cell values as the readers hand them out. Plain numbers, strings and booleans
 * stand for themselves; dates and error cells get small classes so that callers
 * can tell them apart from numbers and text without a per-cell type tag.
 */

/** Milliseconds in a day; Excel serials count days with the time as the fraction. */
const DAY_MS = 86_400_000
/** Serial of 1970-01-01 in the 1900 date system (epoch 1899-12-30, ECMA-376 Part 1, 18.17.4.1). */
const UNIX_EPOCH_SERIAL = 25_569
/** Days between the 1900 and 1904 date systems' epochs (ECMA-376 Part 1, 18.17.4.1). */
export const DATE1904_OFFSET_DAYS = 1_462
/** The most characters a cell can hold in Excel (its specifications and limits); longer text no workbook writes. */
export const EXCEL_MAX_CELL_CHARS = 32_767

/**
 * A cell whose number format is a date format. `serial` is always in the 1900
 * date system: readers add the 1904 offset before building it, so consumers never
 * need to know which system the workbook used.
 */
export class DateCell {
  constructor (readonly serial: number) {}

  /**
   * `YYYY-MM-DD`, or `YYYY-MM-DDTHH:MM:SS` when the time is not midnight.
   * Pure arithmetic in UTC, so the host's time zone never shifts the result.
   * Time is rounded to the nearest second, as Excel displays it.
   */
  toISO (): string {
    return serialToISO(this.serial)
  }

  toJSON (): string {
    return this.toISO()
  }
}

/** An error cell such as `#DIV/0!` or `#N/A`, kept as its text. */
export class ErrorCell {
  constructor (readonly text: string) {}

  toJSON (): string {
    return this.text
  }
}

/**
 * A formula saved without its computed value: `<f>` with no `<v>` (ECMA-376 Part 1,
 * 18.3.1.4). Libraries that write formulas without evaluating them (openpyxl,
 * ExcelJS, many ERP exporters) leave cells like this; the value exists only once
 * Excel or LibreOffice opens the file and saves it. It is never read as empty or
 * zero. `formula` is the formula text as stored (without `=`; empty for a cell that
 * shares another cell's formula).
 */
export class UncomputedFormula {
  constructor (readonly formula: string) {}

  /** What the cell shows a person: the formula, as Excel displays it in the formula bar. */
  toString (): string {
    return this.formula === '' ? '=(shared formula)' : `=${this.formula}`
  }

  /** The value is unknown: `razao rows` prints null. */
  toJSON (): null {
    return null
  }
}

export type Cell = null | number | string | boolean | DateCell | ErrorCell | UncomputedFormula

/**
 * Converts a 1900-system serial to ISO 8601 without touching local time.
 * Serials below 60 precede Excel's phantom 1900-02-29 and are one day late in
 * Excel's own count; they are corrected so that serial 1 is 1900-01-01.
 */
export function serialToISO (serial: number): string {
  let seconds = Math.round(serial * 86_400)
  if (serial < 60) seconds += 86_400
  const days = Math.floor(seconds / 86_400)
  const date = dayToISO(days)
  const time = seconds - days * 86_400
  if (time === 0) return date
  return `${date}T${pad2(Math.floor(time / 3600))}:${pad2(Math.floor(time / 60) % 60)}:${pad2(time % 60)}`
}

/**
 * `YYYY-MM-DD` of a whole 1900-system serial by integer arithmetic on the proleptic
 * Gregorian calendar (days to civil date through 400-year eras), with no Date object:
 * this runs once per ledger row. Years outside 0..9999 fall back to Date.
 */
export function dayToISO (serial: number): string {
  const z = serial - UNIX_EPOCH_SERIAL + 719_468 // days since 0000-03-01
  const era = Math.floor(z / 146_097)
  const dayOfEra = z - era * 146_097
  const yearOfEra = Math.floor((dayOfEra - Math.floor(dayOfEra / 1460) + Math.floor(dayOfEra / 36_524) - Math.floor(dayOfEra / 146_096)) / 365)
  const dayOfYear = dayOfEra - (365 * yearOfEra + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100))
  const shiftedMonth = Math.floor((5 * dayOfYear + 2) / 153) // 0 = March
  const day = dayOfYear - Math.floor((153 * shiftedMonth + 2) / 5) + 1
  const month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
  const year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
  if (year < 0 || year > 9999) return new Date((serial - UNIX_EPOCH_SERIAL) * DAY_MS).toISOString().slice(0, 10)
  return `${String(year).padStart(4, '0')}-${pad2(month)}-${pad2(day)}`
}

function pad2 (n: number): string {
  return n < 10 ? `0${n}` : String(n)
}

/** Days since 1899-12-30 for a calendar date, computed in UTC (the inverse of serialToISO's date part). */
export function dateToSerial (year: number, month: number, day: number): number {
  return Date.UTC(year, month - 1, day) / DAY_MS + UNIX_EPOCH_SERIAL
}
