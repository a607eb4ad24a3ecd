/**
 * Reading the DANFSe's grid: small labels with their values on the visual line below, in
 * the same column (documents.md §7), and sections (`EMITENTE DA NFS-e`, `TOMADOR DO
 * SERVIÇO`...) that reuse the same labels. The text API answers "value after a label on
 * its line or below" for the whole line; a grid needs "the runs under this label, up to
 * the next label of its row", so this file builds that one query on `doc.lines` and
 * returns ordinary hits, which `ctx.take` records as evidence.
 */
import { normalizeText } from '../../core/plugin-api.js'
import type { Box, Hit, TextDocument, TextLine } from '../../core/plugin-api.js'

/** A stretch of visual lines (reading order, any page). */
export type Scope = TextLine[]

/** Values sit within this many points under their label's line. */
const MAX_GAP = 16
/** A value may start a little left of its label (centred or padded cells). */
const SLACK = 2

const norm = (s: string): string => normalizeText(s)

function union (boxes: Box[]): Box {
  const x = Math.min(...boxes.map((b) => b.x))
  const y = Math.min(...boxes.map((b) => b.y))
  const r = (n: number): number => Math.round(n * 100) / 100
  return { x: r(x), y: r(y), width: r(Math.max(...boxes.map((b) => b.x + b.width)) - x), height: r(Math.max(...boxes.map((b) => b.y + b.height)) - y) }
}

/** True when one run of the line reads `label` (accent- and case-blind, whole run). */
export function runIs (line: TextLine, label: string): boolean {
  const want = norm(label)
  return line.runs.some(({ run }) => norm(run.text) === want)
}

/** True when a run of the line starts with `prefix` (accent- and case-blind). */
export function runStarts (line: TextLine, prefix: string): boolean {
  const want = norm(prefix)
  return line.runs.some(({ run }) => norm(run.text).startsWith(want))
}

/**
 * The lines from the first one holding a run that starts with one of `headers` up to
 * (not including) the next line holding a run that starts with one of `stops`; empty when
 * no header is printed.
 */
export function section (doc: TextDocument, headers: string[], stops: string[]): Scope {
  const start = doc.lines.findIndex((l) => headers.some((h) => runStarts(l, h)))
  if (start < 0) return []
  let end = start + 1
  while (end < doc.lines.length && !stops.some((s) => runStarts(doc.lines[end]!, s))) end++
  return doc.lines.slice(start, end)
}

/**
 * The value printed under `label` in its column: the runs of the next line (same page,
 * close below) whose left edge lies between the label's left edge and the next run of the
 * label's line. Several labels may name one cell (v1.0 and v2.0 wordings); the first
 * printed one is used. Undefined when the label or its value is not printed. `rest` also
 * takes the column on the following lines of the scope (a wrapped description that ends
 * its section).
 */
export function cell (scope: Scope, labels: string | string[], options: { rest?: boolean } = {}): Hit | undefined {
  const wanted = (Array.isArray(labels) ? labels : [labels]).map(norm)
  for (let i = 0; i < scope.length; i++) {
    const line = scope[i]!
    const label = line.runs.find(({ run }) => wanted.includes(norm(run.text)))
    if (label === undefined) continue
    const left = label.run.box.x - SLACK
    const nextLabel = line.runs.map(({ run }) => run.box.x).filter((x) => x > label.run.box.x + 1)
    const right = nextLabel.length > 0 ? Math.min(...nextLabel) - SLACK : Infinity
    const below = scope[i + 1]
    if (below === undefined || below.page !== line.page || line.box.y - (below.box.y + below.box.height) > MAX_GAP) return undefined
    const inColumn = (l: TextLine): Array<TextLine['runs'][number]> => l.runs.filter(({ run }) => run.box.x >= left && run.box.x < right)
    const runs = inColumn(below)
    if (runs.length === 0) return undefined
    const sources = [below.text]
    if (options.rest === true) {
      // The last cell of a section (a description) wraps: its column on every later line of the section, same page.
      for (const more of scope.slice(i + 2)) {
        if (more.page !== below.page) break
        const extra = inColumn(more)
        if (extra.length === 0) break
        runs.push(...extra)
        sources.push(more.text)
      }
    }
    const value = runs.map(({ run }) => run.text.trim()).join(' ').replace(/\s+/g, ' ').trim()
    return { value, groups: [value], parts: [], page: below.page, source: sources.join('\n'), box: union(runs.map(({ run }) => run.box)) }
  }
  return undefined
}

/** A hit narrowed to one capture group of `re` on its value (same evidence box), or undefined. */
export function part (hit: Hit | undefined, re: RegExp, group = 1): Hit | undefined {
  if (hit === undefined) return undefined
  const m = re.exec(hit.value)
  const v = m?.[group]
  return v === undefined ? undefined : { ...hit, value: v.trim(), groups: [v] }
}
