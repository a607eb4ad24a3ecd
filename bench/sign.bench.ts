/**
 * Signing benchmark (issue 4): latency (median, p95) and throughput at concurrency 1 and 8
 * for a 1-page and a 100-page PDF, our signer in NONE and STAMP_AND_PAGE beside the plain
 * @signpdf baseline (bench/sign/baseline.ts), all in one pool made by the service's own
 * createPool, so that both sides pay the same thread hop. Ours is the service's task
 * (workers/sign-pdf.ts) called as server/sign/app.ts calls it: certificate by path, the
 * PDF moved with transferPdf, an abort signal with the task time limit.
 *
 * Warm-up: before its first row, each signer and input runs on every thread for
 * `warmupMs` (and 3 rounds before every row). A fresh thread's first few hundred
 * signatures also pay V8's optimizing compiler, which runs on background threads: for a
 * thread's first ~50 one-page signatures that is as much CPU as the signing itself, still
 * about half after a few hundred, and on 2 cores it takes the core the second worker
 * needs (docs/signature.md, "Benchmark"). `--warmup-ms 0` measures such cold threads.
 *
 * Latency is per task as the caller sees it (queueing included at concurrency 8);
 * throughput is tasks over wall time; a row lasts at least `runs` tasks and `minMs`.
 * CPU ms per signature is the whole process's CPU time (main thread, workers, V8's
 * compiler and GC threads) over the row, so `threads / cpu` bounds the throughput.
 *
 *   node --import tsx bench/sign.bench.ts [--runs 30] [--threads 2] [--pages 1,100] [--warmup-ms 3000] [--min-ms 1000]
 *
 * `benchSign` and `signTable` are exported for bench/run.ts.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { availableParallelism, tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { fromWire } from '../core/errors.js'
import { createDevChain } from '../core/sign/index.js'
import type { VisualMode } from '../core/sign/index.js'
import { makeTextPdf } from '../fixtures/pdf/samples.js'
import { createPool } from '../workers/pool.js'
import type { WorkerPool } from '../workers/pool.js'
import { transferPdf } from '../workers/sign-pdf.js'
import type { SignPdfInput } from '../workers/sign-pdf.js'
import { spreadOf, type Spread } from './lib/spread.js'
import { baselineKind } from './sign/baseline.js'
import type { TimedSignResult } from './sign/timed-sign-pdf.js'
import type { BaselineOutcome, BaselineTask } from './sign/worker.js'

export interface SignBenchOptions {
  /** Measured tasks per row, at least (100-page rows: half); a row also lasts at least `minMs`. */
  runs: number
  minMs: number
  /** Warm-up of each signer and input on every thread before its first row. */
  warmupMs: number
  threads: number
  pages: number[]
  concurrency: number[]
}

export type Contender = 'baseline' | VisualMode

export interface SignBenchRow {
  pages: number
  contender: Contender
  concurrency: number
  tasks: number
  medianMs: number
  p95Ms: number
  /** Of the tasks' latencies, for the JSON results (bench/lib/results.ts). */
  spread: Spread | undefined
  /** Median time inside the worker: the signature itself, without queueing. */
  workerMedianMs: number
  perSecond: number
  /** CPU time of the whole process (every thread) per signature. */
  cpuMsPerTask: number
  inputBytes: number
  outputBytes: number
}

export interface SignBenchResult {
  rows: SignBenchRow[]
  baseline: string
  threads: number
  warmupMs: number
}

const CONTENDERS: Contender[] = ['baseline', 'NONE', 'STAMP_AND_PAGE']
/** server/sign/config.ts's default SIGN_TASK_TIMEOUT_MS: app.ts gives every task this deadline. */
const TASK_TIMEOUT_MS = 120_000

function percentile (sorted: number[], p: number): number {
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))
  return sorted[i]!
}

interface Outcome { outputBytes: number, workerMs: number }
type RunOne = () => Promise<Outcome>

