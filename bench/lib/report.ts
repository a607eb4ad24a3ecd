/**
 * `npm run bench:report DIR [--out FILE]`: one HTML page of every benchmark result
 * (schema razao-bench/1) found directly in DIR, runs ordered by their start: the runs and
 * their machines, the latest value of every figure with its change since the run before,
 * then a line chart per ratio and per figure across the runs. The page is one file with
 * everything inline: its stylesheet, and its charts as SVG, drawn here; no script, no font,
 * nothing fetched (it can be mailed, or kept as a CI artifact, and opened offline).
 */
import { readdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { formatNumber, withUnit } from './compare.js'
import { readResults, userPath, type BenchResults, type Figure, type Role } from './results.js'

const USAGE = 'usage: npm run bench:report -- DIR [--out FILE]   (FILE default DIR/report.html)'

export interface LoadedRun {
  file: string
  results: BenchResults
}

/** Every *.json file directly in `dir` that is a result; the others are named in `skipped` with why. */
export async function loadRuns (dir: string): Promise<{ runs: LoadedRun[], skipped: string[] }> {
  const names = (await readdir(dir)).filter((n) => n.endsWith('.json')).sort()
  const runs: LoadedRun[] = []
  const skipped: string[] = []
  for (const name of names) {
    try {
      runs.push({ file: name, results: await readResults(join(dir, name)) })
    } catch (err) {
      skipped.push(err instanceof Error ? err.message.replace(join(dir, name), name) : `${name}: ${String(err)}`)
    }
  }
  runs.sort((a, b) => a.results.startedAt.localeCompare(b.results.startedAt) || a.file.localeCompare(b.file))
  return { runs, skipped }
}

const escapeHtml = (text: string): string =>
  text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;')

const ROLE_COLOURS: Record<Role, string> = { ours: '#1f5fbf', baseline: '#6b6b6b', floor: '#2e8b57', peer: '#c0652b' }

/** "2026-11-29 00:14" from an ISO date. */
const shortDate = (iso: string): string => iso.slice(0, 16).replace('T', ' ')

interface Point { run: number, y: number, lo: number, hi: number, tip: string }

interface Series {
  key: string
  suite: string
  title: string
  subtitle: string
  unit: string
  better: Figure['better']
  role: Role
  points: Point[]
}

/** A step of 1, 2 or 5 × 10^k close to `raw`. */
function niceStep (raw: number): number {
  const power = 10 ** Math.floor(Math.log10(raw))
  const f = raw / power
  return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * power
}

/** A tick's label: thousands as k, millions as M, with as many decimals as the step needs. */
function tickLabel (t: number, step: number, largest: number): string {
  const [scale, suffix] = largest >= 1e6 ? [1e6, 'M'] : largest >= 1e4 ? [1e3, 'k'] : [1, '']
  const decimals = Math.max(0, -Math.floor(Math.log10(step / scale) + 1e-9))
  return `${(t / scale).toFixed(decimals)}${suffix}`
}

const W = 440
const H = 220
const M = { left: 64, right: 14, top: 12, bottom: 48 }
/** Room between the plot's frame and its first and last run. */
const INSET = 18

/** One series as an SVG line chart: a point per run that has it, whiskers over its spread, axes with their units. */
function lineChart (series: Series, runs: readonly LoadedRun[]): string {
  const plotW = W - M.left - M.right
  const plotH = H - M.top - M.bottom
  const n = runs.length
  const x = (run: number): number => M.left + (n === 1 ? plotW / 2 : INSET + (run * (plotW - 2 * INSET)) / (n - 1))
  let lo = Math.min(...series.points.map((p) => p.lo))
  let hi = Math.max(...series.points.map((p) => p.hi))
  if (series.unit === '×' && lo > 0.8 && lo < 1 && hi < 1.25) lo = Math.min(lo, 1)
  const pad = hi === lo ? Math.abs(hi) * 0.1 || 1 : (hi - lo) * 0.08
  lo -= pad
  hi += pad
  if (lo < 0 && Math.min(...series.points.map((p) => p.lo)) >= 0) lo = 0
  const y = (v: number): number => M.top + plotH - ((v - lo) / (hi - lo)) * plotH
  const step = niceStep((hi - lo) / 4)
  const largest = Math.max(Math.abs(lo), Math.abs(hi))
  const ticks: number[] = []
  for (let t = Math.ceil(lo / step) * step; t <= hi + step * 1e-9; t += step) ticks.push(t)
  const colour = ROLE_COLOURS[series.role]
  const parts: string[] = [
    `<svg class="chart" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" role="img" aria-label="${escapeHtml(`${series.title} ${series.subtitle}`)}">`,
    `<rect x="${M.left}" y="${M.top}" width="${plotW}" height="${plotH}" class="plot"/>`
  ]
  for (const t of ticks) {
    const ty = y(t).toFixed(1)
    parts.push(`<line x1="${M.left}" x2="${M.left + plotW}" y1="${ty}" y2="${ty}" class="grid"/>`,
      `<text x="${M.left - 6}" y="${ty}" class="tick" text-anchor="end" dominant-baseline="middle">${tickLabel(t, step, largest)}</text>`)
  }
  if (series.unit === '×' && lo < 1 && hi > 1) parts.push(`<line x1="${M.left}" x2="${M.left + plotW}" y1="${y(1).toFixed(1)}" y2="${y(1).toFixed(1)}" class="unity"/>`)
  const every = Math.max(1, Math.ceil(n / 8))
  for (let run = 0; run < n; run++) {
    if (run % every !== 0 && run !== n - 1) continue
    const tx = x(run).toFixed(1)
    parts.push(`<line x1="${tx}" x2="${tx}" y1="${M.top + plotH}" y2="${M.top + plotH + 4}" class="axis"/>`,
      `<text x="${tx}" y="${M.top + plotH + 15}" class="tick" text-anchor="middle">#${run + 1}</text>`,
      `<text x="${tx}" y="${M.top + plotH + 26}" class="tick small" text-anchor="middle">${escapeHtml(runs[run]!.results.startedAt.slice(5, 10))}</text>`)
  }
  parts.push(`<text x="${M.left + plotW / 2}" y="${H - 6}" class="label" text-anchor="middle">run, by start (UTC date)</text>`,
    `<text x="14" y="${M.top + plotH / 2}" class="label" text-anchor="middle" transform="rotate(-90 14 ${M.top + plotH / 2})">${escapeHtml(series.unit)} (${series.better} is better)</text>`)
  const points = [...series.points].sort((a, b) => a.run - b.run)
  if (points.length > 1) {
    parts.push(`<polyline class="line" stroke="${colour}" points="${points.map((p) => `${x(p.run).toFixed(1)},${y(p.y).toFixed(1)}`).join(' ')}"/>`)
  }
  for (const p of points) {
    const px = x(p.run).toFixed(1)
    if (p.hi > p.lo) {
      parts.push(`<line x1="${px}" x2="${px}" y1="${y(p.lo).toFixed(1)}" y2="${y(p.hi).toFixed(1)}" class="whisker" stroke="${colour}"/>`)
    }
    parts.push(`<circle cx="${px}" cy="${y(p.y).toFixed(1)}" r="3.5" fill="${colour}"><title>${escapeHtml(p.tip)}</title></circle>`)
  }
  parts.push('</svg>')
  return parts.join('')
}

interface FigureAt { run: number, figure: Figure, suite: string }

/** Every figure id, with where it appears, in the order of the runs. */
function figureHistory (runs: readonly LoadedRun[]): Map<string, FigureAt[]> {
  const history = new Map<string, FigureAt[]>()
  runs.forEach((run, i) => {
    for (const suite of run.results.suites) {
      for (const figure of suite.figures) {
        const list = history.get(figure.id) ?? []
        list.push({ run: i, figure, suite: suite.suite })
        history.set(figure.id, list)
      }
    }
  })
  return history
}

function runTip (runs: readonly LoadedRun[], run: number): string {
  const r = runs[run]!.results
  return `run #${run + 1}, ${shortDate(r.startedAt)} UTC${r.git === null ? '' : `, ${r.git.commit.slice(0, 10)}${r.git.dirty ? '+dirty' : ''}`}`
}

function figureSeries (id: string, list: FigureAt[], runs: readonly LoadedRun[]): Series {
  const last = list[list.length - 1]!
  return {
    key: id,
    suite: last.suite,
    title: last.figure.label,
    subtitle: id,
    unit: last.figure.unit,
    better: last.figure.better,
    role: last.figure.role,
    points: list.map(({ run, figure }) => ({
      run,
      y: figure.value,
      lo: figure.spread?.min ?? figure.value,
      hi: figure.spread?.max ?? figure.value,
      tip: `${runTip(runs, run)}: ${withUnit(figure.value, figure.unit)}, ${figure.samples} sample${figure.samples === 1 ? '' : 's'}` +
        (figure.spread === undefined ? '' : `, min ${formatNumber(figure.spread.min)}, max ${formatNumber(figure.spread.max)}, MAD ${(100 * figure.spread.rel).toFixed(1)}%`)
    }))
  }
}

function ratioSeries (history: Map<string, FigureAt[]>, runs: readonly LoadedRun[]): Series[] {
  const series = new Map<string, Series>()
  for (const [id, list] of history) {
    for (const { run, figure, suite } of list) {
      for (const ratio of figure.ratios ?? []) {
        const key = `${id} ÷ ${ratio.to}`
        const toLabel = history.get(ratio.to)?.at(-1)?.figure.label ?? ratio.to
        const s: Series = series.get(key) ?? { key, suite, title: figure.label, subtitle: `÷ ${toLabel}`, unit: '×', better: figure.better, role: figure.role, points: [] }
        s.points.push({
          run,
          y: ratio.value,
          lo: ratio.value * (1 - ratio.rel),
          hi: ratio.value * (1 + ratio.rel),
          tip: `${runTip(runs, run)}: ${formatNumber(ratio.value)}× (spread ±${(100 * ratio.rel).toFixed(1)}%)`
        })
        series.set(key, s)
      }
    }
  }
  return [...series.values()]
}

function bySuite<T extends { suite: string }> (items: readonly T[], order: readonly string[]): Array<[string, T[]]> {
  const groups = new Map<string, T[]>(order.map((s) => [s, []]))
  for (const item of items) {
    const list = groups.get(item.suite) ?? []
    list.push(item)
    groups.set(item.suite, list)
  }
  return [...groups].filter(([, list]) => list.length > 0)
}

function chartCard (series: Series, runs: readonly LoadedRun[]): string {
  return `<figure class="card"><figcaption><b>${escapeHtml(series.title)}</b><br><span class="sub">${escapeHtml(series.subtitle)}</span>` +
    ` <span class="role" style="color:${ROLE_COLOURS[series.role]}">${series.role}</span></figcaption>${lineChart(series, runs)}</figure>`
}

function runsTable (runs: readonly LoadedRun[]): string {
  const rows = runs.map(({ file, results: r }, i) => {
    const m = r.machine
    const minutes = (Date.parse(r.finishedAt) - Date.parse(r.startedAt)) / 60_000
    return `<tr><td>#${i + 1}</td><td>${escapeHtml(shortDate(r.startedAt))}</td><td class="num">${minutes.toFixed(1)} min</td><td>${escapeHtml(r.tool)}</td>` +
      `<td><code>${r.git === null ? '—' : escapeHtml(r.git.commit.slice(0, 10) + (r.git.dirty ? ' +dirty' : ''))}</code></td>` +
      `<td>${escapeHtml(m.node)}</td><td>${m.cores} × ${escapeHtml(m.cpuModel)}, ${(m.memoryBytes / 1e9).toFixed(1)} GB, ${escapeHtml(m.platform)} ${escapeHtml(m.arch)}</td>` +
      `<td class="num">${m.load.start.map((l) => l.toFixed(2)).join(' / ')} → ${m.load.end.map((l) => l.toFixed(2)).join(' / ')}</td>` +
      `<td>${escapeHtml(r.suites.map((s) => s.suite).join(', '))}</td><td><code>${escapeHtml(r.options.argv.join(' ') || '(none)')}</code></td>` +
      `<td>${escapeHtml(file)}${r.error === undefined ? '' : `<br><span class="bad">stopped: ${escapeHtml(r.error)}</span>`}</td></tr>`
  })
  return '<table><thead><tr><th>run</th><th>started (UTC)</th><th>took</th><th>tool</th><th>commit</th><th>node</th><th>machine</th>' +
    `<th>load average (1 / 5 / 15 min), start → end</th><th>suites</th><th>options</th><th>file</th></tr></thead><tbody>${rows.join('')}</tbody></table>`
}

/** Change of the latest value since the run before that has the figure, judged as bench:compare judges it (5 % floor). */
function changeCell (list: FigureAt[]): string {
  const now = list.at(-1)!.figure
  const before = list.at(-2)?.figure
  if (before === undefined || before.value === 0 || now.value === 0) return '<td class="num">—</td>'
  const change = now.value / before.value - 1
  const worse = now.better === 'lower' ? change : before.value / now.value - 1
  const allowed = Math.max(before.spread?.rel ?? 0, now.spread?.rel ?? 0) + 0.05
  const cls = worse > allowed ? 'bad' : worse < -allowed ? 'good' : ''
  return `<td class="num ${cls}">${change >= 0 ? '+' : ''}${(100 * change).toFixed(1)}%</td>`
}

function latestTable (list: Array<[string, FigureAt[]]>, history: Map<string, FigureAt[]>): string {
  const rows = list.map(([id, at]) => {
    const { figure, run } = at.at(-1)!
    const ratios = (figure.ratios ?? []).map((r) => `${formatNumber(r.value)}× ÷ ${escapeHtml(history.get(r.to)?.at(-1)?.figure.label ?? r.to)}`).join('<br>')
    return `<tr><td>${escapeHtml(figure.label)}<br><code class="sub">${escapeHtml(id)}</code></td><td class="role" style="color:${ROLE_COLOURS[figure.role]}">${figure.role}</td>` +
      `<td class="num"><b>${escapeHtml(withUnit(figure.value, figure.unit))}</b></td><td class="num">${figure.samples}</td>` +
      `<td class="num">${figure.spread === undefined ? '—' : `±${(100 * figure.spread.rel).toFixed(1)}%`}</td>${changeCell(at)}<td class="num">#${run + 1}</td><td class="ratios">${ratios || '—'}</td></tr>`
  })
  return '<table><thead><tr><th>figure</th><th>role</th><th>latest</th><th>samples</th><th>spread (MAD)</th><th>change since the run before</th><th>run</th><th>ratios (this ÷ that)</th></tr></thead>' +
    `<tbody>${rows.join('')}</tbody></table>`
}

const STYLE = `
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 24px; color: #1b1b1b; background: #fff; }
h1 { font-size: 22px; margin: 0 0 4px; } h2 { font-size: 18px; margin: 28px 0 8px; border-bottom: 1px solid #ddd; padding-bottom: 4px; } h3 { font-size: 15px; margin: 18px 0 6px; }
p.lead { color: #555; margin: 0 0 12px; max-width: 70em; }
table { border-collapse: collapse; font-size: 12px; margin: 6px 0 12px; }
th, td { border: 1px solid #ddd; padding: 3px 6px; vertical-align: top; text-align: left; }
th { background: #f4f4f4; } td.num { text-align: right; white-space: nowrap; }
code { font-size: 11px; } .sub { color: #666; font-size: 11px; } .role { font-size: 11px; font-weight: 600; }
.bad { color: #b3261e; font-weight: 600; } .good { color: #1e7b34; font-weight: 600; }
.ratios { font-size: 11px; color: #333; }
.grid-charts { display: flex; flex-wrap: wrap; gap: 10px; }
figure.card { margin: 0; border: 1px solid #e2e2e2; border-radius: 4px; padding: 6px 6px 0; width: 440px; background: #fcfcfc; }
figcaption { font-size: 12px; min-height: 30px; }
svg.chart { display: block; } svg .plot { fill: #fff; stroke: #bbb; } svg .grid { stroke: #eee; } svg .axis { stroke: #888; }
svg .unity { stroke: #999; stroke-dasharray: 4 3; } svg .tick { font-size: 10px; fill: #444; } svg .small { font-size: 9px; fill: #777; }
svg .label { font-size: 11px; fill: #333; } svg .line { fill: none; stroke-width: 1.6; } svg .whisker { stroke-width: 1.2; opacity: 0.55; }
details { margin: 8px 0; } summary { cursor: pointer; font-weight: 600; font-size: 14px; }
.legend span { margin-right: 14px; font-size: 12px; font-weight: 600; }
`

/** The whole page. */
export function renderReport (runs: readonly LoadedRun[], skipped: readonly string[] = [], title = 'razao benchmarks'): string {
  const history = figureHistory(runs)
  const suiteOrder = [...new Set(runs.flatMap((r) => r.results.suites.map((s) => s.suite)))]
  const figures = [...history].map(([id, list]) => figureSeries(id, list, runs))
  const ratios = ratioSeries(history, runs)
  const first = runs[0]?.results.startedAt
  const last = runs.at(-1)?.results.startedAt
  const legend = `<p class="legend">${(Object.keys(ROLE_COLOURS) as Role[]).map((r) => `<span style="color:${ROLE_COLOURS[r]}">● ${r}</span>`).join('')}</p>`
  const body: string[] = [
    `<h1>${escapeHtml(title)}</h1>`,
    `<p class="lead">${runs.length} run${runs.length === 1 ? '' : 's'}${first === undefined ? '' : `, ${escapeHtml(shortDate(first))} to ${escapeHtml(shortDate(last!))} UTC`}; ` +
      `${history.size} figure${history.size === 1 ? '' : 's'}, ${ratios.length} ratio${ratios.length === 1 ? '' : 's'}. Absolute times move with the machine and its load; the ratios, measured within one run, are what to compare ` +
      '(bench/README.md). Whiskers: the samples\' min and max for a figure, ± the relative spread for a ratio. Hover a point for its run and value.</p>',
    legend,
    ...(skipped.length === 0 ? [] : [`<p class="bad">Not read: ${skipped.map(escapeHtml).join('; ')}</p>`]),
    '<h2>Runs</h2>',
    runsTable(runs),
    '<h2>Ratios over time</h2>',
    '<p class="lead">Each figure of ours over its baseline, floor or peer of the same run (this ÷ that). bench:compare fails when one of ours gets worse by more than the larger spread of the two runs plus 5%.</p>'
  ]
  for (const [suite, list] of bySuite(ratios, suiteOrder)) {
    body.push(`<h3>${escapeHtml(suite)}</h3><div class="grid-charts">${list.map((s) => chartCard(s, runs)).join('')}</div>`)
  }
  body.push('<h2>Latest values</h2>',
    '<p class="lead">The newest value of every figure, from the last run that measured it; the change is since the run before that measured it, in red when worse and in green when better beyond both runs\' spread plus 5%.</p>')
  for (const [suite] of bySuite(figures, suiteOrder)) {
    const list = [...history].filter(([, at]) => at.at(-1)!.suite === suite)
    body.push(`<h3>${escapeHtml(suite)}</h3>`, latestTable(list, history))
  }
  body.push('<h2>Figures over time</h2>', '<p class="lead">Every figure of every run, suite by suite (a full run has a few hundred: open a suite to see its charts).</p>')
  // Few enough to read at once: shown open; a full run's few hundred charts wait behind their suite's name.
  const open = figures.length <= 40 ? ' open' : ''
  for (const [suite, list] of bySuite(figures, suiteOrder)) {
    body.push(`<details${open}><summary>${escapeHtml(suite)} (${list.length} figures)</summary><div class="grid-charts">${list.map((s) => chartCard(s, runs)).join('')}</div></details>`)
  }
  return `<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">` +
    `<title>${escapeHtml(title)}</title><style>${STYLE}</style></head><body>\n${body.join('\n')}\n</body></html>\n`
}

/** The command: returns the exit code; `out` gets where the page went, `err` the errors and the files skipped. */
export async function runReport (argv: string[], out: (text: string) => void, err: (text: string) => void): Promise<number> {
  let dir: string
  let file: string
  try {
    const { values, positionals } = parseArgs({ args: argv, options: { out: { type: 'string' } }, allowPositionals: true, strict: true })
    if (positionals.length !== 1) throw new Error(`one folder expected, got ${positionals.length}`)
    if (values.out !== undefined && values.out.trim() === '') throw new Error('--out needs a file name')
    dir = userPath(positionals[0]!)
    file = values.out === undefined ? join(dir, 'report.html') : userPath(values.out)
  } catch (e) {
    err(`bench:report: ${e instanceof Error ? e.message : String(e)}\n${USAGE}\n`)
    return 2
  }
  let loaded: Awaited<ReturnType<typeof loadRuns>>
  try {
    loaded = await loadRuns(dir)
  } catch (e) {
    err(`bench:report: cannot read the folder ${dir}: ${(e as NodeJS.ErrnoException).code ?? String(e)}\n`)
    return 2
  }
  for (const s of loaded.skipped) err(`bench:report: skipped ${s}\n`)
  if (loaded.runs.length === 0) {
    err(`bench:report: no benchmark results (*.json of schema razao-bench/1) in ${dir}\n`)
    return 2
  }
  try {
    await writeFile(file, renderReport(loaded.runs, loaded.skipped))
  } catch (e) {
    err(`bench:report: cannot write ${file}: ${(e as NodeJS.ErrnoException).code ?? String(e)}\n`)
    return 2
  }
  out(`bench:report: ${loaded.runs.length} run${loaded.runs.length === 1 ? '' : 's'} → ${file}\n`)
  return 0
}
