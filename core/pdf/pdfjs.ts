/**
 * pdf.js (pdfjs-dist's legacy build, which runs on Node 20) as both of its users here load
 * it: the stamp's text positions (text-positions.ts) and the extraction service's text
 * layer (core/extraction/pdf-text.ts).
 *
 * It runs in the calling thread (a pool thread in the services): its worker module is
 * loaded and handed to it (`globalThis.pdfjsWorker`), so it starts no Worker and fetches
 * nothing; eval, font faces, WASM and worker fetches are off; cMaps (and, when asked, the
 * standard fonts' outlines) come from the package's own folders. The import costs about
 * 150 ms, once a thread.
 *
 * Leaving a page early: never `cancel()` its text stream. With the worker side in the same
 * thread, pdf.js goes on posting to the cancelled stream, and each post is an unhandled
 * rejection ("Controller is already closed"), which ends a worker thread under Node's
 * default rejection mode. `pageRunBatches` releases the stream's lock instead, and the
 * caller's `destroy()` of the document stops the page's work.
 */
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import type * as PdfJsModule from 'pdfjs-dist/legacy/build/pdf.mjs'
import type { Box } from './page-box.js'

export type PdfJs = typeof PdfJsModule
export type PdfJsLoadingTask = ReturnType<PdfJs['getDocument']>
export type PdfJsDocument = Awaited<PdfJsLoadingTask['promise']>
export type PdfJsPage = Awaited<ReturnType<PdfJsDocument['getPage']>>

/** One text run with its box in default user space (the space of /MediaBox and /Rect). */
export interface TextRun {
  text: string
  /** Axis-aligned box of the run (rotated text gets its bounding box). */
  box: Box
}

interface PdfJsItem { str?: string, transform?: number[], width?: number, height?: number, fontName?: string }
interface PdfJsStyle { ascent?: number, descent?: number, vertical?: boolean }

let loading: Promise<PdfJs> | undefined

async function loadPdfJs (): Promise<PdfJs> {
  loading ??= (async () => {
    // Handing pdf.js its worker module makes it run the worker's side in this thread.
    const worker: unknown = await import('pdfjs-dist/legacy/build/pdf.worker.mjs')
    ;(globalThis as { pdfjsWorker?: unknown }).pdfjsWorker = worker
    return await import('pdfjs-dist/legacy/build/pdf.mjs')
  })()
  return await loading
}

function packageFolder (name: string): string {
  const root = dirname(createRequire(import.meta.url).resolve('pdfjs-dist/package.json'))
  return join(root, name) + '/'
}

export interface OpenWithPdfJsOptions {
  /**
   * Load the outlines of the standard 14 fonts (pdfjs-dist's standard_fonts) for a PDF that
   * uses them without embedding them. Off by default: the text layer does not need them
   * (a run's text and advance width come from the encoding and pdf.js's built-in metrics,
   * identical either way), and pdf.js reads and converts them again for every document,
   * about a quarter of the time of a small document that uses Helvetica. What changes is
   * a run's ascent: the built-in metrics give Helvetica's own (0.718), the outline file
   * (FoxitSans) 0.905. The signature stamp keeps them on, so that its obstacle boxes stay
   * as they were measured.
   */
  standardFontData?: boolean
  /**
   * pdf.js's own bound on an image (`maxImageSize`): one whose dictionary, as pdf.js reads
   * it, declares more pixels is left out of the page, never decoded. OCR measures the
   * images it draws before this (core/extraction/ocr/image-bounds.ts) and refuses the file;
   * this is the bound for whatever that measure could miss. Default: none.
   */
  maxImagePixels?: number
}

/**
 * Starts opening `bytes` with pdf.js (given a copy: pdf.js detaches the buffer it gets).
 * The caller awaits `.promise` and, whatever happens, destroys the task or the document.
 */
export async function openWithPdfJs (bytes: Uint8Array, options: OpenWithPdfJsOptions = {}): Promise<PdfJsLoadingTask> {
  const pdfjs = await loadPdfJs()
  return pdfjs.getDocument({
    data: new Uint8Array(bytes),
    isEvalSupported: false,
    disableFontFace: true,
    useSystemFonts: false,
    useWorkerFetch: false,
    useWasm: false,
    enableXfa: false,
    isOffscreenCanvasSupported: false,
    isImageDecoderSupported: false,
    stopAtErrors: false,
    verbosity: 0,
    cMapUrl: packageFolder('cmaps'),
    cMapPacked: true,
    ...(options.maxImagePixels === undefined ? {} : { maxImageSize: options.maxImagePixels }),
    ...(options.standardFontData === true ? { standardFontDataUrl: packageFolder('standard_fonts') } : {})
  })
}

/**
 * The box of one text run. pdf.js gives the run's transform (text matrix times CTM, so in
 * user space), its advance `width` along the baseline and its font size `height`; the
 * font's ascent and descent (from its style) give the extent across the baseline.
 */
export function runBox (item: PdfJsItem, style: PdfJsStyle | undefined): Box | undefined {
  const t = item.transform
  if (t === undefined || t.length < 6 || !t.every(Number.isFinite)) return undefined
  const [a, b, c, d, e, f] = t as [number, number, number, number, number, number]
  const width = item.width ?? 0
  const size = item.height ?? 0
  const along = Math.hypot(a, b)
  const across = Math.hypot(c, d)
  if (along === 0 || across === 0) return undefined
  let xs: number[]
  let ys: number[]
  if (style?.vertical === true) {
    // Vertical writing: runs go down from the origin, a font size wide, centred on it.
    xs = [e - size / 2, e + size / 2]
    ys = [f - width - size, f]
  } else {
    const ascent = Math.min(1.5, Math.max(0.5, style?.ascent ?? 0.9))
    const descent = Math.max(-0.6, Math.min(0, style?.descent ?? -0.25))
    const [ux, uy] = [a / along, b / along]
    const [vx, vy] = [c / across, d / across]
    xs = []
    ys = []
    for (const s of [0, width]) {
      for (const k of [descent * size, ascent * size]) {
        xs.push(e + ux * s + vx * k)
        ys.push(f + uy * s + vy * k)
      }
    }
  }
  const x = Math.min(...xs)
  const y = Math.min(...ys)
  return { x, y, width: Math.max(...xs) - x, height: Math.max(...ys) - y }
}

/**
 * A page's text runs, batch by batch as pdf.js hands them over (it yields between its
 * time slots only through these batches, so this is where callers check their budgets).
 * Blank runs and runs without a usable transform are dropped. `normalize` applies pdf.js's
 * Unicode normalization (ligatures and compatibility forms), which matching text wants.
 * Leaving the loop early releases the stream without cancelling it (see the header).
 */
export async function * pageRunBatches (page: PdfJsPage, normalize: boolean): AsyncGenerator<TextRun[]> {
  const reader = page.streamTextContent({ includeMarkedContent: false, disableNormalization: !normalize }).getReader()
  const styles: Record<string, PdfJsStyle> = {}
  try {
    for (;;) {
      const { value, done } = await reader.read() as { value?: { items?: PdfJsItem[], styles?: Record<string, PdfJsStyle> }, done: boolean }
      if (done) return
      Object.assign(styles, value?.styles)
      const runs: TextRun[] = []
      for (const item of value?.items ?? []) {
        const text = item.str ?? ''
        if (text.trim() === '') continue
        const box = runBox(item, item.fontName === undefined ? undefined : styles[item.fontName])
        if (box !== undefined) runs.push({ text, box })
      }
      yield runs
    }
  } finally {
    reader.releaseLock()
  }
}
