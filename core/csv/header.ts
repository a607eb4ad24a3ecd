/**
 * The header line of a CSV file and the separator it is written with. The header is the
 * first line with something in it (as the first non-empty row of a sheet is); the
 * separator is the candidate that splits it into the columns the caller looks for.
 */

/** Candidate separators, in the order a tie goes: `;` is what Brazilian-locale programs write. */
export const DELIMITERS = [';', ',', '\t'] as const
export type Delimiter = typeof DELIMITERS[number]

/** Excel's first-line hint `sep=;` names the separator and is not a row of the sheet. */
const SEP_HINT = /^sep=([;,\t|])$/i

export interface HeaderLine {
  /** Offset of the header line in the text, and of the character after it (its line break excluded); equal when the text has no line with anything in it. */
  start: number
  end: number
  /** The separator named by Excel's `sep=` hint on the first line, which is then not a row. */
  hintedDelimiter: string | undefined
  /** Offset right after the hint line and its line break (0 without one). */
  afterHint: number
}

/**
 * Finds the header line in the first text of a file, or undefined when `text` does not
 * yet hold its end (and `atEnd` is false). Quotes are honoured: a quoted header name may
 * hold a line break.
 */
export function findHeaderLine (text: string, atEnd: boolean): HeaderLine | undefined {
  let afterHint = 0
  let hintedDelimiter: string | undefined
  let pos = 0
  for (;;) {
    const end = lineEnd(text, pos)
    // A CR last in the text may be the first half of a CRLF: wait for what follows.
    if (!atEnd && (end === -1 || end === text.length - 1)) return undefined
    const stop = end === -1 ? text.length : end
    const line = text.slice(pos, stop)
    const next = Math.min(text.length, stop + (text.charCodeAt(stop) === 0x0d && text.charCodeAt(stop + 1) === 0x0a ? 2 : 1))
    const hint = pos === 0 ? SEP_HINT.exec(line) : null
    if (hint !== null) {
      hintedDelimiter = hint[1]!
      afterHint = next
    } else if (!isBlankLine(line) || end === -1) {
      return { start: isBlankLine(line) ? stop : pos, end: stop, hintedDelimiter, afterHint }
    }
    if (end === -1) return { start: stop, end: stop, hintedDelimiter, afterHint }
    pos = next
  }
}

/** Offset of the line break that ends the line starting at `from`, outside quotes; -1 when none yet. */
function lineEnd (text: string, from: number): number {
  let quoted = false
  for (let i = from; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c === 0x22) quoted = !quoted
    else if (!quoted && (c === 0x0a || c === 0x0d)) return i
  }
  return -1
}

/** A line of nothing but spaces, separators and quotes has no cell in it. */
function isBlankLine (line: string): boolean {
  return /^[\s;,"]*$/.test(line)
}

/** The fields of one line (no line breaks outside quotes), quotes removed as the parser removes them. */
export function splitLine (line: string, delimiter: string): string[] {
  const fields: string[] = []
  let field = ''
  let quoted = false
  for (let i = 0; i < line.length; i++) {
    const ch = line[i]!
    if (quoted) {
      if (ch !== '"') field += ch
      else if (line[i + 1] === '"') { field += '"'; i++ } else quoted = false
    } else if (ch === '"' && field === '') {
      quoted = true
    } else if (ch === delimiter) {
      fields.push(field)
      field = ''
    } else {
      field += ch
    }
  }
  fields.push(field)
  return fields
}

export interface DelimiterChoice {
  delimiter: Delimiter
  /** How many of the looked-for columns the header holds when split by it. */
  matches: number
  fields: string[]
}

/**
 * The separator that splits the header into the most of `columns` (names compared
 * trimmed and lower-cased); on a tie, or with no columns given, the one giving the most
 * fields; on a further tie, the earlier in DELIMITERS.
 */
export function chooseDelimiter (headerLine: string, columns: readonly string[] = []): DelimiterChoice {
  const wanted = new Set(columns.map((c) => c.trim().toLowerCase()))
  let best: DelimiterChoice | undefined
  for (const delimiter of DELIMITERS) {
    const fields = splitLine(headerLine, delimiter)
    const names = new Set(fields.map((f) => f.trim().toLowerCase()))
    let matches = 0
    for (const name of wanted) if (names.has(name)) matches++
    if (best === undefined || matches > best.matches || (matches === best.matches && fields.length > best.fields.length)) {
      best = { delimiter, matches, fields }
    }
  }
  return best!
}
