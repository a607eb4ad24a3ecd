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
 *
 * Two lanes. A scan holds its thread for seconds (OCR) where a text-layer document takes
 * tens of milliseconds, and which a document is shows only once its text layer is read.
 * So every document first takes a turn to read its text layer, with OCR deferred (the
 * scan's images are measured then, and an image bomb is refused there); a scan then waits
 * for one of `ocrThreads` OCR places (one fewer than the threads by default) before its
 * second turn, where it is read whole. The threads an OCR place cannot take serve the text
 * lane, and in the turns' queue a text-layer read goes before a scan's second turn: two
 * scans no longer keep a text-layer document waiting for their deadline.
 */
import { EngineError } from '../../core/errors.js'
import { threadCpuMs } from '../../core/extraction/work-clock.js'
import type { ExtractionResult, PdfTextLimits } from '../../core/extraction/index.js'
import { runTask } from '../../workers/pool.js'
import type { WorkerPool } from '../../workers/pool.js'
import type { ExtractDocumentInput, ExtractDocumentReply } from '../../workers/extract-document.js'
import type { ExtractWarmInput, ExtractWarmOutput } from '../../workers/extract-warm.js'
import { Gate } from '../gate.js'
import type { ExtractConfig } from './config.js'

/** Margin of the hard limit over the cooperative deadline, ms (covers a thread's start). */
const HARD_LIMIT_MARGIN_MS = 5_000

/** How often the hard limit reads the thread's processor time, ms. */
const WATCH_EVERY_MS = 250

/** The wall-time ceiling of one turn when EXTRACT_DOCUMENT_WALL_TIMEOUT_MS is 0: this many document deadlines. */
const WALL_DEADLINES = 3

/** The wall-time ceiling of one turn, ms: the setting, or WALL_DEADLINES document deadlines when it is 0. */
export function wallLimitMs (config: Pick<ExtractConfig, 'documentTimeoutMs'> & Partial<Pick<ExtractConfig, 'documentWallTimeoutMs'>>): number {
  const set = config.documentWallTimeoutMs ?? 0
  return set === 0 ? WALL_DEADLINES * config.documentTimeoutMs : set
}

/** Why a turn was stopped from this thread. */
type Stopped = 'work' | 'wall'

/**
 * The hard limit of one turn, from this thread: the task writes its thread's system id
 * and processor time at its start into `shared` (workers/extract-document.ts), and this
 * reads the thread's processor time (core/extraction/work-clock.ts) every WATCH_EVERY_MS.
 * Past the deadline and the margin of processor time, the turn is stopped as a document
 * that costs too much (a page pdf.js never yields from); past the wall ceiling with its
 * processor time within the deadline, as a machine too busy to read it. Where the system
 * gives no per-thread processor time, the deadline and the margin count wall time, as before.
 */
function watchTurn (config: ExtractRunConfig, shared: SharedArrayBuffer): { signal: AbortSignal, stopped: () => Stopped | undefined, end: () => void, workMs: () => number | undefined } {
  const controller = new AbortController()
  const ids = new Int32Array(shared, 0, 1)
  const starts = new Float64Array(shared, 8, 1)
  const started = performance.now()
  const wallLimit = wallLimitMs(config)
  let why: Stopped | undefined
  let lastWork: number | undefined
  const workMs = (): number | undefined => {
    // The thread's id is stored last (atomically): once it is there, so is its start.
    const tid = Atomics.load(ids, 0)
    if (tid === 0) return undefined
    const now = threadCpuMs(tid)
    return now === undefined ? undefined : now - starts[0]!
  }
  const timer = setInterval(() => {
    const wall = performance.now() - started
    const work = workMs()
    // Kept: once the thread is stopped, its processor time can no longer be read.
    if (work !== undefined) lastWork = work
    const overWork = work === undefined ? wall > config.documentTimeoutMs + HARD_LIMIT_MARGIN_MS : work > config.documentTimeoutMs + HARD_LIMIT_MARGIN_MS
    if (overWork) why = 'work'
    else if (wall > wallLimit) why = 'wall'
    if (why !== undefined) {
      clearInterval(timer)
      controller.abort()
    }
  }, WATCH_EVERY_MS)
  return { signal: controller.signal, stopped: () => why, end: () => clearInterval(timer), workMs: () => lastWork }
}

/** A pool's turns (as many as it has threads) and its OCR places. */
interface Lanes { turns: Gate, ocr: Gate }

const lanesOf = new WeakMap<WorkerPool, Lanes>()

/** OCR places for a pool of `threads`: `ocrThreads` when set (at most the threads), else one fewer than the threads, at least one. */
export function ocrPlaces (threads: number, ocrThreads = 0): number {
  return ocrThreads > 0 ? Math.min(ocrThreads, threads) : Math.max(1, threads - 1)
}

/** The pool's lanes, made on first use (with the OCR places of the first caller's configuration). */
function lanes (pool: WorkerPool, config?: Pick<ExtractRunConfig, 'ocrThreads'>): Lanes {
  let found = lanesOf.get(pool)
  if (found === undefined) {
    const threads = pool.options.maxThreads
    found = { turns: new Gate(threads), ocr: new Gate(ocrPlaces(threads, config?.ocrThreads)) }
    lanesOf.set(pool, found)
  }
  return found
}

/** What a document's wait for a turn looks like now, and the OCR lane's (for the service's diagnostics and tests). */
export function poolTurns (pool: WorkerPool): { running: number, waiting: number, ocr: { running: number, waiting: number } } {
  const { turns, ocr } = lanes(pool)
  return { running: turns.state.holders, waiting: turns.state.waiting, ocr: { running: ocr.state.holders, waiting: ocr.state.waiting } }
}

/** The settings one document's extraction needs (the OCR ones default to on, at OCR_DPI, with the default bounds and lanes). */
export type ExtractRunConfig = Pick<ExtractConfig, 'maxPages' | 'documentTimeoutMs' | 'queueTimeoutMs'> & Partial<Pick<ExtractConfig, 'documentWallTimeoutMs' | 'ocr' | 'ocrDpi' | 'ocrThreads' | 'maxImagePixels' | 'maxPageImagePixels' | 'maxDocumentImagePixels'>>

/** What the pool task reads a document within; OCR on at the default resolution unless the configuration says otherwise. */
function limitsOf (config: ExtractRunConfig): PdfTextLimits {
  const ocr = config.ocr === false
    ? false as const
    : {
        ...(config.ocrDpi === undefined ? {} : { dpi: config.ocrDpi }),
        ...(config.maxImagePixels === undefined ? {} : { maxImagePixels: config.maxImagePixels }),
        ...(config.maxPageImagePixels === undefined ? {} : { maxPageImagePixels: config.maxPageImagePixels }),
        ...(config.maxDocumentImagePixels === undefined ? {} : { maxDocumentImagePixels: config.maxDocumentImagePixels })
      }
  return { maxPages: config.maxPages, deadlineMs: config.documentTimeoutMs, maxRunsPerPage: 50_000, ocr }
}

/** Waits for a place of `gate` within `waited`; throws ABORTED or SERVICE_BUSY. */
async function enter (gate: Gate, waited: AbortSignal, config: ExtractRunConfig, cancel: AbortSignal | undefined, ahead: boolean): Promise<void> {
  try {
    await gate.enter(cancel === undefined ? waited : AbortSignal.any([cancel, waited]), ahead)
  } catch {
    if (cancel?.aborted === true) throw new EngineError('ABORTED', 'The request was cancelled.')
    throw new EngineError('SERVICE_BUSY', `Every worker thread stayed busy for ${config.queueTimeoutMs} ms (EXTRACT_QUEUE_TIMEOUT_MS); the document was not read. Try again in a moment.`)
  }
}

/** One run of the task on a turn of the pool: `ahead` for a text-layer read (see the header). */
async function runOnTurn (pool: WorkerPool, input: ExtractDocumentInput, config: ExtractRunConfig, cancel: AbortSignal | undefined, ahead: boolean, waited = AbortSignal.timeout(config.queueTimeoutMs)): Promise<ExtractDocumentReply> {
  const { turns } = lanes(pool, config)
  await enter(turns, waited, config, cancel, ahead)
  // From here the document has a thread: the hard limit counts its work only.
  const shared = new SharedArrayBuffer(16)
  const watch = watchTurn(config, shared)
  const signal = cancel === undefined ? watch.signal : AbortSignal.any([cancel, watch.signal])
  try {
    return await runTask<ExtractDocumentInput, ExtractDocumentReply>(pool, 'extract-document', { ...input, thread: shared }, signal)
  } catch (err) {
    const why = watch.stopped()
    if (why === undefined || cancel?.aborted === true) throw err
    if (why === 'work') throw new EngineError('PDF_TIMEOUT', `Reading the PDF took more than ${config.documentTimeoutMs} ms of processor time and was stopped; the file may be damaged or crafted.`)
    const work = watch.workMs()
    const used = work === undefined ? 'its thread had not begun reading it' : `it had used ${Math.round(work)} ms of its ${config.documentTimeoutMs} ms of processor time`
    throw new EngineError('SERVICE_BUSY', `This machine is too busy to read the document in time: after ${wallLimitMs(config) / 1000} s (EXTRACT_DOCUMENT_WALL_TIMEOUT_MS) ${used}, and it was stopped. The file is not at fault; try again when the machine is less loaded.`)
  } finally {
    watch.end()
    turns.leave()
  }
}

/**
 * The engine's result for the file at `path`; throws EngineError (PDF_*, SERVICE_BUSY when
 * no thread, or for a scan no OCR place, was free within `queueTimeoutMs`, ABORTED when
 * `cancel` fired, INTERNAL when the thread failed).
 */
export async function extractStoredFile (pool: WorkerPool, path: string, config: ExtractRunConfig, cancel?: AbortSignal): Promise<ExtractionResult> {
  const limits = limitsOf(config)
  const first = await runOnTurn(pool, { path, limits: limits.ocr === false ? limits : { ...limits, deferOcr: true } }, config, cancel, true)
  if (!('ocrWanted' in first)) return first
  // A scan: an OCR place, then a turn, within one wait's bound.
  const { ocr } = lanes(pool, config)
  const waited = AbortSignal.timeout(config.queueTimeoutMs)
  await enter(ocr, waited, config, cancel, false)
  try {
    const read = await runOnTurn(pool, { path, limits }, config, cancel, false, waited)
    if ('ocrWanted' in read) throw new EngineError('INTERNAL', 'the extraction task deferred OCR it was not asked to defer')
    return read
  } finally {
    ocr.leave()
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
  const { turns } = lanes(pool, config)
  const input: ExtractWarmInput = { limits: limitsOf(config) }
  const threads = await Promise.all(Array.from({ length: threadCount }, async () => {
    await turns.enter()
    try {
      return await runTask<ExtractWarmInput, ExtractWarmOutput>(pool, 'extract-warm', input)
    } finally {
      turns.leave()
    }
  }))
  return { threads, ms: performance.now() - started }
}
