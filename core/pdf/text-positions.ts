/**
 * Where the text of a PDF's pages is, read with pdf.js (pdfjs-dist, its legacy build,
 * which runs on Node 20): each text run with its box in default user space, the space
 * of /MediaBox, /Rect and the page's content. For the stamp's placement now and the
 * document-extraction plugins later.
 *
 * pdf.js runs in the calling thread: its worker code is loaded as a module and handed to
 * it (`globalThis.pdfjsWorker`), so it starts no Worker and fetches nothing over the
 * network; eval and font faces are off, cMaps and standard-font metrics are read from
 * the package's own folders. It is imported on first use (about 150 ms, once a thread).
 *
 * Bounds. pdf.js yields between its 20 ms time slots only through promise callbacks, so a
 * timer cannot interrupt it; the budget is checked each time it hands over a batch of text
 * runs and after each page, and going over it cancels the page (pdf.js stops at its next
 * slot) and leaves that page unread (the total budget stops the rest): callers treat an
 * unread page as unknown. That cannot stop pdf.js inside one huge content stream (it walked
 * 200 MB of operators inflated from 400 KB for 20 s), so callers pass in `pages` only the
 * pages that content-size.ts found small enough.
 */
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import type * as PdfJsModule from 'pdfjs-dist/legacy/build/pdf.mjs'
import type { Box } from './page-box.js'

export interface TextRun {
  text: string
  /** Axis-aligned box of the run in default user space (rotated text gets its bounding box). */
  box: Box
}

export interface TextPositionsOptions {
  /** 1-based page numbers to read, in that order; default every page. */
  pages?: number[] | undefined
  /** Longest one page may take, ms. */
  pageBudgetMs?: number | undefined
  /** Longest the whole reading may take (opening included), ms; pages after it are left unread. */
  totalBudgetMs?: number | undefined
  /** Most text runs kept for one page; a page with more is left unread. */
  maxRunsPerPage?: number | undefined
}

export interface TextPositions {
  /** Index = page number - 1; undefined where the page was not read (failure, budget, not asked). */
  pages: Array<TextRun[] | undefined>
  /** Why some pages are undefined, when they are: the first problem met. */
  problem?: 'open-failed' | 'page-failed' | 'budget' | 'too-many-runs' | undefined
}

interface PdfJsItem { str?: string, transform?: number[], width?: number, height?: number, fontName?: string }
interface PdfJsStyle { ascent?: number, descent?: number, vertical?: boolean }
type PdfJs = typeof PdfJsModule

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
 * Reads the text runs of `bytes`' pages. Never throws for the file's sake: a file pdf.js
 * cannot open gives every page undefined.
 */
export async function readTextPositions (bytes: Uint8Array, options: TextPositionsOptions = {}): Promise<TextPositions> {
  const started = performance.now()
  const totalBudget = options.totalBudgetMs ?? 10_000
  const pageBudget = options.pageBudgetMs ?? 1_000
  const maxRuns = options.maxRunsPerPage ?? 50_000
  const out: TextPositions = { pages: [] }
  const pdfjs = await loadPdfJs()
  const task = pdfjs.getDocument({
    // A copy: pdf.js takes over (detaches) the buffer it is given, and the signer still needs the bytes.
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
    standardFontDataUrl: packageFolder('standard_fonts')
  })
  let doc: Awaited<typeof task.promise> | undefined
  try {
    try {
      doc = await task.promise
    } catch {
      out.problem = 'open-failed'
      return out
    }
    out.pages = new Array<TextRun[] | undefined>(doc.numPages).fill(undefined)
    const wanted = options.pages ?? Array.from({ length: doc.numPages }, (_, i) => i + 1)
    for (const n of wanted) {
      if (n < 1 || n > doc.numPages) continue
      if (performance.now() - started > totalBudget) {
        out.problem ??= 'budget'
        break
      }
      const deadline = Math.min(performance.now() + pageBudget, started + totalBudget)
      let runs: TextRun[] | 'budget' | 'too-many-runs'
      try {
        const page = await doc.getPage(n)
        runs = await readPage(page, deadline, maxRuns)
        page.cleanup()
      } catch {
        out.problem ??= 'page-failed'
        continue
      }
      if (typeof runs === 'string') {
        out.problem ??= runs
        // One page over its budget says little about the next; the total budget still stops the loop.
        continue
      }
      out.pages[n - 1] = runs
    }
    return out
  } finally {
    await (doc === undefined ? task.destroy() : doc.destroy()).catch(() => undefined)
  }
}

type PdfJsPage = Awaited<ReturnType<Awaited<ReturnType<PdfJs['getDocument']>['promise']>['getPage']>>

async function readPage (page: PdfJsPage, deadline: number, maxRuns: number): Promise<TextRun[] | 'budget' | 'too-many-runs'> {
  const reader = page.streamTextContent({ includeMarkedContent: false, disableNormalization: true }).getReader()
  const runs: TextRun[] = []
  const styles: Record<string, PdfJsStyle> = {}
  for (;;) {
    const { value, done } = await reader.read() as { value?: { items?: PdfJsItem[], styles?: Record<string, PdfJsStyle> }, done: boolean }
    if (done) return runs
    Object.assign(styles, value?.styles)
    for (const item of value?.items ?? []) {
      const text = item.str ?? ''
      if (text.trim() === '') continue
      const box = runBox(item, item.fontName === undefined ? undefined : styles[item.fontName])
      if (box !== undefined) runs.push({ text, box })
    }
    const over = runs.length > maxRuns ? 'too-many-runs' : performance.now() > deadline ? 'budget' : undefined
    if (over !== undefined) {
      await reader.cancel(over).catch(() => undefined)
      return over
    }
  }
}
