/**
 * Each suite's results, as its table prints them, turned into figures of the JSON results
 * (bench/lib/results.ts). The same objects the tables are made from, the same formulas,
 * no measuring: a figure here is a cell of a table, at full precision, with its unit, the
 * spread of the samples behind it and its ratios to the baselines, floors and peers of the
 * same run.
 *
 * Ids: `<suite>/<scope>/<subject>/<metric>`, scope being what the table's title or first
 * column says (a ledger size as `100k`, a page count, a concurrency `c16`, a plugin id, a
 * round), so that they stay the same from run to run. Ratios are always this ÷ that, on
 * the figure of ours: the tables' "speed-up vs contender" is the inverse of the reader's
 * ratio to that contender.
 */
import { availableParallelism } from 'node:os'
import type { PairReport, ProcessCase, Timing } from '../child/protocol.js'
import type { AgentBenchResult } from '../agent.bench.js'
import type { ExtractBenchRun, Floor } from '../extract.bench.js'
import type { OcrBenchRun } from '../extract-ocr.bench.js'
import type { GatewayBenchResult, GatewayBenchRow } from '../gateway.bench.js'
import type { HttpRun } from '../import-analyze-http.bench.js'
import type { ProcessRun } from '../import-process.bench.js'
import type { SignBenchResult } from '../sign.bench.js'
import type { SizeRun } from '../xlsx-read-rows.bench.js'
import type { BenchLedger } from './ledger-cache.js'
import type { Role, SuiteBuilder } from './results.js'
import type { ChildOutcome } from './spawn-child.js'
import { spreadOf, sumSpread } from './spread.js'
import { sizeLabel } from './table.js'
import type { TargetCheck } from './targets.js'

/** Lowercase words joined by '-': the id of a label. */
export function slug (text: string): string {
  return text.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '')
}

/** The checks of a targets table, as printed. */
export function addChecks (s: SuiteBuilder, checks: readonly TargetCheck[]): void {
  for (const c of checks) s.check(c.target, c.measured, c.pass)
}

const OURS_READERS = new Set(['reader', 'reader-stream'])

/** A contender's report, or undefined (said in the notes) when it failed or saw other rows than the ledger's. */
function reportOf<R> (s: SuiteBuilder, label: string, result: { outcome: ChildOutcome<R>, mismatch?: string | undefined }): R | undefined {
  if (!result.outcome.ok) {
    s.notes.push(`${label}: ${result.outcome.failure} (${result.outcome.detail})`)
    return undefined
  }
  if (result.mismatch !== undefined) {
    s.notes.push(`${label}: ${result.mismatch}; its figures are left out`)
    return undefined
  }
  return result.outcome.report
}

/** Median (s), rows/s and MB/s of sheet XML of one Timing, as the read tables compute them. */
function timingFigures (s: SuiteBuilder, scope: string, label: string, role: Role, timing: Timing, ledger: BenchLedger): void {
  const samples = timing.samplesMs.length
  s.add({ id: `${scope}/median`, label: `${label}, median`, value: timing.medianMs / 1000, unit: 's', better: 'lower', role, samples, spread: spreadOf(timing.samplesMs.map((ms) => ms / 1000)) })
  const rate = (per: number) => (ms: number): number => per / (ms / 1000)
  s.add({ id: `${scope}/rows-per-s`, label: `${label}, rows/s`, value: rate(ledger.sheetRows)(timing.medianMs), unit: 'rows/s', better: 'higher', role, samples, spread: spreadOf(timing.samplesMs.map(rate(ledger.sheetRows))) })
  s.add({ id: `${scope}/mb-per-s`, label: `${label}, MB/s of sheet XML`, value: rate(ledger.sheetXmlBytes / 1e6)(timing.medianMs), unit: 'MB/s', better: 'higher', role, samples, spread: spreadOf(timing.samplesMs.map(rate(ledger.sheetXmlBytes / 1e6))) })
}

