/**
 * `npm run bench:compare OLD.json NEW.json [--floor 5]`: what changed between two runs
 * (schema razao-bench/1), one line per figure found in both, matched by id, then one line
 * per ratio found in both. Exit codes:
 *
 * - 1 when a ratio of one of our figures got worse by more than its spread explains:
 *   worse by more than the larger of the two runs' relative spreads of that ratio, plus
 *   the floor (5 % unless --floor says otherwise);
 * - 0 otherwise; figures and ratios found in one file only are listed, never failed;
 *   absolute figures are printed with their change, never failed either (a machine's
 *   speed moves them; a ratio measured in one run does not move with it);
 * - 2 on a wrong command line or a file that cannot be read or is not of the schema.
 *
 * "Worse" is relative: for a ratio better lower, new / old − 1; better higher, old / new − 1.
 */
import { parseArgs } from 'node:util'
import { readResults, userPath, type BenchResults, type Figure, type Ratio } from './results.js'

export const DEFAULT_FLOOR = 0.05

const USAGE = 'usage: npm run bench:compare -- OLD.json NEW.json [--floor PERCENT]   (PERCENT default 5)'

interface RatioEntry { figure: Figure, ratio: Ratio }

export interface RatioVerdict {
  key: string
  old: number
  new: number
  /** Relative change the bad way (negative: better). */
  worse: number
  /** What the spreads explain: max of the two runs' rel, plus the floor. */
  allowed: number
  /** Only our figures' ratios fail a comparison. */
  gated: boolean
  regressed: boolean
}

export interface Comparison {
  lines: string[]
  ratios: RatioVerdict[]
  regressions: RatioVerdict[]
  onlyOld: string[]
  onlyNew: string[]
}

function figuresOf (doc: BenchResults): Map<string, Figure> {
  return new Map(doc.suites.flatMap((s) => s.figures.map((f) => [f.id, f] as const)))
}

function ratiosOf (doc: BenchResults): Map<string, RatioEntry> {
  return new Map(doc.suites.flatMap((s) => s.figures.flatMap((figure) => (figure.ratios ?? []).map((ratio) => [`${figure.id} ÷ ${ratio.to}`, { figure, ratio }] as const))))
}

/** Four significant digits, without an exponent for the sizes benchmarks print. */
export function formatNumber (x: number): string {
  if (x === 0) return '0'
  const abs = Math.abs(x)
  if (abs >= 1e4) return Math.round(x).toLocaleString('en-US')
  return Number(x.toPrecision(4)).toString()
}

export function withUnit (x: number, unit: string): string {
  return unit === '×' ? `${formatNumber(x)}×` : unit === '%' ? `${formatNumber(x)}%` : `${formatNumber(x)} ${unit}`
}

const percent = (x: number): string => `${x >= 0 ? '+' : ''}${(100 * x).toFixed(1)}%`

/** How much worse `now` is than `then`, relatively, for a figure better `better`. */
function worseBy (then: number, now: number, better: Figure['better']): number {
  return better === 'lower' ? now / then - 1 : then / now - 1
}

function describeRun (name: string, file: string, doc: BenchResults): string {
  const m = doc.machine
  const commit = doc.git === null ? 'no git' : `${doc.git.commit.slice(0, 10)}${doc.git.dirty ? '+dirty' : ''}`
  return `${name} ${file}: ${doc.startedAt}, ${commit}, node ${m.node}, ${m.cores} cores (${m.cpuModel}), ` +
    `load ${m.load.start[0] ?? '?'} → ${m.load.end[0] ?? '?'}${doc.error === undefined ? '' : `, stopped on an error: ${doc.error}`}`
}

/** Aligns the columns of rows of cells (first column left, the rest as given). */
function columns (rows: string[][]): string[] {
  const widths: number[] = []
  for (const row of rows) row.forEach((cell, i) => { widths[i] = Math.max(widths[i] ?? 0, [...cell].length) })
  return rows.map((row) => `  ${row.map((cell, i) => i === row.length - 1 ? cell : cell + ' '.repeat(widths[i]! - [...cell].length)).join('  ')}`.trimEnd())
}

