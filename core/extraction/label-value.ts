/**
 * The one reader of "the value of this label" (TextRegion.labelValue): it pairs a label with
 * its value by position, whatever line order the file or another extractor gave the text.
 *
 * Readings, for each place the label is printed (reading order; the first place that gives
 * a value wins):
 * - `after`: the value after the label on its baseline (the rest of the label's line);
 * - `under`: the value on the next line below whose runs sit in the label's column (between
 *   the text before and after the label on its line), starting the cell;
 * - `wrapped`: a label wrapped over two or three lines, its value after the label's part on
 *   the first line or after its last part on the last line;
 * - `row`: the label in a row of labels, the values in the next row, paired by order when the
 *   positions are lost (a text fixture: each row one run from the margin);
 * - `serialized`: a column of bare labels followed by a column of as many values (two columns
 *   written one after the other);
 * - `below`: with `linesBelow`, the whole next lines (a label over its value, positions lost).
 *
 * `after` and `under` are both read; when they disagree the value is not guessed: the hit is a
 * conflict (`conflict` says why), which `ctx.take` turns into null and a warning. So are the two
 * `wrapped` readings.
 */
import { compiled, conflictHit, hitOf, isCellLabel, labelCut, startsWithLabel, wordIndex } from './text-match.js'
import type { LabelBounds } from './text-match.js'
import type { Hit, Label, TextLine, TextRun } from './text-types.js'
import { normalizeText } from './values.js'

/** Options of TextRegion.labelValue. */
export interface LabelValueOptions {
  /** Only this 1-based page. */
  page?: number
  /** Also try the whole next lines, in order (positions lost): the old `after(…, { linesBelow })`. */
  linesBelow?: number
}

/** A value's column may start a little left of its label (centred or padded cells). */
const SLACK = 2
/** Runs closer than this many heights are one cell. */
const CELL_GAP = 1.5
/** A value under its label sits within this many label heights below it. */
const UNDER_DEPTH = 2.6
/** A wrapped label's next line sits within this many line heights below. */
const WRAP_DEPTH = 1.8

const ACCENTS: Record<string, string> = { A: 'AÁÀÂÃÄ', E: 'EÉÈÊË', I: 'IÍÌÎÏ', O: 'OÓÒÔÕÖ', U: 'UÚÙÛÜ', C: 'CÇ', N: 'NÑ' }

/** A string label as a pattern: accent- and case-blind, any run of spaces between its words. */
export function labelPattern (label: Label): RegExp {
  if (typeof label !== 'string') return label
  const source = normalizeText(label).split(' ').map((word) => [...word].map((ch) => {
    const variants = ACCENTS[ch]
    return variants === undefined ? ch.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&') : `[${variants}${variants.toLowerCase()}]`
  }).join('')).join('\\s+')
  return new RegExp(source, 'i')
}

/** The x of character `index` of a line: runs are cut in proportion to their characters. */
function charX (line: TextLine, index: number): number {
  for (const { run, start } of line.runs) {
    const len = run.text.length
    if (index >= start && index <= start + len) return run.box.x + (len === 0 ? 0 : run.box.width * (index - start) / len)
  }
  const last = line.runs[line.runs.length - 1]
  return index <= 0 || last === undefined ? line.box.x : last.run.box.x + last.run.box.width
}

/** A line made of some of a line's runs (left to right), its text rebuilt, for hits with boxes. */
function subLine (line: TextLine, runs: TextRun[]): TextLine {
  let text = ''
  const placed: TextLine['runs'] = []
  let right = -Infinity
  for (const run of runs) {
    const piece = run.text.replace(/\s+/g, ' ')
    if (text !== '' && !text.endsWith(' ') && !piece.startsWith(' ') && run.box.x - right > run.box.height * 0.15) text += ' '
    placed.push({ run, start: text.length })
    text += piece
    right = Math.max(right, run.box.x + run.box.width)
  }
  return { page: line.page, text, box: line.box, runs: placed }
}