/** `npm run bench` reading rows: one scope per ledger size, one subject per contender. */
export function readRowsFigures (s: SuiteBuilder, runs: readonly SizeRun[]): void {
  for (const run of runs) {
    const size = sizeLabel(run.ledger.rows)
    const measured: string[] = []
    for (const result of run.results) {
      const { contender } = result
      const label = `${size} rows: ${contender.label.replaceAll('*', '')}`
      const report = reportOf(s, label, result)
      if (report === undefined) continue
      const role: Role = contender.isPeer ? 'peer' : OURS_READERS.has(contender.id) ? 'ours' : 'baseline'
      timingFigures(s, `${size}/${contender.id}`, label, role, report.timing, run.ledger)
      s.add({ id: `${size}/${contender.id}/peak-rss`, label: `${label}, peak RSS`, value: report.maxRssKb * 1024 / 1e6, unit: 'MB', better: 'lower', role })
      measured.push(contender.id)
    }
    const bare = run.results.find((r) => r.contender.id === 'reader')?.outcome
    if (bare?.ok === true) {
      s.add({ id: `${size}/bare-node/rss`, label: `${size} rows: a bare node process before importing anything, RSS`, value: bare.report.startRssKb * 1024 / 1e6, unit: 'MB', better: 'lower', role: 'baseline' })
    }
    for (const id of measured) {
      if (id !== 'inflate') s.ratio(`${size}/${id}/median`, `${size}/inflate/median`)
    }
    for (const ours of measured.filter((id) => OURS_READERS.has(id))) {
      for (const peer of run.results.filter((r) => r.contender.isPeer && measured.includes(r.contender.id))) {
        s.ratio(`${size}/${ours}/median`, `${size}/${peer.contender.id}/median`)
      }
    }
  }
}

/** `/v1/analyze` over HTTP against the reader alone, and the CPU floor of the HTTP row. */
export function httpFigures (s: SuiteBuilder, run: HttpRun, cores = availableParallelism()): void {
  const size = sizeLabel(run.ledger.rows)
  const roles: Record<string, Role> = { reader: 'baseline', analyze: 'ours', http: 'ours' }
  for (const result of run.results) {
    const { contender } = result
    const label = `${size} rows: ${contender.label}`
    const report = reportOf(s, label, result)
    if (report === undefined) continue
    const role = roles[contender.id] ?? 'ours'
    const { timing } = report
    timingFigures(s, `${size}/${contender.id}`, label, role, timing, run.ledger)
    if (timing.cpuMedianMs !== undefined) {
      s.add({ id: `${size}/${contender.id}/cpu`, label: `${label}, CPU time of a run (median)`, value: timing.cpuMedianMs / 1000, unit: 's', better: 'lower', role, samples: timing.samplesMs.length })
    }
    s.add({ id: `${size}/${contender.id}/peak-rss`, label: `${label}, peak RSS`, value: report.maxRssKb * 1024 / 1e6, unit: 'MB', better: 'lower', role })
  }
  s.ratio(`${size}/analyze/median`, `${size}/reader/median`)
  s.ratio(`${size}/http/median`, `${size}/reader/median`)
  const http = s.get(`${size}/http/cpu`)
  if (http !== undefined) {
    s.add({ id: `${size}/cpu-floor/wall`, label: `${size} rows: CPU floor of the HTTP row on ${cores} cores (its CPU time / cores)`, value: http.value / cores, unit: 's', better: 'lower', role: 'floor', samples: http.samples })
    s.ratio(`${size}/cpu-floor/wall`, `${size}/reader/median`)
  }
}

const PROCESS_LABELS: Record<ProcessCase, string> = {
  'raw-copy': 'raw COPY of the same rows as CSV',
  'psql-copy': 'psql \\copy of the same rows as CSV',
  'binary-copy': 'binary COPY of our encoded rows (the database\'s floor)',
  analyze: 'analyze alone',
  'process-stream': 'process in-process, one COPY',
  'process-progress': 'process in-process, one COPY, reporting progress',
  'process-per-batch': 'process in-process, one COPY per batch',
  'process-http': 'process over HTTP (upload → VALIDADO)',
  'imports-http': 'POST /v1/imports followed to VALIDADO',
  'csv-http': 'the ledger as CSV over /v1/process'
}

/** Peers and floors among the process cases; the rest are ours. */
const PROCESS_ROLES: Partial<Record<ProcessCase, Role>> = { 'raw-copy': 'baseline', 'psql-copy': 'peer', 'binary-copy': 'floor' }

