import { EngineError } from '../errors.js'
import type { Cell } from '../xlsx/index.js'
import { displayCell } from './values.js'

/** The columns every ledger must have (spec 1, section 1.6), after lower-casing and trimming. */
export const REQUIRED_COLUMNS = [
  'id', 'id_movim_finan', 'data', 'id_conta', 'planejamento_analitico', 'id_planejamento',
  'planejamento', 'tipo', 'cod_planejamento', 'credito', 'debito'
] as const
export type RequiredColumn = typeof REQUIRED_COLUMNS[number]

/** Optional column that feeds `historico_origem` when present. */
export const HISTORY_COLUMN = 'historico'

export type ColumnMap = Record<RequiredColumn, number> & { historico: number | undefined }

export function normalizeHeader (cell: Cell): string {
  return cell === null ? '' : String(cell).trim().toLowerCase()
}

/**
 * Positions of the ledger columns in the header row. The first occurrence of a
 * name wins; extra columns are ignored; any missing required column is an error
 * that names all of them at once.
 */
export function mapColumns (header: Cell[]): ColumnMap {
  const positions = new Map<string, number>()
  header.forEach((cell, index) => {
    const name = normalizeHeader(cell)
    if (name !== '' && !positions.has(name)) positions.set(name, index)
  })
  const missing = REQUIRED_COLUMNS.filter((name) => !positions.has(name))
  if (missing.length > 0) {
    throw new EngineError('LEDGER_MISSING_COLUMNS', `The first row lacks the required column${missing.length > 1 ? 's' : ''}: ${missing.join(', ')}. It holds: ${shownRow(header)}.`, { missing })
  }
  const map = { historico: positions.get(HISTORY_COLUMN) } as ColumnMap
  for (const name of REQUIRED_COLUMNS) map[name] = positions.get(name)!
  return map
}

/** The first cells of a row as a person reads them, for a message: `"Data", "Conta", (empty), …`. */
function shownRow (cells: Cell[]): string {
  const shown = cells.slice(0, 15).map((cell) => {
    const text = displayCell(cell).trim()
    return text === '' ? '(empty)' : `"${text.length > 40 ? `${text.slice(0, 40)}…` : text}"`
  })
  if (shown.length === 0) return 'nothing'
  return shown.join(', ') + (cells.length > 15 ? `, and ${cells.length - 15} more cells` : '')
}
