/**
 * One pass over the rows of a ledger: totals in integer cents, dates, kinds and
 * the per-group balances that tell which `id_movim_finan` groups are unbalanced.
 * Memory grows with the number of distinct groups, never with the rows.
 */
import { EngineError } from '../errors.js'
import { addCents, wholeCents } from '../money/index.js'
import { EXCEL_MAX_CELL_CHARS, UncomputedFormula } from '../xlsx/index.js'
import type { Cell } from '../xlsx/index.js'
import { REQUIRED_COLUMNS, mapColumns } from './columns.js'
import { GroupBalances } from './group-balances.js'
import type { ColumnMap } from './columns.js'
import { MAX_PROBLEM_SAMPLES } from './types.js'
import type { CellProblem, LedgerAnalysis, ProblemKind } from './types.js'
import { displayCell, readAmount, readDate, readInteger, readText } from './values.js'

/** The parsed, typed fields of one data row that both passes need. */
export interface LedgerRow {
  rowNumber: number
  /** The source row's `id`: the movement's identity across imports (docs/import.md); null when unreadable. */
  rowId: number | null
  groupId: number | null
  date: string | null
  debitCents: number
  creditCents: number
  /** An amount cell is a formula without its value: the zero in its place is not a value. */
  unknownAmount: boolean
}

/**
 * Sees every counted data row after the analyzer has typed it (the importer writes
 * rows to the database from here). `cells` is the reader's array, valid only
 * during the call.
 */
export type DataRowSink = (row: LedgerRow, cells: Cell[], columns: ColumnMap) => void

/**
 * Sees every problem cell as it is found, beyond the MAX_PROBLEM_SAMPLES the analysis keeps
 * (a refused import stores its rejected cells, `razao analyze --problems` writes them all).
 */
export type ProblemSink = (problem: CellProblem) => void

/** Problems that make a file unfit to store as typed rows (see ProblemKind). */
const BLOCKING: readonly ProblemKind[] = ['INVALID_AMOUNT', 'INVALID_DATE', 'INVALID_INTEGER', 'MISSING_ID', 'MISSING_ID_MOVIM_FINAN', 'UNCOMPUTED_FORMULA', 'TEXT_TOO_LONG', 'TEXT_AT_CELL_LIMIT']

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
  constructor (private readonly onDataRow?: DataRowSink, private readonly onProblem?: ProblemSink) {}

  private columns: ColumnMap | undefined
  /** Column positions read for every row, as plain numbers (keyed lookups by name cost more). */
  private at = NO_POSITIONS
  private readonly groups = new GroupBalances()
  /** Rows per `tipo`; boxed so that one lookup counts a row. */
  private readonly types = new Map<string, { rows: number }>()
  /** The last `tipo` cell and its counter: consecutive rows usually share the same string. */
  private lastTypeCell: Cell | undefined = NOT_A_CELL
  private lastTypeBox = { rows: 0 }
  private readonly samples: CellProblem[] = []
  private readonly problemCounts: Record<ProblemKind, number> = {
    INVALID_AMOUNT: 0, NEGATIVE_AMOUNT: 0, ROUNDED_AMOUNT: 0, INVALID_DATE: 0, INVALID_INTEGER: 0, MISSING_ID: 0, MISSING_ID_MOVIM_FINAN: 0,
    UNCOMPUTED_FORMULA: 0, TEXT_TOO_LONG: 0, TEXT_AT_CELL_LIMIT: 0
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
      this.at = positionsOf(this.columns)
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
    const at = this.at
    if (isBlank(cells, at.blankCheck)) return undefined
    const unknownAmount = this.checkStoredCells(rowNumber, cells)
    const debit = this.amount(rowNumber, 'debito', cells[at.debito])
    const credit = this.amount(rowNumber, 'credito', cells[at.credito])
    const groupCell = cells[at.group]
    let groupId: number | null = null
    if (isIntegerNumber(groupCell)) {
      groupId = groupCell
    } else {
      const group = readInteger(groupCell)
      if (group.kind === 'ok') groupId = group.value
      else if (group.kind === 'invalid') this.problem('INVALID_INTEGER', rowNumber, 'id_movim_finan', groupCell)
      else if (!(groupCell instanceof UncomputedFormula)) this.problem('MISSING_ID_MOVIM_FINAN', rowNumber, 'id_movim_finan', null)
    }
    const rowId = this.rowId(rowNumber, cells[at.id])
    this.integer(rowNumber, 'id_conta', cells[at.account])
    this.integer(rowNumber, 'id_planejamento', cells[at.plan])
    const dateCell = cells[at.date]
    const date = readDate(dateCell)
    if (date.kind === 'invalid') this.problem('INVALID_DATE', rowNumber, 'data', dateCell)
    return {
      rowNumber,
      rowId,
      groupId,
      date: date.kind === 'ok' ? date.iso : null,
      debitCents: debit,
      creditCents: credit,
      unknownAmount
    }
  }

  /**
   * Cells whose value cannot be stored as read, in every column the ledger keeps:
   * formulas saved without their value, text filling a cell to its limit (cut by the
   * writer), and text past Excel's cell limit (a 1 MiB
   * shared string on every row would push a gigabyte per thousand rows into COPY).
   * Returns whether an amount of the row is unknown. Most rows hold neither, and a
   * typeof test per column is all they cost.
   */
  private checkStoredCells (rowNumber: number, cells: Cell[]): boolean {
    let unknownAmount = false
    const stored = this.at.stored
    for (let i = 0; i < stored.length; i++) {
      const cell = cells[stored[i]!]
      if (typeof cell === 'string') {
        if (cell.length >= EXCEL_MAX_CELL_CHARS) this.problem(cell.length > EXCEL_MAX_CELL_CHARS ? 'TEXT_TOO_LONG' : 'TEXT_AT_CELL_LIMIT', rowNumber, this.at.storedNames[i]!, cell)
      } else if (cell instanceof UncomputedFormula) {
        const column = this.at.storedNames[i]!
        this.problem('UNCOMPUTED_FORMULA', rowNumber, column, cell)
        if (column === 'debito' || column === 'credito') unknownAmount = true
      }
    }
    return unknownAmount
  }

  /**
   * The row's `id`, required: it is what tells a movement already imported from a new one, so
   * a row without it could be counted twice (docs/import.md, "A movement is imported once").
   */
  private rowId (rowNumber: number, cell: Cell | undefined): number | null {
    if (isIntegerNumber(cell)) return cell
    const id = readInteger(cell)
    if (id.kind === 'ok') return id.value
    if (id.kind === 'invalid') this.problem('INVALID_INTEGER', rowNumber, 'id', cell)
    else if (!(cell instanceof UncomputedFormula)) this.problem('MISSING_ID', rowNumber, 'id', null)
    return null
  }

  /** An optional integer column: only an unreadable value is a problem. */
  private integer (rowNumber: number, column: string, cell: Cell | undefined): void {
    if (!isIntegerNumber(cell) && readInteger(cell).kind === 'invalid') this.problem('INVALID_INTEGER', rowNumber, column, cell)
  }

  private count (row: LedgerRow, cells: Cell[]): void {
    this.totalRows++
    const debit = row.debitCents
    const credit = row.creditCents
    this.debitCents = addCents(this.debitCents, debit)
    this.creditCents = addCents(this.creditCents, credit)
    if (debit !== 0 && credit !== 0) this.bothSides++
    // A row whose amount is an uncomputed formula has a value nobody knows yet, not none.
    if (debit === 0 && credit === 0 && !row.unknownAmount) this.noValues++
    const date = row.date
    // Parsed dates are shared strings per day, so the same day compares by identity.
    if (date !== null && date !== this.minDate && date !== this.maxDate) {
      if (this.minDate === null || date < this.minDate) this.minDate = date
      if (this.maxDate === null || date > this.maxDate) this.maxDate = date
    }
    this.countType(cells[this.at.type])
    if (row.groupId !== null) this.groups.add(row.groupId, debit - credit)
  }

  private countType (cell: Cell | undefined): void {
    if (cell !== this.lastTypeCell || typeof cell === 'object') {
      const type = readText(cell) ?? ''
      let box = this.types.get(type)
      if (box === undefined) {
        box = { rows: 0 }
        this.types.set(type, box)
      }
      this.lastTypeCell = cell
      this.lastTypeBox = box
    }
    this.lastTypeBox.rows++
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
    if (this.samples.length < MAX_PROBLEM_SAMPLES || this.onProblem !== undefined) {
      const problem = { kind, rowNumber, column, value: displayCell(cell) }
      if (this.samples.length < MAX_PROBLEM_SAMPLES) this.samples.push(problem)
      this.onProblem?.(problem)
    }
  }

  /** Ids of the unbalanced groups, in order of first appearance. */
  unbalancedGroupIds (): number[] {
    return this.groups.unbalancedIds()
  }

  /** Whether the group's debits and credits differ (false for a group never seen). */
  isUnbalanced (id: number): boolean {
    return this.groups.balanceOf(id) !== 0
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
      types: Object.fromEntries([...this.types].map(([type, box]) => [type, box.rows])),
      rowsWithBothDebitCredit: this.bothSides,
      rowsWithoutValues: this.noValues,
      unbalancedGroups: this.groups.unbalancedCount(),
      problemCounts: { ...this.problemCounts },
      problemSamples: [...this.samples]
    }
  }
}