/** `/v1/process` against analyze + raw COPY, per ledger size; `scope` prefixes the ids (bench:quick: `process`). */
export function processFigures (s: SuiteBuilder, runs: readonly ProcessRun[], scope = ''): void {
  for (const run of runs) {
    const size = `${scope}${sizeLabel(run.ledger.rows)}`
    const rows = run.ledger.facts.totalRows
    if (run.service?.ok === true) {
      s.add({ id: `${size}/service/peak-rss`, label: `${sizeLabel(run.ledger.rows)} rows: peak RSS of the service process (HTTP case alone, uploads adding up to 256 MB)`, value: run.service.report.maxRssKb * 1024 / 1e6, unit: 'MB', better: 'lower', role: 'ours' })
    }
    if (run.outcome === undefined) continue
    if (!run.outcome.ok) {
      s.notes.push(`/v1/process at ${sizeLabel(run.ledger.rows)} rows: ${run.outcome.failure} (${run.outcome.detail})`)
      continue
    }
    const { timings, maxRssKb } = run.outcome.report
    for (const name of Object.keys(PROCESS_LABELS) as ProcessCase[]) {
      const t = timings[name]
      if (t === undefined) continue
      const role: Role = PROCESS_ROLES[name] ?? 'ours'
      const label = `${sizeLabel(run.ledger.rows)} rows: ${PROCESS_LABELS[name]}`
      const samples = t.samplesMs.length
      s.add({ id: `${size}/${name}/median`, label: `${label}, median`, value: t.medianMs / 1000, unit: 's', better: 'lower', role, samples, spread: spreadOf(t.samplesMs.map((ms) => ms / 1000)) })
      s.add({ id: `${size}/${name}/rows-per-s`, label: `${label}, rows/s`, value: rows / (t.medianMs / 1000), unit: 'rows/s', better: 'higher', role, samples, spread: spreadOf(t.samplesMs.map((ms) => rows / (ms / 1000))) })
    }
    const analyze = s.get(`${size}/analyze/median`)
    const copy = s.get(`${size}/raw-copy/median`)
    if (analyze !== undefined && copy !== undefined) {
      s.add({
        id: `${size}/analyze+raw-copy/median`,
        label: `${sizeLabel(run.ledger.rows)} rows: analyze + raw COPY (the baseline)`,
        value: analyze.value + copy.value,
        unit: 's',
        better: 'lower',
        role: 'baseline',
        samples: Math.min(analyze.samples, copy.samples),
        spread: sumSpread(analyze.spread, copy.spread)
      })
      for (const name of Object.keys(PROCESS_LABELS) as ProcessCase[]) s.ratio(`${size}/${name}/median`, `${size}/analyze+raw-copy/median`)
    }
    s.ratio(`${size}/imports-http/median`, `${size}/process-http/median`)
    s.ratio(`${size}/csv-http/median`, `${size}/psql-copy/median`)
    s.ratio(`${size}/process-progress/median`, `${size}/process-stream/median`)
    s.add({ id: `${size}/measuring-process/peak-rss`, label: `${sizeLabel(run.ledger.rows)} rows: peak RSS of the measuring process (all cases)`, value: maxRssKb * 1024 / 1e6, unit: 'MB', better: 'lower', role: 'ours' })
  }
}

