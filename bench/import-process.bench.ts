/**
 * Scenario: /v1/process end to end (upload → VALIDADO) and in-process, against the
 * database's own limit measured in the same run: a raw COPY of the same rows from a
 * file, plus our analyze time. One child process per ledger size, so peak RSS per
 * size is comparable. The PostgreSQL is the embedded one (a fresh cluster under
 * bench/out/, removed afterwards) unless BENCH_DATABASE_URL names another server.
 */
import { mkdir, rm } from 'node:fs/promises'
import { availableParallelism } from 'node:os'
import { join } from 'node:path'
import { EmbeddedPostgres } from '../core/db/embedded.js'
import type { ProcessCase, ProcessJob, ProcessReport } from './child/protocol.js'
import { ensureCsvLedger, ensureLedger, type BenchLedger } from './lib/ledger-cache.js'
import { OUT_DIR } from './lib/paths.js'
import { childScript } from './lib/prepare.js'
import { runChild, type ChildOutcome } from './lib/spawn-child.js'
import { DASH, integer, markdownTable, megabytes, ratio, seconds, sizeLabel } from './lib/table.js'
import type { TargetCheck } from './lib/targets.js'

export const PROCESS_TARGETS = {
  /** process over HTTP ≤ 0.75 × (analyze + raw COPY): reading and loading overlap on two cores. */
  maxOverAnalyzePlusCopy: 0.75,
  /** POST /v1/imports followed to VALIDADO ≤ 1.1 × /v1/process of the same file. */
  maxImportsOverProcess: 1.1,
  /** The ledger as CSV through /v1/process ≤ 1.5 × psql \copy of the same rows. */
  maxCsvOverPsql: 1.5,
  /** A load reporting its progress ≤ 1.02 × the same load without. */
  maxProgressCost: 1.02,
  minRowsPerSecond: 200_000,
  maxRssGrowth: 1.2
} as const

/** Bytes uploaded by the service-memory child at every size (see benchImportProcess). */
const SERVICE_UPLOAD_BYTES = 256 << 20

const LABELS: Record<ProcessCase, string> = {
  'raw-copy': 'raw COPY of the same rows as CSV (one stream from a file)',
  'psql-copy': 'psql \\copy of the same rows as CSV (the real client)',
  'binary-copy': 'binary COPY of our encoded rows from a file (the database\'s floor for our load)',
  analyze: 'analyze alone (read + analysis)',
  'process-stream': 'process in-process, one COPY, a write per batch',
  'process-progress': 'the same, reporting progress as a job does',
  'process-per-batch': 'process in-process, one COPY per batch (pipelined)',
  'process-http': 'process over HTTP (upload → VALIDADO)',
  'imports-http': 'POST /v1/imports, then its events until VALIDADO',
  'csv-http': 'the same ledger as CSV over /v1/process'
}

export interface ProcessSettings {
  sizes: number[]
  seed: number
  batchSize: number
  cases: ProcessCase[]
  warmupRounds: number
  rounds: number
  timeoutMs: number
  distDir: string
  /** Also run the service-memory child (the HTTP case alone over a stream of uploads). */
  measureServiceMemory?: boolean
  /** Sizes measured by the service-memory child only (the timed cases skipped), after `sizes`. */
  memoryOnlySizes?: number[]
}

export interface ProcessRun {
  ledger: BenchLedger
  /** Undefined for a memory-only size. */
  outcome: ChildOutcome<ProcessReport> | undefined
  /**
   * Peak RSS of a second child that runs only the HTTP case (the service and its
   * pool; the client is a process of its own) over a stream of uploads: the main
   * child also holds the in-process cases and the raw-COPY preparation, which say
   * nothing about the service's memory.
   */
  service?: ChildOutcome<ProcessReport> | undefined
}

/** Runs `work` with the URL of a PostgreSQL the suite may create databases on. */
export async function withBenchDatabase<T> (work: (adminUrl: string) => Promise<T>): Promise<T> {
  const given = process.env.BENCH_DATABASE_URL
  if (given !== undefined && given.trim() !== '') return await work(given)
  const dir = join(OUT_DIR, `pg-${process.pid}`)
  await mkdir(OUT_DIR, { recursive: true })
  const server = new EmbeddedPostgres({ dir: join(dir, 'cluster') })
  try {
    await mkdir(dir, { recursive: true })
    return await work(await server.ensureRunning())
  } finally {
    await server.stop().catch(() => undefined)
    await rm(dir, { recursive: true, force: true })
  }
}