export function compareResults (oldDoc: BenchResults, newDoc: BenchResults, floor = DEFAULT_FLOOR, names = { old: 'OLD', new: 'NEW' }): Comparison {
  const lines: string[] = [describeRun('OLD', names.old, oldDoc), describeRun('NEW', names.new, newDoc)]
  if (oldDoc.machine.cpuModel !== newDoc.machine.cpuModel || oldDoc.machine.cores !== newDoc.machine.cores) {
    lines.push('note: the two runs were on different machines; absolute figures do not compare, ratios compare less well')
  }
  for (const [name, doc] of [['OLD', oldDoc], ['NEW', newDoc]] as const) {
    const load = Math.max(doc.machine.load.start[0] ?? 0, doc.machine.load.end[0] ?? 0)
    if (load > doc.machine.cores) {
      lines.push(`note: ${name} ran on a busy machine (load average up to ${load.toFixed(1)} on ${doc.machine.cores} cores): its samples wait for a core, and a ratio moves with the load more than its spread shows`)
    }
  }
  const oldFigures = figuresOf(oldDoc)
  const newFigures = figuresOf(newDoc)
  const onlyOld = [...oldFigures.keys()].filter((id) => !newFigures.has(id))
  const onlyNew = [...newFigures.keys()].filter((id) => !oldFigures.has(id))

  const figureRows: string[][] = []
  for (const [id, now] of newFigures) {
    const then = oldFigures.get(id)
    if (then === undefined) continue
    const allowed = Math.max(then.spread?.rel ?? 0, now.spread?.rel ?? 0) + floor
    const change = then.value === 0 ? Number.NaN : now.value / then.value - 1
    const worse = then.value === 0 || now.value === 0 ? Number.NaN : worseBy(then.value, now.value, now.better)
    const mark = Number.isNaN(worse) ? '' : worse > allowed ? 'worse' : worse < -allowed ? 'better' : '~'
    figureRows.push([id, withUnit(then.value, then.unit), '→', withUnit(now.value, now.unit), Number.isNaN(change) ? 'n/a' : percent(change), mark])
  }
  lines.push('', `Figures in both runs (${figureRows.length}): old → new, change; "~" within the spread of both runs plus ${(100 * floor).toFixed(0)}%, never a failure`)
  lines.push(...columns(figureRows))

  const oldRatios = ratiosOf(oldDoc)
  const newRatios = ratiosOf(newDoc)
  const verdicts: RatioVerdict[] = []
  const ratioRows: string[][] = []
  for (const [key, now] of newRatios) {
    const then = oldRatios.get(key)
    if (then === undefined) continue
    const worse = worseBy(then.ratio.value, now.ratio.value, now.figure.better)
    const allowed = Math.max(then.ratio.rel, now.ratio.rel) + floor
    const gated = now.figure.role === 'ours'
    const verdict: RatioVerdict = { key, old: then.ratio.value, new: now.ratio.value, worse, allowed, gated, regressed: gated && worse > allowed }
    verdicts.push(verdict)
    const judgement = worse > allowed ? (gated ? 'WORSE beyond spread: FAIL' : 'worse beyond spread (not ours: informational)') : worse < -allowed ? 'better' : 'within spread'
    ratioRows.push([key, `${formatNumber(then.ratio.value)}×`, '→', `${formatNumber(now.ratio.value)}×`, percent(now.ratio.value / then.ratio.value - 1),
      `(${now.figure.better} is better; worse by ${percent(worse)}, allowed ${(100 * allowed).toFixed(1)}%)`, judgement])
  }
  lines.push('', `Ratios in both runs (${ratioRows.length}): this ÷ that, old → new; fails when one of ours is worse by more than the larger relative spread of the two runs plus ${(100 * floor).toFixed(0)}%`)
  lines.push(...columns(ratioRows))

  const oldKeys = [...oldRatios.keys()].filter((k) => !newRatios.has(k) && !onlyOld.includes(oldRatios.get(k)!.figure.id))
  const newKeys = [...newRatios.keys()].filter((k) => !oldRatios.has(k) && !onlyNew.includes(newRatios.get(k)!.figure.id))
  lines.push('', `Only in OLD (${onlyOld.length + oldKeys.length}, not compared):`, ...[...onlyOld, ...oldKeys.map((k) => `ratio ${k}`)].map((x) => `  ${x}`))
  lines.push(`Only in NEW (${onlyNew.length + newKeys.length}, not compared):`, ...[...onlyNew, ...newKeys.map((k) => `ratio ${k}`)].map((x) => `  ${x}`))
  const regressions = verdicts.filter((v) => v.regressed)
  lines.push('', regressions.length === 0
    ? `No ratio of ours got worse beyond its spread (${verdicts.filter((v) => v.gated).length} compared).`
    : `${regressions.length} ratio${regressions.length === 1 ? '' : 's'} of ours got worse beyond the spread:\n${regressions.map((r) => `  ${r.key}: ${formatNumber(r.old)}× → ${formatNumber(r.new)}× (worse by ${percent(r.worse)}, allowed ${(100 * r.allowed).toFixed(1)}%)`).join('\n')}`)
  return { lines, ratios: verdicts, regressions, onlyOld, onlyNew }
}

/** The command: returns the exit code; `out` gets the comparison, `err` the usage errors. */
export async function runCompare (argv: string[], out: (text: string) => void, err: (text: string) => void): Promise<number> {
  let files: string[]
  let floor = DEFAULT_FLOOR
  try {
    const { values, positionals } = parseArgs({ args: argv, options: { floor: { type: 'string' } }, allowPositionals: true, strict: true })
    files = positionals
    if (values.floor !== undefined) {
      floor = Number(values.floor.replace(/%$/, '')) / 100
      if (!Number.isFinite(floor) || floor < 0 || values.floor.trim() === '') throw new Error(`--floor must be a percentage of 0 or more, got "${values.floor}"`)
    }
  } catch (e) {
    err(`bench:compare: ${e instanceof Error ? e.message : String(e)}\n${USAGE}\n`)
    return 2
  }
  if (files.length !== 2) {
    err(`bench:compare: two files expected, got ${files.length}\n${USAGE}\n`)
    return 2
  }
  const [oldFile, newFile] = files as [string, string]
  let docs: [BenchResults, BenchResults]
  try {
    docs = [await readResults(userPath(oldFile)), await readResults(userPath(newFile))]
  } catch (e) {
    err(`bench:compare: ${e instanceof Error ? e.message : String(e)}\n`)
    return 2
  }
  const comparison = compareResults(docs[0], docs[1], floor, { old: oldFile, new: newFile })
  out(`${comparison.lines.join('\n')}\n`)
  return comparison.regressions.length > 0 ? 1 : 0
}