/** A cell that starts like `Some label:` is the next field, not a value. */
const LABEL_LIKE = /^\s*\p{L}[^:\d]{0,60}:(?:\s|$)/u

const height = (line: TextLine): number => Math.min(...line.runs.map(({ run }) => run.box.height))

/** A reading of the value: where it was found, and the hit. */
interface Reading { how: string, hit: Hit }

/** `value` at the start of `text` (leading spaces aside), or null. */
function leading (value: RegExp, text: string): RegExpExecArray | null {
  const m = compiled(value).exec(text)
  return m !== null && text.slice(0, m.index).trim() === '' ? m : null
}

/**
 * `under`: on the first line below (same page, close) with runs in the label's column, the
 * value at the start of that cell. The column runs from the end of the text before the label
 * to the start of the text after it, on the label's line; a run that crosses either border is
 * a row printed as one piece (positions lost), read by `row` instead.
 */
function under (lines: TextLine[], at: number, from: number, to: number, value: RegExp, bounds: LabelBounds): Reading | undefined {
  const line = lines[at]!
  const before = line.text.slice(0, from).trimEnd()
  const afterAt = to + (line.text.slice(to).length - line.text.slice(to).trimStart().length)
  const lo = before === '' ? -Infinity : charX(line, before.length)
  const hi = afterAt >= line.text.length ? Infinity : charX(line, afterAt)
  const labelLeft = charX(line, from)
  const labelRight = charX(line, to)
  const h = height(line)
  for (let j = at + 1; j < lines.length; j++) {
    const below = lines[j]!
    if (below.page !== line.page || line.box.y - (below.box.y + below.box.height) > UNDER_DEPTH * h) break
    // The runs under the label itself, and those that continue them rightwards as one cell (up to the text after the label).
    const all = below.runs.map(({ run }) => run)
    const runs = all.filter((r) => r.box.x < labelRight && r.box.x + r.box.width > labelLeft - SLACK)
    if (runs.length === 0) continue
    for (const r of all) {
      const last = runs[runs.length - 1]!
      if (r.box.x > last.box.x && !runs.includes(r) && r.box.x < hi && r.box.x - (last.box.x + last.box.width) <= CELL_GAP * r.box.height) runs.push(r)
    }
    if (runs.some((r) => r.box.x < lo - SLACK || (hi !== Infinity && r.box.x + r.box.width > hi + SLACK && r.box.x < labelLeft - SLACK))) return undefined
    const cell = subLine(below, runs)
    if (startsWithLabel(normalizeText(cell.text), bounds) || LABEL_LIKE.test(cell.text) || isCellLabel(normalizeText(runs[0]!.text), bounds)) return undefined
    const m = leading(value, cell.text)
    return m === null ? undefined : { how: 'under it', hit: hitOf(cell, m, 0, bounds) }
  }
  return undefined
}

/**
 * The labels a line is made of, left to right, as starts in its detection form: the
 * document's labels and `extra` (the label being read), the longer first where two start
 * together, none inside another. Undefined when the line holds anything else (a value).
 */
function labelRow (text: string, bounds: LabelBounds, extra: string): number[] | undefined {
  const n = normalizeText(text)
  const found: Array<[number, number]> = []
  for (const l of new Set([...bounds, extra])) {
    if (l === '') continue
    for (let i = n.indexOf(l); i >= 0; i = n.indexOf(l, i + 1)) {
      if ((i === 0 || n[i - 1] === ' ') && !/[\p{L}\p{N}]/u.test(n.charAt(i + l.length))) found.push([i, i + l.length])
    }
  }
  found.sort((x, y) => x[0] - y[0] || y[1] - x[1])
  const kept: Array<[number, number]> = []
  for (const f of found) if (kept.length === 0 || f[0] >= kept[kept.length - 1]![1]) kept.push(f)
  let rest = n
  for (const [s, e] of [...kept].reverse()) rest = rest.slice(0, s) + rest.slice(e)
  if (rest.replace(/[\s:]/g, '') === '') return kept.map(([s]) => s)
  // Labels the plugin does not list: a line of `Words:` pieces only (`CPF Responsável: Código de Acesso: Período:`).
  const pieces = [...text.matchAll(/[^:\s][^:]*?:(?=\s|$)/gu)]
  const covered = pieces.reduce((t, p) => t.replace(p[0], ''), text).trim() === ''
  return covered && pieces.every((p) => !/\d/.test(p[0])) ? pieces.map((p) => p.index) : undefined
}

