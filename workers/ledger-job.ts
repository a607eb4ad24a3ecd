/**
 * What an analysis request asks of a worker thread, shared by the pool task (XLSX,
 * in the pool's thread) and the one-shot XLS isolate.
 */
import { analyzeLedger, diagnoseLedger } from '../core/ledger/index.js'
import type { LedgerAnalysis, LedgerDiagnosis, SheetSource } from '../core/ledger/index.js'
import type { ArrivalReader } from '../core/files/arrival.js'
import { readXlsFirstSheet, readXlsxAsItArrives, readXlsxFirstSheet } from '../core/xlsx/index.js'
import type { ReadOptions, RowVisitor, SpreadsheetFormat } from '../core/xlsx/index.js'

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

/**
 * `onProgress` is for in-process callers (the CLI); it cannot cross a thread.
 * With `arrival`, the file is still being written: the first read of the sheet goes
 * along with the upload (core/xlsx/read-arriving.ts) and throws EarlyReadUnavailable
 * when it cannot be sure of its answer; a second read (diagnose) finds the file whole.
 */
export async function runLedgerJob (input: LedgerJobInput, format: SpreadsheetFormat, onProgress?: (done: number, total: number) => void, arrival?: ArrivalReader): Promise<LedgerJobOutput> {
  const readOptions: ReadOptions = onProgress === undefined
    ? { maxInflatedBytes: input.maxInflatedBytes }
    : { maxInflatedBytes: input.maxInflatedBytes, onProgress }
  const read = format === 'xlsx' ? readXlsxFirstSheet : readXlsFirstSheet
  let reads = 0
  const source: SheetSource = (onRow: RowVisitor) => {
    reads++
    return arrival !== undefined && reads === 1
      ? readXlsxAsItArrives(input.path, onRow, { ...readOptions, arrival })
      : read(input.path, onRow, readOptions)
  }
  const options = { batchSize: input.batchSize }
  return input.operation === 'analyze'
    ? { operation: 'analyze', analysis: await analyzeLedger(source, options) }
    : { operation: 'diagnose', diagnosis: await diagnoseLedger(source, options) }
}
