/**
 * Pool task: /v1/process. XLSX and CSV are read and copied right here on this thread's
 * database connection; XLS goes to a one-shot isolate that opens its own.
 */
import { detectFormat } from '../core/xlsx/index.js'
import { threadConnection } from './db-connection.js'
import { runProcessJob } from './process-job.js'
import type { ProcessJobInput, ProcessJobOutput } from './process-job.js'
import { defineTask } from './task.js'
import { runXlsInIsolate } from './xls-isolate.js'

export type ProcessSpreadsheetInput = ProcessJobInput
export type ProcessSpreadsheetOutput = ProcessJobOutput

export default defineTask(async (input: ProcessSpreadsheetInput): Promise<ProcessSpreadsheetOutput> => {
  const format = await detectFormat(input.path)
  if (format === 'xls') return await runXlsInIsolate({ job: 'process', input })
  return await runProcessJob(input, format, await threadConnection(input.databaseUrl))
})
