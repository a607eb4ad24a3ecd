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
  // Compiled with the `d` flag (see compiled below), so every group knows where it sits.
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

/**
 * `pattern` with `d` (group positions) and the given `g`, compiled once per source and
 * flags: plugins write their patterns inline, so the same source arrives as a new object
 * on every call, and compiling it again for every line was most of a parser's time.
 */
const COMPILED = new Map<string, RegExp>()
function compiled (pattern: RegExp, global = false): RegExp {
  const flags = pattern.flags.replace(/[gyd]/g, '') + (global ? 'gd' : 'd')
  const key = `${flags}/${pattern.source}`
  let re = COMPILED.get(key)
  if (re === undefined) {
    // Patterns built from data (a label list) could grow the map without end: start over.
    if (COMPILED.size >= 4096) COMPILED.clear()
    re = new RegExp(pattern.source, flags)
    COMPILED.set(key, re)
  }
  return re
}

function exec (pattern: RegExp, text: string): RegExpExecArray | null {
  return compiled(pattern).exec(text)
}

/** The detection form of each run, computed once (grid queries compare every run with every label). */
const NORMALIZED = new WeakMap<TextRun, string>()
function normalizedRun (run: TextRun): string {
  let n = NORMALIZED.get(run)
  if (n === undefined) {
    n = normalizeText(run.text)
    NORMALIZED.set(run, n)
  }
  return n
}

/** Labels come from plugin code, a bounded set: their detection form is kept. */
const LABELS = new Map<string, string>()
function normalizedLabel (label: string): string {
  let n = LABELS.get(label)
  if (n === undefined) {
    if (LABELS.size >= 4096) LABELS.clear()
    n = normalizeText(label)
    LABELS.set(label, n)
  }
  return n
}

/**
 * What a structural query looks for on a line. A RegExp is tried on the line's text; a
 * string is compared accent- and case-blind with the start of one of the line's runs
 * (`'TOMADOR DO SERVIÇO'` finds the run `Tomador do Serviço`), which is how a heading or a
 * column title printed as its own piece of text is recognised.
 */
export type Label = RegExp | string

/** A line test for each label, the strings normalised once. */
function lineTests (labels: Label | Label[] | undefined): Array<(line: TextLine) => boolean> {
  const list = labels === undefined ? [] : Array.isArray(labels) ? labels : [labels]
  return list.map((label) => {
    if (typeof label !== 'string') {
      const re = compiled(label)
      return (line) => re.exec(line.text) !== null
    }
    const want = normalizedLabel(label)
    return (line) => line.runs.some(({ run }) => normalizedRun(run).startsWith(want))
  })
}

/** A run test for a column header: a string equals the whole run (accent- and case-blind), a RegExp is tried on its text. */
function runTest (header: Label): (run: TextRun) => boolean {
  if (typeof header !== 'string') {
    const re = compiled(header)
    return (run) => re.exec(run.text) !== null
  }
  const want = normalizedLabel(header)
  return (run) => normalizedRun(run) === want
}

export interface SearchOptions {
  /** Only this 1-based page. */
  page?: number
  /** Only lines whose box lies inside this region (user space of its page). */
  within?: Box
}

/** Options of `table` and `column`: where the rows stop. */
export interface RowOptions {
  /** Each non-empty cell must match this (its first group, if any, is the value); a row where one does not ends the table. */
  cell?: RegExp
  /** A line matching this ends the table. */
  until?: Label
  /** At most this many rows. */
  maxRows?: number
  /** A vertical gap larger than this many points between rows ends the table (default: one and a half line heights). */
  maxGap?: number
}

/** One row of a table read by its column headers: the line and one cell per column (undefined where the column is empty). */
export interface TableRow { line: TextLine, cells: Array<Hit | undefined> }

/** A value may start a little left of its label (centred or padded cells). */
const SLACK = 2
/** Under-label values sit within this many points below their label's line. */
const MAX_UNDER_GAP = 16

function runsHit (line: TextLine, runs: TextLine['runs'], value: string, source = line.text): Hit {
  return { value, groups: [value], parts: [], page: line.page, source, box: roundBox(union(runs.map(({ run }) => run.box))) }
}

function roundBox (b: Box): Box {
  return { x: round(b.x), y: round(b.y), width: round(b.width), height: round(b.height) }
}

/** A cell's text checked against `pattern`: a hit on the cell (its first group as value), or null when it does not match. */
function cellHit (line: TextLine, runs: TextLine['runs'], pattern: RegExp | undefined): Hit | null {
  const text = runs.map(({ run }) => run.text.trim()).join(' ').replace(/\s+/g, ' ').trim()
  if (pattern === undefined) return runsHit(line, runs, text)
  const m = exec(pattern, text)
  if (m === null) return null
  const value = (m[1] ?? m[0]).trim()
  return { ...runsHit(line, runs, value), groups: [...m].slice(1) }
}

