/**
 * `npm run bench`: the full suite. One markdown table per ledger size, the HTTP
 * table, then the targets with PASS/FAIL. Exits 0 whatever the targets
 * say (only bench/ci-quick.ts enforces); a contender that runs out of memory or
 * time shows as such in its row.
 *
 *   npm run bench -- [--sizes 100000,500000] [--skip-peers] [--only reader,sheetjs,http,process,sign,verify,extract,ocr,gateway,agent]
 *                    [--http-rows 500000] [--process-rows 100000,500000] [--process-rounds 5]
 *                    [--memory-rows 1000000] (the service's peak RSS alone at these sizes; 0 for none)
 *                    [--seed 1] [--budget-s 15] [--min-runs 3] [--max-runs 10] [--timeout-s 600]
 *                    [--json FILE]
 *
 * --json FILE also writes every figure of the tables to FILE, schema razao-bench/1
 * (bench/lib/results.ts, bench/README.md "Results as JSON"), for bench:compare and bench:report.
 */
import { parseArgs } from 'node:util'
import type { ContenderId } from './child/protocol.js'
import { benchImportAnalyzeHttp, httpTable, type HttpRun } from './import-analyze-http.bench.js'
import { benchImportProcess, processTable, processTargets, withBenchDatabase, type ProcessRun } from './import-process.bench.js'
import { benchSign, signTable } from './sign.bench.js'
import { benchVerify, verifyTable } from './verify.bench.js'
import { benchSignHttp, signHttpTable } from './sign-http.bench.js'
import { benchExtract, extractTable } from './extract.bench.js'
import { benchOcr, ocrTable } from './extract-ocr.bench.js'
import { benchGateway, gatewayTable } from './gateway.bench.js'
import { agentTable, benchAgent } from './agent.bench.js'
import { INFLATE, READ_CONTENDERS, type Contender } from './lib/contenders.js'
import type { MeasureSettings } from './lib/measure.js'
import { addChecks, agentFigures, extractFigures, gatewayFigures, httpFigures, ocrFigures, processFigures, readRowsFigures, signFigures } from './lib/figures.js'
import { ensureDist, gitState, snapshotDist, sourceVersion, transpileChildScripts } from './lib/prepare.js'
import { ResultsRecorder, userPath, writeResults } from './lib/results.js'
import { httpTargets, readTargets, targetsTable } from './lib/targets.js'
import { benchXlsxReadRows, readRowsTable, type SizeRun } from './xlsx-read-rows.bench.js'

const SELECTABLE: readonly string[] = [...READ_CONTENDERS.map((c) => c.id), 'http', 'process', 'sign', 'verify', 'extract', 'ocr', 'gateway', 'agent']

interface RunPlan {
  sizes: number[]
  readContenders: Contender[]
  httpRows: number | undefined
  processSizes: number[] | undefined
  processRounds: number
  /** Sizes at which only the service's memory over /v1/process is measured (after the timed sizes). */
  memoryRows: number[]
  sign: boolean
  verify: boolean
  extract: boolean
  ocr: boolean
  gateway: boolean
  agent: boolean
  seed: number
  settings: Omit<MeasureSettings, 'distDir'>
  /** Where to write the JSON results (absolute), if anywhere. */
  jsonFile: string | undefined
}

function positiveInt (name: string, value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback
  const n = Number(value)
  if (!Number.isSafeInteger(n) || n <= 0) throw new Error(`--${name} must be a positive whole number, got "${value}"`)
  return n
}