/** Lower-case words that join the words around them into one value (`01/03/2024 a 31/03/2024`, `Maria da Silva`). */
const JOINERS = new Set(['a', 'à', 'até', 'e', 'de', 'da', 'do', 'das', 'dos'])

/**
 * A row of values printed as one run (positions lost) cut into `n` cells, by order: its words
 * when it prints n; else its pieces set apart by two spaces or more, and its words with each
 * lower-case joiner (`a`, `de`, `da`, …) binding the words on either side, each when it gives
 * n cells. Every cut that gives n cells (none, one, or two that may disagree).
 */
function orderedCells (r: TextRun, n: number): TextRun[][] {
  const w = r.box.width / Math.max(1, r.text.length)
  const cellOf = ([s, e]: [number, number]): TextRun => ({ text: r.text.slice(s, e), box: { x: r.box.x + w * s, y: r.box.y, width: w * (e - s), height: r.box.height } })
  const words = [...r.text.matchAll(/\S+/g)].map((m): [number, number] => [m.index, m.index + m[0].length])
  if (words.length === n) return [words.map(cellOf)]
  const cuts: Array<Array<[number, number]>> = []
  const gapped = [...r.text.matchAll(/\S+(?: \S+)*/g)].map((m): [number, number] => [m.index, m.index + m[0].length])
  if (gapped.length === n) cuts.push(gapped)
  const joiner = (i: number): boolean => i > 0 && i < words.length - 1 && JOINERS.has(r.text.slice(...words[i]!))
  const joined: Array<[number, number]> = []
  words.forEach((word, i) => {
    if (joiner(i) || joiner(i - 1)) joined[joined.length - 1]![1] = word[1]
    else joined.push([...word])
  })
  if (joined.length === n && joined.length < words.length) cuts.push(joined)
  return cuts.map((c) => c.map(cellOf))
}

/**
 * A row of values with more runs than labels, its labels each a run of their own: each value
 * run goes to the label whose column it starts in (from the label's left edge to the next
 * label's), runs of one column joined as one cell. Empty (no cut) when the label line is not
 * one run a label, or a value starts left of the first label or a column gets no value.
 */
function byColumn (line: TextLine, runs: TextRun[], n: number): TextRun[][] {
  const heads = line.runs.map(({ run }) => run)
  if (heads.length !== n || runs.length < n) return []
  const cells: TextRun[][] = heads.map(() => [])
  for (const r of runs) {
    let k = -1
    for (let i = 0; i < n; i++) if (r.box.x >= heads[i]!.box.x - SLACK) k = i
    if (k < 0) return []
    cells[k]!.push(r)
  }
  if (cells.some((c) => c.length === 0)) return []
  return [cells.map((c) => {
    const first = c[0]!
    const last = c[c.length - 1]!
    return { text: c.map((r) => r.text.trim()).join(' '), box: { ...first.box, width: last.box.x + last.box.width - first.box.x } }
  })]
}

/**
 * `row`, by order: the label is the k-th of n labels on its line and nothing else is printed
 * there; the next line holds n values (n runs, else, one run, n cells: see orderedCells): the
 * k-th is its value.
 */
