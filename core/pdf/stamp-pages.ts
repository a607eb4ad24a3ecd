/**
 * Stamps every page of a document: lays each stamp out for its page, picks its corner
 * and reports the pages that could not carry one, as warnings the response shows.
 *
 * Corner rule: bottom right, bottom left, top right, top left (as the reader sees the
 * page after /Rotate), the first that covers nothing of what is already on the page
 * (text boxes, when the caller read them, and the rectangles of visible annotations and
 * form fields); when every corner covers something, the one covering the least area,
 * and the page is reported. Without text positions (reading failed or ran out of its
 * budget) only annotations count, so bottom right is the usual answer.
 */
import type { PDFDocument, PDFFont, PDFPage } from 'pdf-lib'
import { pagesWithinContentLimit } from './content-size.js'
import type { Tracked } from './incremental.js'
import { CORNERS, annotationBoxes, intersect, pageGeometry } from './page-box.js'
import type { Box, Corner } from './page-box.js'
import { addStamp, layoutStamp, stampRect, stampTexts } from './stamp.js'
import { readTextPositions } from './text-positions.js'

export interface StampRequest {
  font: PDFFont
  /** The stamp's lines for page `index` (0-based). */
  linesFor: (index: number) => string[]
  /** A suffix that makes the annotation's /NM unique in the document. */
  nameFor: (index: number) => string
  /** Boxes of the text already on page `index`, in default user space; undefined when unknown. */
  textFor?: ((index: number) => Box[] | undefined) | undefined
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
}

/** Bounds on reading the pages' text for the stamp's placement (defaults in parentheses). */
export interface TextReadingBudget {
  /** Longest one page may take (500 ms). */
  pageMs: number
  /** Longest all pages may take together, pdf.js's start included (5,000 ms). */
  totalMs: number
  /** Decoded content one page may have and still be read (4 MB). */
  maxPageContentBytes: number
  /** Decoded content of all pages read (32 MB). */
  maxTotalContentBytes: number
}

const DEFAULT_BUDGET: TextReadingBudget = { pageMs: 500, totalMs: 5000, maxPageContentBytes: 4 << 20, maxTotalContentBytes: 32 << 20 }

/**
 * Text boxes of every page that can be read within `budget`, for stampPages' `textFor`.
 * Never throws: whatever goes wrong leaves pages unread, and their stamps take the default
 * corner (bottom right, unless an annotation is there).
 */
export async function readStampObstacles (bytes: Uint8Array, doc: PDFDocument, budget: Partial<TextReadingBudget> = {}): Promise<(index: number) => Box[] | undefined> {
  const b = { ...DEFAULT_BUDGET, ...budget }
  try {
    const sizes = pagesWithinContentLimit(doc, b.maxPageContentBytes, b.maxTotalContentBytes)
    // A page that draws nothing has no text: pdf.js costs about a millisecond a page even then.
    const empty = new Set(sizes.filter((s) => s.bytes === 0).map((s) => s.page - 1))
    const pages = sizes.filter((s) => s.bytes > 0).map((s) => s.page)
    const read = pages.length === 0 ? { pages: [] } : await readTextPositions(bytes, { pages, pageBudgetMs: b.pageMs, totalBudgetMs: b.totalMs })
    return (index) => empty.has(index) ? [] : read.pages[index]?.map((run) => run.box)
  } catch {
    return () => undefined
  }
}

function coveredArea (rect: Box, obstacles: Box[]): number {
  let area = 0
  for (const o of obstacles) {
    const overlap = intersect(rect, o)
    if (overlap !== undefined) area += overlap.width * overlap.height
  }
  return area
}

export function stampPages (tracked: Tracked, pages: PDFPage[], request: StampRequest): StampOutcome {
  const outcome: StampOutcome = { unread: [], tooSmall: [], covering: [], corners: new Map() }
  pages.forEach((page, index) => {
    const g = pageGeometry(page)
    const lines = stampTexts(request.font, request.linesFor(index))
    const layout = layoutStamp(request.font, lines, g)
    if (layout === undefined) {
      outcome.tooSmall.push({ page: index + 1, width: g.box.width * g.userUnit, height: g.box.height * g.userUnit })
      return
    }
    const text = request.textFor?.(index)
    if (request.textFor !== undefined && text === undefined) outcome.unread.push(index + 1)
    const obstacles = [...(text ?? []), ...annotationBoxes(page)]
    let best: Corner = CORNERS[0]!
    let bestArea = Infinity
    for (const corner of CORNERS) {
      const area = obstacles.length === 0 ? 0 : coveredArea(stampRect(g, layout, corner), obstacles)
      if (area < bestArea) { best = corner; bestArea = area }
      if (area === 0) break
    }
    if (bestArea > 0) outcome.covering.push(index + 1)
    addStamp(tracked, page, g, request.font, layout, best, lines.join(' - '), request.nameFor(index))
    outcome.corners.set(index + 1, best)
  })
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
export function stampWarnings (outcome: StampOutcome): string[] {
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
