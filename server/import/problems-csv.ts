/**
 * Rejected cells as a file (issue 31, item 6): GET /v1/imports/{id}/problems.csv and
 * `razao analyze --problems FILE.csv` write the same lines, one per problem cell.
 *
 * Written for the person who opens it in Excel set up for Brazil:
 * - `;` between fields: the list separator of a Portuguese (Brazil) Windows, where the
 *   comma is the decimal mark; Excel then opens the file in columns by a double click.
 * - UTF-8 with a byte order mark, without which Excel reads the file as Windows-1252 and
 *   shows "Ã§" for "ç".
 * - Lines end with CR LF, and a field holding `;`, `"`, CR or LF is quoted with its quotes
 *   doubled (RFC 4180), so texts with line breaks stay in their cell.
 * - A value Excel would run as a formula (starting with = + - @, a tab or a CR) gets a
 *   leading apostrophe, which keeps it text (CSV injection, OWASP). A plain number such as
 *   `-12,50` (a negative amount) is left as it is: digits cannot hide a formula.
 */
import { PROBLEM_MESSAGES } from '../../core/ledger/index.js'
import type { CellProblem } from '../../core/ledger/index.js'

export const PROBLEMS_CSV_HEADER = ['linha', 'coluna', 'valor_original', 'motivo'] as const
export const PROBLEMS_CSV_TYPE = 'text/csv; charset=utf-8'

const BOM = '\uFEFF'
const EOL = '\r\n'

/** The file's first bytes: the byte order mark and the header line. */
export function problemsCsvHead (): string {
  return BOM + PROBLEMS_CSV_HEADER.join(';') + EOL
}

/** One problem: row, column, the cell as read, and the reason (its code, then what to do). */
export function problemCsvLine (p: CellProblem): string {
  return [String(p.rowNumber), field(p.column), field(guardFormula(p.value)), field(`${p.kind}: ${PROBLEM_MESSAGES[p.kind]}`)].join(';') + EOL
}

/** The last line when the list was cut: how many problems are not in the file. */
export function omittedProblemsLine (listed: number, total: number): string {
  return ['', '', '', field(`${total - listed} more problem cells are not listed here: this file lists the first ${listed} of ${total}.`)].join(';') + EOL
}

/** The whole file for a list of problems (`total` counts those left out too). */
export function problemsCsv (problems: readonly CellProblem[], total = problems.length): string {
  let out = problemsCsvHead()
  for (const p of problems) out += problemCsvLine(p)
  if (total > problems.length) out += omittedProblemsLine(problems.length, total)
  return out
}

const PLAIN_NUMBER = /^[+-]?[0-9][0-9.,]*$/

function guardFormula (value: string): string {
  if (!/^[=+\-@\t\r]/.test(value) || PLAIN_NUMBER.test(value)) return value
  return `'${value}`
}

function field (text: string): string {
  return /[;"\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text
}

/** The quoting and the formula guard, for the other CSV files written for the same spreadsheets (razao extract --csv). */
export { field as csvField, guardFormula }
