import type { Cell, ReadSummary, RowVisitor } from '../xlsx/index.js'
import { LedgerAnalyzer } from './analyzer.js'
import type { ProblemSink } from './analyzer.js'
import { mapColumns } from './columns.js'
import type { ColumnMap } from './columns.js'
import type { DiagnosticGroup, DiagnosticLine, LedgerAnalysis, LedgerDiagnosis } from './types.js'
import { listedText, readAmount, readDate, readInteger, readText } from './values.js'

/** Reads the ledger's first sheet once, calling the visitor per row. Each call is a fresh read. */
export type SheetSource = (onRow: RowVisitor) => Promise<ReadSummary>

export interface LedgerOptions {
  /** Logical batch size (100..10000), only used to count batches. */
  batchSize: number
}

export async function analyzeLedger (source: SheetSource, options: LedgerOptions & { onProblem?: ProblemSink }): Promise<LedgerAnalysis> {
  const analyzer = new LedgerAnalyzer(undefined, options.onProblem)
  await source(analyzer.visit)
  return analyzer.finish(options.batchSize)
}

/**
 * The analysis and every row's `id` (the movement's identity), in file order, for a caller
 * that checks them against what a company already has; 8 bytes a row.
 */
export async function analyzeLedgerWithIds (source: SheetSource, options: LedgerOptions): Promise<{ analysis: LedgerAnalysis, ids: Float64Array }> {
  let ids = new Float64Array(1024)
  let count = 0
  const analyzer = new LedgerAnalyzer((row) => {
    if (row.rowId === null) return
    if (count === ids.length) {
      const grown = new Float64Array(ids.length * 2)
      grown.set(ids)
      ids = grown
    }
    ids[count++] = row.rowId
  })
  await source(analyzer.visit)
  return { analysis: analyzer.finish(options.batchSize), ids: ids.slice(0, count) }
}

/**
 * The most rows a diagnosis lists, and the most groups. A file whose every group is
 * unbalanced would otherwise list all of its rows: 1.8M of them (a 4.7 MB upload) took
 * over a gigabyte of heap and ended in a 500. Past the cap the diagnosis still counts
 * everything (`omittedGroups`, `omittedLines`, each group's `lineCount`); a person
 * fixing the file starts from the first groups anyway.
 */
export const MAX_DIAGNOSTIC_LINES = 100_000

export interface DiagnoseOptions extends LedgerOptions {
  /** Cap on listed rows and on listed groups (default MAX_DIAGNOSTIC_LINES). */
  maxLines?: number
}

/**
 * Analysis plus the original rows of each unbalanced group. Two reads: the first
 * finds the unbalanced groups from per-group balances, the second keeps rows of
 * those groups only, so memory follows the unbalanced rows listed, not the file. A
 * balanced file is read once.
 */
export async function diagnoseLedger (source: SheetSource, options: DiagnoseOptions): Promise<LedgerDiagnosis> {
  const maxLines = options.maxLines ?? MAX_DIAGNOSTIC_LINES
  const analyzer = new LedgerAnalyzer()
  await source(analyzer.visit)
  const analysis = analyzer.finish(options.batchSize)
  const unbalanced = analyzer.unbalancedGroupIds()
  if (unbalanced.length === 0) return { analysis, groups: [], omittedGroups: 0, omittedLines: 0 }

  const groups = new Map<number, DiagnosticGroup>()
  for (const id of unbalanced.slice(0, maxLines)) {
    groups.set(id, { groupId: id, date: null, debitCents: 0, creditCents: 0, differenceCents: 0, description: null, history: null, lineCount: 0, lines: [] })
  }
  let listed = 0
  let omittedLines = 0
  let columns: ColumnMap | undefined
  await source((rowNumber: number, cells: Cell[]) => {
    if (columns === undefined) {
      columns = mapColumns(cells)
      return
    }
    const id = readInteger(cells[columns.id_movim_finan])
    if (id.kind !== 'ok') return
    const group = groups.get(id.value)
    if (group === undefined) {
      if (analyzer.isUnbalanced(id.value)) omittedLines++
      return
    }
    group.lineCount++
    if (listed >= maxLines) {
      // Past the cap the group's totals still count every row.
      group.debitCents += centsOrZero(cells[columns.debito])
      group.creditCents += centsOrZero(cells[columns.credito])
      omittedLines++
      return
    }
    const line = toLine(rowNumber, cells, columns)
    if (group.lines.length === 0) {
      const date = readDate(cells[columns.data])
      group.date = date.kind === 'ok' ? date.iso : null
      group.description = line.description
      group.history = line.history
    }
    group.lines.push(line)
    listed++
    group.debitCents += line.debitCents
    group.creditCents += line.creditCents
  })
  // A group whose rows all came after the cap was filled is omitted like those past it.
  const shown = [...groups.values()].filter((group) => group.lines.length > 0)
  for (const group of shown) group.differenceCents = group.debitCents - group.creditCents
  return { analysis, groups: shown, omittedGroups: unbalanced.length - shown.length, omittedLines }
}

function toLine (rowNumber: number, cells: Cell[], c: ColumnMap): DiagnosticLine {
  return {
    rowNumber,
    type: listedText(readText(cells[c.tipo])),
    accountId: integerOrNull(cells[c.id_conta]),
    planningId: integerOrNull(cells[c.id_planejamento]),
    description: listedText(readText(cells[c.planejamento_analitico])),
    debitCents: centsOrZero(cells[c.debito]),
    creditCents: centsOrZero(cells[c.credito]),
    history: c.historico === undefined ? null : listedText(readText(cells[c.historico]))
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
