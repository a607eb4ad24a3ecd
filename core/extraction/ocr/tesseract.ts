/**
 * Tesseract (tesseract.js 7, its WebAssembly build) with the Portuguese LSTM model of
 * `@tesseract.js-data/por`, both from node_modules: nothing is fetched, nothing is written.
 *
 * How tesseract.js finds its parts in Node, and why nothing leaves the machine:
 * - the worker script is ours, tesseract-worker.mjs (`workerPath`): tesseract.js's own
 *   script with the WebAssembly core pinned (below);
 * - the WebAssembly core is the file `corePath` names, in the `tesseract.js-core` package;
 * - the language data is read from `langPath` when that is a local folder (a URL, or no
 *   `langPath` at all, would make it download from a CDN), as `por.traineddata.gz`
 *   (`gzip`); `cacheMethod: 'none'` keeps it from looking for, or writing, a copy in the
 *   current folder;
 * - images are handed over as bytes (a string would be read as a path or fetched as a URL).
 * `ocr.test.ts` pins these options.
 *
 * The same scan must read the same on every machine. tesseract.js's own Node script picks
 * its core at run time by what V8 supports: the relaxed-SIMD build where V8 has relaxed
 * SIMD (Node 22 and later), whose instructions the WebAssembly spec lets give different
 * results on different CPUs, and V8 does lower them by CPU (its 8-bit dot product is
 * AVX-VNNI's vpdpbusd on a CPU that has it, as an Intel Xeon of this generation, the
 * saturating pmaddubsw on one that has not, as an AMD EPYC Zen 4). The scans tried read
 * the same on every build; nothing but the kernels' operands keeps it so. So the core is
 * pinned to the plain SIMD build (CORE_FILE): instructions whose results the spec fixes,
 * the same on every CPU and Node line, and as fast (docs/extraction.md).
 *
 * One Tesseract worker per calling thread (a pool thread), created on the first scanned
 * page and kept: creating one costs about a second (the model is 1.4 MB gzipped, 3 MB
 * once loaded). tesseract.js runs it in a worker thread of its own, a child of the pool
 * thread, so this thread stays free to keep the deadline: past it the worker is
 * terminated (the recognition cannot be interrupted otherwise) and the next page gets a
 * new one. A pool thread that ends takes its child with it.
 */
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Worker as TesseractWorker } from 'tesseract.js'
import type { WorkBudget } from '../work-clock.js'

/** A word as Tesseract read it, in image pixels (origin top-left), with its line's band. */
export interface OcrWord {
  text: string
  /** 0 to 1. */
  confidence: number
  x0: number
  x1: number
  /** Top and bottom of the word's line (the same for all words of a line: a baseline band, as a PDF run's font box). */
  top: number
  bottom: number
  /** Index of the word's line on the page: words of one line share it. */
  line: number
}

const require = createRequire(import.meta.url)

/** The integer-quantised "best" LSTM model: about as accurate as the float one and faster. */
const MODEL_FOLDER = '4.0.0_best_int'

/**
 * The WebAssembly core every worker runs: the plain SIMD build with the LSTM engine only
 * (the legacy engine is not used). Not the relaxed-SIMD build (results by CPU), nor the
 * build without SIMD (the same results, slower).
 */
export const CORE_FILE = 'tesseract-core-simd-lstm.js'

/** The worker script (tesseract-worker.mjs) beside this module, in the sources as in dist/. */
const WORKER_SCRIPT = fileURLToPath(new URL('./tesseract-worker.mjs', import.meta.url))

/** The core file the worker of this thread loaded (reported by tesseract-worker.mjs), once it has. */
let loadedCore: string | undefined
/** The system thread id the last worker started reported (tesseract-worker.mjs): its CPU time counts for the page it reads. */
let reportedThread: number | undefined
/** The system thread id of this thread's current worker, once started (undefined where the system gives none). */
let currentThread: number | undefined

/** The path of the WebAssembly core this thread's worker runs, once started (ocr.test.ts). */
export function tesseractCore (): string | undefined {
  return loadedCore
}

/** What createWorker gets: every path local, the core pinned, no cache (see the header). */
export function tesseractOptions (): { langPath: string, corePath: string, workerPath: string, gzip: true, cacheMethod: 'none', logger: (m: object) => void, errorHandler: (err: unknown) => void } {
  const tesseractRequire = createRequire(require.resolve('tesseract.js/package.json'))
  return {
    langPath: join(dirname(require.resolve('@tesseract.js-data/por/package.json')), MODEL_FOLDER),
    corePath: join(dirname(tesseractRequire.resolve('tesseract.js-core/package.json')), CORE_FILE),
    workerPath: WORKER_SCRIPT,
    gzip: true,
    cacheMethod: 'none',
    logger: (m) => {
      if ('corePath' in m && typeof m.corePath === 'string') loadedCore = m.corePath
      if ('threadId' in m && typeof m.threadId === 'number') reportedThread = m.threadId
    },
    // Errors arrive as rejected jobs; the default handler would also print them.
    errorHandler: () => undefined
  }
}

