/**
 * One stored PDF through the pool's `extract-document` task, as the routes and
 * `razao extract` run it: the task gets the cooperative limits, and a hard limit a
 * little later stops its thread when a page never yields (the pool ends the thread).
 *
 * Both limits count work, not waiting: a document first waits for a turn of the pool
 * (at most one document per thread is handed to it, so a document handed over starts at
 * once), and its clocks start when it has one. The wait itself has its own bound,
 * `queueTimeoutMs`, past which the answer is SERVICE_BUSY (503): a full service, not a
 * damaged file.
 */
import { EngineError } from '../../core/errors.js'
import type { ExtractionResult, PdfTextLimits } from '../../core/extraction/index.js'
import { runTask } from '../../workers/pool.js'
import type { WorkerPool } from '../../workers/pool.js'
import type { ExtractDocumentInput, ExtractDocumentOutput } from '../../workers/extract-document.js'
import type { ExtractWarmInput, ExtractWarmOutput } from '../../workers/extract-warm.js'
import { Gate } from '../gate.js'
import type { ExtractConfig } from './config.js'

/** Margin of the hard limit over the cooperative deadline, ms (covers a thread's start). */
const HARD_LIMIT_MARGIN_MS = 5_000

/** Turns of each pool: as many as it has threads. */
const turnsOf = new WeakMap<WorkerPool, Gate>()

function turns (pool: WorkerPool): Gate {
  let gate = turnsOf.get(pool)
  if (gate === undefined) {
    gate = new Gate(pool.options.maxThreads)
    turnsOf.set(pool, gate)
  }
  return gate
}

/** What a document's wait for a turn looks like now (for the service's diagnostics and tests). */
export function poolTurns (pool: WorkerPool): { running: number, waiting: number } {
  const { holders, waiting } = turns(pool).state
  return { running: holders, waiting }
}

/** The settings one document's extraction needs (the OCR ones default to on, at OCR_DPI). */
export type ExtractRunConfig = Pick<ExtractConfig, 'maxPages' | 'documentTimeoutMs' | 'queueTimeoutMs'> & Partial<Pick<ExtractConfig, 'ocr' | 'ocrDpi'>>

/** What the pool task reads a document within; OCR on at the default resolution unless the configuration says otherwise. */
function limitsOf (config: ExtractRunConfig): PdfTextLimits {
  const ocr = config.ocr === false ? false : config.ocrDpi === undefined ? {} : { dpi: config.ocrDpi }
  return { maxPages: config.maxPages, deadlineMs: config.documentTimeoutMs, maxRunsPerPage: 50_000, ocr }
}

/**
 * The engine's result for the file at `path`; throws EngineError (PDF_*, SERVICE_BUSY when
 * no thread was free within `queueTimeoutMs`, ABORTED when `cancel` fired, INTERNAL when
 * the thread failed).
 */
export async function extractStoredFile (pool: WorkerPool, path: string, config: ExtractRunConfig, cancel?: AbortSignal): Promise<ExtractionResult> {
  const input: ExtractDocumentInput = { path, limits: limitsOf(config) }
  const gate = turns(pool)
  const waited = AbortSignal.timeout(config.queueTimeoutMs)
  try {
    await gate.enter(cancel === undefined ? waited : AbortSignal.any([cancel, waited]))
  } catch {
    if (cancel?.aborted === true) throw new EngineError('ABORTED', 'The request was cancelled.')
    throw new EngineError('SERVICE_BUSY', `Every worker thread stayed busy for ${config.queueTimeoutMs} ms (EXTRACT_QUEUE_TIMEOUT_MS); the document was not read. Try again in a moment.`)
  }
  // From here the document has a thread: the hard limit counts its work only.
  const hardLimit = AbortSignal.timeout(config.documentTimeoutMs + HARD_LIMIT_MARGIN_MS)
  const signal = cancel === undefined ? hardLimit : AbortSignal.any([cancel, hardLimit])
  try {
    return await runTask<ExtractDocumentInput, ExtractDocumentOutput>(pool, 'extract-document', input, signal)
  } catch (err) {
    if (hardLimit.aborted && cancel?.aborted !== true) throw new EngineError('PDF_TIMEOUT', `Reading the PDF took longer than ${config.documentTimeoutMs} ms and was stopped; the file may be damaged or crafted.`)
    throw err
  } finally {
    gate.leave()
  }
}

/** What EXTRACT_WARM's start-up did. */
export interface PoolWarmUp {
  /** One entry per thread warmed. */
  threads: ExtractWarmOutput[]
  /** Wall time until the last thread was warm, ms. */
  ms: number
}

/**
 * Warms every thread of `pool` (EXTRACT_WARM; workers/extract-warm.ts): one warm-up per
 * thread, all at once, so that each lands on a thread of its own (`threadCount`: fewer,
 * for a thread that replaced one). Each takes a turn as a
 * document does: a request arriving meanwhile waits for a free thread (within
 * queueTimeoutMs, as any request) rather than starting its clock behind a warm-up.
 */
export async function warmPool (pool: WorkerPool, config: ExtractRunConfig, threadCount = pool.options.maxThreads): Promise<PoolWarmUp> {
  const started = performance.now()
  const gate = turns(pool)
  const input: ExtractWarmInput = { limits: limitsOf(config) }
  const threads = await Promise.all(Array.from({ length: threadCount }, async () => {
    await gate.enter()
    try {
      return await runTask<ExtractWarmInput, ExtractWarmOutput>(pool, 'extract-warm', input)
    } finally {
      gate.leave()
    }
  }))
  return { threads, ms: performance.now() - started }
}
