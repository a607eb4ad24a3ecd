/**
 * What an analysis request asks of a worker thread, shared by the pool task (XLSX and
 * CSV, in the pool's thread) and the one-shot XLS isolate.
 */
import { REQUIRED_COLUMNS, analyzeLedger, analyzeLedgerWithIds, diagnoseLedger } from '../core/ledger/index.js'
import type { CellProblem, LedgerAnalysis, LedgerDiagnosis, ProblemSink } from '../core/ledger/index.js'
import { sheetReader } from '../core/xlsx/index.js'
import type { RowVisitor, SpreadsheetFormat } from '../core/xlsx/index.js'

export interface LedgerJobInput {
  /** Temporary file holding the upload; the caller owns and removes it. */
  path: string
  operation: 'analyze' | 'diagnose'
  batchSize: number
  maxInflatedBytes: number
  /** Analyze only: also return every row's id, to check them against a company's imports. */
  withIds?: boolean
  /** The sheet to read (name or 1-based position); default the first visible one. */
  sheet?: string | number | undefined
  /** Analyze only: also return every problem cell (an XLS, at most 65,536 rows, read in an isolate for `razao analyze --problems`). */
  withProblems?: boolean
}

export type LedgerJobOutput =
  | { operation: 'analyze', analysis: LedgerAnalysis, ids?: Float64Array, problems?: CellProblem[] }
  | { operation: 'diagnose', diagnosis: LedgerDiagnosis }

/**
 * `onProgress` and `onProblem` are for in-process callers (the CLI); they cannot cross a
 * thread (`withProblems` brings the problems back instead).
 */
export async function runLedgerJob (input: LedgerJobInput, format: SpreadsheetFormat, onProgress?: (doneBytes: number, totalBytes: number, rows: number) => void, onProblem?: ProblemSink): Promise<LedgerJobOutput> {
  const read = sheetReader(format)
  // The ledger's columns choose a CSV's separator (other formats ignore them).
  const readOptions = { maxInflatedBytes: input.maxInflatedBytes, sheet: input.sheet, headerColumns: REQUIRED_COLUMNS }
  let rows = 0
  // Rows are counted for a progress display only (the CLI's); the pool task reads without it.
  const source = onProgress === undefined
    ? (onRow: RowVisitor) => read(input.path, onRow, readOptions)
    : (onRow: RowVisitor) => read(input.path, (row, cells) => { rows++; return onRow(row, cells) }, { ...readOptions, onProgress: (done, total) => { onProgress(done, total, rows) } })
  const options = { batchSize: input.batchSize }
  if (input.operation === 'diagnose') return { operation: 'diagnose', diagnosis: await diagnoseLedger(source, options) }
  if (input.withIds === true) return { operation: 'analyze', ...await analyzeLedgerWithIds(source, options) }
  if (input.withProblems === true || onProblem !== undefined) {
    const problems: CellProblem[] = []
    const analysis = await analyzeLedger(source, { ...options, onProblem: onProblem ?? ((p) => { problems.push(p) }) })
    return onProblem === undefined ? { operation: 'analyze', analysis, problems } : { operation: 'analyze', analysis }
  }
  return { operation: 'analyze', analysis: await analyzeLedger(source, options) }
}
