/**
 * Pool task: analyze or diagnose an uploaded ledger. XLSX and CSV are read right here by
 * our streaming readers; XLS is handed to a one-shot isolate thread.
 */
import { detectFormat } from '../core/xlsx/index.js'
import { runLedgerJob } from './ledger-job.js'
import type { LedgerJobInput, LedgerJobOutput } from './ledger-job.js'
import { defineTask } from './task.js'
import { runXlsInIsolate } from './xls-isolate.js'

export type AnalyzeSpreadsheetInput = LedgerJobInput
export type AnalyzeSpreadsheetOutput = LedgerJobOutput

export default defineTask(async (input: AnalyzeSpreadsheetInput): Promise<AnalyzeSpreadsheetOutput> => {
  const format = await detectFormat(input.path)
  return format === 'xls' ? await runXlsInIsolate({ job: 'ledger', input }) : await runLedgerJob(input, format)
})