function planFromArgs (argv: string[]): RunPlan {
  const { values } = parseArgs({
    args: argv,
    options: {
      sizes: { type: 'string' },
      only: { type: 'string' },
      'skip-peers': { type: 'boolean' },
      'http-rows': { type: 'string' },
      'process-rows': { type: 'string' },
      'process-rounds': { type: 'string' },
      'memory-rows': { type: 'string' },
      seed: { type: 'string' },
      'budget-s': { type: 'string' },
      'min-runs': { type: 'string' },
      'max-runs': { type: 'string' },
      'timeout-s': { type: 'string' },
      json: { type: 'string' }
    },
    strict: true
  })
  if (values.json !== undefined && values.json.trim() === '') throw new Error('--json needs a file name')
  const sizes = (values.sizes ?? '100000,500000,1000000').split(',').map((s) => positiveInt('sizes', s.trim(), 0))
  const only = values.only?.split(',').map((s) => s.trim())
  for (const id of only ?? []) {
    if (!SELECTABLE.includes(id)) throw new Error(`--only: unknown contender "${id}"; choose from ${SELECTABLE.join(', ')}`)
  }
  const wanted = (id: ContenderId | 'process' | 'sign' | 'verify' | 'extract' | 'ocr' | 'gateway' | 'agent', isPeer: boolean): boolean =>
    (only === undefined || only.includes(id)) && !(isPeer && values['skip-peers'] === true)
  let readContenders = READ_CONTENDERS.filter((c) => wanted(c.id, c.isPeer))
  // Every ratio is against inflate-only, so it runs whenever anything else reads.
  if (readContenders.length > 0 && !readContenders.includes(INFLATE)) readContenders = [INFLATE, ...readContenders]
  const minIterations = positiveInt('min-runs', values['min-runs'], 3)
  return {
    sizes,
    readContenders,
    httpRows: wanted('http', false) ? positiveInt('http-rows', values['http-rows'], 500_000) : undefined,
    processSizes: wanted('process', false) ? (values['process-rows'] ?? '100000,500000').split(',').map((s) => positiveInt('process-rows', s.trim(), 0)) : undefined,
    processRounds: positiveInt('process-rounds', values['process-rounds'], 5),
    memoryRows: (values['memory-rows'] ?? '1000000').split(',').filter((v) => v.trim() !== '' && v.trim() !== '0').map((v) => positiveInt('memory-rows', v.trim(), 0)),
    sign: wanted('sign', false),
    verify: wanted('verify', false),
    extract: wanted('extract', false),
    ocr: wanted('ocr', false),
    gateway: wanted('gateway', false),
    agent: wanted('agent', false),
    seed: positiveInt('seed', values.seed, 1),
    settings: {
      repeat: {
        budgetMs: positiveInt('budget-s', values['budget-s'], 15) * 1000,
        minIterations,
        maxIterations: Math.max(minIterations, positiveInt('max-runs', values['max-runs'], 10))
      },
      timeoutMs: positiveInt('timeout-s', values['timeout-s'], 600) * 1000
    },
    jsonFile: values.json === undefined ? undefined : userPath(values.json)
  }
}

/** What the plan resolved to, for the JSON results: what was asked, in plain values. */
function resolvedOptions (plan: RunPlan): Record<string, unknown> {
  const { readContenders, settings, ...rest } = plan
  return { ...rest, readContenders: readContenders.map((c) => c.id), ...settings.repeat, timeoutMs: settings.timeoutMs }
}

async function main (): Promise<void> {
  const argv = process.argv.slice(2)
  const plan = planFromArgs(argv)
  const recorder = new ResultsRecorder('bench', { argv, resolved: resolvedOptions(plan) }, gitState())
  await ensureDist()
  await transpileChildScripts()
  const dist = await snapshotDist()
  let failure: unknown
  try {
    await runPlan(plan, { ...plan.settings, distDir: dist.dir }, recorder)
  } catch (err) {
    failure = err
    throw err
  } finally {
    await dist.remove()
    // Written whatever happened: the suites that finished before an error are results too.
    if (plan.jsonFile !== undefined) {
      await writeResults(plan.jsonFile, recorder.finish(failure))
      process.stderr.write(`results written to ${plan.jsonFile}\n`)
    }
  }
}

