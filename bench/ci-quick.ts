/**
 * `npm run bench:quick`, the CI throughput guard, two gates, each a ratio measured
 * in one run (a slow or busy CI machine slows both sides and does not flip it):
 * - the reader against inflate-only (our ZipArchive) on the same 200k-row ledger,
 *   alternating in one process: fails when median(reader) / median(inflate) > BENCH_MAX_RATIO (2.0)
 *   in two processes in a row (the second runs only when the first is over);
 * - /v1/process of a 100k-row ledger over HTTP against analyze + a raw COPY of the
 *   same rows into the same PostgreSQL: fails when the ratio > BENCH_MAX_PROCESS_RATIO (2.0).
 *
 * Every figure of both tables and both gates' verdicts are also written as JSON (schema
 * razao-bench/1, bench/lib/results.ts) to bench/out/quick.json, or to `--json FILE`, so
 * that CI can keep them; writing them never changes the exit code.
 *
 *   npm run bench:quick [-- --json FILE]
 */
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import type { PairJob, PairReport } from './child/protocol.js'
import { baselineMs, benchImportProcess, processTable, withBenchDatabase } from './import-process.bench.js'
import { processFigures, quickPairFigures } from './lib/figures.js'
import { ensureLedger } from './lib/ledger-cache.js'
import { OUT_DIR } from './lib/paths.js'
import { childScript, ensureDist, gitState, snapshotDist, sourceVersion, transpileChildScripts } from './lib/prepare.js'
import { ResultsRecorder, userPath, writeResults, type SuiteBuilder } from './lib/results.js'
import { runChild } from './lib/spawn-child.js'
import { integer, markdownTable, megabytes, ratio, seconds, sizeLabel } from './lib/table.js'

const ROWS = 200_000
const SEED = 1
const WARMUP_ROUNDS = 2
const ROUNDS = 9
/** A reader pass takes about a second here; anything near this limit is broken, not slow. */
const TIMEOUT_MS = 90_000

function maxRatioFromEnv (name = 'BENCH_MAX_RATIO'): number {
  const raw = process.env[name]
  const limit = raw === undefined || raw.trim() === '' ? 2.0 : Number(raw)
  if (!Number.isFinite(limit) || limit <= 0) throw new Error(`${name} must be a positive number, got "${raw}"`)
  return limit
}

const PROCESS_ROWS = 100_000

/** The process gate; returns PASS or FAIL after printing its table. */
async function processGate (distDir: string, suite: SuiteBuilder): Promise<boolean> {
  const maxRatio = maxRatioFromEnv('BENCH_MAX_PROCESS_RATIO')
  const [run] = await withBenchDatabase((adminUrl) => benchImportProcess({
    sizes: [PROCESS_ROWS], seed: SEED, batchSize: 1000, cases: ['raw-copy', 'analyze', 'process-http'], warmupRounds: 1, rounds: 5, timeoutMs: TIMEOUT_MS * 2, distDir
  }, adminUrl))
  process.stdout.write(`${processTable(run!, 1000)}\n\n`)
  processFigures(suite, [run!], 'process/')
  const gate = `gate: process over HTTP / (analyze + raw COPY) at most ${ratio(maxRatio)}`
  const base = baselineMs(run!)
  const http = run!.outcome?.ok === true ? run!.outcome.report.timings['process-http']?.medianMs : undefined
  if (base === undefined || http === undefined) {
    process.stdout.write('gate: process could not be measured: FAIL\n')
    suite.check(gate, 'not measured', false)
    return false
  }
  const measured = http / base
  const pass = measured <= maxRatio
  process.stdout.write(`gate: process over HTTP / (analyze + raw COPY) = ${ratio(measured)} (limit ${ratio(maxRatio)}): ${pass ? 'PASS' : 'FAIL'}\n`)
  suite.check(gate, ratio(measured), pass)
  return pass
}

