/**
 * The matching underneath the text queries: patterns compiled once, runs and labels put in
 * their detection form once, hits built with the boxes of the characters they cover.
 */
import type { Box, Hit, Label, TextLine, TextRun } from './text-types.js'
import { normalizeText } from './values.js'

/**
 * A horizontal gap wider than this fraction of a run's box height separates words: a space
 * in the font is about a quarter of the size, and the box (ascent to descent) is a little
 * taller than the size; real prints that drop their spaces leave gaps of 0.2 of the box.
 */
export const WORD_GAP = 0.15

export function union (boxes: Box[]): Box {
  const x = Math.min(...boxes.map((b) => b.x))
  const y = Math.min(...boxes.map((b) => b.y))
  return { x, y, width: Math.max(...boxes.map((b) => b.x + b.width)) - x, height: Math.max(...boxes.map((b) => b.y + b.height)) - y }
}

export const round = (n: number): number => Math.round(n * 100) / 100

/** The box of characters [from, to) of a line: the union of the runs they fall in. */
export function spanBox (line: TextLine, from: number, to: number): Box {
  const boxes = line.runs.filter(({ run, start }) => start < to && start + run.text.length > from).map(({ run }) => run.box)
  const b = union(boxes.length > 0 ? boxes : [line.box])
  return { x: round(b.x), y: round(b.y), width: round(b.width), height: round(b.height) }
}

/**
 * A document's labels in their detection form (the plugin's `labels`): the bounds of every
 * value a text query returns. Empty for a document read without a plugin.
 */
export type LabelBounds = readonly string[] & {
  /** Cell labels (ExtractorPlugin.cellLabels) in their detection form: labels only as a whole run, never a bound inside text. */
  readonly cells?: readonly string[]
}

const LETTER = /\p{L}/u
const WORD_CHAR = /[\p{L}\p{N}]/u

/**
 * The words of `text`: where each starts in the text, and where its detection form starts in
 * `joined`, the words' detection forms joined by one space (the detection form of the text
 * from any word on is then a suffix of `joined`).
 */
export function wordIndex (text: string): { starts: number[], offsets: number[], joined: string } {
  const starts: number[] = []
  const offsets: number[] = []
  let joined = ''
  for (const word of text.matchAll(/\S+/g)) {
    starts.push(word.index)
    offsets.push(joined.length === 0 ? 0 : joined.length + 1)
    joined = joined.length === 0 ? normalizeText(word[0]) : `${joined} ${normalizeText(word[0])}`
  }
  return { starts, offsets, joined }
}

/**
 * Where `text` runs into one of the labels: the index of the first word after the first
 * that starts a label (the label ending at a word boundary), or `text.length` when it holds
 * none. A text that starts with a label is left whole there: patterns capture labels on
 * purpose (to place the values under them).
 */
export function labelCut (text: string, labels: LabelBounds): number {
  // Most values are numbers, dates, codes: no letters, no label, no work.
  if (labels.length === 0 || !LETTER.test(text)) return text.length
  const whole = normalizeText(text)
  if (!labels.some((l) => whole.includes(l))) return text.length
  // Each word normalized once, a label looked for at each word's offset in one string
  // (normalizing every suffix again was quadratic in long values).
  const { starts, offsets, joined } = wordIndex(text)
  for (let k = 0; k < starts.length; k++) {
    if (starts[k] === 0) continue
    const at = offsets[k]!
    if (labels.some((l) => joined.startsWith(l, at) && !WORD_CHAR.test(joined.charAt(at + l.length)))) return starts[k]!
  }
  return text.length
}

/** True when `normalized` (a detection form) starts with one of the labels, ending at a word boundary. */
export function startsWithLabel (normalized: string, labels: LabelBounds): boolean {
  return labels.some((l) => normalized.startsWith(l) && !WORD_CHAR.test(normalized.charAt(l.length)))
}

/** The labels of a plugin in their detection form, for a document's bounds (its cell labels apart: they bound nothing). */
export function labelBounds (labels: readonly string[], cells: readonly string[] = []): LabelBounds {
  const bounds = [...new Set(labels.map(normalizedLabel).filter((l) => l !== ''))]
  return cells.length === 0 ? bounds : Object.assign(bounds, { cells: [...new Set(cells.map(normalizedLabel).filter((l) => l !== ''))] })
}

/** True when a cell's text (its detection form, a colon aside) is one of the document's cell labels, whole. */
export function isCellLabel (normalized: string, labels: LabelBounds): boolean {
  return labels.cells !== undefined && labels.cells.includes(normalized.replace(/\s*:$/, ''))
}

/** The lowest OCR confidence of the runs characters [from, to) of a line fall in; undefined on a text layer. */
export function spanConfidence (line: TextLine, from: number, to: number): number | undefined {
  let lowest: number | undefined
  for (const { run, start } of line.runs) {
    if (run.confidence === undefined || start >= to || start + run.text.length <= from) continue
    lowest = Math.min(lowest ?? 1, run.confidence)
  }
  return lowest
}

/**
 * A hit that stands for readings that disagree, placed where `at` was read: no value, every
 * capture group in conflict too; `ctx.take` turns it into null and a LABEL_VALUE_CONFLICT
 * warning saying `why`.
 */