export async function benchImportProcess (settings: ProcessSettings, adminUrl: string, onRun?: (run: ProcessRun) => void): Promise<ProcessRun[]> {
  const runs: ProcessRun[] = []
  const memoryOnly = settings.memoryOnlySizes ?? []
  for (const rows of [...settings.sizes, ...memoryOnly]) {
    const timed = settings.sizes.includes(rows)
    const ledger = await ensureLedger(rows, settings.seed)
    const csvFile = timed && settings.cases.includes('csv-http') ? (await ensureCsvLedger(rows, settings.seed)).path : undefined
    const job: ProcessJob = {
      file: ledger.path,
      csvFile,
      dataRows: ledger.facts.totalRows,
      distDir: settings.distDir,
      adminUrl,
      scratchDir: join(OUT_DIR, `process-scratch-${process.pid}`),
      batchSize: settings.batchSize,
      cases: settings.cases,
      warmupRounds: settings.warmupRounds,
      rounds: settings.rounds
    }
    const run: ProcessRun = { ledger, outcome: timed ? await runChild<ProcessReport>(childScript('process-child'), job, { timeoutMs: settings.timeoutMs }) : undefined }
    if ((settings.measureServiceMemory === true || !timed) && settings.cases.includes('process-http')) {
      // Enough requests to stream SERVICE_UPLOAD_BYTES through the service at every size,
      // so that each size is measured in the steady state of a running service: the
      // buffers an upload leaves behind are collected in batches (V8 frees them when
      // about 64 MB have piled up), and three requests of 5 MB never get there.
      const rounds = Math.max(3, Math.ceil(SERVICE_UPLOAD_BYTES / ledger.fileBytes))
      const alone: ProcessJob = { ...job, cases: ['process-http'], warmupRounds: 1, rounds }
      run.service = await runChild<ProcessReport>(childScript('process-child'), alone, { timeoutMs: settings.timeoutMs * 2 })
    }
    onRun?.(run)
    runs.push(run)
  }
  return runs
}

const CORES = availableParallelism()

/** CPU time of a case, ours and the database's, median ms; undefined where the database's cannot be read. */
function cpuMs (run: ProcessRun, name: ProcessCase): number | undefined {
  const t = run.outcome?.ok === true ? run.outcome.report.timings[name] : undefined
  return t?.cpuMedianMs === undefined || t.databaseCpuMedianMs === undefined ? undefined : t.cpuMedianMs + t.databaseCpuMedianMs
}

function serviceRss (run: ProcessRun): number | undefined {
  return run.service?.ok === true ? run.service.report.maxRssKb : undefined
}

function medianMs (run: ProcessRun, name: ProcessCase): number | undefined {
  return run.outcome?.ok === true ? run.outcome.report.timings[name]?.medianMs : undefined
}

/** analyze + raw COPY: what a load could cost if nothing overlapped and nothing were wasted. */
export function baselineMs (run: ProcessRun): number | undefined {
  const analyze = medianMs(run, 'analyze')
  const copy = medianMs(run, 'raw-copy')
  return analyze === undefined || copy === undefined ? undefined : analyze + copy
}

export function processTable (run: ProcessRun, batchSize: number): string {
  const title = `### /v1/process — ${sizeLabel(run.ledger.rows)} rows, upload ${megabytes(run.ledger.fileBytes, 1)} MB, batch_size ${batchSize}`
  const service = serviceRss(run)
  const serviceLine = service === undefined ? [] : [`- peak RSS of the service process (server and pool threads, the HTTP case alone, uploads adding up to 256 MB): ${megabytes(service * 1024)} MB`]
  if (run.outcome === undefined) return [title, '', ...serviceLine].join('\n')
  if (!run.outcome.ok) return `${title}\n\nFAILED: ${run.outcome.failure} (${run.outcome.detail})`
  const base = baselineMs(run)
  const { timings, maxRssKb } = run.outcome.report
  const rows = (Object.keys(LABELS) as ProcessCase[]).filter((name) => timings[name] !== undefined).map((name) => {
    const t = timings[name]!
    const cpu = cpuMs(run, name)
    return [LABELS[name], seconds(t.medianMs), seconds(t.minMs), integer(run.ledger.facts.totalRows / (t.medianMs / 1000)),
      base === undefined ? DASH : ratio(t.medianMs / base), cpu === undefined ? DASH : seconds(cpu),
      cpu === undefined || base === undefined ? DASH : ratio(cpu / CORES / base), String(t.samplesMs.length)]
  })
  const table = markdownTable(['case', 'median s', 'min s', 'rows/s', 'vs analyze + raw COPY', 'CPU s (ours + database)', `CPU floor on ${CORES} cores, vs the same`, 'runs'], rows)
  return [title, '', table, ...serviceLine,
    `- peak RSS of the measuring process (all cases above, the raw-COPY preparation included): ${megabytes(maxRssKb * 1024)} MB`,
    '- CPU: the measuring process (for the HTTP cases: the service, server and pool; its client is a process of its own) plus the PostgreSQL server\'s processes; divided by the cores it is the least wall time that much work can take here',
    '- every case starts from empty tables after a CHECKPOINT; the database is PostgreSQL on this machine (embedded unless BENCH_DATABASE_URL)'].join('\n')
}

