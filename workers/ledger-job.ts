/**
 * What an analysis request asks of a worker thread, shared by the pool task (XLSX,
 * in the pool's thread) and the one-shot XLS isolate.
 */
import { analyzeLedger, diagnoseLedger } from '../core/ledger/index.js'
import type { LedgerAnalysis, LedgerDiagnosis } from '../core/ledger/index.js'
import { readXlsFirstSheet, readXlsxFirstSheet } from '../core/xlsx/index.js'
import type { RowVisitor, SpreadsheetFormat } from '../core/xlsx/index.js'

export interface LedgerJobInput {
  /** Temporary file holding the upload; the caller owns and removes it. */
  path: string
  operation: 'analyze' | 'diagnose'
  batchSize: number
  maxInflatedBytes: number
}

export type LedgerJobOutput =
  | { operation: 'analyze', analysis: LedgerAnalysis }
  | { operation: 'diagnose', diagnosis: LedgerDiagnosis }

/** `onProgress` is for in-process callers (the CLI); it cannot cross a thread. */
export async function runLedgerJob (input: LedgerJobInput, format: SpreadsheetFormat, onProgress?: (done: number, total: number) => void): Promise<LedgerJobOutput> {
  const read = format === 'xlsx' ? readXlsxFirstSheet : readXlsFirstSheet
  const readOptions = onProgress === undefined
    ? { maxInflatedBytes: input.maxInflatedBytes }
    : { maxInflatedBytes: input.maxInflatedBytes, onProgress }
  const source = (onRow: RowVisitor) => read(input.path, onRow, readOptions)
  const options = { batchSize: input.batchSize }
  return input.operation === 'analyze'
    ? { operation: 'analyze', analysis: await analyzeLedger(source, options) }
    : { operation: 'diagnose', diagnosis: await diagnoseLedger(source, options) }
}