/** PDF signing: per input, signer and concurrency; ratios to @signpdf and STAMP_AND_PAGE to NONE. */
export function signFigures (s: SuiteBuilder, result: SignBenchResult): void {
  const subject = (c: string): string => c === 'baseline' ? 'signpdf' : slug(c)
  for (const r of result.rows) {
    const scope = `${r.pages}p/${subject(r.contender)}/c${r.concurrency}`
    const role: Role = r.contender === 'baseline' ? 'baseline' : 'ours'
    const label = `${r.pages} page${r.pages === 1 ? '' : 's'}, ${r.contender === 'baseline' ? '@signpdf baseline' : `ours ${r.contender}`}, concurrency ${r.concurrency}`
    const common = { role, samples: r.tasks }
    s.add({ id: `${scope}/median`, label: `${label}: median latency`, value: r.medianMs, unit: 'ms', better: 'lower', spread: r.spread, ...common })
    s.add({ id: `${scope}/p95`, label: `${label}: p95 latency`, value: r.p95Ms, unit: 'ms', better: 'lower', ...common })
    s.add({ id: `${scope}/in-worker-median`, label: `${label}: median time in the worker`, value: r.workerMedianMs, unit: 'ms', better: 'lower', ...common })
    s.add({ id: `${scope}/per-s`, label: `${label}: signatures/s`, value: r.perSecond, unit: 'signatures/s', better: 'higher', ...common })
    s.add({ id: `${scope}/cpu-per-signature`, label: `${label}: CPU ms/signature (whole process)`, value: r.cpuMsPerTask, unit: 'ms', better: 'lower', ...common })
    s.add({ id: `${scope}/cores-busy`, label: `${label}: cores busy (CPU time / wall time)`, value: r.perSecond * r.cpuMsPerTask / 1000, unit: 'cores', better: 'higher', ...common })
    s.add({ id: `${scope}/output`, label: `${label}: signed PDF size`, value: r.outputBytes / 1024, unit: 'KB', better: 'lower', role })
  }
  for (const r of result.rows) {
    if (r.contender === 'baseline') continue
    const scope = (c: string): string => `${r.pages}p/${subject(c)}/c${r.concurrency}`
    s.ratio(`${scope(r.contender)}/median`, `${scope('baseline')}/median`)
    if (r.contender === 'STAMP_AND_PAGE') s.ratio(`${scope(r.contender)}/median`, `${scope('NONE')}/median`)
  }
  // Throughput at each higher concurrency over concurrency 1: does the pool scale?
  for (const r of result.rows.filter((x) => x.contender === 'NONE' && x.concurrency > 1)) {
    s.ratio(`${r.pages}p/none/c${r.concurrency}/per-s`, `${r.pages}p/none/c1/per-s`)
  }
  s.notes.push(`${result.threads} worker threads, warmed ${(result.warmupMs / 1000).toFixed(1)} s per signer and input; baseline: @signpdf, ${result.baseline}`)
}