export function conflictHit (at: Pick<Hit, 'page' | 'source' | 'box'>, why: string): Hit {
  const hit: Hit = { value: '', groups: [], parts: [], page: at.page, source: at.source, box: at.box, conflict: why }
  hit.parts = Array.from({ length: 10 }, () => ({ ...hit, parts: [] }))
  return hit
}

export function hitOf (line: TextLine, m: RegExpExecArray, offset = 0, labels: LabelBounds = []): Hit {
  // Compiled with the `d` flag (see compiled below), so every group knows where it sits.
  const spans = m.indices ?? []
  // Group 0 of a pattern with groups holds its label on purpose; a captured value stops at a label.
  const bounded = (i: number): string | undefined => {
    const text = m[i]
    return text === undefined || i === 0 ? text : text.slice(0, labelCut(text, labels))
  }
  const part = (i: number): Hit | undefined => {
    const text = bounded(i)
    const span = spans[i]
    if (text === undefined || span === undefined) return undefined
    const end = span[0] + text.length + offset
    const hit: Hit = { value: text.trim(), groups: [], parts: [], page: line.page, source: line.text, box: spanBox(line, span[0] + offset, end) }
    const confidence = spanConfidence(line, span[0] + offset, end)
    if (confidence !== undefined) hit.confidence = round(confidence)
    return hit
  }
  const main = part(m[1] === undefined ? 0 : 1)!
  const groups = [...m].slice(1).map((_, i) => bounded(i + 1))
  return { ...main, groups, parts: groups.map((_, i) => part(i + 1)) }
}

/**
 * `pattern` with `d` (group positions) and the given `g`, compiled once per source and
 * flags: plugins write their patterns inline, so the same source arrives as a new object
 * on every call, and compiling it again for every line was most of a parser's time.
 */
const COMPILED = new Map<string, RegExp>()
export function compiled (pattern: RegExp, global = false): RegExp {
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

export function exec (pattern: RegExp, text: string): RegExpExecArray | null {
  return compiled(pattern).exec(text)
}

/** The detection form of each run, computed once (grid queries compare every run with every label). */
const NORMALIZED = new WeakMap<TextRun, string>()
export function normalizedRun (run: TextRun): string {
  let n = NORMALIZED.get(run)
  if (n === undefined) {
    n = normalizeText(run.text)
    NORMALIZED.set(run, n)
  }
  return n
}

/** Labels come from plugin code, a bounded set: their detection form is kept. */
const LABELS = new Map<string, string>()
export function normalizedLabel (label: string): string {
  let n = LABELS.get(label)
  if (n === undefined) {
    if (LABELS.size >= 4096) LABELS.clear()
    n = normalizeText(label)
    LABELS.set(label, n)
  }
  return n
}

/** A line test for each label, the strings normalised once. */
export function lineTests (labels: Label | Label[] | undefined): Array<(line: TextLine) => boolean> {
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
export function runTest (header: Label): (run: TextRun) => boolean {
  if (typeof header !== 'string') {
    const re = compiled(header)
    return (run) => re.exec(run.text) !== null
  }
  const want = normalizedLabel(header)
  return (run) => normalizedRun(run) === want
}


/**
 * The text of runs (left to right, then line by line) joined as lines are: one space where
 * they do not touch, none where they do (a number a producer drew digit group by digit
 * group), stopped before a label (and the runs from the one that holds it).
 */
export function boundedRuns (runs: TextLine['runs'], labels: LabelBounds): { text: string, runs: TextLine['runs'] } {
  let joined = ''
  const starts: number[] = []
  let previous: TextRun | undefined
  for (const { run } of runs) {
    const piece = run.text.replace(/\s+/g, ' ').trim()
    const touches = previous !== undefined && Math.abs(previous.box.y - run.box.y) < run.box.height / 2 && run.box.x - (previous.box.x + previous.box.width) <= run.box.height * WORD_GAP
    if (joined !== '' && !touches) joined += ' '
    starts.push(joined.length)
    joined += piece
    previous = run
  }
  const cut = labelCut(joined, labels)
  if (cut === joined.length) return { text: joined.trim(), runs }
  const kept = runs.filter((_, i) => starts[i]! < cut)
  return { text: joined.slice(0, cut).trim(), runs: kept.length > 0 ? kept : runs.slice(0, 1) }
}

export function runsHit (line: TextLine, runs: TextLine['runs'], value: string, source = line.text): Hit {
  const hit: Hit = { value, groups: [value], parts: [], page: line.page, source, box: roundBox(union(runs.map(({ run }) => run.box))) }
  // Runs read by OCR: the value is as sure as its least sure run.
  const confidences = runs.flatMap(({ run }) => run.confidence === undefined ? [] : [run.confidence])
  if (confidences.length > 0) hit.confidence = round(Math.min(...confidences))
  return hit
}

export function roundBox (b: Box): Box {
  return { x: round(b.x), y: round(b.y), width: round(b.width), height: round(b.height) }
}


export function inside (b: Box, region: Box): boolean {
  const cx = b.x + b.width / 2
  const cy = b.y + b.height / 2
  return cx >= region.x && cx <= region.x + region.width && cy >= region.y && cy <= region.y + region.height
}
