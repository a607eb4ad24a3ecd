/**
 * A worker thread that reads one XLS file and is then thrown away. SheetJS's
 * published parser has advisories for crafted files (prototype pollution, ReDoS);
 * in a thread of its own, with a heap cap and a deadline, a hostile file can at
 * worst kill this thread, never poison a pool thread that serves later requests.
 */
import { isMainThread, parentPort, workerData } from 'node:worker_threads'
import { EngineError, fromWire, toWire } from '../core/errors.js'
import { runLedgerJob } from './ledger-job.js'
import type { LedgerJobInput, LedgerJobOutput } from './ledger-job.js'
import type { TaskResult } from './task.js'
import { startWorker } from './paths.js'

/** BIFF8 holds at most 65,536 rows; a well-formed file reads in seconds. */
const XLS_DEADLINE_MS = 120_000
const XLS_HEAP_MB = 1024
/** Tells this module, when it is a thread's entry, that it was started as the isolate (not merely imported). */
const ISOLATE_MARK = 'razaoXlsIsolate'

export function runXlsInIsolate (input: LedgerJobInput): Promise<LedgerJobOutput> {
  return new Promise((resolve, reject) => {
    const worker = startWorker('xls-isolate', {
      workerData: { [ISOLATE_MARK]: true, input },
      resourceLimits: { maxOldGenerationSizeMb: XLS_HEAP_MB }
    })
    let settled = false
    const settle = (fn: () => void): void => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      void worker.terminate()
      fn()
    }
    const timer = setTimeout(() => settle(() => reject(new EngineError('SHEET_CORRUPT', 'The XLS workbook took too long to read and was abandoned; it may be damaged or crafted.'))), XLS_DEADLINE_MS)
    worker.once('message', (result: TaskResult<LedgerJobOutput>) => {
      settle(() => result.ok ? resolve(result.value) : reject(fromWire(result.error)))
    })
    worker.once('error', (err) => settle(() => reject(new EngineError('SHEET_CORRUPT', 'The XLS workbook could not be read; it may be damaged or crafted.', undefined, { cause: err }))))
    worker.once('exit', (code) => settle(() => reject(new EngineError('SHEET_CORRUPT', `The XLS reader stopped unexpectedly (exit ${code}); the file may be damaged or crafted.`))))
  })
}

if (!isMainThread && parentPort !== null && isIsolateData(workerData)) {
  const port = parentPort
  runLedgerJob(workerData.input, 'xls').then(
    (value) => port.postMessage({ ok: true, value }),
    (err: unknown) => port.postMessage({ ok: false, error: toWire(err) })
  )
}

function isIsolateData (data: unknown): data is { input: LedgerJobInput } {
  return typeof data === 'object' && data !== null && (data as Record<string, unknown>)[ISOLATE_MARK] === true
}
