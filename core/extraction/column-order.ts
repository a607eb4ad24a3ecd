/**
 * Text whose positions are lost and whose order is column by column (issue 33): what some
 * PDF libraries hand over and what a text fixture keeps. Each piece of text of the page (a
 * cell, a label, a value) is a line of its own, every line starts at the one margin, and a
 * form's columns come one after the other: a column of labels, then further down the column
 * of their values; a table's header cell, then that column's cells, then the next header.
 *
 * Nothing here guesses a position. It pairs by order, and only where the order and the
 * values' shapes leave one pairing:
 * - `isPositionless`: the page is such text (every line one piece at one left edge);
 * - `joinCollectionPieces`: a 48-digit collection line handed over block by block is one
 *   line again when its four blocks, in order, verify their check digits;
 * - `orderedValues`: a block of labels followed by the block of their values, paired by
 *   order; labels whose box may be printed empty (`optional`) may take no value, and a label
 *   that more than one pairing fills differently is a conflict (null and a warning);
 * - `interleavedValues`: labels and their values in one stream, each value after its label and
 *   the values in the labels' order (a row of labels merged with its row of values);
 * - `orderedColumns`: a table handed over column by column, each column's cells counted and
 *   lined up by row; a column whose count does not match the rows is not placed;
 * - `underByOrder`: a label printed once per block (each party of a document), its k-th
 *   place block k's when it is printed once per block, every place agreeing otherwise.
 */
import { readCollectionLine } from './barcode.js'
import { labelPattern } from './label-value.js'
import { under as gridUnder } from './text-grid.js'
import { boundedRuns, compiled, conflictHit, hitOf, isCellLabel, normalizedLabel, normalizedRun, runsHit, startsWithLabel } from './text-match.js'
import type { LabelBounds } from './text-match.js'
import type { Hit, Label, TextLine } from './text-types.js'
import { moneyCents, normalizeText } from './values.js'

/** Lines whose left edges are this close (points) start at one margin. */
const MARGIN_SLACK = 1
/** Fewer lines than this say nothing about a page's order. */
const MIN_LINES = 4
/** A block of more labels than this is no form (a form's copies hold tens): not paired. */
const MAX_BLOCK = 120

/** A line indented this many of its heights at most is still at the margin: the leading spaces a library's text keeps (` CNPJ das filiais`, pypdf's `  Total do Débito`). */
const INDENT_SLACK = 1.5

/**
 * True when the lines (one page) have lost their positions: at least MIN_LINES lines, every
 * piece of text of each starting at one left edge, or a few spaces after it: one piece a line,
 * or a label wrapped over lines that the plugin's labels joined; most lines start at the edge
 * itself. A page laid out in columns (a form, a table) always has pieces that start elsewhere.
 */
export function isPositionless (lines: readonly TextLine[]): boolean {
  if (lines.length < MIN_LINES) return false
  const left = Math.min(...lines.map((l) => l.box.x))
  const atMargin = lines.filter((l) => l.box.x - left <= MARGIN_SLACK).length
  // A plugin's label wrapped over two lines is joined into one line of two pieces, both from the margin.
  return 2 * atMargin > lines.length && lines.every((l) => l.runs.every(({ run }) => run.box.x - left <= Math.max(MARGIN_SLACK, INDENT_SLACK * l.box.height)))
}

/** The pages (1-based numbers) of `lines` whose text has lost its positions. */
export function positionlessPages (lines: readonly TextLine[]): Set<number> {
  const byPage = new Map<number, TextLine[]>()
  for (const l of lines) byPage.set(l.page, [...(byPage.get(l.page) ?? []), l])
  return new Set([...byPage].filter(([, ls]) => isPositionless(ls)).map(([p]) => p))
}

/** One block of a collection line: 11 digits and its check digit after a space or a dash. */
const BLOCK = /^\s*(\d{11}[ -]\d)\s*$/

/**
 * A page's lines with a collection line handed over block by block joined again: the
 * blocks are taken in order (a block repeated at once, the guide's and its stub's copy
 * side by side, counts once), four at a time, and joined only when the four verify as one
 * line (every block's check digit and the general one). The joined line stands where its
 * first block stood; the other blocks stay where they are (they are also text of the page).
 */
export function joinCollectionPieces (lines: TextLine[]): TextLine[] {
  const blocks: Array<{ at: number, text: string }> = []
  lines.forEach((l, at) => {
    const m = BLOCK.exec(l.text)
    if (m !== null && blocks[blocks.length - 1]?.text !== m[1]) blocks.push({ at, text: m[1]! })
  })
  if (blocks.length < 4) return lines
  const out = [...lines]
  const joined = new Map<number, TextLine>()
  for (let i = 0; i + 4 <= blocks.length;) {
    const four = blocks.slice(i, i + 4)
    const text = four.map((b) => b.text).join(' ')
    const read = readCollectionLine(text)
    if (read === null || !read.valid) { i++; continue }
    const first = lines[four[0]!.at]!
    const run = { ...first.runs[0]!.run, text }
    joined.set(four[0]!.at, { ...first, text, runs: [{ run, start: 0 }] })
    i += 4
  }
  for (const [at, line] of joined) out[at] = line
  return out
}

// ---------------------------------------------------------------- labels, then their values

/** A field read by `orderedValues`. */
export interface OrderedField {
  /** The field's name in the answer. */
  name: string
  label: Label
  /** Tried on a whole value line (leading spaces aside); its first group is the value. */
  value: RegExp
  /** The box may be printed empty (a form's blank multa): the label may take no value. */
  optional?: boolean
}

