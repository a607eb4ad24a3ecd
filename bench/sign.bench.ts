/**
 * Signing benchmark (issue 4): latency (median, p95) and throughput at concurrency 1 and 8
 * for a 1-page and a 100-page PDF, our signer in NONE and STAMP_AND_PAGE beside the plain
 * @signpdf baseline (bench/sign/baseline.ts), all in one Piscina pool of `threads` workers
 * so that both sides pay the same thread hop. Each row starts with warm-up rounds on every thread. Latency is per task as the caller sees it
 * (queueing included at concurrency 8); throughput is tasks over wall time.
 *
 *   node --import tsx bench/sign.bench.ts [--runs 30] [--threads 2]
 *
 * `benchSign` and `signTable` are exported for bench/run.ts.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { availableParallelism, tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { Piscina } from 'piscina'
import { createDevChain } from '../core/sign/index.js'
import { makeTextPdf } from '../fixtures/pdf/samples.js'
import { baselineKind } from './sign/baseline.js'
import type { BenchOutcome, BenchTask } from './sign/worker.js'

export interface SignBenchOptions {
  /** Measured tasks per row (after 3 warm-up tasks). */
  runs: number
  threads: number
  pages: number[]
  concurrency: number[]
}

export interface SignBenchRow {
  pages: number
  contender: BenchTask['contender']
  concurrency: number
  medianMs: number
  p95Ms: number
  /** Median time inside the worker: the signature itself, without queueing. */
  workerMedianMs: number
  perSecond: number
  inputBytes: number
  outputBytes: number
}

export interface SignBenchResult {
  rows: SignBenchRow[]
  baseline: string
  threads: number
}

const CONTENDERS: Array<BenchTask['contender']> = ['baseline', 'NONE', 'STAMP_AND_PAGE']

function percentile (sorted: number[], p: number): number {
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))
  return sorted[i]!
}

async function measure (pool: Piscina, task: BenchTask, concurrency: number, runs: number): Promise<Omit<SignBenchRow, 'pages' | 'contender' | 'inputBytes'>> {
  // Warm every thread (JIT, pdf-lib and forge tables), not only the one a serial run would reuse.
  for (let i = 0; i < 3; i++) await Promise.all(Array.from({ length: Math.max(2, pool.threads.length) }, async () => await pool.run(task)))
  const latencies: number[] = []
  const inWorker: number[] = []
  let outputBytes = 0
  let next = 0
  const started = performance.now()
  const lane = async (): Promise<void> => {
    while (next < runs) {
      next++
      const t0 = performance.now()
      const outcome = await pool.run(task) as BenchOutcome
      latencies.push(performance.now() - t0)
      inWorker.push(outcome.workerMs)
      outputBytes = outcome.outputBytes
    }
  }
  await Promise.all(Array.from({ length: concurrency }, lane))
  const wallMs = performance.now() - started
  latencies.sort((a, b) => a - b)
  inWorker.sort((a, b) => a - b)
  return { concurrency, medianMs: percentile(latencies, 0.5), p95Ms: percentile(latencies, 0.95), workerMedianMs: percentile(inWorker, 0.5), perSecond: runs / (wallMs / 1000), outputBytes }
}

export async function benchSign (options: Partial<SignBenchOptions> = {}, log: (line: string) => void = () => {}): Promise<SignBenchResult> {
  const o: SignBenchOptions = { runs: 30, threads: availableParallelism(), pages: [1, 100], concurrency: [1, 8], ...options }
  const chain = createDevChain({ password: 'bench' })
  const dir = await mkdtemp(join(tmpdir(), 'razao-bench-sign-'))
  const pool = new Piscina({
    filename: fileURLToPath(new URL('./sign/worker.ts', import.meta.url)),
    minThreads: o.threads,
    maxThreads: o.threads,
    execArgv: ['--import', 'tsx']
  })
  const rows: SignBenchRow[] = []
  try {
    for (const pages of o.pages) {
      const pdf = await makeTextPdf(pages)
      for (const contender of CONTENDERS) {
        for (const concurrency of o.concurrency) {
          const runs = Math.max(concurrency * 2, pages >= 100 ? Math.ceil(o.runs / 2) : o.runs)
          const row = await measure(pool, { contender, pdf, p12: chain.pkcs12, password: chain.password }, concurrency, runs)
          rows.push({ pages, contender, inputBytes: pdf.length, ...row })
          log(`  ${pages} p ${contender.padEnd(14)} c=${concurrency}: median ${row.medianMs.toFixed(1)} ms, p95 ${row.p95Ms.toFixed(1)} ms, in worker ${row.workerMedianMs.toFixed(1)} ms, ${row.perSecond.toFixed(1)}/s`)
        }
      }
    }
  } finally {
    await pool.destroy()
    await rm(dir, { recursive: true, force: true })
  }
  return { rows, baseline: await baselineKind(), threads: o.threads }
}

/** The markdown table with ratios to the baseline of the same input and concurrency, then the targets. */
export function signTable (result: SignBenchResult): string {
  const base = (r: SignBenchRow): SignBenchRow | undefined =>
    result.rows.find((b) => b.contender === 'baseline' && b.pages === r.pages && b.concurrency === r.concurrency)
  const lines = [
    `### PDF signing (${result.threads} worker threads; baseline: @signpdf, ${result.baseline})`,
    '',
    '| input | signer | concurrency | median ms | p95 ms | in-worker median ms | signatures/s | median vs baseline | output KB |',
    '|---|---|---:|---:|---:|---:|---:|---:|---:|'
  ]
  for (const r of result.rows) {
    const b = base(r)
    const ratio = b === undefined || r.contender === 'baseline' ? '1.00×' : `${(r.medianMs / b.medianMs).toFixed(2)}×`
    lines.push(`| ${r.pages} page${r.pages === 1 ? '' : 's'} (${Math.round(r.inputBytes / 1024)} KB) | ${r.contender === 'baseline' ? '@signpdf baseline' : `ours ${r.contender}`} | ${r.concurrency} | ` +
      `${r.medianMs.toFixed(1)} | ${r.p95Ms.toFixed(1)} | ${r.workerMedianMs.toFixed(1)} | ${r.perSecond.toFixed(1)} | ${ratio} | ${Math.round(r.outputBytes / 1024)} |`)
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
  const { values } = parseArgs({ options: { runs: { type: 'string' }, threads: { type: 'string' } }, strict: true })
  const result = await benchSign({
    ...(values.runs === undefined ? {} : { runs: Number(values.runs) }),
    ...(values.threads === undefined ? {} : { threads: Number(values.threads) })
  }, (line) => process.stderr.write(`${line}\n`))
  process.stdout.write(`${signTable(result)}\n`)
}
