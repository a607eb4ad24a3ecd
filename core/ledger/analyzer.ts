/**
 * One pass over the rows of a ledger: totals in integer cents, dates, kinds and
 * the per-group balances that tell which `id_movim_finan` groups are unbalanced.
 * Memory grows with the number of distinct groups, never with the rows.
 */
import { EngineError } from '../errors.js'
import { addCents, wholeCents } from '../money/index.js'
import type { Cell } from '../xlsx/index.js'
import { mapColumns } from './columns.js'
import { GroupBalances } from './group-balances.js'
import type { ColumnMap } from './columns.js'
import { MAX_PROBLEM_SAMPLES } from './types.js'
import type { CellProblem, LedgerAnalysis, ProblemKind } from './types.js'
import { displayCell, readAmount, readDate, readInteger, readText } from './values.js'

/** The parsed, typed fields of one data row that both passes need. */
export interface LedgerRow {
  rowNumber: number
  groupId: number | null
  date: string | null
  debitCents: number
  creditCents: number
}

/**
 * Sees every counted data row after the analyzer has typed it (the importer writes
 * rows to the database from here). `cells` is the reader's array, valid only
 * during the call.
 */
export type DataRowSink = (row: LedgerRow, cells: Cell[], columns: ColumnMap) => void

/** Problems that make a file unfit to store as typed rows (see ProblemKind). */
const BLOCKING: readonly ProblemKind[] = ['INVALID_AMOUNT', 'INVALID_DATE', 'INVALID_INTEGER', 'MISSING_ID_MOVIM_FINAN']

/** Whether a problem of this kind makes the file unfit to import. */
export function isBlocking (kind: ProblemKind): boolean {
  return BLOCKING.includes(kind)
}

/** How many cells make the file unfit to import (the wire's `invalid_cells`). */
export function countBlocking (counts: Record<ProblemKind, number>): number {
  let n = 0
  for (const kind of BLOCKING) n += counts[kind]
  return n
}

export class LedgerAnalyzer {
  constructor (private readonly onDataRow?: DataRowSink) {}

  private columns: ColumnMap | undefined
  private readonly groups = new GroupBalances()
  private readonly types = new Map<string, number>()
  private readonly samples: CellProblem[] = []
  private readonly problemCounts: Record<ProblemKind, number> = {
    INVALID_AMOUNT: 0, NEGATIVE_AMOUNT: 0, ROUNDED_AMOUNT: 0, INVALID_DATE: 0, INVALID_INTEGER: 0, MISSING_ID_MOVIM_FINAN: 0
  }
  private totalRows = 0
  private debitCents = 0
  private creditCents = 0
  private minDate: string | null = null
  private maxDate: string | null = null
  private bothSides = 0
  private noValues = 0

  /** Bound so it can be handed straight to a reader as its RowVisitor. */
  readonly visit = (rowNumber: number, cells: Cell[]): void => {
    if (this.columns === undefined) {
      this.columns = mapColumns(cells)
      return
    }
    const row = this.parseRow(rowNumber, cells)
    if (row !== undefined) {
      this.count(row, cells)
      this.onDataRow?.(row, cells, this.columns)
    }
  }

  /** Cells so far that make the file unfit to import; rows after the first such cell need not be stored. */
  blockingProblems (): number {
    return countBlocking(this.problemCounts)
  }

  /**
   * Typed fields of a data row, reporting problems; undefined for a row whose
   * required cells are all empty (blank rows are skipped, not counted).
   */
  parseRow (rowNumber: number, cells: Cell[]): LedgerRow | undefined {
    const c = this.columns!
    if (isBlank(cells, c)) return undefined
    const debit = this.amount(rowNumber, 'debito', cells[c.debito])
    const credit = this.amount(rowNumber, 'credito', cells[c.credito])
    const groupCell = cells[c.id_movim_finan]
    let groupId: number | null = null
    if (isIntegerNumber(groupCell)) {
      groupId = groupCell
    } else {
      const group = readInteger(groupCell)
      if (group.kind === 'ok') groupId = group.value
      else if (group.kind === 'invalid') this.problem('INVALID_INTEGER', rowNumber, 'id_movim_finan', groupCell)
      else this.problem('MISSING_ID_MOVIM_FINAN', rowNumber, 'id_movim_finan', null)
    }
    for (const name of INTEGER_COLUMNS) {
      const cell = cells[c[name]]
      if (!isIntegerNumber(cell) && readInteger(cell).kind === 'invalid') this.problem('INVALID_INTEGER', rowNumber, name, cell)
    }
    const date = readDate(cells[c.data])
    if (date.kind === 'invalid') this.problem('INVALID_DATE', rowNumber, 'data', cells[c.data])
    return {
      rowNumber,
      groupId,
      date: date.kind === 'ok' ? date.iso : null,
      debitCents: debit,
      creditCents: credit
    }
  }