/**
 * A stretch of visual lines in reading order (the whole document, or a section of it) and
 * the queries plugins read values with. Every query reads visual lines, so the
 * content-stream order of the file never matters.
 */
export class TextRegion {
  constructor (readonly lines: TextLine[]) {}

  /** True when the region has no line: a scan (for a document), a section not printed. */
  get isEmpty (): boolean {
    return this.lines.length === 0
  }

  private scope (options: SearchOptions): TextLine[] {
    if (options.page === undefined && options.within === undefined) return this.lines
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
    const re = compiled(pattern)
    for (const line of this.scope(options)) {
      const m = re.exec(line.text)
      if (m !== null) return hitOf(line, m)
    }
    return undefined
  }

  /** Every match of `pattern` on every line, in reading order. */
  findAll (pattern: RegExp, options: SearchOptions = {}): Hit[] {
    const re = compiled(pattern, true)
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
    const labelRe = compiled(label)
    const valueRe = compiled(value)
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i]!
      const lm = labelRe.exec(line.text)
      if (lm === null) continue
      const restAt = lm.index + lm[0].length
      const vm = valueRe.exec(line.text.slice(restAt))
      if (vm !== null) return hitOf(line, vm, restAt)
      for (let j = i + 1; j <= i + (options.linesBelow ?? 0) && j < lines.length; j++) {
        const below = lines[j]!
        if (below.page !== line.page) break
        const bm = valueRe.exec(below.text)
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
    const re = compiled(pattern)
    const line = this.scope(options).find((l) => re.test(l.text))
    return line === undefined ? undefined : { ...line.box, page: line.page }
  }

  /**
   * A section: from the first line holding `from` (included) up to the first later line
   * holding one of `to` (excluded), or to the end of this region, across pages. Empty
   * (`isEmpty`) when `from` is not printed. Every query works on the section.
   */
  section (from: Label | Label[], to?: Label | Label[]): TextRegion {
    const starts = lineTests(from)
    const stops = lineTests(to)
    const start = this.lines.findIndex((l) => starts.some((t) => t(l)))
    if (start < 0) return new TextRegion([])
    let end = start + 1
    while (end < this.lines.length && !stops.some((t) => t(this.lines[end]!))) end++
    return new TextRegion(this.lines.slice(start, end))
  }

  /**
   * Every block that starts with `from`: from each line holding it (included) up to the
   * next such line or the first line holding one of `to` (excluded). For repeated blocks
   * (one per activity, per establishment, per tax row); empty when `from` is never printed.
   */
  sections (from: Label | Label[], to?: Label | Label[]): TextRegion[] {
    const starts = lineTests(from)
    const stops = lineTests(to)
    const out: TextRegion[] = []
    let open = -1
    this.lines.forEach((line, i) => {
      const isStart = starts.some((t) => t(line))
      if (open >= 0 && (isStart || stops.some((t) => t(line)))) {
        out.push(new TextRegion(this.lines.slice(open, i)))
        open = -1
      }
      if (isStart) open = i
    })
    if (open >= 0) out.push(new TextRegion(this.lines.slice(open)))
    return out
  }

  /** The lines before the first one holding `label`; the whole region when it is not printed. */
  before (label: Label | Label[]): TextRegion {
    const tests = lineTests(label)
    const end = this.lines.findIndex((l) => tests.some((t) => t(l)))
    return end < 0 ? this : new TextRegion(this.lines.slice(0, end))
  }