/** Document extraction: per plugin, pool against one thread and its floor; the time split; the service. */
export function extractFigures (s: SuiteBuilder, run: ExtractBenchRun): void {
  const floorFigures = (scope: string, label: string, floor: Floor, what: string): void => {
    if ('error' in floor) {
      s.notes.push(`${label}: floor not measured (${floor.error})`)
      return
    }
    s.add({ id: `${scope}/floor/speedup`, label: `${label}: floor, two processes ÷ one (docs/s)`, value: floor.ratio, unit: '×', better: 'higher', role: 'floor' })
    s.add({ id: `${scope}/floor/one-process/docs-per-s`, label: `${label}: floor, one process alone`, value: floor.single, unit: 'docs/s', better: 'higher', role: 'floor' })
    s.add({ id: `${scope}/floor/two-processes/docs-per-s`, label: `${label}: floor, two processes at once`, value: floor.pair, unit: 'docs/s', better: 'higher', role: 'floor' })
    s.add({ id: `${scope}/floor/one-process/cpu-per-doc`, label: `${label}: floor, CPU ms per document, one process alone`, value: floor.cpuMsPerDoc.single, unit: 'ms', better: 'lower', role: 'floor' })
    s.add({ id: `${scope}/floor/two-processes/cpu-per-doc`, label: `${label}: floor, CPU ms per document, two processes at once`, value: floor.cpuMsPerDoc.pair, unit: 'ms', better: 'lower', role: 'floor' })
    s.ratio(`${scope}/${what}`, `${scope}/floor/speedup`)
  }
  for (const r of run.rows) {
    const label = `${r.documentType} (${r.plugin})`
    const scope = r.plugin
    s.add({ id: `${scope}/pool/docs-per-s`, label: `${label}: docs/s, pool of ${r.pool.threads}`, value: r.pool.docsPerSecond, unit: 'docs/s', better: 'higher', role: 'ours' })
    s.add({ id: `${scope}/one-thread/docs-per-s`, label: `${label}: docs/s, one thread`, value: r.single.docsPerSecond, unit: 'docs/s', better: 'higher', role: 'baseline' })
    s.add({ id: `${scope}/pool/speedup`, label: `${label}: pool of ${r.pool.threads} ÷ one thread (docs/s)`, value: r.pool.docsPerSecond / r.single.docsPerSecond, unit: '×', better: 'higher', role: 'ours' })
    s.add({ id: `${scope}/pool/cpu-per-doc`, label: `${label}: CPU ms per document, pool's process (every thread)`, value: r.pool.cpuMsPerDoc, unit: 'ms', better: 'lower', role: 'ours' })
    s.add({ id: `${scope}/pool/main-cpu-per-doc`, label: `${label}: CPU ms per document, the thread feeding the pool`, value: r.pool.mainMsPerDoc, unit: 'ms', better: 'lower', role: 'ours' })
    floorFigures(scope, label, r.floor, 'pool/speedup')
    const n = r.splitSamples.count
    const total = r.pdfjsMs + r.boundsMs + r.oursMs
    s.add({ id: `${scope}/split/pdfjs`, label: `${label}: pdf.js reading the text layer, median per document`, value: r.pdfjsMs, unit: 'ms', better: 'lower', role: 'baseline', samples: n, spread: r.splitSamples.pdfjs })
    s.add({ id: `${scope}/split/bound`, label: `${label}: content-size bounds, median per document`, value: r.boundsMs, unit: 'ms', better: 'lower', role: 'ours', samples: n, spread: r.splitSamples.bounds })
    s.add({ id: `${scope}/split/ours`, label: `${label}: ours (text document, detection, parsing), median per document`, value: r.oursMs, unit: 'ms', better: 'lower', role: 'ours', samples: n, spread: r.splitSamples.ours })
    s.add({ id: `${scope}/split/ours-share`, label: `${label}: ours ÷ the whole document`, value: 100 * r.oursMs / total, unit: '%', better: 'lower', role: 'ours', samples: n })
    s.add({ id: `${scope}/split/ours-and-bound-share`, label: `${label}: ours + bounds ÷ the whole document`, value: 100 * (r.oursMs + r.boundsMs) / total, unit: '%', better: 'lower', role: 'ours', samples: n })
    s.ratio(`${scope}/split/ours`, `${scope}/split/pdfjs`)
  }
  if ('error' in run.serve) {
    s.notes.push(`razao serve extract: not measured (${run.serve.error})`)
  } else {
    const v = run.serve
    const label = 'razao serve extract'
    s.add({ id: 'serve/rss-after-start', label: `${label}: RSS after start and the first health call`, value: v.afterHealthRss / 1e6, unit: 'MB', better: 'lower', role: 'ours' })
    s.add({ id: 'serve/rss-after-batch', label: `${label}: RSS after a batch of ${v.batchFiles}`, value: v.afterBatchRss / 1e6, unit: 'MB', better: 'lower', role: 'ours' })
    s.add({ id: 'serve/peak-rss', label: `${label}: peak RSS`, value: v.peakRss / 1e6, unit: 'MB', better: 'lower', role: 'ours' })
    s.add({ id: 'serve/batch', label: `${label}: a batch of ${v.batchFiles} through POST /api/v1/pdf/extract-batch`, value: v.batchMs, unit: 'ms', better: 'lower', role: 'ours' })
    s.add({ id: 'serve/main-cpu-per-doc', label: `${label}: main thread's CPU ms per document (second batch)`, value: v.mainCpuMsPerDoc, unit: 'ms', better: 'lower', role: 'ours' })
    const h = v.http
    s.add({ id: 'http/one-client/docs-per-s', label: `POST /api/v1/pdf/extract, pool of ${h.threads}: 1 client`, value: h.oneClient, unit: 'docs/s', better: 'higher', role: 'baseline' })
    s.add({ id: 'http/four-clients/docs-per-s', label: `POST /api/v1/pdf/extract, pool of ${h.threads}: 4 clients`, value: h.fourClients, unit: 'docs/s', better: 'higher', role: 'ours' })
    s.add({ id: 'http/speedup', label: `POST /api/v1/pdf/extract, pool of ${h.threads}: 4 clients ÷ 1 client (docs/s)`, value: h.fourClients / h.oneClient, unit: '×', better: 'higher', role: 'ours' })
    s.add({ id: 'http/one-client/cpu-per-doc', label: 'POST /api/v1/pdf/extract: CPU ms per document, every thread of the service, 1 client', value: h.cpuMsPerDoc.oneClient, unit: 'ms', better: 'lower', role: 'ours' })
    s.add({ id: 'http/four-clients/cpu-per-doc', label: 'POST /api/v1/pdf/extract: CPU ms per document, every thread of the service, 4 clients', value: h.cpuMsPerDoc.fourClients, unit: 'ms', better: 'lower', role: 'ours' })
    floorFigures('http', 'POST /api/v1/pdf/extract', h.floor, 'speedup')
  }
  s.notes.push(`load average when the run started: ${run.loadBefore.toFixed(2)}`)
  if (run.missing.length > 0) s.notes.push(`active plugins without a generator (not measured): ${run.missing.join(', ')}`)
}