/** `a / b` as a target row: measured, and the verdict against `limit`; undefined when either is missing. */
function ratioCheck (target: string, a: number | undefined, b: number | undefined, limit: number, floor?: number): TargetCheck | undefined {
  if (a === undefined || b === undefined) return undefined
  const floorText = floor === undefined ? '' : ` (floor ${ratio(floor)})`
  return { target, measured: `${ratio(a / b)}${floorText}`, pass: a / b <= limit }
}

export function processTargets (runs: readonly ProcessRun[]): TargetCheck[] {
  const checks: Array<TargetCheck | undefined> = []
  for (const run of runs) {
    if (run.outcome === undefined) continue
    const size = sizeLabel(run.ledger.rows)
    const http = medianMs(run, 'process-http')
    const base = baselineMs(run)
    const binary = medianMs(run, 'binary-copy')
    const httpCpu = cpuMs(run, 'process-http')
    // No process case can go below the database storing our rows alone, nor below its own
    // CPU time spread over every core.
    const floors = [binary, httpCpu === undefined ? undefined : httpCpu / CORES].filter((v): v is number => v !== undefined)
    const floor = floors.length === 0 || base === undefined ? undefined : Math.max(...floors) / base
    checks.push(ratioCheck(`${size}: process over HTTP within ${PROCESS_TARGETS.maxOverAnalyzePlusCopy}× of analyze + raw COPY`, http, base, PROCESS_TARGETS.maxOverAnalyzePlusCopy, floor))
    checks.push(ratioCheck(`${size}: POST /v1/imports to VALIDADO within ${PROCESS_TARGETS.maxImportsOverProcess}× of /v1/process`, medianMs(run, 'imports-http'), http, PROCESS_TARGETS.maxImportsOverProcess))
    checks.push(ratioCheck(`${size}: CSV over /v1/process within ${PROCESS_TARGETS.maxCsvOverPsql}× of psql \\copy`, medianMs(run, 'csv-http'), medianMs(run, 'psql-copy'), PROCESS_TARGETS.maxCsvOverPsql))
    checks.push(ratioCheck(`${size}: progress reporting costs at most ${Math.round((PROCESS_TARGETS.maxProgressCost - 1) * 100)}%`, medianMs(run, 'process-progress'), medianMs(run, 'process-stream'), PROCESS_TARGETS.maxProgressCost))
    const rate = http === undefined ? undefined : run.ledger.facts.totalRows / (http / 1000)
    checks.push({
      target: `${size}: at least ${integer(PROCESS_TARGETS.minRowsPerSecond)} rows/s end to end`,
      measured: rate === undefined ? DASH : `${integer(rate)} rows/s`,
      pass: rate === undefined ? undefined : rate >= PROCESS_TARGETS.minRowsPerSecond
    })
  }
  const first = runs[0]
  const last = runs[runs.length - 1]
  const small = first === undefined ? undefined : serviceRss(first)
  const large = last === undefined ? undefined : serviceRss(last)
  if (first !== last && small !== undefined && large !== undefined) {
    const growth = large / small
    checks.push({
      target: `service peak RSS over /v1/process flat from ${sizeLabel(first!.ledger.rows)} to ${sizeLabel(last!.ledger.rows)} (at most ${PROCESS_TARGETS.maxRssGrowth}×)`,
      measured: `${ratio(growth)} (${megabytes(small * 1024)} → ${megabytes(large * 1024)} MB)`,
      pass: growth <= PROCESS_TARGETS.maxRssGrowth
    })
  }
  return checks.filter((c): c is TargetCheck => c !== undefined)
}
