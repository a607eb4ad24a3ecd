/**
 * The grid queries of the text API (TextRegion.under, table, column): forms whose values
 * sit under their labels, and tables read by their column headers, on visual lines.
 */
import { boundedRuns, exec, isCellLabel, startsWithLabel, lineTests, normalizedLabel, normalizedRun, runTest, runsHit } from './text-match.js'
import type { LabelBounds } from './text-match.js'
import type { Hit, Label, RowOptions, TableRow, TextLine } from './text-types.js'

/** A value may start a little left of its label (centred or padded cells). */
const SLACK = 2
/** Under-label values sit within this many points below their label's line. */
const MAX_UNDER_GAP = 16

/** A cell's text checked against `pattern`: a hit on the cell (its first group as value), or null when it does not match. */
function cellHit (line: TextLine, cellRuns: TextLine['runs'], pattern: RegExp | undefined, labels: LabelBounds): Hit | null {
  const { text, runs } = boundedRuns(cellRuns, labels)
  if (pattern === undefined) return runsHit(line, runs, text)
  const m = exec(pattern, text)
  if (m === null) return null
  const value = (m[1] ?? m[0]).trim()
  return { ...runsHit(line, runs, value), groups: [...m].slice(1) }
}

/**
 * TextRegion.under on `lines`. The value is on the first line below the label (same page,
 * within MAX_UNDER_GAP) with runs in the label's column, where the first run starts under
 * the label itself (a run of a neighbouring block, a QR caption, that only reaches into the
 * column is not its value); a line whose column starts with a label ends the search (the
 * cell is empty and the next row of labels follows).
 */
export function under (lines: TextLine[], labels: string | string[], options: { rest?: boolean } = {}, bounds: LabelBounds = []): Hit | undefined {
  const wanted = (Array.isArray(labels) ? labels : [labels]).map(normalizedLabel)
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!
    const label = line.runs.find(({ run }) => wanted.includes(normalizedRun(run)))
    if (label === undefined) continue
    const left = label.run.box.x - SLACK
    const labelRight = label.run.box.x + label.run.box.width + SLACK
    let right = Infinity
    for (const { run } of line.runs) if (run.box.x > label.run.box.x + 1) right = Math.min(right, run.box.x - SLACK)
    const inColumn = (l: TextLine): TextLine['runs'] => {
      const runs = l.runs.filter(({ run }) => run.box.x >= left && run.box.x < right)
      return runs.length > 0 && runs[0]!.run.box.x <= labelRight ? runs : []
    }
    let at = -1
    for (let j = i + 1; j < lines.length; j++) {
      const below = lines[j]!
      if (below.page !== line.page || line.box.y - (below.box.y + below.box.height) > MAX_UNDER_GAP) break
      const runs = inColumn(below)
      if (runs.length === 0) continue
      if (startsWithLabel(normalizedRun(runs[0]!.run), bounds) || isCellLabel(normalizedRun(runs[0]!.run), bounds)) break
      at = j
      break
    }
    if (at < 0) return undefined
    const below = lines[at]!
    const runs = inColumn(below)
    const sources = [below.text]
    if (options.rest === true) {
      for (const more of lines.slice(at + 1)) {
        if (more.page !== below.page) break
        const extra = inColumn(more)
        if (extra.length === 0) break
        runs.push(...extra)
        sources.push(more.text)
      }
    }
    const value = boundedRuns(runs, bounds)
    return runsHit(below, value.runs, value.text, sources.join('\n'))
  }
  return undefined
}

/** TextRegion.table on `lines`. */
export function table (lines: TextLine[], headers: Label[], options: RowOptions = {}, labels: LabelBounds = []): TableRow[] | undefined {
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
    return rows(lines, i, line, bounds, options, labels)
  }
  return undefined
}

/** TextRegion.column on `lines`. */
export function column (lines: TextLine[], header: Label, options: RowOptions = {}, labels: LabelBounds = []): Hit[] {
  const test = runTest(header)
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!
    const found = line.runs.find((r) => test(r.run))
    if (found === undefined) continue
    const { x, width } = found.run.box
    return rows(lines, i, line, [{ index: 0, lo: x - SLACK, hi: x + width + SLACK, overlap: true }], options, labels).map((r) => r.cells[0]!)
  }
  return []
}

/** The rows under a header line, each run in the column whose bounds hold it (or, with `overlap`, that it overlaps). */
function rows (lines: TextLine[], headerAt: number, header: TextLine, bounds: Array<{ index: number, lo: number, hi: number, overlap?: boolean }>, options: RowOptions, labels: LabelBounds): TableRow[] {
  const out: TableRow[] = []
  const maxGap = options.maxGap ?? header.box.height * 1.5
  const until = lineTests(options.until)
  let previous = header
  for (const line of lines.slice(headerAt + 1)) {
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
      const hit = cellHit(line, runs, options.cell, labels)
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