/** The fields of one occurrence of the block (a form printed twice: one record per copy); a conflict is a hit with `conflict`. */
export type OrderedValues = Record<string, Hit | undefined>

/**
 * True when the line is `label` and no value: the line starts with the label, and what
 * follows (the rest of a long label, `E / OU ENCARGOS`) holds no match of `value`.
 */
function isLabelLine (line: TextLine, re: RegExp, value?: RegExp): boolean {
  const m = re.exec(line.text)
  if (m === null || line.text.slice(0, m.index).trim() !== '') return false
  const rest = line.text.slice(m.index + m[0].length).replace(/^\s*:/, '').trim()
  return rest === '' || (value !== undefined && compiled(value).exec(rest) === null)
}

/** The value at the start of the line and nothing after it, or null. */
function wholeValue (line: TextLine, value: RegExp): RegExpExecArray | null {
  const m = compiled(value).exec(line.text)
  if (m === null || line.text.slice(0, m.index).trim() !== '') return null
  return line.text.slice(m.index + m[0].length).trim() === '' ? m : null
}

/**
 * `orderedValues` on positionless lines: the first block of lines that are all labels (the
 * fields' or the document's) holding at least two of the fields, and the lines after it
 * that each match some field's value (other pieces of text may come between, not a label). Values are paired with labels in order (each value
 * to a later label than the one before); a label that is not `optional` takes a value when
 * some pairing gives every such label one. Each label gets the value every such pairing
 * gives it; when the pairings give it different values (or a value and none) it is a
 * conflict. Undefined when there is no such block or no pairing at all.
 */
export function orderedValues (lines: readonly TextLine[], fields: readonly OrderedField[], bounds: LabelBounds): OrderedValues[] | undefined {
  const patterns = fields.map((f) => compiled(labelPattern(f.label)))
  const fieldOf = (l: TextLine): number => patterns.findIndex((re, i) => isLabelLine(l, re, fields[i]!.value))
  // A label of the document that is none of the fields (a numbered box read elsewhere, `11 AUTENTICAÇÃO`).
  const docLabel = (l: TextLine): boolean => startsWithLabel(normalizeText(l.text).replace(/^\d{2} /, ''), bounds) && !fields.some((f) => compiled(f.value).exec(l.text) !== null)
  for (let start = 0; start < lines.length; start++) {
    if (fieldOf(lines[start]!) < 0) continue
    const page = lines[start]!.page
    let end = start
    while (end + 1 < lines.length && lines[end + 1]!.page === page && (fieldOf(lines[end + 1]!) >= 0 || docLabel(lines[end + 1]!))) end++
    const slots = lines.slice(start, end + 1).map(fieldOf)
    if (slots.filter((s) => s >= 0).length < 2 || slots.length > MAX_BLOCK) { start = end; continue }
    // At most one value per label: the pairing's work stays within slots³. Other pieces of the
    // page may come between the labels and their values (another block's text), not a label.
    const isValue = (l: TextLine): boolean => fields.some((f) => wholeValue(l, f.value) !== null)
    let first = end + 1
    while (first < lines.length && lines[first]!.page === page && !isValue(lines[first]!) && fieldOf(lines[first]!) < 0 && !docLabel(lines[first]!)) first++
    const values: TextLine[] = []
    for (let j = first; j < lines.length && values.length < slots.length && lines[j]!.page === page && isValue(lines[j]!); j++) values.push(lines[j]!)
    const paired = pair(slots, lines.slice(start, end + 1), values, fields, bounds)
    if (paired !== undefined) return paired
    start = end
  }
  return undefined
}

/**
 * `interleavedValues` on positionless lines: each field's label printed once, on a line of
 * its own, and the values after them in the labels' order, labels and values interleaved as
 * a library merges a row of labels with the row of values under it (`L1 L2 V1 L3 V2 …`; a
 * block of labels, then its values, is one such order). The k-th line that is wholly some
 * field's value, counted from the first label, is the k-th label's value: it must have that
 * field's shape and come after its label (a line that starts with a label of the document is
 * no value). Any line out of place breaks the order, and so
 * does a value line printed just before the first label (back to the label before it: a
 * value handed over ahead of its label); then nothing is read (no field is guessed from an
 * order that does not hold). Undefined when
 * fewer than two of the labels are printed, a label is printed twice, or the order fails.
 */
export function interleavedValues (lines: readonly TextLine[], fields: readonly OrderedField[], bounds: LabelBounds): OrderedValues | undefined {
  const placed: Array<{ field: OrderedField, at: number }> = []
  for (const field of fields) {
    const re = compiled(labelPattern(field.label))
    const at = lines.flatMap((l, i) => isLabelLine(l, re, field.value) ? [i] : [])
    if (at.length > 1) return undefined
    if (at.length === 1) placed.push({ field, at: at[0]! })
  }
  if (placed.length < 2) return undefined
  placed.sort((a, b) => a.at - b.at)
  const page = lines[placed[0]!.at]!.page
  // A line that starts with one of the document's labels is no value (a free-text field's shape takes any line).
  const isValue = (l: TextLine): boolean => !startsWithLabel(normalizeText(l.text), bounds) && fields.some((f) => wholeValue(l, f.value) !== null)
  for (let i = placed[0]!.at - 1; i >= 0 && lines[i]!.page === page && !startsWithLabel(normalizeText(lines[i]!.text), bounds); i--) {
    if (isValue(lines[i]!)) return undefined
  }
  const isLabel = (i: number): boolean => placed.some((p) => p.at === i)
  const out: OrderedValues = {}
  let k = 0
  for (let i = placed[0]!.at + 1; i < lines.length && k < placed.length && lines[i]!.page === page; i++) {
    if (isLabel(i) || !isValue(lines[i]!)) continue
    const { field, at } = placed[k]!
    const m = wholeValue(lines[i]!, field.value)
    if (m === null || at > i) return undefined
    out[field.name] = hitOf(lines[i]!, m, 0, bounds)
    k++
  }
  return k === placed.length ? out : undefined
}