function row (lines: TextLine[], at: number, from: number, to: number, value: RegExp, bounds: LabelBounds): Reading | undefined {
  const line = lines[at]!
  const next = lines[at + 1]
  if (next === undefined || next.page !== line.page) return undefined
  const starts = labelRow(line.text, bounds, normalizeText(line.text.slice(from, to)))
  const mine = normalizeText(line.text.slice(0, from)).length
  const k = starts?.findIndex((s) => Math.abs(s - (mine === 0 ? 0 : mine + 1)) <= 1) ?? -1
  if (starts === undefined || starts.length < 2 || k < 0) return undefined
  if (startsWithLabel(normalizeText(next.text), bounds) || LABEL_LIKE.test(next.text)) return undefined
  const runs = next.runs.map(({ run }) => run)
  // n runs; else one run cut by order (every cut that gives n cells is read; cuts that disagree are a conflict).
  const cuts = runs.length === starts.length ? [runs] : runs.length === 1 ? orderedCells(runs[0]!, starts.length) : byColumn(line, runs, starts.length)
  const readings: Reading[] = []
  for (const pieces of cuts) {
    const cell = subLine(next, [pieces[k]!])
    const m = leading(value, cell.text)
    if (m !== null) readings.push({ how: 'in the row of values under its row of labels', hit: { ...hitOf(cell, m, 0, bounds), source: next.text } })
  }
  const hit = decide(line.text.slice(from, to).trim(), readings)
  return hit === undefined ? undefined : { how: readings[0]!.how, hit }
}

/**
 * The labels a line starts with, back to back (listed labels and `own`, the longer first), as
 * [start, end) in the line's text, and where the text after them starts.
 */
function leadingLabels (text: string, bounds: LabelBounds, own: string): { labels: Array<[number, number]>, rest: number } {
  const { starts, offsets, joined } = wordIndex(text)
  const known = [...new Set([...bounds, own])].filter((l) => l !== '').sort((a, b) => b.length - a.length)
  const labels: Array<[number, number]> = []
  let k = 0
  while (k < starts.length) {
    const at = offsets[k]!
    const l = known.find((c) => joined.startsWith(c, at) && !/[\p{L}\p{N}]/u.test(joined.charAt(at + c.length)))
    if (l === undefined) break
    // The label ends inside word `end - 1` (its detection form is whole words, a colon aside).
    let end = k
    while (end < starts.length && offsets[end]! < at + l.length) end++
    const stop = end < starts.length ? starts[end]! : text.length
    labels.push([starts[k]!, text.slice(0, stop).trimEnd().length])
    k = end
  }
  return { labels, rest: k < starts.length ? starts[k]! : text.length }
}

/**
 * `row` on one line (a row of labels then its row of values, as a library that loses positions
 * joins them: `CPF Responsável: Código de Acesso: Período: 622.253.080-04 0707159 05/2020`): the
 * line starts with n >= 2 listed labels back to back, the label read among them, and the values
 * after them (up to the next listed label) cut by order into n cells (orderedCells). Undefined
 * when the line is not such a row or its values do not cut into n cells; else the reading (none
 * when the k-th cell is not a value of the label; a conflict when two cuts disagree).
 */
function inlineRow (line: TextLine, from: number, value: RegExp, bounds: LabelBounds, own: string): { reading: Reading | undefined } | undefined {
  const { labels, rest } = leadingLabels(line.text, bounds, own)
  const k = labels.findIndex(([s, e]) => s <= from && from < e)
  if (labels.length < 2 || k < 0 || rest >= line.text.length) return undefined
  const tail = line.text.slice(rest)
  const values = tail.slice(0, labelCut(tail, bounds)).trimEnd()
  if (values === '' || LABEL_LIKE.test(values)) return undefined
  const x = charX(line, rest)
  const h = height(line)
  const run: TextRun = { text: values, box: { x, y: line.box.y, width: charX(line, rest + values.length) - x, height: h } }
  const cuts = orderedCells(run, labels.length)
  if (cuts.length === 0) return undefined
  const readings: Reading[] = []
  for (const pieces of cuts) {
    const cell = subLine(line, [pieces[k]!])
    const m = leading(value, cell.text)
    if (m !== null) readings.push({ how: 'in the row of values after its row of labels on their line', hit: { ...hitOf(cell, m, 0, bounds), source: line.text } })
  }
  const hit = decide(line.text.slice(labels[k]![0], labels[k]![1]).trim(), readings)
  return { reading: hit === undefined ? undefined : { how: readings[0]!.how, hit } }
}

