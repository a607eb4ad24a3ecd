/**
 * Stamps every page of a document: lays each stamp out for its page, picks its corner
 * and reports the pages that could not carry one, as warnings the response shows.
 *
 * Corner rule: bottom right, bottom left, top right, top left (as the reader sees the
 * page after /Rotate), the first that covers nothing of what is already on the page
 * (text, and the rectangles of visible annotations and form fields); when every corner
 * covers something, the one covering the least area, and the page is reported. Pages
 * whose text cannot be read (too much content, out of time) count annotations only, so
 * bottom right is the usual answer, and are reported too.
 *
 * The text is found in two steps. First the content-stream scan (content-scan.ts), which
 * settles most pages at a fraction of pdf.js's cost, and whose answer is reused for pages
 * that share their content, resources and stamp rectangles. A page covered in every corner
 * is scanned a second time to measure the text in each (ranking, when every run near a
 * corner has an exact extent). Then pdf.js, for the pages the scan left open: a corner it
 * could not tell, a ranking it could not make, or content it does not read.
 *
 * The stamps' appearance is drawn once per group of pages of the same stamp size, as a
 * form XObject every page's appearance draws; a page's own appearance adds only its page
 * number.
 */
import { PDFArray, PDFName, PDFRef } from 'pdf-lib'
import type { PDFDocument, PDFFont, PDFPage } from 'pdf-lib'
import { ContentScanner } from './content-scan.js'
import type { RectScan } from './content-scan.js'
import { pagesWithinContentLimit } from './content-size.js'
import type { Tracked } from './incremental.js'
import { CORNERS, annotationBoxes, intersect, pageGeometry } from './page-box.js'
import type { Box, Corner, PageGeometry } from './page-box.js'
import { addSharedStamp, addStamp, layoutStamp, sharedPrefixes, stampRect, stampTexts } from './stamp.js'
import type { SharedStamp, StampLayout } from './stamp.js'
import { readTextPositions } from './text-positions.js'

export interface StampRequest {
  font: PDFFont
  /** The stamp's lines for page `index` (0-based). */
  linesFor: (index: number) => string[]
  /** A suffix that makes the annotation's /NM unique in the document. */
  nameFor: (index: number) => string
  /** Bounds on reading the pages' content; defaults below. */
  budget?: Partial<TextReadingBudget> | undefined
}

export interface StampOutcome {
  /** 1-based page numbers stamped without knowing their text (it could not be read in time or at all). */
  unread: number[]
  /** 1-based page numbers that got no stamp, with their visible size in printed points. */
  tooSmall: Array<{ page: number, width: number, height: number }>
  /** 1-based page numbers whose stamp covers something because no corner was free. */
  covering: number[]
  /** Where each stamped page's stamp went (1-based page number to corner). */
  corners: Map<number, Corner>
  /** 1-based page numbers whose corner pdf.js was asked about (the scan could not settle it). */
  readByPdfJs: number[]
}

/** Bounds on reading the pages' content for the stamp's placement (defaults in parentheses). */
export interface TextReadingBudget {
  /** Longest pdf.js may take on one page (500 ms). */
  pageMs: number
  /** Longest pdf.js may take on all the pages left to it, its start included (5,000 ms). */
  totalMs: number
  /** Decoded content one page may have and still be read, by the scan or by pdf.js (4 MB). */
  maxPageContentBytes: number
  /** Decoded content of all pages read, by each (32 MB). */
  maxTotalContentBytes: number
}

const DEFAULT_BUDGET: TextReadingBudget = { pageMs: 500, totalMs: 5000, maxPageContentBytes: 4 << 20, maxTotalContentBytes: 32 << 20 }

/** One page to stamp, once its layout is known. */
interface Planned {
  index: number
  page: PDFPage
  g: PageGeometry
  texts: string[]
  layout: StampLayout
  /** The four corners' rectangles, in CORNERS order. */
  rects: Box[]
  annotations: Box[]
  corner?: Corner | undefined
}

function coveredArea (rect: Box, obstacles: Box[]): number {
  let area = 0
  for (const o of obstacles) {
    const overlap = intersect(rect, o)
    if (overlap !== undefined) area += overlap.width * overlap.height
  }
  return area
}

/** Issue 13's rule on known obstacles (and, from the scan, text areas already summed): the first free corner, else the least covered. */
function leastCovered (p: Planned, obstacles: Box[], known: (corner: number) => number = () => 0): { corner: Corner, area: number } {
  let best = { corner: CORNERS[0]!, area: Infinity }
  for (const [i, corner] of CORNERS.entries()) {
    const area = known(i) + (obstacles.length === 0 ? 0 : coveredArea(p.rects[i]!, obstacles))
    if (area < best.area) best = { corner, area }
    if (area === 0) break
  }
  return best
}

/** The scan's answer for a page: the first free corner, or undefined when pdf.js must decide. */
function scannedCorner (p: Planned, scan: RectScan): Corner | undefined {
  for (const [i, corner] of CORNERS.entries()) {
    const state = p.annotations.some((a) => intersect(a, p.rects[i]!) !== undefined) ? 'covered' : scan.states[i]
    if (state === 'free') return corner
    if (state === 'unknown') return undefined
  }
  return undefined
}