/** OCR of scans: the service's pool task beside Tesseract alone on the same images. */
export function ocrFigures (s: SuiteBuilder, run: OcrBenchRun): void {
  for (const r of run.rows) {
    const scope = slug(r.label)
    const samples = r.service.wallSamplesMs?.length ?? 1
    s.add({ id: `${scope}/service/wall`, label: `OCR, ${r.label}: wall time`, value: r.service.wallMs / 1000, unit: 's', better: 'lower', role: 'ours', samples, spread: spreadOf((r.service.wallSamplesMs ?? []).map((ms) => ms / 1000)) })
    s.add({ id: `${scope}/service/cpu`, label: `OCR, ${r.label}: CPU time (every thread)`, value: r.service.cpuMs / 1000, unit: 's', better: 'lower', role: 'ours', samples })
    s.add({ id: `${scope}/tesseract/wall`, label: `OCR, ${r.label}: Tesseract alone on the same images, wall time`, value: r.floor.wallMs / 1000, unit: 's', better: 'lower', role: 'floor' })
    s.add({ id: `${scope}/tesseract/cpu`, label: `OCR, ${r.label}: Tesseract alone, CPU time`, value: r.floor.cpuMs / 1000, unit: 's', better: 'lower', role: 'floor' })
    s.ratio(`${scope}/service/wall`, `${scope}/tesseract/wall`)
    s.check(`OCR, ${r.label}: within ${(r.goalMs / 1000).toFixed(0)} s`, `${(r.service.wallMs / 1000).toFixed(3)} s`, r.service.wallMs <= r.goalMs)
  }
  s.add({ id: 'rss-after', label: 'OCR: RSS of the measuring process after the service runs', value: run.rssAfterBytes / 1e6, unit: 'MB', better: 'lower', role: 'ours' })
  s.add({ id: 'warm-up', label: 'OCR: EXTRACT_WARM\'s warm-up of one thread', value: run.warmUpMs / 1000, unit: 's', better: 'lower', role: 'ours' })
  s.notes.push(`load average when the run started: ${run.loadBefore.toFixed(2)}`)
}