  private count (row: LedgerRow, cells: Cell[]): void {
    const c = this.columns!
    this.totalRows++
    this.debitCents = addCents(this.debitCents, row.debitCents)
    this.creditCents = addCents(this.creditCents, row.creditCents)
    if (row.debitCents !== 0 && row.creditCents !== 0) this.bothSides++
    if (row.debitCents === 0 && row.creditCents === 0) this.noValues++
    if (row.date !== null) {
      if (this.minDate === null || row.date < this.minDate) this.minDate = row.date
      if (this.maxDate === null || row.date > this.maxDate) this.maxDate = row.date
    }
    const type = readText(cells[c.tipo]) ?? ''
    this.types.set(type, (this.types.get(type) ?? 0) + 1)
    if (row.groupId !== null) this.groups.add(row.groupId, row.debitCents - row.creditCents)
  }

  /** Cents of an amount cell; an unreadable amount counts as zero and is reported. */
  private amount (rowNumber: number, column: 'debito' | 'credito', cell: Cell | undefined): number {
    if (typeof cell === 'number') {
      const cents = wholeCents(cell)
      if (cents >= 0) return cents
    }
    const parsed = readAmount(cell)
    if (parsed.kind === 'empty') return 0
    if (parsed.kind === 'invalid') {
      this.problem('INVALID_AMOUNT', rowNumber, column, cell)
      return 0
    }
    if (parsed.cents < 0) this.problem('NEGATIVE_AMOUNT', rowNumber, column, cell)
    if (parsed.rounded) this.problem('ROUNDED_AMOUNT', rowNumber, column, cell)
    return parsed.cents
  }

  private problem (kind: ProblemKind, rowNumber: number, column: string, cell: Cell | undefined): void {
    this.problemCounts[kind]++
    if (this.samples.length < MAX_PROBLEM_SAMPLES) {
      this.samples.push({ kind, rowNumber, column, value: displayCell(cell) })
    }
  }

  /** Ids of the unbalanced groups, in order of first appearance. */
  unbalancedGroupIds (): Set<number> {
    return new Set(this.groups.unbalancedIds())
  }

  finish (batchSize: number): LedgerAnalysis {
    if (this.columns === undefined) {
      throw new EngineError('LEDGER_EMPTY', 'The first sheet is empty: it has no header row with the ledger columns.')
    }
    return {
      totalRows: this.totalRows,
      totalBatches: Math.ceil(this.totalRows / batchSize),
      totalDebitCents: this.debitCents,
      totalCreditCents: this.creditCents,
      differenceCents: this.debitCents - this.creditCents,
      distinctGroups: this.groups.size,
      minDate: this.minDate,
      maxDate: this.maxDate,
      types: Object.fromEntries(this.types),
      rowsWithBothDebitCredit: this.bothSides,
      rowsWithoutValues: this.noValues,
      unbalancedGroups: this.unbalancedGroupIds().size,
      problemCounts: { ...this.problemCounts },
      problemSamples: [...this.samples]
    }
  }
}

const INTEGER_COLUMNS = ['id', 'id_conta', 'id_planejamento'] as const

/** The common case, checked without building a parse result: a whole number cell. */
function isIntegerNumber (cell: Cell | undefined): cell is number {
  return typeof cell === 'number' && Number.isSafeInteger(cell)
}

function isBlank (cells: Cell[], c: ColumnMap): boolean {
  for (const name of ['id', 'id_movim_finan', 'data', 'credito', 'debito', 'id_conta', 'tipo'] as const) {
    const cell = cells[c[name]]
    if (cell !== null && cell !== undefined && !(typeof cell === 'string' && cell.trim() === '')) return false
  }
  return true
}