/**
 * Scans every planned page's content for its corners, pages with the same content,
 * resources and corner rectangles once. Returns the pages left for pdf.js.
 */
function scanCorners (doc: PDFDocument, planned: Planned[], budget: TextReadingBudget, covering: number[]): Array<{ p: Planned, scan?: RectScan | undefined }> {
  const scanner = new ContentScanner(doc.context)
  const answers = new Map<string, RectScan>()
  const ranks = new Map<string, RectScan>()
  const ids = new Map<object, number>()
  const id = (o: object | undefined): number => {
    if (o === undefined) return 0
    let n = ids.get(o)
    if (n === undefined) { n = ids.size + 1; ids.set(o, n) }
    return n
  }
  let total = 0
  const left: Array<{ p: Planned, scan?: RectScan | undefined }> = []
  for (const p of planned) {
    let scan: RectScan | undefined
    let contents: ReturnType<PDFPage['node']['get']>
    let resources: ReturnType<PDFPage['node']['Resources']>
    let key = ''
    try {
      contents = p.page.node.get(PDFName.of('Contents'))
      resources = p.page.node.Resources()
      const contentKey = contents instanceof PDFArray ? contents.asArray().map((c) => c instanceof PDFRef ? c.tag : `#${id(c)}`).join(',') : contents instanceof PDFRef ? contents.tag : `#${id(contents)}`
      key = `${contentKey}|${id(resources)}|${p.rects.map((r) => `${r.x},${r.y},${r.width},${r.height}`).join(';')}`
      scan = answers.get(key)
      if (scan === undefined && total < budget.maxTotalContentBytes) {
        scan = scanner.scanPage(contents, resources, p.rects, { maxBytes: Math.min(budget.maxPageContentBytes, budget.maxTotalContentBytes - total) })
        total += scan.bytes
        answers.set(key, scan)
      }
    } catch {
      // A page tree pdf-lib cannot walk: pdf.js, or the default corner.
    }
    const corner = scan === undefined ? undefined : scannedCorner(p, scan)
    if (corner !== undefined) {
      p.corner = corner
      continue
    }
    // Every corner covered: the least covered, from the scan's exact extents when it has them for every run near a corner.
    if (scan !== undefined && allCovered(p, scan) && total < budget.maxTotalContentBytes) {
      const ranked = ranks.get(key) ?? scanner.scanPage(contents, resources, p.rects, { maxBytes: Math.min(budget.maxPageContentBytes, budget.maxTotalContentBytes - total), rank: true })
      if (!ranks.has(key)) {
        total += ranked.bytes
        ranks.set(key, ranked)
      }
      if (ranked.areas !== undefined) {
        const areas = ranked.areas
        p.corner = leastCovered(p, p.annotations, (i) => areas[i]!).corner
        covering.push(p.index + 1)
        continue
      }
    }
    left.push({ p, scan })
  }
  return left
}

/** Whether the scan (and the page's annotations) found every corner covered, none unknown. */
function allCovered (p: Planned, scan: RectScan): boolean {
  return CORNERS.every((_, i) => scan.states[i] === 'covered' || p.annotations.some((a) => intersect(a, p.rects[i]!) !== undefined))
}

/**
 * Places the pages the scan left open with pdf.js's text boxes. Never throws: a page pdf.js
 * does not read (too much content, out of time, a file it cannot open) takes the first corner
 * the scan did not find covered, else the rule on annotations alone, and is reported unread.
 */
async function readCorners (bytes: Uint8Array, doc: PDFDocument, left: Array<{ p: Planned, scan?: RectScan | undefined }>, budget: TextReadingBudget, outcome: StampOutcome): Promise<void> {
  let text: Array<Box[] | undefined> = []
  try {
    const wanted = new Set(left.map(({ p }) => p.index + 1))
    // pdf.js is handed only pages whose content is small enough (content-size.ts says why).
    const pages = pagesWithinContentLimit(doc, budget.maxPageContentBytes, budget.maxTotalContentBytes).filter((s) => wanted.has(s.page))
    const empty = new Set(pages.filter((s) => s.bytes === 0).map((s) => s.page))
    const toRead = pages.filter((s) => s.bytes > 0).map((s) => s.page)
    const read = toRead.length === 0 ? { pages: [] } : await readTextPositions(bytes, { pages: toRead, pageBudgetMs: budget.pageMs, totalBudgetMs: budget.totalMs })
    text = left.map(({ p }) => empty.has(p.index + 1) ? [] : read.pages[p.index]?.map((run) => run.box))
  } catch {
    // Reading never fails a signature.
  }
  left.forEach(({ p, scan }, k) => {
    outcome.readByPdfJs.push(p.index + 1)
    const boxes = text[k]
    if (boxes === undefined) {
      outcome.unread.push(p.index + 1)
      const open = CORNERS.findIndex((_, i) => scan?.states[i] !== 'covered' && !p.annotations.some((a) => intersect(a, p.rects[i]!) !== undefined))
      p.corner = open >= 0 ? CORNERS[open] : leastCovered(p, p.annotations).corner
      return
    }
    const best = leastCovered(p, [...boxes, ...p.annotations])
    if (best.area > 0) outcome.covering.push(p.index + 1)
    p.corner = best.corner
  })
}