/** The common case, checked without building a parse result: a whole number cell. */
function isIntegerNumber (cell: Cell | undefined): cell is number {
  return typeof cell === 'number' && Number.isSafeInteger(cell)
}

/** Positions of the columns the analyzer reads on every row. */
interface Positions {
  id: number
  group: number
  date: number
  account: number
  plan: number
  type: number
  debito: number
  credito: number
  /** The required cells of which at least one must be filled for a row to count. */
  blankCheck: number[]
  /** Every column stored by an import (the required ones and `historico`), and their names. */
  stored: number[]
  storedNames: string[]
}

const NO_POSITIONS: Positions = { id: -1, group: -1, date: -1, account: -1, plan: -1, type: -1, debito: -1, credito: -1, blankCheck: [], stored: [], storedNames: [] }
/** Matches no cell, so the first row always looks its type up. */
const NOT_A_CELL = Symbol('no cell yet') as unknown as Cell

function positionsOf (c: ColumnMap): Positions {
  return {
    id: c.id,
    group: c.id_movim_finan,
    date: c.data,
    account: c.id_conta,
    plan: c.id_planejamento,
    type: c.tipo,
    debito: c.debito,
    credito: c.credito,
    blankCheck: [c.id, c.id_movim_finan, c.data, c.credito, c.debito, c.id_conta, c.tipo],
    stored: [...REQUIRED_COLUMNS.map((name) => c[name]), ...(c.historico === undefined ? [] : [c.historico])],
    storedNames: [...REQUIRED_COLUMNS, ...(c.historico === undefined ? [] : ['historico'])]
  }
}

function isBlank (cells: Cell[], positions: number[]): boolean {
  for (let i = 0; i < positions.length; i++) {
    const cell = cells[positions[i]!]
    if (cell !== null && cell !== undefined && !(typeof cell === 'string' && cell.trim() === '')) return false
  }
  return true
}