/**
 * Pairs `values` with `slots` (field indexes, -1 for a label that takes none) in order, by
 * counting pairings: forward[i][j] pairings of the first j values with the first i slots,
 * backward[i][j] of the rest; slot i takes value j in some complete pairing when
 * forward[i][j] · backward[i + 1][j + 1] > 0. Tried first with every label that is not
 * optional taking a value, then without that demand (its places then mostly conflicts).
 */
function pair (slots: number[], labels: TextLine[], values: TextLine[], fields: readonly OrderedField[], bounds: LabelBounds): OrderedValues[] | undefined {
  const fits = (i: number, j: number): RegExpExecArray | null => slots[i]! < 0 ? null : wholeValue(values[j]!, fields[slots[i]!]!.value)
  const attempt = (strict: boolean, m: number): OrderedValues[] | undefined => {
    const n = slots.length
    const canSkip = (i: number): boolean => !strict || slots[i]! < 0 || fields[slots[i]!]!.optional === true
    const forward = Array.from({ length: n + 1 }, () => new Array<number>(m + 1).fill(0))
    forward[0]![0] = 1
    for (let i = 0; i < n; i++) {
      for (let j = 0; j <= m; j++) {
        const here = forward[i]![j]!
        if (here === 0) continue
        if (canSkip(i)) forward[i + 1]![j] = Math.min(1e9, forward[i + 1]![j]! + here)
        if (j < m && fits(i, j) !== null) forward[i + 1]![j + 1] = Math.min(1e9, forward[i + 1]![j + 1]! + here)
      }
    }
    if (forward[n]![m] === 0) return undefined
    const backward = Array.from({ length: n + 2 }, () => new Array<number>(m + 2).fill(0))
    backward[n]![m] = 1
    for (let i = n - 1; i >= 0; i--) {
      for (let j = m; j >= 0; j--) {
        let ways = canSkip(i) ? backward[i + 1]![j]! : 0
        if (j < m && fits(i, j) !== null) ways += backward[i + 1]![j + 1]!
        backward[i]![j] = Math.min(1e9, ways)
      }
    }
    const out: OrderedValues[] = []
    const seen = new Map<number, number>()
    slots.forEach((f, i) => {
      if (f < 0) return
      const copy = seen.get(f) ?? 0
      seen.set(f, copy + 1)
      while (out.length <= copy) out.push({})
      const taken: number[] = []
      let empty = false
      for (let j = 0; j <= m; j++) {
        if (forward[i]![j]! === 0) continue
        if (j < m && fits(i, j) !== null && backward[i + 1]![j + 1]! > 0) taken.push(j)
        if (canSkip(i) && backward[i + 1]![j]! > 0) empty = true
      }
      const readings = taken.map((j) => hitOf(values[j]!, fits(i, j)!, 0, bounds))
      const distinct = [...new Set(readings.map((h) => h.value))]
      if (distinct.length === 0) return
      if (distinct.length === 1 && !empty) { out[copy]![fields[f]!.name] = readings[0]; return }
      out[copy]![fields[f]!.name] = conflict(labels[i]!.text, readings[0]!, distinct, empty)
    })
    return out
  }
  // Lines at the end of the value block that no label can take (a footer that looks like a
  // reference) are not its values: the longest run of values that pairs, strictly first.
  for (const strict of [true, false]) {
    for (let m = values.length; m > 0; m--) {
      const paired = attempt(strict, m)
      if (paired !== undefined) return paired
    }
  }
  return undefined
}

function conflict (label: string, first: Hit, values: string[], empty: boolean): Hit {
  const options = [...values.map((v) => `"${v}"`), ...(empty ? ['nothing (an empty box)'] : [])].join(' or ')
  return conflictHit(first, `the label "${label}" (page ${first.page}) is followed by its values in another column, and their order leaves it ${options}; the value is not guessed`)
}

// ---------------------------------------------------------------- a table, column by column

/** A column of a table handed over column by column. */
export interface OrderedColumn {
  name: string
  /** The line that heads the column (a pattern on the line's text, or a string that is the whole line). */
  header?: Label
  /** Each cell: one pattern per line of the cell (a row's name, then its period line); the first group of each is kept. */
  cell: RegExp | RegExp[]
}

/** One row of a table read column by column: each column's cell (one hit per line of the cell), or undefined where not placed. */
export type OrderedRow = Record<string, Hit[] | undefined>

export interface OrderedTable {
  rows: OrderedRow[]
  /** The totals row, when `totals` is printed and a column has one cell more than the rows. */
  totals: OrderedRow | undefined
  /** Columns whose cells could not be lined up with the rows, with why: the caller warns. */
  unplaced: string[]
}

