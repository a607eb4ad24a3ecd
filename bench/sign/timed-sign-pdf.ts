/**
 * Benchmark pool task: the service's own task (workers/sign-pdf.ts, default export) run
 * unchanged, plus the time it took inside the worker. The result keeps the task's
 * transfer (the signed PDF's memory still moves to the calling thread rather than being
 * copied), so the thread hop costs what it costs the service.
 */
import { move, transferableSymbol, valueSymbol } from 'piscina'
import signPdfTask from '../../workers/sign-pdf.js'
import type { SignPdfInput, SignPdfOutput } from '../../workers/sign-pdf.js'
import type { TaskResult } from '../../workers/task.js'

/** What the calling thread receives: the task's own result and the time inside the worker. */
export interface TimedSignResult {
  result: TaskResult<SignPdfOutput>
  workerMs: number
}

export default async function timedSignPdf (input: SignPdfInput): Promise<TimedSignResult> {
  const started = performance.now()
  const result: unknown = await signPdfTask(input)
  const workerMs = performance.now() - started
  if (typeof result === 'object' && result !== null && transferableSymbol in result && valueSymbol in result) {
    const moved = result as { [transferableSymbol]: object, [valueSymbol]: TaskResult<SignPdfOutput> }
    const list = moved[transferableSymbol]
    const timed: TimedSignResult = { result: moved[valueSymbol], workerMs }
    return move({ get [transferableSymbol] () { return list }, get [valueSymbol] () { return timed } }) as unknown as TimedSignResult
  }
  return { result: result as TaskResult<SignPdfOutput>, workerMs }
}