/** A column of labels followed by more values than labels: no value can be paired, by order or under. */
const AMBIGUOUS = 'ambiguous'

/** True when a line's detection form is one of the labels, whole (a colon aside). */
function bareLabel (line: TextLine, bounds: LabelBounds, own: string): boolean {
  const n = normalizeText(line.text).replace(/\s*:$/, '')
  return [...bounds, own].some((l) => l.replace(/\s*:$/, '') === n)
}

/**
 * `serialized`: the label is the k-th line of a block of bare labels; the block is followed
 * by as many value lines; the k-th of those holds the value.
 */
function serialized (lines: TextLine[], at: number, value: RegExp, bounds: LabelBounds, own: string): Reading | typeof AMBIGUOUS | undefined {
  const page = lines[at]!.page
  const isBare = (i: number): boolean => lines[i] !== undefined && lines[i]!.page === page && bareLabel(lines[i]!, bounds, own)
  if (!isBare(at)) return undefined
  let first = at
  while (isBare(first - 1)) first--
  let last = at
  while (isBare(last + 1)) last++
  const count = last - first + 1
  if (count < 2) return undefined
  const values = lines.slice(last + 1, last + 1 + count)
  if (values.length < count || values.some((l) => l.page !== page || startsWithLabel(normalizeText(l.text), bounds) || LABEL_LIKE.test(l.text))) return undefined
  // More values than labels (a label above the block not recognised as one): the order no longer pairs them.
  const after = lines[last + 1 + count]
  const bottom = values[count - 1]!
  const pitch = values[count - 2]!.box.y - (bottom.box.y + bottom.box.height)
  if (after !== undefined && after.page === page && bottom.box.y - (after.box.y + after.box.height) <= Math.max(1.5 * pitch, 0.5 * bottom.box.height) &&
    !startsWithLabel(normalizeText(after.text), bounds) && !LABEL_LIKE.test(after.text)) return AMBIGUOUS
  const line = values[at - first]!
  const m = leading(value, line.text)
  return m === null ? undefined : { how: 'in the column of values printed after its column of labels', hit: hitOf(line, m, 0, bounds) }
}

/** The lines that may continue a label wrapped from line `at`: up to two, same page, close below. */
function continuation (lines: TextLine[], at: number): TextLine[] {
  const out: TextLine[] = []
  let previous = lines[at]!
  for (let j = at + 1; j < lines.length && out.length < 2; j++) {
    const next = lines[j]!
    if (next.page !== previous.page || previous.box.y - (next.box.y + next.box.height) > WRAP_DEPTH * height(previous)) break
    out.push(next)
    previous = next
  }
  return out
}

/**
 * What `wrapped` tries from a line, the same for every label: the first line cut at each word
 * (its end last), each cut's text, and the one or two continuation lines joined. Kept per
 * lines array and line, as a document's queries read the same lines label after label.
 */
interface WrapCandidates { cuts: Array<{ at: number, cut: string }>, tails: Array<{ text: string, lastLine: TextLine, lastStart: number }> }
const CANDIDATES = new WeakMap<TextLine[], Array<WrapCandidates | undefined>>()

function candidates (lines: TextLine[], at: number): WrapCandidates {
  let perLine = CANDIDATES.get(lines)
  if (perLine === undefined) {
    perLine = []
    CANDIDATES.set(lines, perLine)
  }
  let found = perLine[at]
  if (found === undefined) {
    const first = lines[at]!
    const next = continuation(lines, at)
    const tails = next.map((lastLine, i) => {
      const text = next.slice(0, i + 1).map((l) => l.text).join(' ')
      return { text, lastLine, lastStart: text.length - lastLine.text.length }
    })
    const cuts = next.length === 0 ? [] : [...[...first.text.matchAll(/(?<=\s)\S/g)].map((w) => w.index), first.text.length].map((c) => ({ at: c, cut: first.text.slice(0, c).trimEnd() }))
    found = { cuts, tails }
    perLine[at] = found
  }
  return found
}

