/**
 * The text of a document as plugins read it: runs with their boxes per page, lines
 * rebuilt from positions (pdf.js hands runs over in content-stream order, which in the
 * RFB's JasperReports prints is not the visual order: documents.md §0.1), and the
 * accent-stripped, upper-cased, whitespace-collapsed copy detection rules match on.
 *
 * Coordinates are PDF user space of the page (origin bottom-left, y up), in points.
 */
import { isPositionless, joinCollectionPieces, interleavedValues, orderedColumns, orderedValues, positionlessPages, underByOrder, wrappedLabelOverValue } from './column-order.js'
import type { ByOrderOptions, OrderedColumn, OrderedField, OrderedTable, OrderedValues } from './column-order.js'
import { labelValue, labelValues } from './label-value.js'
import type { LabelValueOptions } from './label-value.js'
import { column, table, under } from './text-grid.js'
import { WORD_GAP, compiled, hitOf, inside, labelBounds, lineTests, union } from './text-match.js'
import type { LabelBounds } from './text-match.js'
import type { Box, Hit, Label, PageText, RowOptions, SearchOptions, TableRow, TextLine, TextRun } from './text-types.js'
import { normalizeText } from './values.js'
import { joinWrappedLabels } from './wrapped-labels.js'

export type { Box, Evidence, Hit, Label, PageText, RowOptions, SearchOptions, TableRow, TextLine, TextRun } from './text-types.js'
export type { OrderedColumn, OrderedField, OrderedRow, OrderedTable, OrderedValues } from './column-order.js'

/** Runs whose vertical centres are closer than this share a line (a fraction of the smaller run's height). */
const SAME_LINE = 0.5

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
      // A gap wider than WORD_GAP of the run's height is a space the PDF did not draw.
      if (text !== '' && !text.endsWith(' ') && !piece.startsWith(' ') && run.box.x - right > run.box.height * WORD_GAP) text += ' '
      placed.push({ run, start: text.length })
      text += piece
      right = Math.max(right, run.box.x + run.box.width)
    }
    return { page: page.page, text: text.trim(), box: union(group.map((r) => r.box)), runs: placed }
  })
}

/** True when `above` (the line before a title) is a row of the title's block: nothing of it in the title's column. */
function rowBeside (above: TextLine | undefined, title: TextLine): boolean {
  const first = title.runs[0]?.run
  if (above === undefined || first === undefined || above.page !== title.page) return false
  return !above.runs.some(({ run }) => run.box.x < first.box.x + first.box.width)
}

/**
 * A stretch of visual lines in reading order (the whole document, or a section of it) and
 * the queries plugins read values with. Every query reads visual lines, so the
 * content-stream order of the file never matters. The document's labels (the plugin's
 * `labels`, given by the engine) bound every value a query returns: a value that runs into
 * a label stops before it, and a value that is a label is empty.
 */
