/**
 * Where the text of a PDF's pages is, read with pdf.js (pdfjs-dist, its legacy build,
 * which runs on Node 20): each text run with its box in default user space, the space
 * of /MediaBox, /Rect and the page's content. For the stamp's placement now and the
 * document-extraction plugins later.
 *
 * pdf.js is loaded and opened as pdfjs.ts says (in the calling thread, no Worker, no fetch).
 *
 * Bounds. pdf.js yields between its 20 ms time slots only through promise callbacks, so a
 * timer cannot interrupt it; the budget is checked each time it hands over a batch of text
 * runs and after each page, and going over it (or a page with too many runs) leaves that
 * page and the rest of the document unread, the document destroyed: callers treat an
 * unread page as unknown. That cannot stop pdf.js inside one huge content stream (it walked
 * 200 MB of operators inflated from 400 KB for 20 s), so callers pass in `pages` only the
 * pages that content-size.ts found small enough.
 */
import { openWithPdfJs, pageRunBatches } from './pdfjs.js'
import type { PdfJsDocument, PdfJsPage, TextRun } from './pdfjs.js'

export { runBox } from './pdfjs.js'
export type { TextRun } from './pdfjs.js'

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
  // pdf.js gets a copy of the bytes: the signer still needs them.
  const task = await openWithPdfJs(bytes, { standardFontData: true })
  let doc: PdfJsDocument | undefined
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
        // The rest of the document is left unread too: the page's text stream was left open
        // (pdfjs.ts: cancelling it makes pdf.js reject unhandled), and pdf.js's in-thread
        // worker serves the next page only after it, so reading on would wait for ever. The
        // document's destroy() below ends it.
        break
      }
      out.pages[n - 1] = runs
    }
    return out
  } finally {
    await (doc === undefined ? task.destroy() : doc.destroy()).catch(() => undefined)
  }
}

async function readPage (page: PdfJsPage, deadline: number, maxRuns: number): Promise<TextRun[] | 'budget' | 'too-many-runs'> {
  const runs: TextRun[] = []
  for await (const batch of pageRunBatches(page, false)) {
    runs.push(...batch)
    if (runs.length > maxRuns) return 'too-many-runs'
    if (performance.now() > deadline) return 'budget'
  }
  return runs
}
