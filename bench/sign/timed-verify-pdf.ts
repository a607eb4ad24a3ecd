/**
 * Benchmark pool task: the service's verification task (workers/verify-pdf.ts, default
 * export) run unchanged, plus the time it took inside the worker.
 */
import verifyPdfTask from '../../workers/verify-pdf.js'
import type { VerifyPdfInput, VerifyPdfOutput } from '../../workers/verify-pdf.js'
import type { TaskResult } from '../../workers/task.js'

export interface TimedVerifyResult {
  result: TaskResult<VerifyPdfOutput>
  workerMs: number
}

export default async function timedVerifyPdf (input: VerifyPdfInput): Promise<TimedVerifyResult> {
  const started = performance.now()
  const result = await verifyPdfTask(input)
  return { result, workerMs: performance.now() - started }
}
