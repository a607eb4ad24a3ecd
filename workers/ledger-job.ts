/**
 * What an analysis request asks of a worker thread, shared by the pool task (XLSX and
 * CSV, in the pool's thread) and the one-shot XLS isolate.
 */
import { REQUIRED_COLUMNS, analyzeLedger, analyzeLedgerWithIds, diagnoseLedger } from '../core/ledger/index.js'
import type { LedgerAnalysis, LedgerDiagnosis } from '../core/ledger/index.js'
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
}

export type LedgerJobOutput =
  | { operation: 'analyze', analysis: LedgerAnalysis, ids?: Float64Array }
  | { operation: 'diagnose', diagnosis: LedgerDiagnosis }

/** `onProgress` is for in-process callers (the CLI); it cannot cross a thread. */
export async function runLedgerJob (input: LedgerJobInput, format: SpreadsheetFormat, onProgress?: (done: number, total: number) => void): Promise<LedgerJobOutput> {
  const read = sheetReader(format)
  // The ledger's columns choose a CSV's separator (other formats ignore them).
  const readOptions = onProgress === undefined
    ? { maxInflatedBytes: input.maxInflatedBytes, headerColumns: REQUIRED_COLUMNS }
    : { maxInflatedBytes: input.maxInflatedBytes, headerColumns: REQUIRED_COLUMNS, onProgress }
  const source = (onRow: RowVisitor) => read(input.path, onRow, readOptions)
  const options = { batchSize: input.batchSize }
  if (input.operation === 'diagnose') return { operation: 'diagnose', diagnosis: await diagnoseLedger(source, options) }
  if (input.withIds === true) return { operation: 'analyze', ...await analyzeLedgerWithIds(source, options) }
  return { operation: 'analyze', analysis: await analyzeLedger(source, options) }
}