/**
 * `wrapped`: the label does not fit on line `at` but starts there and ends on one of the
 * next two lines. Its value follows the label's part on the first line (the value is cut out
 * of the first line to join the label's parts) or its last part on the last line.
 */
function wrapped (lines: TextLine[], at: number, labelRe: RegExp, value: RegExp, bounds: LabelBounds): Reading[] {
  const first = lines[at]!
  const { cuts, tails } = candidates(lines, at)
  const out: Reading[] = []
  for (const { text: tail, lastLine, lastStart } of tails) {
    // The first line cut at each word (its end last): the label's parts joined around the cut;
    // the value after the cut on the first line, or after the label's end on the last line.
    for (const { at, cut } of cuts) {
      const lm = labelRe.exec(`${cut} ${tail}`)
      if (lm === null || lm.index >= cut.length || lm.index + lm[0].length <= cut.length + 1 + lastStart) continue
      const restAt = lm.index + lm[0].length - (cut.length + 1 + lastStart)
      const last = compiled(value).exec(lastLine.text.slice(restAt))
      if (last !== null) out.push({ how: 'after the last line of its wrapped label', hit: hitOf(lastLine, last, restAt, bounds) })
      const firstValue = at < first.text.length ? compiled(value).exec(first.text.slice(at)) : null
      if (firstValue !== null) out.push({ how: 'on the first line of its wrapped label', hit: hitOf(first, firstValue, at, bounds) })
      if (out.length > 0) break
    }
    if (out.length > 0) break
  }
  return out
}

/** A conflict: two readings of one label that disagree. Its value is empty; `ctx.take` reports it. */
function conflictOf (label: string, readings: Reading[]): Hit {
  const [a, b] = readings as [Reading, Reading]
  return conflictHit(a.hit, `the label "${label}" (page ${a.hit.page}) has two readings that disagree: "${a.hit.value}" ${a.how} and "${b.hit.value}" ${b.how}; the value is not guessed`)
}

/** The readings of one place, as one hit, a conflict, or nothing. */
function decide (label: string, readings: Reading[]): Hit | undefined {
  const distinct = readings.filter((r, i) => readings.findIndex((s) => s.hit.value === r.hit.value) === i)
  if (distinct.length > 1) return conflictOf(label, distinct)
  return readings[0]?.hit
}

/**
 * Where the label is printed on a line. A label anchored at the start (`^Número do Recibo:`)
 * starts a line or a cell: a run set apart from the one before it by a gap of a line height or
 * more (a row of labels prints the second label mid-line).
 */
function labelAt (line: TextLine, labelRe: RegExp): { index: number, text: string } | null {
  const m = labelRe.exec(line.text)
  if (m !== null) return { index: m.index, text: m[0] }
  if (!labelRe.source.startsWith('^') || line.runs.length < 2) return null
  // Only where the label is printed at all, anchored or not.
  if (!compiled(new RegExp(labelRe.source.slice(1), labelRe.flags)).test(line.text)) return null
  for (let k = 1; k < line.runs.length; k++) {
    const { run, start } = line.runs[k]!
    const previous = line.runs[k - 1]!.run
    if (run.box.x - (previous.box.x + previous.box.width) < run.box.height) continue
    const c = labelRe.exec(line.text.slice(start))
    if (c !== null) return { index: start + c.index, text: c[0] }
  }
  return null
}

/**
 * The word every match of `re` starts with, as a pattern with its flags: the literal text at
 * the start of its source, up to its first space or special character (a quantified last
 * character left out). Undefined when there is none, or an alternation may start a match with
 * something else. A wrapped label starts on its first line, so that line must print this word.
 */