/** A column's header test: a pattern on the line's text, or a string that is the whole line. */
function headerTest (header: Label): (l: TextLine) => boolean {
  return typeof header === 'string'
    ? (l) => normalizeText(l.text) === normalizedLabel(header)
    : (l) => compiled(header).exec(l.text) !== null
}

/**
 * The cells of a column: the run of consecutive cells right after its header line (or the
 * first run anywhere, without a header). Nothing may come between: a column printed blank
 * has no cells, rather than values of another block further down (the stub's, the next
 * column's).
 */
function cellsOf (lines: readonly TextLine[], column: OrderedColumn, bounds: LabelBounds, headers: Array<(l: TextLine) => boolean> = []): Hit[][] {
  const patterns = (Array.isArray(column.cell) ? column.cell : [column.cell]).map((p) => compiled(p))
  let from = 0
  if (column.header !== undefined) {
    from = lines.findIndex(headerTest(column.header))
    if (from < 0) return []
    from++
  }
  const cellAt = (at: number): Hit[] | undefined => {
    const hits: Hit[] = []
    for (const [k, re] of patterns.entries()) {
      const line = lines[at + k]
      if (line === undefined || line.page !== lines[at]!.page) return undefined
      const m = wholeValue(line, re)
      if (m === null) return undefined
      hits.push(hitOf(line, m, 0, bounds))
    }
    return hits
  }
  for (let at = from; at < lines.length; at++) {
    if (headers.some((h) => h(lines[at]!))) return []
    if (cellAt(at) === undefined) {
      if (column.header !== undefined) return []
      continue
    }
    const cells: Hit[][] = []
    for (let c = cellAt(at); c !== undefined; c = cellAt(at)) {
      cells.push(c)
      at += patterns.length
    }
    return cells
  }
  return []
}

/** True when a cell pattern reads an amount (`1.234,56`), so that a column of it printed blank sums to zero. */
function moneyShaped (cell: RegExp): boolean {
  const re = compiled(cell)
  return re.test('1.234,56') && !re.test('1001')
}

/** For money cells: the last minus the sum of the others, in cents (0: the last is their sum); undefined when some cell is not money. */
function endsWithSum (cells: Hit[][]): number | undefined {
  const cents = cells.map((c) => moneyCents(c[0]?.value ?? ''))
  if (cells.length < 2 || cents.some((c) => c === null)) return undefined
  return cents[cents.length - 1]! - cents.slice(0, -1).reduce((a: number, c) => a + c!, 0)
}

/**
 * `orderedColumns` on positionless lines: the `key` column's cells make the rows; every
 * other column with as many cells is lined up with them in order. With `totals` (a label
 * printed in the table, `Totais`), a column with one cell more ends with the totals cell
 * when that cell is at least the sum of the others (money); a money column with as many
 * cells whose last is the sum of the others may hold a blank row and the total, and is not
 * placed.
 * Two other orders a library hands a table over in are read too:
 * - **row by row under a row of headers**: the key's header followed at once by other
 *   columns' headers, one a line, then each row's cells in that order (the key's cell, then
 *   the next column's, …), as long as every column of the row matches;
 * - **the totals row after the last column**: a money column whose cells are the rows' and
 *   then the totals row's (one cell per money column placed before it, and its own), taken
 *   only when each of those trailing cells is the exact sum of its column's rows.
 * A column with another count is left out of every row and named in `unplaced`: where its
 * cells belong is not known (a blank cell prints nothing). Undefined when the key column has
 * no cell.
 */
export function orderedColumns (lines: readonly TextLine[], key: OrderedColumn, others: readonly OrderedColumn[], options: { totals?: Label }, bounds: LabelBounds): OrderedTable | undefined {
  const plain = readTable(lines, key, others, options, bounds, false)
  // No key cell right under its header (`Código`, then `Denominação`: headers stacked, the codes
  // after them): the streamed reading finds the key's cells further on.
  if (plain === undefined) return readTable(lines, key, others, options, bounds, true)
  if (plain.unplaced.length === 0) return plain
  // Columns left unplaced may be cells scattered through the table (pdftotext: the first code,
  // the money rows, then each denomination and the next code): the streamed reading, when it
  // places more and leaves no more unplaced.
  const streamed = readTable(lines, key, others, options, bounds, true)
  const placed = (t: OrderedTable | undefined): number => t === undefined ? -1 : t.rows.reduce((a, r) => a + Object.values(r).filter((c) => c !== undefined).length, 0)
  return streamed !== undefined && placed(streamed) > placed(plain) && streamed.unplaced.length <= plain.unplaced.length ? streamed : plain
}

/**
 * One reading of the table. `stream`: the key column's cells, and those of columns whose cell
 * spans several lines (a name and its period line: a shape no other cell has), are every
 * such cell from the column's header to the totals label (or the page's end), whatever
 * stands between them; the money columns are read as without it.
 */
