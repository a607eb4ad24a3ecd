import type { Cell, ReadSummary, RowVisitor } from '../xlsx/index.js'
import { LedgerAnalyzer } from './analyzer.js'
import { mapColumns } from './columns.js'
import type { ColumnMap } from './columns.js'
import type { DiagnosticGroup, DiagnosticLine, LedgerAnalysis, LedgerDiagnosis } from './types.js'
import { readAmount, readDate, readInteger, readText } from './values.js'

/** Reads the ledger's first sheet once, calling the visitor per row. Each call is a fresh read. */
export type SheetSource = (onRow: RowVisitor) => Promise<ReadSummary>

export interface LedgerOptions {
  /** Logical batch size (100..10000), only used to count batches. */
  batchSize: number
}

export async function analyzeLedger (source: SheetSource, options: LedgerOptions): Promise<LedgerAnalysis> {
  const analyzer = new LedgerAnalyzer()
  await source(analyzer.visit)
  return analyzer.finish(options.batchSize)
}

/**
 * Analysis plus every original row of each unbalanced group. Two reads: the first
 * finds the unbalanced groups from per-group balances, the second keeps rows of
 * those groups only, so memory follows the unbalanced rows, not the file. A
 * balanced file is read once.
 */
export async function diagnoseLedger (source: SheetSource, options: LedgerOptions): Promise<LedgerDiagnosis> {
  const analyzer = new LedgerAnalyzer()
  await source(analyzer.visit)
  const analysis = analyzer.finish(options.batchSize)
  const unbalanced = analyzer.unbalancedGroupIds()
  if (unbalanced.size === 0) return { analysis, groups: [] }

  const groups = new Map<number, DiagnosticGroup>()
  for (const id of unbalanced) {
    groups.set(id, { groupId: id, date: null, debitCents: 0, creditCents: 0, differenceCents: 0, description: null, history: null, lines: [] })
  }
  let columns: ColumnMap | undefined
  await source((rowNumber: number, cells: Cell[]) => {
    if (columns === undefined) {
      columns = mapColumns(cells)
      return
    }
    const id = readInteger(cells[columns.id_movim_finan])
    const group = id.kind === 'ok' ? groups.get(id.value) : undefined
    if (group === undefined) return
    const line = toLine(rowNumber, cells, columns)
    if (group.lines.length === 0) {
      const date = readDate(cells[columns.data])
      group.date = date.kind === 'ok' ? date.iso : null
      group.description = line.description
      group.history = line.history
    }
    group.lines.push(line)
    group.debitCents += line.debitCents
    group.creditCents += line.creditCents
  })
  for (const group of groups.values()) group.differenceCents = group.debitCents - group.creditCents
  return { analysis, groups: [...groups.values()] }
}

function toLine (rowNumber: number, cells: Cell[], c: ColumnMap): DiagnosticLine {
  return {
    rowNumber,
    type: readText(cells[c.tipo]),
    accountId: integerOrNull(cells[c.id_conta]),
    planningId: integerOrNull(cells[c.id_planejamento]),
    description: readText(cells[c.planejamento_analitico]),
    debitCents: centsOrZero(cells[c.debito]),
    creditCents: centsOrZero(cells[c.credito]),
    history: c.historico === undefined ? null : readText(cells[c.historico])
  }
}

function integerOrNull (cell: Cell | undefined): number | null {
  const parsed = readInteger(cell)
  return parsed.kind === 'ok' ? parsed.value : null
}

function centsOrZero (cell: Cell | undefined): number {
  const parsed = readAmount(cell)
  return parsed.kind === 'ok' ? parsed.cents : 0
}