export const TESSERACT_VERSION: string = (require('tesseract.js/package.json') as { version: string }).version

let current: Promise<TesseractWorker> | undefined

/**
 * The worker holds 150-200 MB (its WebAssembly memory, which grows to the largest page
 * read and never shrinks, and the model). A thread that has not read a scan for this
 * long lets it go; the next scan pays the start again (about a second, and about as much
 * again while V8 optimises the new worker's code), unless the thread keeps it warm
 * (keepTesseractWarm).
 */
export const TESSERACT_IDLE_MS = 30_000

/** Pages one worker reads before it is replaced, so that its memory starts afresh. */
export const TESSERACT_MAX_PAGES = 200

let idleTimer: NodeJS.Timeout | undefined
let pagesRead = 0
/** Recognitions under way: the idle timer never ends a worker that is reading. */
let reading = 0
/** Set when the page cap was reached while another reading was under way: the worker is replaced once none is. */
let replaceAfterReads = false
/** Ended under a reading: the reading is tried once more on the next worker. */
class WorkerEnded extends Error {}

/** Rejects when the worker of its time is let go; a new one is made for the next worker. */
function endSignal (): { ended: Promise<never>, fire: () => void } {
  let fire: () => void = () => undefined
  const ended = new Promise<never>((_resolve, reject) => { fire = () => reject(new WorkerEnded()) })
  ended.catch(() => undefined)
  return { ended, fire }
}

/**
 * Fired when the worker is let go. tesseract.js's terminate() leaves the jobs already sent to
 * the worker unsettled, and fails a job being sent on its null worker: a reading racing this
 * learns at once that its worker is gone, instead of waiting for its deadline.
 */
let workerEnd = endSignal()

/**
 * Set by keepTesseractWarm (EXTRACT_WARM): this thread's worker is never let go for being
 * idle, and one replaced (after TESSERACT_MAX_PAGES, or a deadline) is warmed again at once.
 */
let rewarm: (() => Promise<void>) | undefined

/**
 * Keeps this thread's worker for good, warm: `warm` reads a page on a new worker (see
 * warm.ts) and is run again whenever the worker is replaced. The price is the worker's
 * memory (150-200 MB) for as long as the thread lives. `undefined` lets it go idle again.
 */
export function keepTesseractWarm (warm: (() => Promise<void>) | undefined): void {
  rewarm = warm
  if (warm === undefined) endWhenIdle()
  else clearTimeout(idleTimer)
}

/** Whether this thread has a Tesseract worker (started or starting). */
export function tesseractStarted (): boolean {
  return current !== undefined
}

/** Ends the worker once it has been idle TESSERACT_IDLE_MS (never when kept warm). */
function endWhenIdle (): void {
  clearTimeout(idleTimer)
  if (rewarm !== undefined) return
  idleTimer = setTimeout(() => { if (reading === 0) void releaseTesseract() }, TESSERACT_IDLE_MS)
  // The timer alone keeps no thread alive.
  idleTimer.unref()
}

/** After a page: end the worker past TESSERACT_MAX_PAGES, else once it has been idle. */
function afterPage (): void {
  if (++pagesRead < TESSERACT_MAX_PAGES) endWhenIdle()
  // Another reading (a warm-up in the background) is on this worker: replace it after that one.
  else if (reading > 1) replaceAfterReads = true
  else void replaceTesseract()
}

/**
 * Ends the worker (past TESSERACT_MAX_PAGES, or a deadline); a thread kept warm starts and
 * warms the next one at once, in the background: no caller waits for the warm-up.
 */
async function replaceTesseract (): Promise<void> {
  await releaseTesseract()
  if (rewarm !== undefined) void rewarm().catch(() => undefined)
}

async function worker (): Promise<TesseractWorker> {
  current ??= (async () => {
    const { createWorker, OEM, PSM } = await import('tesseract.js')
    reportedThread = undefined
    const w = await createWorker('por', OEM.LSTM_ONLY, tesseractOptions())
    currentThread = reportedThread
    // Sparse text: tax documents are forms (boxes, labels and values scattered over the
    // page), which the automatic page layout splits into columns and misses words of;
    // lines are rebuilt from the words' positions anyway (core/extraction/text.ts).
    // The page image is rendered at a known resolution, so Tesseract need not guess it.
    // Inverted lines stay read (tessedit_do_invert's default): the Sicalc prints set their
    // header white on dark bars, and without it none of their key values came out.
    await w.setParameters({ tessedit_pageseg_mode: PSM.SPARSE_TEXT, preserve_interword_spaces: '0' })
    return w
  })()
  try {
    return await current
  } catch (err) {
    current = undefined
    throw err
  }
}

/**
 * Starts this thread's worker without waiting for it, so that creating it (about a
 * second: the WebAssembly core and the model) overlaps with drawing the first page.
 * A failure surfaces at the first recognize.
 */
