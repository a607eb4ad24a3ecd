/**
 * Piscina pools for CPU-bound work. Tasks are chosen per run by file name (one task
 * module per file, default export), so any pool can run any task; `razao serve` gives
 * each service its own pool (server/serve.ts), so that one service's queue never holds
 * another's work.
 */
import { availableParallelism } from 'node:os'
import type { TransferListItem } from 'node:worker_threads'
import { Piscina } from 'piscina'
import { EngineError, fromWire } from '../core/errors.js'
import type { TaskResult } from './task.js'
import { workerExecArgv, workerFile } from './paths.js'

export interface PoolOptions {
  /** Worker threads; default: the core count. */
  maxThreads?: number | undefined
  /**
   * Start every thread at once and never end one for being idle (EXTRACT_WARM: a warmed
   * thread is worth keeping). Otherwise one thread stays and the others end after a
   * minute without work.
   */
  keepThreads?: boolean
}

export type WorkerPool = Piscina

export function createPool (options: PoolOptions = {}): WorkerPool {
  const maxThreads = options.maxThreads ?? defaultPoolSize()
  return new Piscina({
    // No task module is loaded when a thread starts: runTask names one for every run, and a
    // thread loads only the tasks it is given (a default here made every thread of the
    // extraction service load the spreadsheet reader, about 20 MB, for nothing).
    filename: null,
    minThreads: options.keepThreads === true ? maxThreads : Math.min(1, maxThreads),
    maxThreads,
    // Queued tasks wait, however many: each is an upload already on disk, and refusing
    // it would waste that. (piscina's 'auto' bound, threads², refused the 5th task
    // queued on 2 threads, which the services answered 500.)
    maxQueue: Number.POSITIVE_INFINITY,
    idleTimeout: 60_000,
    execArgv: workerExecArgv
  })
}

export function defaultPoolSize (): number {
  return Math.max(1, availableParallelism())
}

/**
 * Runs task `name` (a file in workers/) and unwraps its TaskResult, rethrowing errors by code.
 * `transferList`: what the input carries that moves to the thread (a MessagePort).
 */
export async function runTask<I, O> (pool: WorkerPool, name: string, input: I, signal?: AbortSignal, transferList?: TransferListItem[]): Promise<O> {
  let result: TaskResult<O>
  try {
    result = await pool.run(input, {
      filename: workerFile(name),
      ...(signal === undefined ? {} : { signal }),
      ...(transferList === undefined ? {} : { transferList: transferList as never })
    }) as TaskResult<O>
  } catch (err) {
    if (signal?.aborted === true) throw new EngineError('ABORTED', 'The request was cancelled.')
    throw new EngineError('INTERNAL', 'a worker thread failed', undefined, { cause: err })
  }
  if (result.ok) return result.value
  throw fromWire(result.error)
}