/**
 * Runs `run` with a signal as app.ts gives each task (one controller, aborted by the time
 * limit, the timer cleared when the task ends). Both sides get one, because Piscina queues
 * a task with a signal apart from one without (only the latter counts against the pool's
 * maxQueue, threads² with the service's 'auto').
 */
async function withTaskSignal<T> (run: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const controller = new AbortController()
  const timer = setTimeout(() => controller.abort(), TASK_TIMEOUT_MS)
  timer.unref()
  try {
    return await run(controller.signal)
  } finally {
    clearTimeout(timer)
  }
}

/** One signature by `contender` of `pdf`, through `pool`. */
function signer (pool: WorkerPool, contender: Contender, pdf: Uint8Array, certificate: { path: string, password: string, pkcs12: Uint8Array }): RunOne {
  if (contender === 'baseline') {
    const filename = fileURLToPath(new URL('./sign/worker.ts', import.meta.url))
    const task: BaselineTask = { pdf, p12: certificate.pkcs12, password: certificate.password }
    return async () => await withTaskSignal(async (signal) => await pool.run(task, { filename, signal }) as BaselineOutcome)
  }
  const filename = fileURLToPath(new URL('./sign/timed-sign-pdf.ts', import.meta.url))
  return async () => {
    // A fresh buffer per request, as the HTTP thread decodes one; the transfer takes it away.
    const input: SignPdfInput = {
      pdf: Buffer.from(pdf),
      certificate: { path: certificate.path, password: certificate.password },
      visualMode: contender,
      tsa: undefined,
      policy: undefined,
      validatorUrl: 'https://validar.iti.gov.br/',
      timeZone: 'America/Sao_Paulo'
    }
    const { result, workerMs } = await withTaskSignal(async (signal) => await pool.run(transferPdf(input), { filename, signal }) as TimedSignResult)
    // As runTask unwraps it; a refusal is a broken build, not a fast one.
    if (!result.ok) throw fromWire(result.error)
    if (result.value.outcome !== 'signed') throw new Error(`${contender} refused the benchmark PDF: ${result.value.code} ${result.value.message}`)
    return { outputBytes: result.value.pdf.byteLength, workerMs }
  }
}

/** Keeps `lanes` tasks in flight until `rounds` rounds are done and `minMs` has passed. */
async function warmUp (runOne: RunOne, lanes: number, rounds: number, minMs: number): Promise<void> {
  const started = performance.now()
  for (let i = 0; i < rounds || performance.now() - started < minMs; i++) {
    await Promise.all(Array.from({ length: lanes }, runOne))
  }
}

async function measure (runOne: RunOne, concurrency: number, runs: number, minMs: number): Promise<Omit<SignBenchRow, 'pages' | 'contender' | 'inputBytes'>> {
  const latencies: number[] = []
  const inWorker: number[] = []
  let outputBytes = 0
  let next = 0
  const cpuBefore = process.cpuUsage()
  const started = performance.now()
  const lane = async (): Promise<void> => {
    while (next < runs || performance.now() - started < minMs) {
      next++
      const t0 = performance.now()
      const outcome = await runOne()
      latencies.push(performance.now() - t0)
      inWorker.push(outcome.workerMs)
      outputBytes = outcome.outputBytes
    }
  }
  await Promise.all(Array.from({ length: concurrency }, lane))
  const wallMs = performance.now() - started
  const cpu = process.cpuUsage(cpuBefore)
  const tasks = latencies.length
  latencies.sort((a, b) => a - b)
  inWorker.sort((a, b) => a - b)
  return {
    concurrency,
    tasks,
    medianMs: percentile(latencies, 0.5),
    p95Ms: percentile(latencies, 0.95),
    spread: spreadOf(latencies),
    workerMedianMs: percentile(inWorker, 0.5),
    perSecond: tasks / (wallMs / 1000),
    cpuMsPerTask: (cpu.user + cpu.system) / 1000 / tasks,
    outputBytes
  }
}