  /**
   * The value printed under a label in its column (a form's grid of small labels): the
   * runs of the next line (same page, close below) whose left edge lies between the
   * label's left edge and the next run of the label's line. `labels` are whole runs,
   * compared accent- and case-blind; several may name one cell (wordings of two layout
   * versions) and the first printed is used. `rest` also takes the column on the
   * following lines of the region (a wrapped description that ends its section).
   */
  under (labels: string | string[], options: { rest?: boolean } = {}): Hit | undefined {
    const wanted = (Array.isArray(labels) ? labels : [labels]).map(normalizedLabel)
    const lines = this.lines
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i]!
      const label = line.runs.find(({ run }) => wanted.includes(normalizedRun(run)))
      if (label === undefined) continue
      const left = label.run.box.x - SLACK
      let right = Infinity
      for (const { run } of line.runs) if (run.box.x > label.run.box.x + 1) right = Math.min(right, run.box.x - SLACK)
      const below = lines[i + 1]
      if (below === undefined || below.page !== line.page || line.box.y - (below.box.y + below.box.height) > MAX_UNDER_GAP) return undefined
      const inColumn = (l: TextLine): TextLine['runs'] => l.runs.filter(({ run }) => run.box.x >= left && run.box.x < right)
      const runs = inColumn(below)
      if (runs.length === 0) return undefined
      const sources = [below.text]
      if (options.rest === true) {
        for (const more of lines.slice(i + 2)) {
          if (more.page !== below.page) break
          const extra = inColumn(more)
          if (extra.length === 0) break
          runs.push(...extra)
          sources.push(more.text)
        }
      }
      const value = runs.map(({ run }) => run.text.trim()).join(' ').replace(/\s+/g, ' ').trim()
      return runsHit(below, runs, value, sources.join('\n'))
    }
    return undefined
  }

  /**
   * A table read by its column headers: the first line where every header is a run of
   * its own (a string compared whole, accent- and case-blind, or a RegExp on the run's
   * text), then the lines under it, each run put in the column whose header it sits under
   * (column borders halfway between neighbouring headers). Undefined when the header row
   * is not printed. Rows stop at a page change, `until`, `maxRows`, a gap, or a row with a
   * cell that does not match `cell`.
   */
  table (headers: Label[], options: RowOptions = {}): TableRow[] | undefined {
    const lines = this.lines
    const tests = headers.map(runTest)
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i]!
      const cols: Array<TextLine['runs'][number]> = []
      for (const test of tests) {
        const found = line.runs.find((r) => !cols.includes(r) && test(r.run))
        if (found === undefined) break
        cols.push(found)
      }
      if (cols.length !== tests.length) continue
      const order = cols.map((c, index) => ({ index, box: c.run.box })).sort((a, b) => a.box.x - b.box.x)
      const bounds = order.map((c, k) => {
        const prev = order[k - 1]
        const next = order[k + 1]
        return {
          index: c.index,
          lo: prev === undefined ? -Infinity : (prev.box.x + prev.box.width + c.box.x) / 2,
          hi: next === undefined ? Infinity : (c.box.x + c.box.width + next.box.x) / 2
        }
      })
      return this.rows(i, line, bounds, options)
    }
    return undefined
  }

  /**
   * The values printed in one column under a header (a run compared as in `table`): on
   * each following line, the runs that overlap the header horizontally. Rows stop as in
   * `table`; a line with nothing in the column ends it too. Empty when the header is not printed.
   */
  column (header: Label, options: RowOptions = {}): Hit[] {
    const test = runTest(header)
    for (let i = 0; i < this.lines.length; i++) {
      const line = this.lines[i]!
      const found = line.runs.find((r) => test(r.run))
      if (found === undefined) continue
      const { x, width } = found.run.box
      const rows = this.rows(i, line, [{ index: 0, lo: x - SLACK, hi: x + width + SLACK, overlap: true }], options)
      return rows.map((r) => r.cells[0]!)
    }
    return []
  }

  private rows (headerAt: number, header: TextLine, bounds: Array<{ index: number, lo: number, hi: number, overlap?: boolean }>, options: RowOptions): TableRow[] {
    const out: TableRow[] = []
    const maxGap = options.maxGap ?? header.box.height * 1.5
    const until = lineTests(options.until)
    let previous = header
    for (const line of this.lines.slice(headerAt + 1)) {
      if (out.length >= (options.maxRows ?? Infinity) || line.page !== header.page) break
      if (previous.box.y - (line.box.y + line.box.height) > maxGap) break
      if (until.some((t) => t(line))) break
      const cells: Array<Hit | undefined> = new Array<Hit | undefined>(bounds.length).fill(undefined)
      let ok = true
      let any = false
      for (const b of bounds) {
        const runs = line.runs.filter(({ run }) => b.overlap === true
          ? run.box.x < b.hi && run.box.x + run.box.width > b.lo
          : run.box.x + run.box.width / 2 >= b.lo && run.box.x + run.box.width / 2 < b.hi)
        if (runs.length === 0) continue
        const hit = cellHit(line, runs, options.cell)
        if (hit === null) { ok = false; break }
        cells[b.index] = hit
        any = true
      }
      if (!ok || !any) break
      out.push({ line, cells })
      previous = line
    }
    return out
  }
}

/**
 * A document's text: its pages, its lines, the detection copy, and every query of
 * `TextRegion` over the whole document.
 */
export class TextDocument extends TextRegion {
  /** The detection copy of all pages (normalizeText of the lines, one space between lines). */
  readonly normalized: string
  /** The detection copy of each page. */
  readonly normalizedPages: string[]
  /**
   * The detection copy of each line, in reading order (`lines[i]` → `normalizedLines[i]`):
   * for rules about one line ("the first line is this title"), without normalising every
   * line again in every rule of every plugin.
   */
  readonly normalizedLines: string[]

  constructor (readonly pages: PageText[]) {
    const perPage = pages.map((p) => buildLines(p))
    super(perPage.flat())
    const normalizedPerPage = perPage.map((lines) => lines.map((l) => normalizeText(l.text)))
    this.normalizedLines = normalizedPerPage.flat()
    this.normalizedPages = normalizedPerPage.map((lines) => lines.join(' '))
    this.normalized = this.normalizedPages.join(' ')
  }

  /** Number of pages. */
  get pageCount (): number {
    return this.pages.length
  }
}

function inside (b: Box, region: Box): boolean {
  const cx = b.x + b.width / 2
  const cy = b.y + b.height / 2
  return cx >= region.x && cx <= region.x + region.width && cy >= region.y && cy <= region.y + region.height
}
