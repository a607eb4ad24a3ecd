/**
 * Labels wrapped over two or three lines, joined back (issue 33). A form that prints
 * "Data e horário da" over "transmissão da Declaração:" (or "Receita bruta acumulada nos doze
 * meses anteriores" over "ao PA (RBT12)") puts its value on the label's first line or on its
 * last. The document's labels (the plugin's `labels`) say which words belong together: where a
 * line ends a word-prefix of a label and the line just below holds the rest of that label,
 * starting in the same column, the rest (and the value after it on that line, within the
 * label's column) moves up to follow the label's first part. The line then reads
 * `label value` whichever line the value was printed on, for every query and for the
 * detection rules.
 *
 * The runs keep their boxes (a value's evidence is where it is printed); only the lines they
 * belong to change. A label printed whole on a line is left alone.
 */
import type { LabelBounds } from './text-match.js'
import { WORD_GAP, union } from './text-match.js'
import type { TextLine, TextRun } from './text-types.js'
import { normalizeText } from './values.js'

/** The next part of a wrapped label starts within this many points of its first part's left edge. */
const ALIGN = 3
/** Text closer than this many line heights after a label's first part is in its cell (a value), not the next column. */
const CELL_GAP = 3
/** The next part of a wrapped label sits within this many line heights below. */
const WRAP_DEPTH = 1.8

/** A printed word, its detection form, and that form without trailing `:` or `.` (how labels are looked up by their first word). */
interface Word { text: string, norm: string, key: string, at: number, end: number }

/**
 * A line's words, kept per line: every plugin's view of a document joins its own labels on
 * the same lines, and normalising each word of each line for each plugin was most of the cost.
 */
const WORDS = new WeakMap<TextLine, Word[]>()

function wordsOf (line: TextLine): Word[] {
  let words = WORDS.get(line)
  if (words === undefined) {
    words = [...line.text.matchAll(/\S+/g)].map((m) => {
      const norm = normalizeText(m[0])
      return { text: m[0], norm, key: norm.replace(/[:.]+$/, ''), at: m.index, end: m.index + m[0].length }
    })
    WORDS.set(line, words)
  }
  return words
}

/** A printed word is the label's word: the same, or (the label's last word) followed by punctuation such as a colon. */
function sameWord (printed: string, label: string, last: boolean): boolean {
  if (printed === label) return true
  return last && printed.startsWith(label) && /^[:.\-–]+$/.test(printed.slice(label.length))
}

/** How many of `label`'s words from `from` the words of `words` from `at` print (0 when the first differs). */
function matched (words: Word[], at: number, label: string[], from: number): number {
  let n = 0
  while (at + n < words.length && from + n < label.length && sameWord(words[at + n]!.norm, label[from + n]!, from + n === label.length - 1)) n++
  return n
}

/** The x of character `index` of a line: runs are cut in proportion to their characters. */
function charX (line: TextLine, index: number): number {
  for (const { run, start } of line.runs) {
    const len = run.text.length
    if (index >= start && index < start + len) return run.box.x + (len === 0 ? 0 : run.box.width * (index - start) / len)
  }
  const last = line.runs[line.runs.length - 1]
  return last === undefined ? line.box.x : last.run.box.x + last.run.box.width
}

/** The piece [from, to) of a run, its box cut in proportion to the characters. */
function piece (run: TextRun, from: number, to: number): TextRun {
  const w = run.box.width / Math.max(1, run.text.length)
  const out: TextRun = { text: run.text.slice(from, to), box: { ...run.box, x: run.box.x + w * from, width: w * (to - from) } }
  if (run.confidence !== undefined) out.confidence = run.confidence
  return out
}

/** The runs of characters [from, to) of a line, left to right (a run across either end cut). */
function slice (line: TextLine, from: number, to: number): TextRun[] {
  const out: TextRun[] = []
  for (const { run, start } of line.runs) {
    const a = Math.max(from, start) - start
    const b = Math.min(to, start + run.text.length) - start
    if (b <= a) continue
    const part = a === 0 && b === run.text.length ? run : piece(run, a, b)
    if (part.text.trim() !== '') out.push(part)
  }
  return out
}