async function main (suite: SuiteBuilder): Promise<number> {
  const maxRatio = maxRatioFromEnv()
  await ensureDist()
  await transpileChildScripts()
  const ledger = await ensureLedger(ROWS, SEED)
  const dist = await snapshotDist()
  const job: PairJob = { file: ledger.path, sheetPart: ledger.sheetPart, distDir: dist.dir, warmupRounds: WARMUP_ROUNDS, rounds: ROUNDS }
  let outcome
  let processPass
  let firstRatio: number | undefined
  try {
    outcome = await runChild<PairReport>(childScript('pair-child'), job, { timeoutMs: TIMEOUT_MS })
    // One more measurement, in a fresh process, when the first is over the limit: on 2 shared
    // cores a single run has come out anywhere from 1.2x to 1.8x for the same build, and
    // .ci/run now runs this gate once per Node line. A real regression is over it both times.
    if (outcome.ok && outcome.report.reader.medianMs / outcome.report.inflate.medianMs > maxRatio) {
      firstRatio = outcome.report.reader.medianMs / outcome.report.inflate.medianMs
      outcome = await runChild<PairReport>(childScript('pair-child'), job, { timeoutMs: TIMEOUT_MS })
    }
    processPass = await processGate(dist.dir, suite)
  } finally {
    await dist.remove()
  }
  if (!outcome.ok) {
    process.stdout.write(`bench:quick could not measure: ${outcome.failure} (${outcome.detail})\n`)
    suite.notes.push(`the reader and inflate could not be measured: ${outcome.failure} (${outcome.detail})`)
    return 1
  }
  const { inflate, reader, counts, maxRssKb } = outcome.report
  if (counts.rows !== ledger.sheetRows || counts.cells !== ledger.sheetCells || counts.xmlBytes !== ledger.sheetXmlBytes) {
    process.stdout.write(`bench:quick: the reader saw ${counts.rows} rows of ${ledger.sheetRows} and ${counts.cells} cells of ${ledger.sheetCells}, ` +
      `inflate saw ${counts.xmlBytes} bytes of ${ledger.sheetXmlBytes}; the times are meaningless\n`)
    suite.notes.push('the reader or inflate saw other rows, cells or bytes than the ledger has: their times are left out')
    return 1
  }
  quickPairFigures(suite, outcome.report, ledger)
  const { streamInflate } = outcome.report
  // The gate: reader against inflating the same sheet through our own ZipArchive, the
  // raw limit the 1.5x target is measured against (the reader cannot be faster
  // than its input arrives). yauzl's standard read stream, about five times slower, is
  // printed beside it for reference (see bench/README.md).
  const measured = reader.medianMs / inflate.medianMs
  const overStream = reader.medianMs / streamInflate.medianMs
  const row = (label: string, ms: number, minMs: number): string[] =>
    [label, seconds(ms), seconds(minMs), integer(ledger.sheetRows / (ms / 1000)), megabytes(ledger.sheetXmlBytes / (ms / 1000), 1),
      ratio(ms / streamInflate.medianMs), ratio(ms / inflate.medianMs)]
  const table = markdownTable(
    ['contender', 'median s', 'min s', 'rows/s', 'MB/s of sheet XML', 'vs inflate (yauzl stream)', 'vs inflate (ZipArchive)'],
    [
      row('inflate only (yauzl read stream, 16 KiB)', streamInflate.medianMs, streamInflate.minMs),
      row('inflate only (ZipArchive)', inflate.medianMs, inflate.minMs),
      row('razao reader', reader.medianMs, reader.minMs)
    ]
  )
  const verdict = measured <= maxRatio ? 'PASS' : 'FAIL'
  suite.check(`gate: reader / inflate (ZipArchive) at most ${ratio(maxRatio)}`, ratio(measured), verdict === 'PASS')
  if (firstRatio !== undefined) suite.notes.push(`first measurement ${ratio(firstRatio)} was over the limit; the figures are the second, in a new process`)
  process.stdout.write(`### bench:quick — ${sizeLabel(ROWS)} rows, sheet XML ${megabytes(ledger.sheetXmlBytes, 1)} MB, ` +
    `${ROUNDS} rotating rounds after ${WARMUP_ROUNDS} warm-up\n\n${table}\n\n` +
    (firstRatio === undefined ? '' : `first measurement ${ratio(firstRatio)} was over the limit; measured again in a new process:\n`) +
    `gate: reader / inflate (ZipArchive) = ${ratio(measured)} (limit ${ratio(maxRatio)}; the full run's target is 1.5x): ${verdict}\n` +
    `for reference: reader / inflate (yauzl stream) = ${ratio(overStream)}\n` +
    `peak RSS ${megabytes(maxRssKb * 1024)} MB; dist/ of ${sourceVersion()}\n`)
  return verdict === 'PASS' && processPass ? 0 : 1
}

/** `--json FILE`, default bench/out/quick.json; a bad command line exits 2 like any other error here. */
function jsonFileFromArgs (argv: string[]): string {
  const { values } = parseArgs({ args: argv, options: { json: { type: 'string' } }, strict: true })
  if (values.json !== undefined && values.json.trim() === '') throw new Error('--json needs a file name')
  return values.json === undefined ? join(OUT_DIR, 'quick.json') : userPath(values.json)
}

/** Writes the JSON results; a failure to write is reported, and leaves the gate's exit code alone. */
async function saveResults (file: string, recorder: ResultsRecorder, error?: unknown): Promise<void> {
  try {
    await writeResults(file, recorder.finish(error))
    process.stderr.write(`results written to ${file}\n`)
  } catch (err) {
    process.stderr.write(`bench:quick: results not written to ${file}: ${err instanceof Error ? err.message : String(err)}\n`)
  }
}

async function start (): Promise<void> {
  const argv = process.argv.slice(2)
  let file: string
  try {
    file = jsonFileFromArgs(argv)
  } catch (err) {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\nusage: npm run bench:quick [-- --json FILE]\n`)
    process.exitCode = 2
    return
  }
  const recorder = new ResultsRecorder('bench:quick', {
    argv,
    resolved: { rows: ROWS, seed: SEED, warmupRounds: WARMUP_ROUNDS, rounds: ROUNDS, processRows: PROCESS_ROWS, json: file, BENCH_MAX_RATIO: process.env.BENCH_MAX_RATIO ?? null, BENCH_MAX_PROCESS_RATIO: process.env.BENCH_MAX_PROCESS_RATIO ?? null }
  }, gitState())
  await main(recorder.suite('quick')).then(
    async (code) => {
      process.exitCode = code
      await saveResults(file, recorder)
    },
    async (err: unknown) => {
      process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`)
      process.exitCode = 2
      await saveResults(file, recorder, err)
    }
  )
}

await start()
