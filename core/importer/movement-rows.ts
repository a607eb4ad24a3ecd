/**
 * Ledger rows as lines of PostgreSQL's COPY text format, in the column order of
 * MOVEMENT_COLUMNS. Amounts go as exact `numeric` text built from integer cents;
 * texts are escaped (backslash, tab, newline, carriage return); empty is `\N`.
 */
import { readInteger, readText } from '../ledger/index.js'
import type { ColumnMap, LedgerRow } from '../ledger/index.js'
import { centsToDecimal } from '../money/index.js'
import type { Cell } from '../xlsx/index.js'

export const MOVEMENT_COLUMNS = [
  'importacao_seq', 'linha_origem', 'id', 'id_movim_finan', 'data', 'id_conta', 'planejamento_analitico',
  'id_planejamento', 'planejamento', 'tipo', 'cod_planejamento', 'credito', 'debito', 'historico'
] as const

export const COPY_MOVEMENTS_SQL = `COPY movimentos (${MOVEMENT_COLUMNS.join(', ')}) FROM STDIN`

const NULL = '\\N'
const NEEDS_ESCAPE = /[\\\t\n\r]/

export function copyText (value: string | null): string {
  if (value === null) return NULL
  if (!NEEDS_ESCAPE.test(value)) return value
  return value.replace(/[\\\t\n\r]/g, (ch) => ch === '\\' ? '\\\\' : ch === '\t' ? '\\t' : ch === '\n' ? '\\n' : '\\r')
}

function copyInteger (cell: Cell | undefined): string {
  if (typeof cell === 'number' && Number.isSafeInteger(cell)) return String(cell)
  const parsed = readInteger(cell)
  return parsed.kind === 'ok' ? String(parsed.value) : NULL
}

/**
 * Builds COPY lines for one load. Ledger texts repeat (accounts, plans, kinds come
 * from the shared strings table), so a string cell's escaped form is computed once
 * and then looked up: the same string object hashes once in V8.
 */
export class MovementLines {
  private readonly texts = new Map<string, string>()

  constructor (private readonly importacaoSeq: string) {}

  /** One COPY line (with its newline); only for rows of a file without blocking problems so far. */
  line (row: LedgerRow, cells: Cell[], c: ColumnMap): string {
    return this.importacaoSeq + '\t' +
      row.rowNumber + '\t' +
      copyInteger(cells[c.id]) + '\t' +
      (row.groupId === null ? NULL : String(row.groupId)) + '\t' +
      (row.date ?? NULL) + '\t' +
      copyInteger(cells[c.id_conta]) + '\t' +
      this.text(cells[c.planejamento_analitico]) + '\t' +
      copyInteger(cells[c.id_planejamento]) + '\t' +
      this.text(cells[c.planejamento]) + '\t' +
      this.text(cells[c.tipo]) + '\t' +
      this.text(cells[c.cod_planejamento]) + '\t' +
      centsToDecimal(row.creditCents) + '\t' +
      centsToDecimal(row.debitCents) + '\t' +
      (c.historico === undefined ? NULL : this.text(cells[c.historico])) + '\n'
  }

  private text (cell: Cell | undefined): string {
    if (typeof cell !== 'string') return copyText(readText(cell))
    let escaped = this.texts.get(cell)
    if (escaped === undefined) {
      if (this.texts.size >= TEXT_CACHE_LIMIT) this.texts.clear()
      escaped = copyText(readText(cell))
      this.texts.set(cell, escaped)
    }
    return escaped
  }
}

/** Bounds the cache on files whose texts never repeat (free-form histories). */
const TEXT_CACHE_LIMIT = 200_000
