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

export async function runLedgerJob (input: LedgerJobInput, format: SpreadsheetFormat): Promise<LedgerJobOutput> {
  const read = format === 'xlsx' ? readXlsxFirstSheet : readXlsFirstSheet
  const source = (onRow: RowVisitor) => read(input.path, onRow, { maxInflatedBytes: input.maxInflatedBytes })
  const options = { batchSize: input.batchSize }
  return input.operation === 'analyze'
    ? { operation: 'analyze', analysis: await analyzeLedger(source, options) }
    : { operation: 'diagnose', diagnosis: await diagnoseLedger(source, options) }
}
