/**
 * `razao extract --csv`: one row per document, for a person who opens the file in a
 * spreadsheet. Columns: what every answer has (`path`, `fileName`, `status`, `success`,
 * `documentType`, `confidence`, `confidenceLevel`, `errors`, `warnings`), then the fields
 * of `data`, each in a column of its own named by its path (`prestador.documento`,
 * `guias.0.valorTotal`: a list's items by their index). Each document type brings its own
 * columns, in the order its first document lists them; a name two types share (`cnpj`)
 * is one column. A field a row's type does not have is empty.
 *
 * Written as the firm's other CSV files are (server/import/problems-csv.ts): `;` between
 * fields, UTF-8 with a byte order mark, CR LF, quoted where needed, formulas kept as text;
 * and numbers with a decimal comma, as Excel set up for Brazil reads them (`1234,56`).
 */
import { basename } from 'node:path'
import { csvField, guardFormula } from '../import/problems-csv.js'

const BOM = '\uFEFF'
const EOL = '\r\n'

const LEAD = ['path', 'fileName', 'status', 'success', 'documentType', 'confidence', 'confidenceLevel', 'errors', 'warnings'] as const

/** `data` as leaves by path: objects and lists walked, null kept (an empty cell). */
export function flatten (value: unknown, prefix = '', into = new Map<string, unknown>()): Map<string, unknown> {
  if (value !== null && typeof value === 'object') {
    const entries = Array.isArray(value) ? value.map((v, i) => [String(i), v] as const) : Object.entries(value)
    // An empty list or object still has its column, empty.
    if (entries.length === 0 && prefix !== '') into.set(prefix, null)
    for (const [key, v] of entries) flatten(v, prefix === '' ? key : `${prefix}.${key}`, into)
  } else if (prefix !== '') {
    into.set(prefix, value)
  }
  return into
}

/** A cell's text: numbers with a decimal comma, booleans as `true`/`false`, null empty. */
function cell (value: unknown): string {
  if (value === null || value === undefined) return ''
  if (typeof value === 'number') return String(value).replace('.', ',')
  return csvField(guardFormula(String(value)))
}

/** Problems as `CODE: message` (with the field, when there is one), one after another. */
function problems (list: unknown): string {
  if (!Array.isArray(list)) return ''
  return list.map((p: { code?: unknown, message?: unknown, field?: unknown }) => `${String(p.code)}${typeof p.field === 'string' ? ` (${p.field})` : ''}: ${String(p.message)}`).join(' | ')
}

export class CsvTable {
  private readonly rows: Array<Map<string, unknown>> = []
  /** Data columns in the order they were first seen. */
  private readonly columns = new Set<string>()

  add (path: string, status: number, body: Record<string, unknown>): void {
    const engine = body.engine as { confidence?: unknown, confidenceLevel?: unknown } | undefined
    const row = new Map<string, unknown>([
      ['path', path], ['fileName', basename(path)], ['status', status], ['success', body.success],
      ['documentType', body.documentType], ['confidence', engine?.confidence ?? null], ['confidenceLevel', engine?.confidenceLevel ?? null],
      ['errors', problems(body.errors)], ['warnings', problems(body.warnings)]
    ])
    for (const [column, value] of flatten(body.data)) {
      this.columns.add(column)
      // A field named as a lead column (none today) keeps its place among the data.
      row.set(LEAD.includes(column as never) ? `data.${column}` : column, value)
    }
    this.rows.push(row)
  }

  toString (): string {
    const header = [...LEAD, ...[...this.columns].map((c) => LEAD.includes(c as never) ? `data.${c}` : c)]
    let out = BOM + header.map((h) => csvField(h)).join(';') + EOL
    for (const row of this.rows) out += header.map((h) => cell(row.get(h))).join(';') + EOL
    return out
  }
}