function readTable (lines: readonly TextLine[], key: OrderedColumn, others: readonly OrderedColumn[], options: { totals?: Label }, bounds: LabelBounds, stream: boolean): OrderedTable | undefined {
  const headers = [key, ...others].flatMap((c) => c.header === undefined ? [] : [headerTest(c.header)])
  const totalsAt = options.totals === undefined ? -1 : lines.findIndex((l) => isLabelLine(l, compiled(labelPattern(options.totals!))))
  const byRow = headerGroups(lines, [key, ...others], bounds)
  const read = (column: OrderedColumn): Hit[][] => byRow.get(column.name) ??
    (stream && (column === key || Array.isArray(column.cell)) ? streamCells(lines, column, bounds, totalsAt) : cellsOf(lines, column, bounds, headers))
  const keyCells = read(key)
  if (keyCells.length === 0) return undefined
  const n = keyCells.length
  const rows: OrderedRow[] = keyCells.map((c) => ({ [key.name]: c }))
  const totalsPrinted = totalsAt >= 0
  let totals: OrderedRow | undefined
  const unplaced: string[] = []
  // Money columns placed with exactly n cells, in their order: a totals row after the last column sums them.
  const summed: Array<{ name: string, cells: Hit[][] }> = []
  // Money columns whose header prints no cell (blank in every row): their totals cell is a zero.
  const blank: Array<{ name: string, cells: Hit[][] }> = []
  for (const column of others) {
    const cells = read(column)
    if (cells.length === 0) {
      if (column.header !== undefined && lines.some(headerTest(column.header)) && !Array.isArray(column.cell) && moneyShaped(column.cell)) blank.push({ name: column.name, cells: [] })
      continue
    }
    // With a totals row, a column's last cell may be the total (the totals row ends the table):
    // n + 1 cells are the n rows and the total; n money cells whose last is the sum of the
    // others may be n - 1 rows (one printed blank) and the total: not placed.
    const blankAndTotal = totalsPrinted && cells.length === n && endsWithSum(cells) === 0
    // One cell more: the total, which is at least the sum of the rows (more when it counts
    // rows of earlier pages); a smaller last cell is another block's value.
    const withTotal = totalsPrinted && cells.length === n + 1 && (endsWithSum(cells) ?? 0) >= 0
    const trailing = totalsPrinted && cells.length > n + 1
      ? trailingTotals(cells, n, summed, column.name) ?? (blank.length > 0 ? trailingTotals(cells, n, others.flatMap((o) => [...summed, ...blank].filter((c) => c.name === o.name)), column.name) : undefined)
      : undefined
    if ((cells.length === n && !blankAndTotal) || withTotal || trailing !== undefined) {
      cells.slice(0, n).forEach((c, i) => { rows[i]![column.name] = c })
      if (cells.length === n + 1) (totals ??= {})[column.name] = cells[n]
      if (trailing !== undefined) totals = { ...totals, ...trailing }
      if (cells.length === n && cells.every((c) => moneyCents(c[0]?.value ?? '') !== null)) summed.push({ name: column.name, cells })
    } else {
      unplaced.push(`the column "${column.name}" prints ${cells.length} values for ${n} rows in an order that does not say which row each belongs to; they are not placed`)
    }
  }
  return { rows, totals, unplaced }
}

/**
 * Tables handed over row by row: a run of consecutive header lines (two columns or more, one
 * a line, in the order the rows then print their cells), then rows, each every column's cell
 * in that order, as long as every column of the row matches. The cells of every column of
 * such a run, by name (none for a column whose run has no whole row, or, for a run without
 * the key, whose last row is not the totals of the others).
 */
function headerGroups (lines: readonly TextLine[], columns: readonly OrderedColumn[], bounds: LabelBounds): Map<string, Hit[][]> {
  const out = new Map<string, Hit[][]>()
  const headerOf = (line: TextLine, taken: OrderedColumn[]): OrderedColumn | undefined =>
    columns.find((c) => !taken.includes(c) && c.header !== undefined && headerTest(c.header)(line))
  for (let start = 0; start < lines.length; start++) {
    const first = headerOf(lines[start]!, [])
    if (first === undefined || out.has(first.name)) continue
    const group: OrderedColumn[] = [first]
    for (let at = start + 1; at < lines.length && lines[at]!.page === lines[start]!.page; at++) {
      const next = headerOf(lines[at]!, group)
      if (next === undefined) break
      group.push(next)
    }
    if (group.length < 2) continue
    const patterns = group.map((c) => (Array.isArray(c.cell) ? c.cell : [c.cell]).map((p) => compiled(p)))
    const cells: Hit[][][] = group.map(() => [])
    let at = start + group.length
    for (;;) {
      const row: Hit[][] = []
      let k = at
      for (const cell of patterns) {
        const hits: Hit[] = []
        for (const re of cell) {
          const line = lines[k]
          const m = line === undefined || line.page !== lines[start]!.page ? null : wholeValue(line, re)
          if (m === null) break
          hits.push(hitOf(line!, m, 0, bounds))
          k++
        }
        if (hits.length < cell.length) break
        row.push(hits)
      }
      if (row.length < group.length) break
      row.forEach((c, i) => cells[i]!.push(c))
      at = k
    }
    // Consecutive headers are also what a blank column leaves in a table handed over column by
    // column (`Juros`, nothing, `Total`): a group without the key is taken only when its last
    // row is, column by column and to the cent, the sum of the rows above it (the totals row).
    // Led by the key, its first row whole, then rows without the key's cell (pdftotext: `Código`
    // and the money headers, the first code and its amounts, then the other rows' amounts, the
    // codes printed further down): the rest of the group, row by row, verified as a group
    // without the key; the key's cells are then read elsewhere (the streamed reading).
    if (group[0] === columns[0] && group.length > 2 && cells[0]!.length === 1) {
      const rest = patterns.slice(1)
      const more: Hit[][][] = rest.map(() => [])
      let k = at
      for (;;) {
        const row = rest.map((cell) => {
          const line = lines[k]
          const m = cell.length !== 1 || line === undefined || line.page !== lines[start]!.page ? null : wholeValue(line, cell[0]!)
          if (m === null) return undefined
          k++
          return [hitOf(line!, m, 0, bounds)]
        })
        if (row.some((c) => c === undefined)) { k -= row.filter((c) => c !== undefined).length; break }
        row.forEach((c, i) => more[i]!.push(c!))
      }
      const columnsAfter = more.map((m, i) => [cells[i + 1]![0]!, ...m])
      if (more[0]!.length >= 2 && columnsAfter.every((column) => endsWithSum(column) === 0)) {
        group.slice(1).forEach((c, i) => out.set(c.name, columnsAfter[i]!))
        start = k - 1
        continue
      }
    }
    const verified = group[0] === columns[0] || (cells[0]!.length >= 2 && cells.every((column) => endsWithSum(column) === 0))
    if (cells[0]!.length > 0 && verified) group.forEach((c, i) => out.set(c.name, cells[i]!))
    start = at - 1
  }
  return out
}