/** The first character of a line at or right of `x` (its length when none). */
function indexAtX (line: TextLine, x: number): number {
  const run = line.runs.find(({ run }) => run.box.x >= x - 0.5)
  return run === undefined ? line.text.length : run.start
}

/** The label runs made of a wrapped label's parts: a space always separates them from their neighbours. */
const JOINED = new WeakSet<TextRun>()

/** A line from runs in the order given (not sorted by x): one space between runs that do not touch on one baseline. */
function lineOf (page: number, runs: TextRun[]): TextLine {
  let text = ''
  const placed: TextLine['runs'] = []
  let previous: TextRun | undefined
  for (const run of runs) {
    const text0 = run.text.replace(/\s+/g, ' ').trim()
    const gap = previous === undefined ? Infinity : run.box.x - (previous.box.x + previous.box.width)
    const touches = previous !== undefined && !JOINED.has(previous) && !JOINED.has(run) && Math.abs(previous.box.y - run.box.y) < run.box.height / 2 && gap >= -1 && gap <= run.box.height * WORD_GAP
    // A colon printed apart from its label (`Período de Apuração  : 01/2026`) joins it, as it does on one line.
    if (text !== '' && !touches && !text0.startsWith(':')) text += ' '
    placed.push({ run, start: text.length })
    text += text0
    previous = run
  }
  return { page, text, box: union(runs.map((r) => r.box)), runs: placed }
}

const height = (line: TextLine): number => Math.min(...line.runs.map(({ run }) => run.box.height))

/**
 * A wrap found: the label starts at `start` on line `at` and its first part ends at `cut`;
 * on each line below, `label` holds the characters of the label's next part and `value`
 * those after it in the label's column (the last line's only).
 */
interface Wrap { at: number, start: number, cut: number, parts: Array<{ line: number, label: [number, number], value: [number, number] }> }

/**
 * The continuation of a label whose first `k` words end line `at`'s word `w`: the rest of the
 * label at the start of a cell of the next line (aligned with the label's first word), maybe
 * over two lines, and on the last of them the value, up to the label's column border (the
 * next text right of the label's first part on its line).
 */
function continuation (lines: TextLine[], at: number, words: Word[][], w: number, k: number, label: string[]): Wrap | undefined {
  const line = lines[at]!
  const lineWords = words[at]!
  const x0 = charX(line, lineWords[w]!.at)
  const cut = lineWords[w + k - 1]!.end
  const partRight = charX(line, cut - 1)
  const border = line.runs.map(({ run }) => run.box.x).filter((x) => x > partRight + 0.5).reduce((a, b) => Math.min(a, b), Infinity)
  const parts: Wrap['parts'] = []
  let from = k
  let previous = line
  // A line of another column at about the same height (nothing in the label's column) is passed over.
  for (let j = at + 1; j < lines.length && j <= at + 4; j++) {
    const next = lines[j]!
    if (next.page !== line.page || previous.box.y - (next.box.y + next.box.height) > WRAP_DEPTH * height(previous)) return undefined
    const nextWords = words[j]!
    const c = nextWords.findIndex((word) => Math.abs(charX(next, word.at) - x0) <= ALIGN)
    if (c < 0 && !next.runs.some(({ run }) => run.box.x < partRight && run.box.x + run.box.width > x0)) continue
    if (c < 0) return undefined
    const n = matched(nextWords, c, label, from)
    if (n === 0) return undefined
    // The words before it print the label's first part: that line prints the label whole, its own (positions lost, every line at one margin).
    if (c >= from && matched(nextWords, c - from, label, 0) >= from) return undefined
    const labelEnd = nextWords[c + n - 1]!.end
    const columnEnd = Math.max(labelEnd, indexAtX(next, border))
    if (from + n === label.length) {
      // A value on the last line while the first line prints something right after the label's
      // first part, in its cell: two readings, left to labelValue (a conflict when they differ).
      if (next.text.slice(labelEnd, columnEnd).trim() !== '' && border - partRight < CELL_GAP * height(line)) return undefined
      parts.push({ line: j, label: [nextWords[c]!.at, labelEnd], value: [labelEnd, columnEnd] })
      return { at, start: lineWords[w]!.at, cut, parts }
    }
    // A middle line holds the label's words only (in its column).
    if (next.text.slice(labelEnd, columnEnd).trim() !== '') return undefined
    parts.push({ line: j, label: [nextWords[c]!.at, labelEnd], value: [labelEnd, labelEnd] })
    from += n
    previous = next
  }
  return undefined
}

