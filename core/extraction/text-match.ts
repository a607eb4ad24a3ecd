/**
 * The matching underneath the text queries: patterns compiled once, runs and labels put in
 * their detection form once, hits built with the boxes of the characters they cover.
 */
import type { Box, Hit, Label, TextLine, TextRun } from './text-types.js'
import { normalizeText } from './values.js'

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

/** The lowest OCR confidence of the runs characters [from, to) of a line fall in; undefined on a text layer. */
export function spanConfidence (line: TextLine, from: number, to: number): number | undefined {
  let lowest: number | undefined
  for (const { run, start } of line.runs) {
    if (run.confidence === undefined || start >= to || start + run.text.length <= from) continue
    lowest = Math.min(lowest ?? 1, run.confidence)
  }
  return lowest
}

export function hitOf (line: TextLine, m: RegExpExecArray, offset = 0): Hit {
  // Compiled with the `d` flag (see compiled below), so every group knows where it sits.
  const spans = m.indices ?? []
  const part = (i: number): Hit | undefined => {
    const text = m[i]
    const span = spans[i]
    if (text === undefined || span === undefined) return undefined
    const hit: Hit = { value: text.trim(), groups: [], parts: [], page: line.page, source: line.text, box: spanBox(line, span[0] + offset, span[1] + offset) }
    const confidence = spanConfidence(line, span[0] + offset, span[1] + offset)
    if (confidence !== undefined) hit.confidence = round(confidence)
    return hit
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


export function runsHit (line: TextLine, runs: TextLine['runs'], value: string, source = line.text): Hit {
  return { value, groups: [value], parts: [], page: line.page, source, box: roundBox(union(runs.map(({ run }) => run.box))) }
}

export function roundBox (b: Box): Box {
  return { x: round(b.x), y: round(b.y), width: round(b.width), height: round(b.height) }
}


export function inside (b: Box, region: Box): boolean {
  const cx = b.x + b.width / 2
  const cy = b.y + b.height / 2
  return cx >= region.x && cx <= region.x + region.width && cy >= region.y && cy <= region.y + region.height
}