/**
 * Every cell of the column from its header line (the first line without a header) to the
 * totals label, or the page's end: cells of a shape only this column has, scattered among
 * other columns' cells.
 */
function streamCells (lines: readonly TextLine[], column: OrderedColumn, bounds: LabelBounds, totalsAt: number): Hit[][] {
  const patterns = (Array.isArray(column.cell) ? column.cell : [column.cell]).map((p) => compiled(p))
  const from = column.header === undefined ? 0 : lines.findIndex(headerTest(column.header)) + 1
  if (from === 0 && column.header !== undefined) return []
  const page = lines[from]?.page
  const to = totalsAt > from ? totalsAt : lines.length
  const cells: Hit[][] = []
  for (let at = from; at < to && lines[at]!.page === page;) {
    const hits: Hit[] = []
    for (const [k, re] of patterns.entries()) {
      const line = lines[at + k]
      const m = line === undefined || at + k >= to ? null : wholeValue(line, re)
      if (m === null) break
      hits.push(hitOf(line!, m, 0, bounds))
    }
    if (hits.length === patterns.length) {
      cells.push(hits)
      at += patterns.length
    } else at++
  }
  return cells
}

/**
 * The totals row printed after the last column's cells: `cells` (the column `name`'s) holds
 * the n rows' cells, then one cell per column of `summed` and its own last. Each trailing cell must be the exact
 * sum of its column's n cells (in cents); then the totals by column name, else undefined.
 */
function trailingTotals (cells: Hit[][], n: number, summed: ReadonlyArray<{ name: string, cells: Hit[][] }>, name: string): OrderedRow | undefined {
  const own = { name, cells: cells.slice(0, n) }
  const columns = [...summed, own]
  if (cells.length !== n + columns.length) return undefined
  const sumOf = (cs: Hit[][]): number | null => cs.reduce<number | null>((a, c) => { const v = moneyCents(c[0]?.value ?? ''); return a === null || v === null ? null : a + v }, 0)
  const out: OrderedRow = {}
  for (const [i, column] of columns.entries()) {
    const cell = cells[n + i]!
    const sum = sumOf(column.cells)
    if (sum === null || moneyCents(cell[0]?.value ?? '') !== sum) return undefined
    out[column.name] = cell
  }
  return out
}
// ---------------------------------------------------------------- a label printed once per block

/**
 * `under` when positions are lost: the value under each place `labels` is printed (the
 * grid reader, text-grid.ts, from that line on). With `of` blocks printing the label (a
 * document's parties, in their printed order), the k-th place is block k's, and a label
 * printed another number of times gives nothing: which block a place belongs to is not
 * known. With one block, every place must give the same value (a total printed twice);
 * places that disagree give a conflict.
 */
export function underByOrder (given: readonly TextLine[], labels: string[], k: number, of: number, bounds: LabelBounds, options: ByOrderOptions = {}): Hit | undefined {
  const lines = options.passOver === undefined ? given : splitTrailingLabels(given, bounds)
  const wanted = labels.map(normalizedLabel)
  const places: number[] = []
  lines.forEach((l, i) => { if (l.runs.some(({ run }) => wanted.includes(normalizedRun(run)))) places.push(i) })
  const read = (at: number): Hit | undefined => options.passOver === undefined
    ? gridUnder(lines.slice(at, at + 2) as TextLine[], labels, {}, bounds)
    : inRuns(lines, at, bounds, options)
  if (of > 1) return places.length === of ? read(places[k]!) : undefined
  const hits = places.map(read).filter((h): h is Hit => h !== undefined)
  const distinct = [...new Set(hits.map((h) => h.value))]
  if (distinct.length <= 1) return hits[0]
  return conflictHit(hits[0]!, `the label "${labels[0]!}" is printed ${places.length} times, positions lost, with values that disagree (${distinct.map((v) => `"${v}"`).join(', ')}); the value is not guessed`)
}

/** How `underByOrder` reads a grid whose rows were handed over as runs of labels and runs of values. */
export interface ByOrderOptions {
  /**
   * Lines that are neither a label nor a value (a section's title, a piece of a sentence the
   * document prints), in their detection form: passed over. Given, a label's value is read
   * by runs (`inRuns`) instead of on the next line.
   */
  passOver?: (normalized: string) => boolean
  /** The cell may wrap: a label alone before several value lines takes them all. */
  rest?: boolean
  /** The lines whose order is judged (column by column or not): the whole document's, when `lines` are a section's. */
  orderOf?: readonly TextLine[]
}

