/**
 * The text of a document as plugins read it: runs with their boxes per page, lines
 * rebuilt from positions (pdf.js hands runs over in content-stream order, which in the
 * RFB's JasperReports prints is not the visual order: documents.md §0.1), and the
 * accent-stripped, upper-cased, whitespace-collapsed copy detection rules match on.
 *
 * Coordinates are PDF user space of the page (origin bottom-left, y up), in points.
 */
import { normalizeText } from './values.js'

export interface Box { x: number, y: number, width: number, height: number }

/** One run of text as the PDF draws it. */
export interface TextRun { text: string, box: Box }

/** A visual line: runs sharing a baseline band, left to right. */
export interface TextLine {
  /** 1-based page number. */
  page: number
  text: string
  box: Box
  /** The runs of the line and where each starts in `text`. */
  runs: Array<{ run: TextRun, start: number }>
}

/** Where a value was read: what a person needs to check it in a second. */
export interface Evidence {
  page: number
  /** The line the value was read from, as rebuilt. */
  source: string
  /** The box of the value's runs on that page. */
  box: Box
}

/** A value found in the text, with its evidence. */
export interface Hit extends Evidence {
  /** The captured value (first capture group, or the whole match). */
  value: string
  /** Every capture group of the match. */
  groups: Array<string | undefined>
  /** Each capture group as a hit of its own (its own box), undefined where the group did not take part. */
  parts: Array<Hit | undefined>
}

export interface PageText { page: number, width: number, height: number, runs: TextRun[] }

/** Runs whose vertical centres are closer than this share a line (a fraction of the smaller run's height). */
const SAME_LINE = 0.5

function union (boxes: Box[]): Box {
  const x = Math.min(...boxes.map((b) => b.x))
  const y = Math.min(...boxes.map((b) => b.y))
  return { x, y, width: Math.max(...boxes.map((b) => b.x + b.width)) - x, height: Math.max(...boxes.map((b) => b.y + b.height)) - y }
}

const round = (n: number): number => Math.round(n * 100) / 100

/**
 * Rebuilds visual lines: runs sorted top to bottom, grouped while their vertical centres
 * stay within half a run height, each line sorted left to right and joined with one
 * space where the runs do not touch.
 */
export function buildLines (page: PageText): TextLine[] {
  const runs = page.runs.filter((r) => r.text.trim() !== '')
  const centre = (r: TextRun): number => r.box.y + r.box.height / 2
  runs.sort((a, b) => centre(b) - centre(a) || a.box.x - b.box.x)
  const groups: TextRun[][] = []
  for (const run of runs) {
    const last = groups[groups.length - 1]
    const ref = last?.[0]
    if (last !== undefined && ref !== undefined && Math.abs(centre(ref) - centre(run)) <= SAME_LINE * Math.min(ref.box.height, run.box.height)) last.push(run)
    else groups.push([run])
  }
  return groups.map((group) => {
    group.sort((a, b) => a.box.x - b.box.x)
    let text = ''
    const placed: TextLine['runs'] = []
    let right = -Infinity
    for (const run of group) {
      const piece = run.text.replace(/\s+/g, ' ')
      // A gap wider than a fifth of the font size is a space the PDF did not draw.
      if (text !== '' && !text.endsWith(' ') && !piece.startsWith(' ') && run.box.x - right > run.box.height * 0.2) text += ' '
      placed.push({ run, start: text.length })
      text += piece
      right = Math.max(right, run.box.x + run.box.width)
    }
    return { page: page.page, text: text.trim(), box: union(group.map((r) => r.box)), runs: placed }
  })
}

/** The box of characters [from, to) of a line: the union of the runs they fall in. */
function spanBox (line: TextLine, from: number, to: number): Box {
  const boxes = line.runs.filter(({ run, start }) => start < to && start + run.text.length > from).map(({ run }) => run.box)
  const b = union(boxes.length > 0 ? boxes : [line.box])
  return { x: round(b.x), y: round(b.y), width: round(b.width), height: round(b.height) }
}

function hitOf (line: TextLine, m: RegExpExecArray, offset = 0): Hit {
  // Compiled with the `d` flag (see exec below), so every group knows where it sits.
  const spans = m.indices ?? []
  const part = (i: number): Hit | undefined => {
    const text = m[i]
    const span = spans[i]
    if (text === undefined || span === undefined) return undefined
    return { value: text.trim(), groups: [], parts: [], page: line.page, source: line.text, box: spanBox(line, span[0] + offset, span[1] + offset) }
  }
  const main = part(m[1] === undefined ? 0 : 1)!
  return { ...main, groups: [...m].slice(1), parts: [...m].slice(1).map((_, i) => part(i + 1)) }
}

