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

export type Cell = null | number | string | boolean | DateCell | ErrorCell

/**
 * Converts a 1900-system serial to ISO 8601 without touching local time.
 * Serials below 60 precede Excel's phantom 1900-02-29 and are one day late in
 * Excel's own count; they are corrected so that serial 1 is 1900-01-01.
 */
export function serialToISO (serial: number): string {
  let seconds = Math.round(serial * 86_400)
  if (serial < 60) seconds += 86_400
  const ms = (seconds / 86_400 - UNIX_EPOCH_SERIAL) * DAY_MS
  const iso = new Date(Math.round(ms)).toISOString()
  return iso.endsWith('T00:00:00.000Z') ? iso.slice(0, 10) : iso.slice(0, 19)
}

/** Days since 1899-12-30 for a calendar date, computed in UTC (the inverse of serialToISO's date part). */
export function dateToSerial (year: number, month: number, day: number): number {
  return Date.UTC(year, month - 1, day) / DAY_MS + UNIX_EPOCH_SERIAL
}