/** The gateway against calling the fake directly and against a bare relay (the floor), per concurrency. */
export function gatewayFigures (s: SuiteBuilder, result: GatewayBenchResult): void {
  const roles: Record<string, Role> = { direct: 'baseline', relay: 'floor', gateway: 'ours' }
  const names: Record<string, string> = { direct: 'direct (same TLS client)', relay: 'through a bare relay (floor)', gateway: 'through the gateway' }
  for (const r of result.rows) {
    const scope = `c${r.concurrency}/${r.path}`
    const label = `NF-e query ${names[r.path] ?? r.path}, concurrency ${r.concurrency}`
    const common = { role: roles[r.path] ?? 'ours', samples: r.calls }
    s.add({ id: `${scope}/median`, label: `${label}: median latency`, value: r.medianMs, unit: 'ms', better: 'lower', spread: r.spread, ...common })
    s.add({ id: `${scope}/p95`, label: `${label}: p95 latency`, value: r.p95Ms, unit: 'ms', better: 'lower', ...common })
    s.add({ id: `${scope}/per-s`, label: `${label}: calls/s`, value: r.perSecond, unit: 'calls/s', better: 'higher', ...common })
    s.add({ id: `${scope}/handshakes-per-call`, label: `${label}: full TLS handshakes per call`, value: r.handshakes / r.calls, unit: 'handshakes/call', better: 'lower', ...common })
    s.add({ id: `${scope}/cpu-per-call`, label: `${label}: CPU ms per call, gateway process`, value: r.cpuMsPerCall.process, unit: 'ms', better: 'lower', ...common })
    if (r.cpuMsPerCall.database !== undefined) {
      s.add({ id: `${scope}/database-cpu-per-call`, label: `${label}: CPU ms per call, database server`, value: r.cpuMsPerCall.database, unit: 'ms', better: 'lower', ...common })
    }
    const direct = result.rows.find((x) => x.path === 'direct' && x.concurrency === r.concurrency)
    if (r.path !== 'direct' && direct !== undefined) {
      s.add({ id: `${scope}/median-overhead`, label: `${label}: median overhead over direct`, value: r.medianMs - direct.medianMs, unit: 'ms', better: 'lower', role: common.role })
      s.add({ id: `${scope}/p95-overhead`, label: `${label}: p95 overhead over direct`, value: r.p95Ms - direct.p95Ms, unit: 'ms', better: 'lower', role: common.role })
    }
  }
  for (const c of new Set(result.rows.map((r) => r.concurrency))) {
    s.ratio(`c${c}/gateway/median`, `c${c}/direct/median`)
    s.ratio(`c${c}/gateway/median`, `c${c}/relay/median`)
    s.ratio(`c${c}/relay/median`, `c${c}/direct/median`)
    const gateway = result.rows.find((r) => r.path === 'gateway' && r.concurrency === c)
    const relay = result.rows.find((r) => r.path === 'relay' && r.concurrency === c)
    if (gateway !== undefined && relay !== undefined) {
      s.add({ id: `c${c}/gateway/median-beyond-relay`, label: `NF-e query through the gateway, concurrency ${c}: median overhead beyond the bare relay`, value: gateway.medianMs - relay.medianMs, unit: 'ms', better: 'lower', role: 'ours' })
      const cpu = (x: GatewayBenchRow): number => x.cpuMsPerCall.process + (x.cpuMsPerCall.database ?? 0)
      s.add({ id: `c${c}/gateway/cpu-beyond-relay`, label: `NF-e query through the gateway, concurrency ${c}: CPU ms per call beyond the relay (process and database)`, value: cpu(gateway) - cpu(relay), unit: 'ms', better: 'lower', role: 'ours' })
    }
  }
  s.notes.push(`${result.docs} documents per answer, ${Math.round(result.answerBytes / 1024)} KB of JSON`)
}