/** `pattern` compiled once more without `g` and with `d` (group positions). */
function exec (pattern: RegExp, text: string): RegExpExecArray | null {
  return new RegExp(pattern.source, pattern.flags.replace(/[gyd]/g, '') + 'd').exec(text)
}

export interface SearchOptions {
  /** Only this 1-based page. */
  page?: number
  /** Only lines whose box lies inside this region (user space of its page). */
  within?: Box
}

/**
 * A document's text with the queries plugins use. Every query reads visual lines, so
 * the content-stream order of the file never matters.
 */
export class TextDocument {
  readonly lines: TextLine[]
  /** The detection copy of all pages (normalizeText of the lines, one space between lines). */
  readonly normalized: string
  /** The detection copy of each page. */
  readonly normalizedPages: string[]

  constructor (readonly pages: PageText[]) {
    const perPage = pages.map((p) => buildLines(p))
    this.lines = perPage.flat()
    this.normalizedPages = perPage.map((lines) => normalizeText(lines.map((l) => l.text).join(' ')))
    this.normalized = this.normalizedPages.join(' ')
  }

  /** Number of pages. */
  get pageCount (): number {
    return this.pages.length
  }

  /** True when no page has any text run: a scan, or a file of images. */
  get isEmpty (): boolean {
    return this.lines.length === 0
  }

  private scope (options: SearchOptions): TextLine[] {
    return this.lines.filter((l) =>
      (options.page === undefined || l.page === options.page) &&
      (options.within === undefined || inside(l.box, options.within)))
  }

  /** The text in reading order: lines top to bottom, one per entry. */
  readingOrder (options: SearchOptions = {}): string[] {
    return this.scope(options).map((l) => l.text)
  }

  /** First match of `pattern` on a line (reading order), its first group as the value. */
  find (pattern: RegExp, options: SearchOptions = {}): Hit | undefined {
    for (const line of this.scope(options)) {
      const m = exec(pattern, line.text)
      if (m !== null) return hitOf(line, m)
    }
    return undefined
  }

  /** Every match of `pattern` on every line, in reading order. */
  findAll (pattern: RegExp, options: SearchOptions = {}): Hit[] {
    const re = new RegExp(pattern.source, pattern.flags.replace(/[gyd]/g, '') + 'gd')
    const hits: Hit[] = []
    for (const line of this.scope(options)) {
      for (const m of line.text.matchAll(re)) hits.push(hitOf(line, m as RegExpExecArray))
    }
    return hits
  }

  /**
   * The value after a label: `value` is tried on the rest of the label's line, then on
   * the next `linesBelow` lines of the same page (labels printed above their values).
   */
  after (label: RegExp, value: RegExp, options: SearchOptions & { linesBelow?: number } = {}): Hit | undefined {
    const lines = this.scope(options)
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i]!
      const lm = exec(label, line.text)
      if (lm === null) continue
      const restAt = lm.index + lm[0].length
      const vm = exec(value, line.text.slice(restAt))
      if (vm !== null) return hitOf(line, vm, restAt)
      for (let j = i + 1; j <= i + (options.linesBelow ?? 0) && j < lines.length; j++) {
        const below = lines[j]!
        if (below.page !== line.page) break
        const bm = exec(value, below.text)
        if (bm !== null) return hitOf(below, bm)
      }
    }
    return undefined
  }

  /** The text of the runs inside a box of a page, in reading order. */
  inBox (page: number, box: Box): string {
    return this.scope({ page }).flatMap((l) => l.runs.filter(({ run }) => inside(run.box, box)).map(({ run }) => run.text.trim())).join(' ')
  }

  /** The box of the first line matching `pattern`: to build regions such as "the table under this title". */
  boxOf (pattern: RegExp, options: SearchOptions = {}): (Box & { page: number }) | undefined {
    const line = this.scope(options).find((l) => pattern.test(l.text))
    return line === undefined ? undefined : { ...line.box, page: line.page }
  }
}

function inside (b: Box, region: Box): boolean {
  const cx = b.x + b.width / 2
  const cy = b.y + b.height / 2
  return cx >= region.x && cx <= region.x + region.width && cy >= region.y && cy <= region.y + region.height
}