/**
 * The lines with every wrapped label of `labels` (detection forms) joined back: the label's
 * next part, and what follows it in its column, moved up after its first part.
 */
export function joinWrappedLabels (lines: TextLine[], labels: LabelBounds): TextLine[] {
  // The longer label first where two start alike (`Data e Horário da Transmissão (Data e Horário de Brasília):`).
  const split = labels.map((l) => l.split(' ')).filter((l) => l.length >= 2).sort((a, b) => b.length - a.length)
  if (split.length === 0) return lines
  const byFirst = new Map<string, string[][]>()
  for (const l of split) byFirst.set(l[0]!, [...(byFirst.get(l[0]!) ?? []), l])
  const words = lines.map(wordsOf)
  const wraps: Wrap[] = []
  const taken = new Set<string>()
  for (let i = 0; i < lines.length - 1; i++) {
    const lineWords = words[i]!
    for (let w = 0; w < lineWords.length; w++) {
      for (const label of byFirst.get(lineWords[w]!.key) ?? byFirst.get(lineWords[w]!.norm) ?? []) {
        const k = matched(lineWords, w, label, 0)
        if (k === 0 || k >= label.length) continue
        const wrap = continuation(lines, i, words, w, k, label)
        // Several labels of a line may wrap onto the next one, each in its column; a part moves once.
        const keys = wrap?.parts.map((p) => `${p.line}:${p.label[0]}`) ?? []
        if (wrap === undefined || keys.some((key) => taken.has(key))) continue
        wraps.push(wrap)
        for (const key of keys) taken.add(key)
        w += k - 1
        break
      }
    }
  }
  if (wraps.length === 0) return lines
  // Each first line: the label as one run (its parts' boxes together, so a grid query finds it
  // whole), the value from the last line, then the rest of the first line; the lines below lose
  // the characters that moved.
  const removed = new Map<number, Array<[number, number]>>()
  const joined = new Map<number, Wrap[]>()
  for (const wrap of wraps) {
    for (const p of wrap.parts) removed.set(p.line, [...(removed.get(p.line) ?? []), [p.label[0], p.value[1]]])
    joined.set(wrap.at, [...(joined.get(wrap.at) ?? []), wrap])
  }
  const out: TextLine[] = []
  lines.forEach((line, i) => {
    const cuts = removed.get(i)
    const own = joined.get(i)
    if (cuts === undefined && own === undefined) {
      out.push(line)
      return
    }
    // The line's text in pieces: kept ranges, and each wrap's label and value in place of its first part.
    const events = [...(cuts ?? []).map(([a, b]) => ({ a, b, wrap: undefined as Wrap | undefined })), ...(own ?? []).map((wrap) => ({ a: wrap.start, b: wrap.cut, wrap }))]
      .sort((x, y) => x.a - y.a)
    const runs: TextRun[] = []
    let at = 0
    for (const e of events) {
      if (e.a < at) continue
      runs.push(...slice(line, at, e.a))
      if (e.wrap !== undefined) {
        const labelRuns = [...slice(line, e.a, e.b), ...e.wrap.parts.flatMap((p) => slice(lines[p.line]!, p.label[0], p.label[1]))]
        const text = [line.text.slice(e.a, e.b), ...e.wrap.parts.map((p) => lines[p.line]!.text.slice(p.label[0], p.label[1]))].join(' ')
        const joinedRun: TextRun = { text, box: union(labelRuns.map((r) => r.box)) }
        JOINED.add(joinedRun)
        runs.push(joinedRun)
        for (const p of e.wrap.parts) runs.push(...slice(lines[p.line]!, p.value[0], p.value[1]))
      }
      at = e.b
    }
    runs.push(...slice(line, at, line.text.length))
    if (runs.length > 0) out.push(lineOf(line.page, runs))
  })
  return out
}
