/**
 * Deciding whether a number format shows a date or time, which is the only way
 * SpreadsheetML marks a number as a date (ECMA-376 Part 1, 18.8.30 and 18.8.31).
 */

/**
 * Built-in format ids that display dates or times. 14-22 and 45-47 are in every
 * locale; 27-36 and 50-58 are the East Asian date formats, which Excel writes by id
 * without a formatCode when a workbook was saved under such a locale.
 */
const BUILTIN_DATE_IDS = new Set([
  14, 15, 16, 17, 18, 19, 20, 21, 22,
  27, 28, 29, 30, 31, 32, 33, 34, 35, 36,
  45, 46, 47,
  50, 51, 52, 53, 54, 55, 56, 57, 58
])

export function isBuiltinDateFormat (id: number): boolean {
  return BUILTIN_DATE_IDS.has(id)
}

/** Codes that mean a date or time part when they appear outside literals and brackets. */
const DATE_CODE = /[dmyhsegbDMYHSEGB]/
/** Elapsed-time brackets such as `[h]`, `[mm]`, `[ss]` are times too. */
const ELAPSED = /^\[(?:h+|m+|s+)\]/i
const AM_PM = /^(?:AM\/PM|A\/P)/i
const GENERAL = /^general/i

/**
 * True when a custom format code displays a date or time. Only the first section
 * (before `;`) decides, as it is the one used for positive numbers. Quoted text,
 * backslash escapes, `_x` padding, `*x` fills and bracketed colours or locales
 * (`[Red]`, `[$-416]`) are ignored; a scientific `E` inside a number part is not
 * an era. `b`/`B` (Buddhist years, B1/B2 calendars) count as dates.
 */
export function isDateFormatCode (code: string): boolean {
  let i = 0
  while (i < code.length) {
    const c = code[i]!
    switch (c) {
      case ';':
        return false
      case '"': {
        const close = code.indexOf('"', i + 1)
        i = close === -1 ? code.length : close + 1
        break
      }
      case '\\':
      case '_':
      case '*':
        i += 2
        break
      case '[': {
        const close = code.indexOf(']', i)
        const bracket = close === -1 ? code.slice(i) : code.slice(i, close + 1)
        if (ELAPSED.test(bracket)) return true
        i = close === -1 ? code.length : close + 1
        break
      }
      case '0': case '#': case '?': case '.':
        // A number part: skip digits placeholders with their separators and exponent.
        i++
        while (i < code.length && '0#?.,%Ee+-'.includes(code[i]!)) i++
        break
      default:
        if (c === 'G' || c === 'g') {
          if (GENERAL.test(code.slice(i))) { i += 7; break }
          return true
        }
        if (c === 'A' || c === 'a') {
          if (AM_PM.test(code.slice(i))) return true
          i++
          break
        }
        if (DATE_CODE.test(c)) return true
        i++
    }
  }
  return false
}