export function warmTesseract (): void {
  worker().catch(() => undefined)
  // A document that fails before its first recognize does not leave the worker for good.
  endWhenIdle()
}

/** Ends this thread's worker (after a deadline, or when the thread is done with OCR). */
export async function releaseTesseract (): Promise<void> {
  const w = current
  current = undefined
  currentThread = undefined
  const end = workerEnd
  workerEnd = endSignal()
  end.fire()
  replaceAfterReads = false
  clearTimeout(idleTimer)
  pagesRead = 0
  if (w === undefined) return
  const ending = await w.catch(() => undefined)
  // A job handed to this worker just before (its image is loaded in a few microtasks, then
  // sent) is sent before the worker is ended: sent after, tesseract.js would fail it on its
  // null worker with an error no one can catch in time. Its reading has learnt from workerEnd
  // that the worker is gone and reads again on the next one.
  await new Promise((resolve) => setImmediate(resolve))
  await ending?.terminate().catch(() => undefined)
}

export class OcrTimeout extends Error {}

/**
 * Reads the words of one page image (PGM, PNG or JPEG bytes) at `dpi`, straightening a
 * page scanned a few degrees askew first (`rotateAuto`: the boxes are then those of the
 * straightened image). Throws OcrTimeout past `deadline`: a document's work budget (its
 * clock counts the worker thread's CPU time while it reads this page: work-clock.ts), or
 * a performance.now() instant.
 */
export async function recognizeWords (image: Uint8Array, dpi: number, deadline: number | WorkBudget): Promise<OcrWord[]> {
  reading++
  try {
    return await recognizeOnce(image, dpi, deadline, false)
  } finally {
    reading--
    if (reading === 0 && replaceAfterReads) void replaceTesseract()
  }
}

/** One recognize on this thread's worker (recognizeWords counts it as reading). */
/** Work left before `deadline`, ms (wall time for an instant). */
function leftMs (deadline: number | WorkBudget): number {
  return typeof deadline === 'number' ? deadline - performance.now() : deadline.limitMs - deadline.clock.elapsedMs()
}

/**
 * Rejects with OcrTimeout once `deadline` has passed. A work budget is read again when
 * half of what is left has passed in wall time: the document's two threads (this one,
 * drawing the next page, and the worker) cannot spend more than that meanwhile.
 */
function overdueAfter (deadline: number | WorkBudget): { overdue: Promise<never>, stop: () => void } {
  let timer: NodeJS.Timeout | undefined
  const overdue = new Promise<never>((_resolve, reject) => {
    const check = (): void => {
      const left = leftMs(deadline)
      if (left <= 0) reject(new OcrTimeout())
      else timer = setTimeout(check, typeof deadline === 'number' ? left : Math.max(20, left / 2))
    }
    check()
  })
  overdue.catch(() => undefined)
  return { overdue, stop: () => clearTimeout(timer) }
}

async function recognizeOnce (image: Uint8Array, dpi: number, deadline: number | WorkBudget, again: boolean): Promise<OcrWord[]> {
  const mine = workerEnd
  const w = await worker()
  // The worker's CPU time counts for this document while it reads this page.
  const counted = typeof deadline === 'number' ? () => undefined : deadline.clock.count(currentThread)
  // The resolution goes with this recognize job, not through setParameters: tesseract.js sets
  // a job's own parameters for that job alone and restores them after it, whereas a
  // setParameters of another reading on this worker (a warm-up in the background) could land
  // between this one's and its recognize, and the page would be read at the other's resolution.
  const options = { rotateAuto: true, user_defined_dpi: String(Math.round(dpi)) }
  const { overdue, stop } = overdueAfter(deadline)
  try {
    const job = w.recognize(Buffer.from(image.buffer, image.byteOffset, image.byteLength), options, { text: false, blocks: true })
    // Handled now whatever happens next: a job on a worker ended meanwhile fails after the race is over.
    job.catch(() => undefined)
    const result = await Promise.race([job, overdue, mine.ended])
    const words: OcrWord[] = []
    let index = 0
    for (const block of result.data.blocks ?? []) {
      for (const paragraph of block.paragraphs) {
        for (const line of paragraph.lines) {
          for (const word of line.words) {
            if (word.text.trim() === '') continue
            words.push({ text: word.text, confidence: word.confidence / 100, x0: word.bbox.x0, x1: word.bbox.x1, top: line.bbox.y0, bottom: line.bbox.y1, line: index })
          }
          index++
        }
      }
    }
    afterPage()
    return words
  } catch (err) {
    if (err instanceof OcrTimeout) {
      await replaceTesseract()
      throw err
    }
    // The worker was ended under this reading (another reading's deadline or page cap, or the
    // thread letting OCR go): read the page once more, on the next worker, within the same deadline.
    if (!again && (err instanceof WorkerEnded || mine !== workerEnd) && leftMs(deadline) > 0) {
      stop()
      counted()
      return await recognizeOnce(image, dpi, deadline, true)
    }
    throw err
  } finally {
    stop()
    counted()
  }
}
