/**
 * A worker thread that reads one XLS file and is then thrown away. SheetJS's
 * published parser has advisories for crafted files (prototype pollution, ReDoS);
 * in a thread of its own, with a heap cap and a deadline, a hostile file can at
 * worst kill this thread, never poison a pool thread that serves later requests.
 */
import { isMainThread, parentPort, workerData } from 'node:worker_threads'
import { EngineError, fromWire, toWire } from '../core/errors.js'
import { connect } from './db-connection.js'
import { runLedgerJob } from './ledger-job.js'
import type { LedgerJobInput, LedgerJobOutput } from './ledger-job.js'
import { runProcessJob } from './process-job.js'
import { readXlsFirstSheet } from '../core/xlsx/index.js'
import type { ProcessJobInput, ProcessJobOutput } from './process-job.js'
import type { TaskResult } from './task.js'
import { startWorker } from './paths.js'

/** BIFF8 holds at most 65,536 rows; a well-formed file reads in seconds. */
const XLS_DEADLINE_MS = 120_000
const XLS_HEAP_MB = 1024
/** Tells this module, when it is a thread's entry, that it was started as the isolate (not merely imported). */
const ISOLATE_MARK = 'razaoXlsIsolate'

/**
 * The jobs an isolate runs: analysis (read only), a process (read and COPY, on its own
 * connection), or the rows of the sheet as the CLI's `razao rows` prints them.
 */
export type IsolateJob =
  | { job: 'ledger', input: LedgerJobInput }
  | { job: 'process', input: ProcessJobInput }
  | { job: 'rows', input: RowsJobInput }
type IsolateOutput<J extends IsolateJob> = J extends { job: 'ledger' } ? LedgerJobOutput : J extends { job: 'rows' } ? RowsJobOutput : ProcessJobOutput

export interface RowsJobInput {
  path: string
  /** Most rows to return. */
  limit: number
  maxInflatedBytes: number
  sheet?: string | number | undefined
}

/** One JSON line per row, `{"row": N, "cells": [...]}`, dates and errors as their text. BIFF8 has at most 65,536 rows. */
export interface RowsJobOutput { lines: string[] }

/** The isolate's bounds; tests shrink them to see a thread that runs out of time or memory. */
export interface IsolateLimits {
  deadlineMs: number
  heapMb: number
}

/** `signal` ends the isolate (and with it a load's connection: the load rolls back). */
export function runXlsInIsolate<J extends IsolateJob> (job: J, limits: IsolateLimits = { deadlineMs: XLS_DEADLINE_MS, heapMb: XLS_HEAP_MB }, signal?: AbortSignal): Promise<IsolateOutput<J>> {
  return new Promise((resolve, reject) => {
    // A load's progress port moves on to the isolate, which runs the load.
    const port = job.job === 'process' ? job.input.progressPort : undefined
    const worker = startWorker('xls-isolate', {
      workerData: { [ISOLATE_MARK]: true, job },
      resourceLimits: { maxOldGenerationSizeMb: limits.heapMb },
      ...(port === undefined ? {} : { transferList: [port] })
    })
    let settled = false
    const settle = (fn: () => void): void => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      signal?.removeEventListener('abort', onAbort)
      void worker.terminate()
      fn()
    }
    const timer = setTimeout(() => settle(() => reject(new EngineError('SHEET_CORRUPT', 'The XLS workbook took too long to read and was abandoned; it may be damaged or crafted.'))), limits.deadlineMs)
    const onAbort = (): void => settle(() => reject(new EngineError('ABORTED', 'The XLS read was cancelled.')))
    if (signal?.aborted === true) onAbort()
    signal?.addEventListener('abort', onAbort, { once: true })
    worker.once('message', (result: TaskResult<IsolateOutput<J>>) => {
      settle(() => result.ok ? resolve(result.value) : reject(fromWire(result.error)))
    })
    worker.once('error', (err) => settle(() => reject(new EngineError('SHEET_CORRUPT', 'The XLS workbook could not be read; it may be damaged or crafted.', undefined, { cause: err }))))
    worker.once('exit', (code) => settle(() => reject(new EngineError('SHEET_CORRUPT', `The XLS reader stopped unexpectedly (exit ${code}); the file may be damaged or crafted.`))))
  })
}

async function runJob (job: IsolateJob): Promise<LedgerJobOutput | ProcessJobOutput | RowsJobOutput> {
  if (job.job === 'ledger') return await runLedgerJob(job.input, 'xls')
  if (job.job === 'rows') {
    const lines: string[] = []
    const { limit } = job.input
    await readXlsFirstSheet(job.input.path, (row, cells) => {
      lines.push(JSON.stringify({ row, cells }))
      return lines.length < limit
    }, { maxInflatedBytes: job.input.maxInflatedBytes, sheet: job.input.sheet })
    return { lines }
  }
  const client = await connect(job.input.databaseUrl)
  try {
    return await runProcessJob(job.input, 'xls', client)
  } finally {
    await client.end().catch(() => undefined)
  }
}

if (!isMainThread && parentPort !== null && isIsolateData(workerData)) {
  const port = parentPort
  runJob(workerData.job).then(
    (value) => port.postMessage({ ok: true, value }),
    (err: unknown) => port.postMessage({ ok: false, error: toWire(err) })
  )
}

function isIsolateData (data: unknown): data is { job: IsolateJob } {
  return typeof data === 'object' && data !== null && (data as Record<string, unknown>)[ISOLATE_MARK] === true
}