export class TextRegion {
  constructor (readonly lines: TextLine[], protected readonly labels: LabelBounds = []) {}

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
      if (m !== null) return hitOf(line, m, 0, this.labels)
    }
    return undefined
  }

  /** Every match of `pattern` on every line, in reading order. */
  findAll (pattern: RegExp, options: SearchOptions = {}): Hit[] {
    const re = compiled(pattern, true)
    const hits: Hit[] = []
    for (const line of this.scope(options)) {
      for (const m of line.text.matchAll(re)) hits.push(hitOf(line, m as RegExpExecArray, 0, this.labels))
    }
    return hits
  }

  /**
   * The value of a label, paired by position (label-value.ts): after the label on its
   * baseline, under it in its column, after either end of a label wrapped over two or three
   * lines, in a row of values under a row of labels, or in a column of values printed after a
   * column of labels. `label` is a pattern tried on a line's text, or a string compared
   * accent- and case-blind; `value` is tried after the label (its first group is the value).
   * Two readings that disagree give a conflict hit: `ctx.take` turns it into null and a
   * warning. `linesBelow` also tries the whole next lines, in order (positions lost). On a
   * page whose positions are lost (column-order.ts), a label wrapped over two or three lines
   * is also read with its value on the line after it.
   */
  labelValue (label: Label, value: RegExp, options: SearchOptions & LabelValueOptions = {}): Hit | undefined {
    const found = labelValue(this.scope(options), label, value, options, this.labels)
    if (found !== undefined) return found
    // Positions lost (column-order.ts): a label wrapped over two or three lines, its value on the next.
    const pages = positionlessPages(this.lines)
    return pages.size === 0 ? undefined : wrappedLabelOverValue(this.scope(options).filter((l) => pages.has(l.page)), label, value, this.labels)
  }

  /**
   * True when some page of the region has lost its positions: every line one piece of text
   * from one margin (a text fixture, text another library ordered column by column). Such
   * pages are read by order (column-order.ts) where positions would say nothing.
   */
  get positionless (): boolean {
    return positionlessPages(this.lines).size > 0
  }

  /**
   * Labels printed in a block, their values in a block after it (positions lost: a form's
   * column of labels, then its column of values), paired by order and by each value's
   * shape; a field that is `optional` may have been printed empty. One record per
   * occurrence of the block's labels (a form printed twice); a field whose pairing is not
   * the only one is a conflict hit (`ctx.take`: null and a warning). Undefined when no
   * positionless page has such blocks. `ignore`: lines that are neither the fields' labels
   * nor their values (a heading printed between rows of labels, such as each activity's
   * name; another table's pieces a caller has read), left out before pairing: a pattern on
   * the line's text, or a test of the line.
   */
  orderedValues (fields: OrderedField[], options: SearchOptions & { ignore?: RegExp | ((line: TextLine) => boolean) } = {}): OrderedValues[] | undefined {
    const pages = positionlessPages(this.lines)
    const { ignore } = options
    const ignored = ignore === undefined ? () => false : ignore instanceof RegExp ? (l: TextLine) => compiled(ignore).exec(l.text) !== null : ignore
    return orderedValues(this.scope(options).filter((l) => pages.has(l.page) && !ignored(l)), fields, this.labels)
  }

  /**
   * Labels and their values interleaved in one stream (positions lost: a row of labels and
   * the row of values under it merged line by line), each label printed once: the k-th value
   * line after the first label is the k-th label's, when every value has its field's shape and
   * follows its label; otherwise (or without a positionless page) undefined: nothing is read.
   */
  interleavedValues (fields: OrderedField[], options: SearchOptions = {}): OrderedValues | undefined {
    const pages = positionlessPages(this.lines)
    return interleavedValues(this.scope(options).filter((l) => pages.has(l.page)), fields, this.labels)
  }

  /**
   * A table handed over column by column (positions lost): the `key` column's cells make
   * the rows, other columns with as many cells (one more: the `totals` row) are lined up in
   * order, and a column with another count is not placed (`unplaced` says so). Undefined
   * when no positionless page prints the key column.
   */
  orderedColumns (key: OrderedColumn, others: OrderedColumn[], options: SearchOptions & { totals?: Label } = {}): OrderedTable | undefined {
    const pages = positionlessPages(this.lines)
    return orderedColumns(this.scope(options).filter((l) => pages.has(l.page)), key, others, options, this.labels)
  }

  /**
   * For text whose positions are lost: the whole region, read by order, as block `k` of
   * `of` blocks that print the same labels (a document's parties): its `under(labels)`
   * reads the k-th place the labels are printed when they are printed `of` times (else
   * nothing); with one block, every place must agree (else a conflict). Sections mean
   * nothing in such text; this replaces them. With `passOver` (lines that are neither label
   * nor value: titles, a printed sentence), a place is read in its run of labels and the
   * run of values after it (rows of cells handed over labels first), paired in order only
   * when the counts match (column-order.ts `inRuns`), and `under`'s `rest` is kept;
   * `orderOf` (the document's lines, for a section) is where the text's order is judged.
   */
  byOrder (k = 0, of = 1, options: Pick<ByOrderOptions, 'passOver' | 'orderOf'> = {}): TextRegion {
    return new OrderedRegion(this.lines, this.labels, k, of, options)
  }

  /**
   * The value of every place `label` is printed, in reading order, each paired as
   * `labelValue` pairs the first (a label repeated per row or per block: one hit each).
   */
  labelValues (label: Label, value: RegExp, options: SearchOptions & LabelValueOptions = {}): Hit[] {
    return labelValues(this.scope(options), label, value, options, this.labels)
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
   * `titleBeside`: the title stands in a column of its own, beside its block, and may be
   * centred on the block's second row; the line just above it then belongs to the section
   * when nothing of that line sits in the title's column.
   */
  section (from: Label | Label[], to?: Label | Label[], options: { titleBeside?: boolean } = {}): TextRegion {
    const starts = lineTests(from)
    const stops = lineTests(to)
    let start = this.lines.findIndex((l) => starts.some((t) => t(l)))
    if (start < 0) return new TextRegion([], this.labels)
    if (options.titleBeside === true && rowBeside(this.lines[start - 1], this.lines[start]!)) start--
    let end = start + 1
    while (end < this.lines.length && !stops.some((t) => t(this.lines[end]!))) end++
    return new TextRegion(this.lines.slice(start, end), this.labels)
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
        out.push(new TextRegion(this.lines.slice(open, i), this.labels))
        open = -1
      }
      if (isStart) open = i
    })
    if (open >= 0) out.push(new TextRegion(this.lines.slice(open), this.labels))
    return out
  }

  /** The lines before the first one holding `label`; the whole region when it is not printed. */
  before (label: Label | Label[]): TextRegion {
    const tests = lineTests(label)
    const end = this.lines.findIndex((l) => tests.some((t) => t(l)))
    return end < 0 ? this : new TextRegion(this.lines.slice(0, end), this.labels)
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
    return under(this.lines, labels, options, this.labels)
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
    return table(this.lines, headers, options, this.labels)
  }

  /**
   * The values printed in one column under a header (a run compared as in `table`): on
   * each following line, the runs that overlap the header horizontally. Rows stop as in
   * `table`; a line with nothing in the column ends it too. Empty when the header is not printed.
   */
  column (header: Label, options: RowOptions = {}): Hit[] {
    return column(this.lines, header, options, this.labels)
  }
}