/** The agent's queue against direct spawns, per round and over all rounds. */
export function agentFigures (s: SuiteBuilder, result: AgentBenchResult): void {
  const { jobs } = result.options
  for (const r of result.rounds) {
    const scope = `round-${r.round}`
    const label = `round ${r.round}, ${jobs} jobs`
    s.add({ id: `${scope}/direct/ms-per-job`, label: `${label}: direct spawn from a bare node, ms per job`, value: r.directMs / jobs, unit: 'ms', better: 'lower', role: 'baseline', samples: jobs })
    s.add({ id: `${scope}/floor/ms-per-job`, label: `${label}: direct spawn from a process of the agent's RSS (floor), ms per job`, value: r.floorMs / jobs, unit: 'ms', better: 'lower', role: 'floor', samples: jobs })
    s.add({ id: `${scope}/agent/ms-per-job`, label: `${label}: through the agent, ms per job`, value: r.agentMs / jobs, unit: 'ms', better: 'lower', role: 'ours', samples: jobs })
    s.add({ id: `${scope}/agent/overhead-per-job`, label: `${label}: agent overhead over direct spawns, per job`, value: (r.agentMs - r.directMs) / jobs, unit: 'ms', better: 'lower', role: 'ours', samples: jobs })
    s.add({ id: `${scope}/floor/overhead-per-job`, label: `${label}: forking from a process the agent's size, over direct, per job`, value: (r.floorMs - r.directMs) / jobs, unit: 'ms', better: 'lower', role: 'floor', samples: jobs })
    s.add({ id: `${scope}/direct/cpu-per-job`, label: `${label}: CPU ms per job, the spawning node`, value: r.directCpuMs, unit: 'ms', better: 'lower', role: 'baseline', samples: jobs })
    s.add({ id: `${scope}/agent/cpu-per-job`, label: `${label}: CPU ms per job, the agent process`, value: r.agentCpuMs, unit: 'ms', better: 'lower', role: 'ours', samples: jobs })
    s.add({ id: `${scope}/agent/submit`, label: `${label}: submitting every job over HTTP`, value: r.submitMs / 1000, unit: 's', better: 'lower', role: 'ours' })
    s.add({ id: `${scope}/agent/rss-after`, label: `${label}: agent RSS after the round`, value: r.rssAfterBytes / 1e6, unit: 'MB', better: 'lower', role: 'ours' })
    s.ratio(`${scope}/agent/ms-per-job`, `${scope}/direct/ms-per-job`)
    s.ratio(`${scope}/floor/ms-per-job`, `${scope}/direct/ms-per-job`)
  }
  // The rounds as samples of one figure: what compare can weigh against the next run.
  const perJob = (ms: (r: AgentBenchResult['rounds'][number]) => number): number[] => result.rounds.map((r) => ms(r) / jobs)
  const rounds = result.rounds.length
  const all = (id: string, label: string, values: number[], role: Role): void => {
    const spread = spreadOf(values)
    s.add({ id, label, value: spread?.median ?? values[0] ?? Number.NaN, unit: 'ms', better: 'lower', role, samples: rounds, spread })
  }
  all('rounds/direct/ms-per-job', `${jobs} jobs, every round: direct spawns, ms per job (median of rounds)`, perJob((r) => r.directMs), 'baseline')
  all('rounds/agent/ms-per-job', `${jobs} jobs, every round: through the agent, ms per job (median of rounds)`, perJob((r) => r.agentMs), 'ours')
  s.ratio('rounds/agent/ms-per-job', 'rounds/direct/ms-per-job')
  const worst = Math.max(...result.rounds.map((r) => (r.agentMs - r.directMs) / jobs))
  const beyond = Math.max(...result.rounds.map((r) => (r.agentMs - Math.max(r.floorMs, r.directMs)) / jobs))
  s.add({ id: 'worst/agent/overhead-per-job', label: 'agent overhead per job, worst round', value: worst, unit: 'ms', better: 'lower', role: 'ours', samples: rounds })
  s.add({ id: 'worst/agent/overhead-beyond-floor', label: 'agent overhead per job beyond the floor, worst round', value: beyond, unit: 'ms', better: 'lower', role: 'ours', samples: rounds })
  s.add({ id: 'agent/rss-after-warm-up', label: 'agent RSS after warm-up', value: result.rssBeforeBytes / 1e6, unit: 'MB', better: 'lower', role: 'ours' })
  s.check('agent overhead under 5 ms per job', `worst round ${worst.toFixed(2)} ms`, worst < 5)
  s.check('agent overhead beyond the floor under 5 ms per job', `worst round ${beyond.toFixed(2)} ms`, beyond < 5)
  s.notes.push(`${result.options.program === 'sh' ? '/bin/sh script' : 'node script'}, MAX_CONCURRENT_JOBS=1`)
}

/** bench:quick's pair: the reader and both inflate-only baselines, rotating in one process. */
export function quickPairFigures (s: SuiteBuilder, report: PairReport, ledger: BenchLedger): void {
  const size = sizeLabel(ledger.rows)
  timingFigures(s, `${size}/yauzl`, `${size} rows: inflate only (yauzl read stream, 16 KiB)`, 'baseline', report.streamInflate, ledger)
  timingFigures(s, `${size}/inflate`, `${size} rows: inflate only (ZipArchive)`, 'baseline', report.inflate, ledger)
  timingFigures(s, `${size}/reader`, `${size} rows: razao reader`, 'ours', report.reader, ledger)
  s.add({ id: `${size}/pair/peak-rss`, label: `${size} rows: peak RSS of the process running all three`, value: report.maxRssKb * 1024 / 1e6, unit: 'MB', better: 'lower', role: 'ours' })
  // The pair child times the three in rotating rounds, one pass each a round, and keeps the
  // samples in round order: each round's own ratio is a sample of the ratio, and their spread
  // is what the gate's ratio is known to, tighter than the two sides' spreads added up.
  const paired = (a: Timing, b: Timing): number | undefined =>
    a.samplesMs.length === b.samplesMs.length ? spreadOf(a.samplesMs.map((ms, i) => ms / b.samplesMs[i]!))?.rel : undefined
  s.ratio(`${size}/reader/median`, `${size}/inflate/median`, paired(report.reader, report.inflate))
  s.ratio(`${size}/reader/median`, `${size}/yauzl/median`, paired(report.reader, report.streamInflate))
}