async function runPlan (plan: RunPlan, settings: MeasureSettings, recorder: ResultsRecorder): Promise<void> {
  const started = performance.now()
  const print = (text: string): void => { process.stdout.write(`${text}\n\n`) }

  let readRuns: SizeRun[] = []
  if (plan.readContenders.length > 0) {
    process.stderr.write(`reading rows: ${plan.readContenders.map((c) => c.id).join(', ')} at ${plan.sizes.join(', ')} rows\n`)
    readRuns = await benchXlsxReadRows(
      { sizes: plan.sizes, seed: plan.seed, contenders: plan.readContenders, ...settings },
      (run) => print(readRowsTable(run))
    )
    const suite = recorder.suite('reader')
    readRowsFigures(suite, readRuns)
    addChecks(suite, readTargets(readRuns))
  }
  let httpRun: HttpRun | undefined
  if (plan.httpRows !== undefined) {
    process.stderr.write(`HTTP: /v1/analyze versus the reader at ${plan.httpRows} rows\n`)
    httpRun = await benchImportAnalyzeHttp({ rows: plan.httpRows, seed: plan.seed, ...settings })
    print(httpTable(httpRun))
    const suite = recorder.suite('http')
    httpFigures(suite, httpRun)
    addChecks(suite, httpTargets(httpRun))
  }
  let processRuns: ProcessRun[] = []
  if (plan.processSizes !== undefined) {
    process.stderr.write(`process: /v1/process versus analyze + raw COPY at ${plan.processSizes.join(', ')} rows\n`)
    const sizes = plan.processSizes
    processRuns = await withBenchDatabase((adminUrl) => benchImportProcess({
      sizes,
      seed: plan.seed,
      batchSize: 1000,
      cases: ['raw-copy', 'psql-copy', 'binary-copy', 'analyze', 'process-stream', 'process-progress', 'process-per-batch', 'process-http', 'imports-http', 'csv-http'],
      memoryOnlySizes: plan.memoryRows,
      warmupRounds: 1,
      rounds: plan.processRounds,
      timeoutMs: settings.timeoutMs,
      distDir: settings.distDir,
      measureServiceMemory: true
    }, adminUrl, (run) => print(processTable(run, 1000))))
    const suite = recorder.suite('process')
    processFigures(suite, processRuns)
    addChecks(suite, processTargets(processRuns))
  }
  if (plan.sign) {
    process.stderr.write('PDF signing: ours beside @signpdf\n')
    const result = await benchSign({}, (line) => process.stderr.write(`${line}\n`))
    print(signTable(result))
    signFigures(recorder.suite('sign'), result)
    process.stderr.write('PDF signing over HTTP: the stamp by kind of document\n')
    print(signHttpTable(await benchSignHttp({}, (line) => process.stderr.write(`${line}\n`))))
  }
  if (plan.verify) {
    process.stderr.write('PDF verification beside our NONE signature\n')
    print(verifyTable(await benchVerify({}, (line) => process.stderr.write(`${line}\n`))))
  }
  if (plan.extract) {
    process.stderr.write('document extraction: pool versus one thread, time split, batch RSS\n')
    const run = await benchExtract({ distDir: settings.distDir }, (line) => process.stderr.write(`${line}\n`))
    print(extractTable(run))
    extractFigures(recorder.suite('extract'), run)
  }
  if (plan.ocr) {
    process.stderr.write('OCR: one-page and ten-page scans beside Tesseract alone\n')
    const run = await benchOcr({ distDir: settings.distDir }, (line) => process.stderr.write(`${line}\n`))
    print(ocrTable(run))
    ocrFigures(recorder.suite('ocr'), run)
  }
  if (plan.gateway) {
    process.stderr.write('tax-document gateway: overhead per call against the loopback NF-e fake\n')
    const result = await benchGateway({}, (line) => process.stderr.write(`${line}\n`))
    print(gatewayTable(result))
    gatewayFigures(recorder.suite('gateway'), result)
  }
  if (plan.agent) {
    process.stderr.write('agent: 1,000 trivial jobs through the queue versus 1,000 direct spawns\n')
    const result = await benchAgent({ jobs: 1000, rounds: 2, program: 'sh', distDir: settings.distDir }, (line) => process.stderr.write(`${line}\n`))
    print(agentTable(result))
    agentFigures(recorder.suite('agent'), result)
  }
  const checks = [...readTargets(readRuns), ...(httpRun === undefined ? [] : httpTargets(httpRun)), ...processTargets(processRuns)]
  print(`### Targets (informational here; CI enforces only bench:quick)\n\n${targetsTable(checks)}`)
  const { repeat } = settings
  process.stdout.write(`dist/ of ${sourceVersion()}, node ${process.version}, ${repeat.minIterations}-${repeat.maxIterations} measured runs per contender ` +
    `after warm-up (budget ${repeat.budgetMs / 1000} s), medians; whole run ${((performance.now() - started) / 60_000).toFixed(1)} min\n`)
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`)
  process.exitCode = 1
})