export async function benchSign (options: Partial<SignBenchOptions> = {}, log: (line: string) => void = () => {}): Promise<SignBenchResult> {
  const o: SignBenchOptions = { runs: 30, minMs: 1000, warmupMs: 3000, threads: availableParallelism(), pages: [1, 100], concurrency: [1, 8], ...options }
  const chain = createDevChain({ password: 'bench' })
  const dir = await mkdtemp(join(tmpdir(), 'razao-bench-sign-'))
  const certificate = { path: join(dir, 'bench.p12'), password: chain.password, pkcs12: chain.pkcs12 }
  await writeFile(certificate.path, chain.pkcs12)
  const pool = createPool({ maxThreads: o.threads })
  const lanes = Math.max(2, o.threads)
  const rows: SignBenchRow[] = []
  try {
    for (const pages of o.pages) {
      const pdf = await makeTextPdf(pages)
      for (const contender of CONTENDERS) {
        const runOne = signer(pool, contender, pdf, certificate)
        // Every thread, not only the one a serial run would reuse: JIT, pdf-lib and forge tables.
        await warmUp(runOne, lanes, 3, o.warmupMs)
        for (const concurrency of o.concurrency) {
          const runs = Math.max(concurrency * 2, pages >= 100 ? Math.ceil(o.runs / 2) : o.runs)
          await warmUp(runOne, lanes, 3, 0)
          const row = await measure(runOne, concurrency, runs, o.minMs)
          rows.push({ pages, contender, inputBytes: pdf.length, ...row })
          log(`  ${pages} p ${contender.padEnd(14)} c=${concurrency}: ${row.tasks} tasks, median ${row.medianMs.toFixed(1)} ms, p95 ${row.p95Ms.toFixed(1)} ms, ` +
            `in worker ${row.workerMedianMs.toFixed(1)} ms, ${row.perSecond.toFixed(1)}/s, CPU ${row.cpuMsPerTask.toFixed(1)} ms/signature`)
        }
      }
    }
  } finally {
    await pool.destroy()
    await rm(dir, { recursive: true, force: true })
  }
  return { rows, baseline: await baselineKind(), threads: o.threads, warmupMs: o.warmupMs }
}

