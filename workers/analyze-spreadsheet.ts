/**
 * Pool task: analyze or diagnose an uploaded ledger. XLSX is read right here by
 * our streaming reader; XLS is handed to a one-shot isolate thread.
 *
 * With `arrival`, the task was started as the upload began (server/import/app.ts)
 * and reads along with it. When that read cannot give a sure answer and the upload
 * is still going, the task answers `unavailable` at once rather than hold this
 * thread until the upload ends; the server then runs the task again on the whole
 * file. When the upload has already ended, the ordinary read runs right here.
 */
import { ArrivalReader } from '../core/files/arrival.js'
import { detectFormat, EarlyReadUnavailable } from '../core/xlsx/index.js'
import { runLedgerJob } from './ledger-job.js'
import type { LedgerJobInput, LedgerJobOutput } from './ledger-job.js'
import { defineTask } from './task.js'
import { runXlsInIsolate } from './xls-isolate.js'

export interface AnalyzeSpreadsheetInput extends LedgerJobInput {
  /** The upload's ArrivalWriter.shared, when the file is still being written. */
  arrival?: SharedArrayBuffer | undefined
}
export type AnalyzeSpreadsheetOutput = LedgerJobOutput | { operation: 'unavailable', reason: string }

/**
 * How long a reading-along task may wait for bytes beyond the time it works (see
 * ArrivalReaderOptions): an upload arriving at about the reader's pace keeps it, a
 * slow one frees the thread after about this long.
 */
const MAX_IDLE_MS = 250

export default defineTask(async (input: AnalyzeSpreadsheetInput): Promise<AnalyzeSpreadsheetOutput> => {
  const { arrival: shared, ...job } = input
  if (shared !== undefined) {
    const arrival = new ArrivalReader(shared, { maxIdleMs: MAX_IDLE_MS })
    const early = await readAlong(job, arrival)
    if (typeof early !== 'string') return early
    if (arrival.state() !== 'complete') return { operation: 'unavailable', reason: early }
  }
  const format = await detectFormat(job.path)
  return format === 'xlsx' ? await runLedgerJob(job, 'xlsx') : await runXlsInIsolate({ job: 'ledger', input: job })
})

/** The answer read along with the upload, or why the ordinary read must give it. */
async function readAlong (job: LedgerJobInput, arrival: ArrivalReader): Promise<LedgerJobOutput | string> {
  try {
    // Eight bytes tell XLSX from XLS (detect.ts); a shorter file is the ordinary read's to judge.
    await arrival.waitFor(8)
    if (await detectFormat(job.path) !== 'xlsx') return 'not an XLSX file'
  } catch {
    return 'the format is for the ordinary read to judge'
  }
  try {
    return await runLedgerJob(job, 'xlsx', undefined, arrival)
  } catch (err) {
    // Anything else was raised after the read along was confirmed: the file's own error.
    if (err instanceof EarlyReadUnavailable) return err.reason
    throw err
  }
}