/** TextRegion.byOrder: `under` reads a label's places by order. */
class OrderedRegion extends TextRegion {
  constructor (lines: TextLine[], labels: LabelBounds, private readonly k: number, private readonly of: number, private readonly options: Pick<ByOrderOptions, 'passOver' | 'orderOf'>) {
    super(lines, labels)
  }

  override under (labels: string | string[], options: { rest?: boolean } = {}): Hit | undefined {
    // Without `passOver`, `rest` (a cell's following lines) means nothing without positions: the next line only.
    return underByOrder(this.lines, Array.isArray(labels) ? labels : [labels], this.k, this.of, this.labels, { ...this.options, rest: options.rest === true })
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
    // A page whose positions are lost gets its collection line back when it was handed over block by block.
    const perPage = pages.map((p) => buildLines(p)).map((lines) => isPositionless(lines) ? joinCollectionPieces(lines) : lines)
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

  /**
   * The same document whose queries stop values at these labels (compared accent- and
   * case-blind, at word boundaries), and whose labels wrapped over two or three lines are
   * joined back, their value after them whichever line it was printed on
   * (wrapped-labels.ts). `cellLabels` stop no value: a grid cell whose first run is exactly
   * one of them is empty (ExtractorPlugin.cellLabels). The engine scores and parses each
   * plugin on its own view; the lines are shared where no label is wrapped.
   */
  withLabels (labels: readonly string[], cellLabels: readonly string[] = []): TextDocument {
    const view = Object.create(TextDocument.prototype) as TextDocument
    const bounds = labelBounds(labels, cellLabels)
    const lines = joinWrappedLabels(this.lines, bounds)
    if (lines === this.lines) return Object.assign(view, this, { labels: bounds })
    // Wrapped labels joined back: the detection copies follow the lines.
    // Lines the joining left alone keep their detection form.
    const known = new Map(this.lines.map((l, i) => [l, this.normalizedLines[i]!]))
    const normalizedLines = lines.map((l) => known.get(l) ?? normalizeText(l.text))
    const normalizedPages = this.pages.map((p) => normalizedLines.filter((_, i) => lines[i]!.page === p.page).join(' '))
    return Object.assign(view, this, { labels: bounds, lines, normalizedLines, normalizedPages, normalized: normalizedPages.join(' ') })
  }
}