/** The markdown table with ratios to the baseline of the same input and concurrency, then the targets. */
export function signTable (result: SignBenchResult): string {
  const base = (r: SignBenchRow): SignBenchRow | undefined =>
    result.rows.find((b) => b.contender === 'baseline' && b.pages === r.pages && b.concurrency === r.concurrency)
  const lines = [
    `### PDF signing (${result.threads} worker threads, warmed ${(result.warmupMs / 1000).toFixed(1)} s per signer and input; baseline: @signpdf, ${result.baseline})`,
    '',
    'CPU ms/signature is the whole process (main thread, workers, V8 compiler and GC threads); cores busy = CPU time over wall time.',
    '',
    '| input | signer | concurrency | tasks | median ms | p95 ms | in-worker median ms | signatures/s | CPU ms/signature | cores busy | median vs baseline | output KB |',
    '|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|'
  ]
  for (const r of result.rows) {
    const b = base(r)
    const ratio = b === undefined || r.contender === 'baseline' ? '1.00×' : `${(r.medianMs / b.medianMs).toFixed(2)}×`
    lines.push(`| ${r.pages} page${r.pages === 1 ? '' : 's'} (${Math.round(r.inputBytes / 1024)} KB) | ${r.contender === 'baseline' ? '@signpdf baseline' : `ours ${r.contender}`} | ${r.concurrency} | ${r.tasks} | ` +
      `${r.medianMs.toFixed(1)} | ${r.p95Ms.toFixed(1)} | ${r.workerMedianMs.toFixed(1)} | ${r.perSecond.toFixed(1)} | ${r.cpuMsPerTask.toFixed(1)} | ` +
      `${(r.perSecond * r.cpuMsPerTask / 1000).toFixed(2)} | ${ratio} | ${Math.round(r.outputBytes / 1024)} |`)
  }
  lines.push('', '| target | measured | verdict |', '|---|---|---|')
  for (const r of result.rows.filter((x) => x.contender === 'NONE' && x.concurrency === 1)) {
    const b = base(r)
    if (b === undefined) continue
    const ratio = r.medianMs / b.medianMs
    lines.push(`| NONE within 1.5× of baseline, ${r.pages} p | ${ratio.toFixed(2)}× | ${ratio <= 1.5 ? 'PASS' : 'FAIL'} |`)
  }
  for (const r of result.rows.filter((x) => x.contender === 'STAMP_AND_PAGE' && x.pages >= 100 && x.concurrency === 1)) {
    lines.push(`| ${r.pages}-page STAMP_AND_PAGE under 1 s | median ${r.medianMs.toFixed(0)} ms, p95 ${r.p95Ms.toFixed(0)} ms | ${r.p95Ms < 1000 ? 'PASS' : 'FAIL'} |`)
  }
  // Issue 24: the stamp's placement may cost at most twice the rest of a signature, and the
  // stamped 100-page signature at most half of @signpdf's (which draws nothing).
  for (const r of result.rows.filter((x) => x.contender === 'STAMP_AND_PAGE' && x.concurrency === 1)) {
    const none = result.rows.find((x) => x.contender === 'NONE' && x.pages === r.pages && x.concurrency === 1)
    if (none !== undefined) {
      const ratio = r.medianMs / none.medianMs
      // CPU per signature beside the medians: on a loaded machine it is the steadier of the two.
      lines.push(`| STAMP_AND_PAGE ÷ NONE, ${r.pages} p, at most 3× | ${ratio.toFixed(2)}× (${r.medianMs.toFixed(1)} vs ${none.medianMs.toFixed(1)} ms; CPU ${(r.cpuMsPerTask / none.cpuMsPerTask).toFixed(2)}×) | ${ratio <= 3 ? 'PASS' : 'FAIL'} |`)
    }
    const b = base(r)
    if (b !== undefined && r.pages >= 100) {
      const ratio = r.medianMs / b.medianMs
      lines.push(`| STAMP_AND_PAGE ÷ @signpdf baseline, ${r.pages} p, at most 0.5× | ${ratio.toFixed(2)}× (${r.medianMs.toFixed(1)} vs ${b.medianMs.toFixed(1)} ms; CPU ${(r.cpuMsPerTask / b.cpuMsPerTask).toFixed(2)}×) | ${ratio <= 0.5 ? 'PASS' : 'FAIL'} |`)
    }
  }
  for (const pages of new Set(result.rows.map((r) => r.pages))) {
    const one = result.rows.find((r) => r.contender === 'NONE' && r.pages === pages && r.concurrency === 1)
    const eight = result.rows.find((r) => r.contender === 'NONE' && r.pages === pages && r.concurrency === 8)
    if (one === undefined || eight === undefined) continue
    const scale = eight.perSecond / one.perSecond
    lines.push(`| throughput scales with the pool (${result.threads} threads), NONE ${pages} p | ${scale.toFixed(2)}× at concurrency 8 vs 1 | ${scale >= Math.min(1.5, result.threads * 0.75) ? 'PASS' : 'FAIL'} |`)
  }
  return lines.join('\n')
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const { values } = parseArgs({
    options: { runs: { type: 'string' }, threads: { type: 'string' }, pages: { type: 'string' }, 'warmup-ms': { type: 'string' }, 'min-ms': { type: 'string' } },
    strict: true
  })
  const result = await benchSign({
    ...(values.runs === undefined ? {} : { runs: Number(values.runs) }),
    ...(values.threads === undefined ? {} : { threads: Number(values.threads) }),
    ...(values.pages === undefined ? {} : { pages: values.pages.split(',').map(Number) }),
    ...(values['warmup-ms'] === undefined ? {} : { warmupMs: Number(values['warmup-ms']) }),
    ...(values['min-ms'] === undefined ? {} : { minMs: Number(values['min-ms']) })
  }, (line) => process.stderr.write(`${line}\n`))
  process.stdout.write(`${signTable(result)}\n`)
}
