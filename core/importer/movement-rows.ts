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
 * One COPY line (with its newline) for a typed row. The caller only passes rows of
 * a file without blocking problems so far, so every integer cell reads as one.
 */
export function movementLine (importacaoSeq: string, row: LedgerRow, cells: Cell[], c: ColumnMap): string {
  return importacaoSeq + '\t' +
    row.rowNumber + '\t' +
    copyInteger(cells[c.id]) + '\t' +
    (row.groupId === null ? NULL : String(row.groupId)) + '\t' +
    (row.date ?? NULL) + '\t' +
    copyInteger(cells[c.id_conta]) + '\t' +
    copyText(readText(cells[c.planejamento_analitico])) + '\t' +
    copyInteger(cells[c.id_planejamento]) + '\t' +
    copyText(readText(cells[c.planejamento])) + '\t' +
    copyText(readText(cells[c.tipo])) + '\t' +
    copyText(readText(cells[c.cod_planejamento])) + '\t' +
    centsToDecimal(row.creditCents) + '\t' +
    centsToDecimal(row.debitCents) + '\t' +
    copyText(c.historico === undefined ? null : readText(cells[c.historico])) + '\n'
}