/**
 * How many labels the whole line is: 1 for one of the document's labels or cell labels (a
 * colon aside), k for k labels side by side that a library joined into one line (`País
 * Resultado da Prestação do Serviço Município de Incidência do ISSQN`), 0 when anything else
 * is on it (the fewest labels that cover it, each ending at a word boundary).
 */
function labelCount (line: TextLine, bounds: LabelBounds): number {
  return cachedFor(LABEL_COUNTS, bounds, line, () => countLabels(line, bounds))
}
const LABEL_COUNTS = new WeakMap<LabelBounds, WeakMap<TextLine, number>>()

/** `compute()`, worked out once for each pair of `outer` and `inner` (kept while both live). */
function cachedFor<O extends object, I extends object, V> (cache: WeakMap<O, WeakMap<I, V>>, outer: O, inner: I, compute: () => V): V {
  let known = cache.get(outer)
  if (known === undefined) cache.set(outer, known = new WeakMap())
  let value = known.get(inner)
  if (value === undefined) known.set(inner, value = compute())
  return value
}

function countLabels (line: TextLine, bounds: LabelBounds): number {
  const n = normalizeText(line.text).replace(/\s*:$/, '')
  if (bounds.includes(n) || isCellLabel(n, bounds)) return 1
  const all = bounds.cells === undefined ? bounds : [...bounds, ...bounds.cells]
  // fewest[i]: the fewest labels covering n from i on (Infinity: none).
  const fewest = new Array<number>(n.length + 1).fill(Infinity)
  fewest[n.length] = 0
  for (let i = n.length - 1; i >= 0; i--) {
    if (i > 0 && n[i - 1] !== ' ') continue
    for (const l of all) {
      if (!n.startsWith(l, i)) continue
      const next = n[i + l.length] === ' ' ? i + l.length + 1 : i + l.length
      if (next === n.length || n[i + l.length] === ' ') fewest[i] = Math.min(fewest[i]!, 1 + fewest[next]!)
    }
  }
  return Number.isFinite(fewest[0]) ? fewest[0]! : 0
}

/**
 * A run of more labels than this is no row of cells side by side: several rows handed over
 * column by column, whose values need not come in the labels' order. It is not paired.
 */
const MAX_ROW = 6

/**
 * A library that joins a row's cells into one line hands a cell's label over glued to the
 * value before it (`234COMPETÊNCIA DA NFS-E`, `RUA X, 161E-mail`), or a title and the label
 * beside it on one line (`TOMADOR DO SERVIÇO CNPJ / CPF / NIF`). Such a line is split into
 * its text and the label that ends it (again while what is left ends with one): where the
 * label is glued to the text before it, or where that text is itself a whole label. A text
 * ending with a label's words after a space is left whole (a description may end so).
 */
function splitTrailingLabels (lines: readonly TextLine[], bounds: LabelBounds): readonly TextLine[] {
  return cachedFor(SPLIT, bounds, lines, () => lines.flatMap((l) => cachedFor(SPLIT, bounds, l, () => splitLine(l, bounds))))
}
const SPLIT = new WeakMap<LabelBounds, WeakMap<object, readonly TextLine[]>>()

function splitLine (line: TextLine, bounds: LabelBounds): TextLine[] {
  const text = line.text
  if (!/\p{L}/u.test(text) || labelCount(line, bounds) > 0) return [line]
  const all = bounds.cells === undefined ? bounds : [...bounds, ...bounds.cells]
  // Most lines end with no label: one look at the whole line's detection form.
  const whole = normalizeText(text).replace(/\s*:$/, '')
  if (!all.some((l) => whole.endsWith(l))) return [line]
  const labels = new Set(all)
  for (let k = 1; k < text.length - 1; k++) {
    if (/\s/.test(text[k]!) || !labels.has(normalizeText(text.slice(k)).replace(/\s*:$/, ''))) continue
    const before = text.slice(0, k)
    const glued = !/\s$/.test(before) && !/^[\s/-]/.test(text.slice(k))
    const head = piece(line, before.trimEnd())
    if (!glued && labelCount(head, bounds) === 0) continue
    return [...splitLine(head, bounds), piece(line, text.slice(k))]
  }
  return [line]
}

/** A piece of a line handed over without positions: its text, the line's box. */
function piece (line: TextLine, text: string): TextLine {
  const run = { ...line.runs[0]!.run, text }
  return { ...line, text, runs: [{ run, start: 0 }] }
}

/** A value with no word: a number, a date, an amount, a code (`R$` aside). */
const WORDLESS = /^[^\p{L}]*$/u

/**
 * The value of the label at `at` when a grid's rows were handed over as a run of label lines
 * followed by a run of value lines (a row of cells side by side, read labels first: a
 * library's reading order). Lines `passOver` accepts are skipped among the values; between
 * two labels one ends the run (a title starts another section). With as many values as
 * labels in the run, they pair in order; a label alone before several values takes the
 * first only when it has no word (a date, an amount: a text could be any cell's) or, with
 * `rest`, all of them (its cell wrapped). Any other count gives nothing: which value is
 * whose is not known (a cell printed empty prints no line), and so does a run of more than
 * MAX_ROW labels.
 */