export async function stampPages (tracked: Tracked, pages: PDFPage[], request: StampRequest): Promise<StampOutcome> {
  const outcome: StampOutcome = { unread: [], tooSmall: [], covering: [], corners: new Map(), readByPdfJs: [] }
  const budget = { ...DEFAULT_BUDGET, ...request.budget }
  const planned: Planned[] = []
  pages.forEach((page, index) => {
    const g = pageGeometry(page)
    const texts = stampTexts(request.font, request.linesFor(index))
    const layout = layoutStamp(request.font, texts, g)
    if (layout === undefined) {
      outcome.tooSmall.push({ page: index + 1, width: g.box.width * g.userUnit, height: g.box.height * g.userUnit })
      return
    }
    planned.push({ index, page, g, texts, layout, rects: CORNERS.map((c) => stampRect(g, layout, c)), annotations: annotationBoxes(page) })
  })
  const { doc } = tracked.opened
  const left = scanCorners(doc, planned, budget, outcome.covering)
  if (left.length > 0) await readCorners(tracked.opened.bytes, doc, left, budget, outcome)
  outcome.unread.sort((a, b) => a - b)
  outcome.covering.sort((a, b) => a - b)
  outcome.readByPdfJs.sort((a, b) => a - b)

  // One shared appearance per stamp size: pages differ only in their page numbers.
  const groups = new Map<string, Planned[]>()
  for (const p of planned) {
    const key = `${p.layout.size}|${p.layout.length}|${p.layout.height}|${p.layout.lines.length}`
    const group = groups.get(key)
    if (group === undefined) groups.set(key, [p])
    else group.push(p)
  }
  const shared = new Map<Planned, SharedStamp>()
  for (const group of groups.values()) {
    const stamp = addSharedStamp(tracked, request.font, group[0]!.layout, sharedPrefixes(group.map((p) => p.layout.lines)))
    for (const p of group) shared.set(p, stamp)
  }
  for (const p of planned) {
    const corner = p.corner ?? CORNERS[0]!
    addStamp(tracked, p.page, p.g, request.font, p.layout, corner, p.texts.join(' - '), shared.get(p)!, request.nameFor(p.index))
    outcome.corners.set(p.index + 1, corner)
  }
  return outcome
}

/** `1-3, 5, 9-12`, with at most `maxRuns` runs and a count of the rest. */
export function pageList (pages: number[], maxRuns = 8): string {
  const runs: Array<[number, number]> = []
  for (const p of pages) {
    const last = runs[runs.length - 1]
    if (last !== undefined && last[1] + 1 === p) last[1] = p
    else runs.push([p, p])
  }
  const shown = runs.slice(0, maxRuns).map(([a, b]) => a === b ? String(a) : b === a + 1 ? `${a}, ${b}` : `${a}-${b}`)
  const rest = runs.slice(maxRuns).reduce((n, [a, b]) => n + b - a + 1, 0)
  return rest === 0 ? shown.join(', ') : `${shown.join(', ')} and ${rest} more`
}

function pagesPhrase (pages: number[]): string {
  return pages.length === 1 ? `Page ${pages[0]}` : `Pages ${pageList(pages)} (${pages.length} pages)`
}

/** The response warnings for an outcome: one sentence per kind of problem, pages collapsed. */
export function stampWarnings (outcome: Pick<StampOutcome, 'tooSmall' | 'covering' | 'unread'>): string[] {
  const out: string[] = []
  const { tooSmall, covering, unread } = outcome
  if (tooSmall.length > 0) {
    const smallest = tooSmall.reduce((a, b) => a.width * a.height <= b.width * b.height ? a : b)
    const one = tooSmall.length === 1
    out.push(`${pagesPhrase(tooSmall.map((p) => p.page))} ${one ? 'is' : 'are'} too small for a legible signature stamp ` +
      `(${one ? '' : 'smallest '}${num1(smallest.width)} x ${num1(smallest.height)} pt) and ${one ? 'was' : 'were'} left without one; the signature covers ${one ? 'it' : 'them'} all the same.`)
  }
  if (covering.length > 0) {
    const one = covering.length === 1
    out.push(`${pagesPhrase(covering)} ${one ? 'has' : 'have'} content in all four corners; the stamp was put where it covers the least.`)
  }
  if (unread.length > 0) {
    const one = unread.length === 1
    out.push(`The text of ${pagesPhrase(unread).replace(/^P/, 'p')} could not be read in time or at all, so ${one ? 'its stamp was' : 'their stamps were'} placed without checking what ${one ? 'it covers' : 'they cover'}.`)
  }
  return out
}

function num1 (n: number): string {
  return String(Math.round(n * 100) / 100)
}