function leadingWord (re: RegExp): RegExp | undefined {
  if (re.source.includes('|')) return undefined
  const source = re.source.startsWith('^') ? re.source.slice(1) : re.source
  let word = /^[^\\^$.|?*+()[\]{}\s]+/.exec(source)?.[0] ?? ''
  if (/^[?*{]/.test(source.slice(word.length))) word = word.slice(0, -1)
  return word === '' ? undefined : new RegExp(word, re.flags.replace(/[gyd]/g, ''))
}

/** TextRegion.labelValue on `lines` (already scoped). */
export function labelValue (lines: TextLine[], label: Label, value: RegExp, options: LabelValueOptions, bounds: LabelBounds): Hit | undefined {
  return labelValues(lines, label, value, options, bounds, 1)[0]
}

/** TextRegion.labelValues on `lines`: the value of every place the label is printed (at most `limit`), each read as labelValue reads the first. */
export function labelValues (lines: TextLine[], label: Label, value: RegExp, options: LabelValueOptions, bounds: LabelBounds, limit = Infinity): Hit[] {
  const labelRe = compiled(labelPattern(label))
  const valueRe = compiled(value)
  const out: Hit[] = []
  let name: string | undefined
  // The wrapped reading only needs where the label matches: without the indices flag, its many tries cost less.
  const joinRe = new RegExp(labelRe.source, labelRe.flags.replace('d', ''))
  const lead = leadingWord(labelRe)
  for (let i = 0; i < lines.length && out.length < limit; i++) {
    const line = lines[i]!
    const lm = labelAt(line, labelRe)
    if (lm === null) {
      if (lead !== undefined && !lead.test(line.text)) continue
      const readings = wrapped(lines, i, joinRe, value, bounds)
      if (readings.length === 0) continue
      name ??= normalizeText(String(typeof label === 'string' ? label : label.source))
      const hit = decide(name, readings)
      if (hit !== undefined) out.push(hit)
      continue
    }
    const from = lm.index
    const to = lm.index + lm.text.length
    const own = normalizeText(lm.text)
    // A row of labels then its values on one line: read by order only (what follows the label is the row's values).
    const inline = inlineRow(line, from, value, bounds, own)
    if (inline !== undefined) {
      if (inline.reading !== undefined) out.push(inline.reading.hit)
      continue
    }
    const readings: Reading[] = []
    const rest = line.text.slice(to)
    const vm = valueRe.exec(rest)
    // A value that starts where the next label starts (a row of labels) is that label, not a value.
    const isLabel = vm !== null && rest.slice(0, vm.index).trim() === '' && startsWithLabel(normalizeText(rest), bounds)
    if (vm !== null && !isLabel) readings.push({ how: 'after it on its line', hit: hitOf(line, vm, to, bounds) })
    // Under the last of a column of bare labels whose values follow it is the column's first value, not its own.
    const above = lines[i - 1]
    const inColumn = above !== undefined && above.page === line.page && bareLabel(line, bounds, own) && bareLabel(above, bounds, own)
    const column = inColumn ? serialized(lines, i, value, bounds, own) : undefined
    const below = column !== undefined ? undefined : under(lines, i, from, to, value, bounds)
    const ordered = column ?? serialized(lines, i, value, bounds, own)
    if (below !== undefined) readings.push(below)
    const chosen = decide(lm.text.trim(), readings) ??
      row(lines, i, from, to, value, bounds)?.hit ??
      (ordered === AMBIGUOUS ? undefined : ordered?.hit) ??
      inLinesBelow(lines, i, valueRe, options.linesBelow ?? 0, bounds)
    if (chosen !== undefined) out.push(chosen)
  }
  return out
}

/** `below`: the whole next lines of the page, in order. */
function inLinesBelow (lines: TextLine[], at: number, valueRe: RegExp, count: number, bounds: LabelBounds): Hit | undefined {
  const line = lines[at]!
  for (let j = at + 1; j <= at + count && j < lines.length; j++) {
    const below = lines[j]!
    if (below.page !== line.page) break
    const bm = valueRe.exec(below.text)
    if (bm !== null) return hitOf(below, bm, 0, bounds)
  }
  return undefined
}