function inRuns (lines: readonly TextLine[], at: number, bounds: LabelBounds, options: ByOrderOptions): Hit | undefined {
  const skip = passedOver(options.passOver!)
  const count = (i: number): number => labelCount(lines[i]!, bounds)
  const run = runAt(lines, at, bounds, skip)
  const read = (taken: number[]): Hit | undefined => {
    const first = lines[taken[0]!]!
    // A value line that starts with a label is that label's line (as on a page: text-grid.ts `under`).
    if (startsWithLabel(normalizeText(first.text), bounds)) return undefined
    const value = boundedRuns(taken.flatMap((j) => lines[j]!.runs), bounds)
    return runsHit(first, value.runs, value.text, taken.map((j) => lines[j]!.text).join('\n'))
  }
  if (run === undefined) return undefined
  const { index, total, values } = run
  if (columnOrdered(options.orderOf === undefined ? lines : splitTrailingLabels(options.orderOf, bounds), bounds, skip)) {
    // Column by column: a label's value is the line right after it.
    if (options.rest === true && total === 1 && values.length > 1) return read(values)
    return values[0] === at + 1 && count(at) === 1 ? read([at + 1]) : undefined
  }
  if (values.length === total) return read([values[index]!])
  if (total !== 1 || values.length < 2) return undefined
  if (options.rest === true) return read(values)
  return WORDLESS.test(lines[values[0]!]!.text.replace(/R\$/g, '')) ? read([values[0]!]) : undefined
}

/** `passOver` on a line, asked once per line. */
function passedOver (passOver: (normalized: string) => boolean): (l: TextLine) => boolean {
  return (l) => cachedFor(PASSED_OVER, passOver, l, () => passOver(normalizeText(l.text)))
}
const PASSED_OVER = new WeakMap<(normalized: string) => boolean, WeakMap<TextLine, boolean>>()

/**
 * The run of labels holding line `at` (a line passed over between two labels, a section's
 * title, ends it): how many labels come before `at`'s in it, how many it holds, and the
 * value lines after it up to the next label (lines passed over skipped), across pages. Undefined for a
 * run of more than MAX_ROW labels.
 */
function runAt (lines: readonly TextLine[], at: number, bounds: LabelBounds, skip: (l: TextLine) => boolean): { index: number, total: number, values: number[] } | undefined {
  // Pages are crossed: a page of text drawn longer than a sheet goes on on the next one.
  const onPage = (i: number): boolean => i >= 0 && i < lines.length
  const count = (i: number): number => labelCount(lines[i]!, bounds)
  let start = at
  while (onPage(start - 1) && !skip(lines[start - 1]!) && count(start - 1) > 0) start--
  let end = at
  while (onPage(end + 1) && !skip(lines[end + 1]!) && count(end + 1) > 0) end++
  let index = 0
  for (let i = start; i < at; i++) index += count(i)
  let total = index
  for (let i = at; i <= end; i++) total += count(i)
  if (total > MAX_ROW) return undefined
  const values: number[] = []
  for (let i = end + 1; onPage(i); i++) {
    if (skip(lines[i]!)) continue
    if (count(i) > 0) break
    values.push(i)
  }
  return { index, total, values }
}

/**
 * True when the text (`lines`, every page: one program ordered them all) came column by
 * column: each label followed by its value (a cell printed empty by nothing), so that at
 * least three runs of labels in four are one label, and fewer than two runs of two to
 * MAX_ROW labels are followed by as many values (a grid handed over row by row, labels
 * first). A run's counts say nothing then; otherwise (rows, or an order that is neither)
 * they are all there is to pair by.
 */
function columnOrdered (lines: readonly TextLine[], bounds: LabelBounds, skip: (l: TextLine) => boolean): boolean {
  let columns = COLUMN_ORDERED.get(lines)
  if (columns === undefined) {
    let rows = 0
    let single = 0
    let runs = 0
    for (let i = 0; i < lines.length; i++) {
      if (skip(lines[i]!) || labelCount(lines[i]!, bounds) === 0) continue
      if (i > 0 && !skip(lines[i - 1]!) && labelCount(lines[i - 1]!, bounds) > 0) continue
      const run = runAt(lines, i, bounds, skip)
      runs++
      if (run === undefined) continue
      if (run.total === 1) single++
      else if (run.values.length === run.total) rows++
    }
    columns = rows < 2 && single * 4 >= runs * 3
    COLUMN_ORDERED.set(lines, columns)
  }
  return columns
}
const COLUMN_ORDERED = new WeakMap<readonly TextLine[], boolean>()

// ---------------------------------------------------------------- a wrapped label over its value

/**
 * `labelValue` when positions are lost and the label is wrapped: the label fills two or
 * three consecutive lines (joined by a space, nothing after it but a colon) and its value
 * starts the next line. (A label on one line over its value is read by label-value.ts.)
 */
export function wrappedLabelOverValue (lines: readonly TextLine[], label: Label, value: RegExp, bounds: LabelBounds): Hit | undefined {
  const labelRe = compiled(labelPattern(label))
  for (let i = 0; i < lines.length; i++) {
    for (let k = 2; k <= 3 && i + k < lines.length; k++) {
      const parts = lines.slice(i, i + k)
      const below = lines[i + k]!
      if (parts.some((l) => l.page !== below.page)) break
      const joined = parts.map((l) => l.text).join(' ')
      const m = labelRe.exec(joined)
      // The label must reach into the last part and leave nothing after it.
      if (m === null || m.index + m[0].length <= joined.length - parts[k - 1]!.text.length || joined.slice(m.index + m[0].length).replace(/:/g, '').trim() !== '') continue
      if (m.index >= parts[0]!.text.length) continue
      const v = compiled(value).exec(below.text)
      if (v !== null && below.text.slice(0, v.index).trim() === '') return hitOf(below, v, 0, bounds)
    }
  }
  return undefined
}
