/**
 * Tesseract (tesseract.js 7, its WebAssembly build) with the Portuguese LSTM model of
 * `@tesseract.js-data/por`, both from node_modules: nothing is fetched, nothing is written.
 *
 * How tesseract.js finds its parts in Node, and why nothing leaves the machine:
 * - the WebAssembly core is `require`d from the `tesseract.js-core` package (`corePath` is
 *   a browser option and is not read in Node);
 * - the worker script is the package's own file (`workerPath`'s Node default);
 * - the language data is read from `langPath` when that is a local folder (a URL, or no
 *   `langPath` at all, would make it download from a CDN), as `por.traineddata.gz`
 *   (`gzip`); `cacheMethod: 'none'` keeps it from looking for, or writing, a copy in the
 *   current folder;
 * - images are handed over as bytes (a string would be read as a path or fetched as a URL).
 * `ocr.test.ts` pins these options.
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
import type { Worker as TesseractWorker } from 'tesseract.js'

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

/** What createWorker gets: every path local, no cache (see the header). */
export function tesseractOptions (): { langPath: string, gzip: true, cacheMethod: 'none', logger: () => void, errorHandler: (err: unknown) => void } {
  return {
    langPath: join(dirname(require.resolve('@tesseract.js-data/por/package.json')), MODEL_FOLDER),
    gzip: true,
    cacheMethod: 'none',
    logger: () => undefined,
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
  if (++pagesRead >= TESSERACT_MAX_PAGES) void replaceTesseract()
  else endWhenIdle()
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
    const w = await createWorker('por', OEM.LSTM_ONLY, tesseractOptions())
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
  clearTimeout(idleTimer)
  pagesRead = 0
  if (w !== undefined) await (await w.catch(() => undefined))?.terminate().catch(() => undefined)
}

export class OcrTimeout extends Error {}

/**
 * Reads the words of one page image (PGM, PNG or JPEG bytes) at `dpi`, straightening a
 * page scanned a few degrees askew first (`rotateAuto`: the boxes are then those of the
 * straightened image). Throws OcrTimeout past `deadline` (a performance.now() instant).
 */
export async function recognizeWords (image: Uint8Array, dpi: number, deadline: number): Promise<OcrWord[]> {
  reading++
  try {
    return await recognizeOnce(image, dpi, deadline)
  } finally {
    reading--
  }
}

/** One recognize on this thread's worker (recognizeWords counts it as reading). */
async function recognizeOnce (image: Uint8Array, dpi: number, deadline: number): Promise<OcrWord[]> {
  const w = await worker()
  await w.setParameters({ user_defined_dpi: String(Math.round(dpi)) })
  let timer: NodeJS.Timeout | undefined
  const overdue = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new OcrTimeout()), Math.max(0, deadline - performance.now()))
  })
  try {
    const result = await Promise.race([w.recognize(Buffer.from(image.buffer, image.byteOffset, image.byteLength), { rotateAuto: true }, { text: false, blocks: true }), overdue])
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
    if (err instanceof OcrTimeout) await replaceTesseract()
    throw err
  } finally {
    clearTimeout(timer)
  }
}
