/**
 * Extraction benchmark (issue 14 "Benchmarks"), per active document type:
 *
 * 1. Documents per second through the service's own pool task (workers/extract-document.ts,
 *    run as server/extract/run.ts runs it) on a pool of `threads` versus a pool of one
 *    thread, with twice as many documents in flight as threads, after a warm-up on every thread.
 * 2. Where one document's time goes, in this thread: pdf.js reading the text layer, the
 *    content-size bound that runs before it (pdf-lib parse + measure, core/pdf/content-size.ts),
 *    and ours proper: building the TextDocument (lines, normalized text) plus the engine
 *    (detection rules of every plugin, the parser, the checks). The goal: ours under 20%.
 * 3. Peak RSS of a service process (bench/extract/batch-rss.ts, a child of its own) over
 *    one batch of 10 documents through POST /api/v1/pdf/extract-batch.
 *
 * Inputs are written by each plugin's fixture generator, several seeds and layouts each.
 * A plugin is measured when it is active and has a line in GENERATORS below.
 *
 *   node --import tsx bench/extract.bench.ts [--docs 40] [--threads 2] [--seeds 8]
 *
 * `benchExtract` and `extractTable` are exported for bench/run.ts (`--only extract`).
 */
import { spawn } from 'node:child_process'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { availableParallelism, loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { PDFDocument, ParseSpeeds } from 'pdf-lib'
import { TextDocument, extractDocument, readPdfText } from '../core/extraction/index.js'
import { pagesWithinContentLimit } from '../core/pdf/index.js'
import { plugins } from '../plugins/index.js'
import { generateDarf } from '../plugins/darf/fixtures/generate.js'
import { generateDasMei } from '../plugins/das-mei/fixtures/generate.js'
import { generateDas } from '../plugins/das/fixtures/generate.js'
import { generateDec } from '../plugins/dec-issqn-poa/fixtures/generate.js'
import { generateDanfse } from '../plugins/nfse-danfse/fixtures/generate.js'
import { generateDeclaracao } from '../plugins/pgdas-declaracao/fixtures/generate.js'
import { generateExtrato } from '../plugins/pgdas-extrato/fixtures/generate.js'
import { generateRecibo } from '../plugins/pgdas-recibo/fixtures/generate.js'
import { generateRelatorio } from '../plugins/relatorio-simples/fixtures/generate.js'
import { extractStoredFile } from '../server/extract/run.js'
import { createPool } from '../workers/pool.js'
import { DASH, markdownTable } from './lib/table.js'

/** One line per plugin with a generator: seed → a realistic PDF of that type. */
const GENERATORS: Record<string, (seed: number) => Promise<Uint8Array>> = {
  'pgdas-extrato': async (seed) => (await generateExtrato({ seed, layout: seed % 2 === 0 ? '2.2.30' : '2.2.27', twoPages: seed % 3 === 0 })).pdf,
  'pgdas-declaracao': async (seed) => (await generateDeclaracao({ seed, retificadora: seed % 2 === 1, twoPages: seed % 3 === 0 })).pdf,
  'pgdas-recibo': async (seed) => (await generateRecibo({ seed })).pdf,
  'relatorio-simples': async (seed) => (await generateRelatorio({ seed, blocks: 1 + (seed % 4), twoPages: seed % 3 === 0 })).pdf,
  'dec-issqn-poa': async (seed) => (await generateDec({ seed, noGuide: seed % 4 === 0, activities: 1 + (seed % 3) })).pdf,
  'nfse-danfse': async (seed) => (await generateDanfse({ seed, version: seed % 2 === 0 ? '1.0' : '2.0', twoPages: seed % 3 === 0 })).pdf,
  'das-mei': async (seed) => (await generateDasMei({ seed, annual: seed % 4 === 0 })).pdf,
  das: async (seed) => (await generateDas({ seed, kind: seed % 3 === 0 ? 'PARCSN' : 'PGDAS', twoPages: seed % 4 === 0 })).pdf,
  darf: async (seed) => (await generateDarf({ seed, layout: seed % 2 === 0 ? 'SENDA' : 'CAMPOS_NUMERADOS', twoPages: seed % 4 === 0 })).pdf
}

const LIMITS = { maxPages: 50, documentTimeoutMs: 20_000 }
const OUR_SHARE_GOAL = 0.2

export interface ExtractBenchOptions { docs: number, threads: number, seeds: number }

export interface ExtractBenchRow {
  plugin: string
  documentType: string
  bytes: number
  pool: { threads: number, docsPerSecond: number }
  single: { docsPerSecond: number }
  /** Median ms per document in one thread. */
  pdfjsMs: number
  boundsMs: number
  oursMs: number
}

export interface ExtractBenchRun {
  rows: ExtractBenchRow[]
  missing: string[]
  batch: { files: number, baselineRss: number, peakRss: number, ms: number } | { error: string }
  loadBefore: number
}

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN
}

async function throughput (paths: string[], threads: number, docs: number): Promise<number> {
  const pool = createPool({ maxThreads: threads })
  try {
    const runAll = async (count: number): Promise<void> => {
      let next = 0
      const lane = async (): Promise<void> => {
        while (next < count) {
          const path = paths[next++ % paths.length]!
          const result = await extractStoredFile(pool, path, LIMITS)
          if (!result.success) throw new Error(`${path}: not extracted (${result.errors[0]?.code ?? '?'})`)
        }
      }
      await Promise.all(Array.from({ length: 2 * threads }, lane))
    }
    // Warm-up: every thread loads pdf.js and the plugins and compiles the hot paths.
    await runAll(Math.max(6 * threads, paths.length))
    const started = performance.now()
    await runAll(docs)
    return docs / ((performance.now() - started) / 1000)
  } finally {
    await pool.destroy()
  }
}

/** Median split of one document's time in this thread, after two warm-up rounds. */
async function split (inputs: Uint8Array[]): Promise<{ pdfjsMs: number, boundsMs: number, oursMs: number }> {
  const reads: number[] = []
  const bounds: number[] = []
  const ours: number[] = []
  for (let round = 0; round < 4; round++) {
    for (const bytes of inputs) {
      let t = performance.now()
      const doc = await PDFDocument.load(bytes, { ignoreEncryption: true, updateMetadata: false, throwOnInvalidObject: false, parseSpeed: ParseSpeeds.Fastest })
      pagesWithinContentLimit(doc, 8 << 20, Number.POSITIVE_INFINITY)
      const boundsMs = performance.now() - t
      t = performance.now()
      // readPdfText runs the same bound first: subtract it to leave pdf.js's part.
      const pages = await readPdfText(bytes, { maxPages: 50, deadlineMs: 20_000, maxRunsPerPage: 50_000 })
      const readMs = performance.now() - t - boundsMs
      t = performance.now()
      const result = extractDocument(new TextDocument(pages), plugins)
      const oursMs = performance.now() - t
      if (!result.success) throw new Error('a benchmark input was not extracted')
      if (round < 2) continue
      reads.push(readMs)
      bounds.push(boundsMs)
      ours.push(oursMs)
    }
  }
  return { pdfjsMs: median(reads), boundsMs: median(bounds), oursMs: median(ours) }
}

/** Runs bench/extract/batch-rss.ts in a child process: its own peak RSS is the service's. */
function batchRss (paths: string[]): Promise<ExtractBenchRun['batch']> {
  const script = fileURLToPath(new URL('./extract/batch-rss.ts', import.meta.url))
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', script, ...paths], { stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    let err = ''
    child.stdout.on('data', (c: Buffer) => { out += c.toString() })
    child.stderr.on('data', (c: Buffer) => { err += c.toString() })
    child.on('close', (code) => {
      try {
        if (code !== 0) throw new Error(err.trim().split('\n').at(-1) ?? `exit ${code}`)
        resolve(JSON.parse(out) as ExtractBenchRun['batch'])
      } catch (e) {
        resolve({ error: e instanceof Error ? e.message : String(e) })
      }
    })
  })
}

export async function benchExtract (options: Partial<ExtractBenchOptions> = {}, log: (line: string) => void = () => undefined): Promise<ExtractBenchRun> {
  const o: ExtractBenchOptions = { docs: 40, threads: Math.max(2, availableParallelism()), seeds: 8, ...options }
  const loadBefore = loadavg()[0] ?? 0
  const dir = await mkdtemp(join(tmpdir(), 'razao-bench-extract-'))
  const rows: ExtractBenchRow[] = []
  const missing: string[] = []
  let batchPaths: string[] = []
  try {
    for (const plugin of plugins.filter((p) => p.status === 'active')) {
      const generate = GENERATORS[plugin.id]
      if (generate === undefined) {
        missing.push(plugin.id)
        continue
      }
      log(`extract: ${plugin.id}: generating ${o.seeds} documents`)
      const inputs = await Promise.all(Array.from({ length: o.seeds }, async (_, i) => await generate(1000 + i)))
      const paths = await Promise.all(inputs.map(async (bytes, i) => {
        const path = join(dir, `${plugin.id}-${i}.pdf`)
        await writeFile(path, bytes)
        return path
      }))
      if (batchPaths.length < 10) batchPaths = [...batchPaths, ...paths].slice(0, 10)
      log(`extract: ${plugin.id}: pool of ${o.threads} and of 1, ${o.docs} documents each`)
      const pool = await throughput(paths, o.threads, o.docs)
      const single = await throughput(paths, 1, o.docs)
      log(`extract: ${plugin.id}: time split in one thread`)
      const s = await split(inputs)
      rows.push({
        plugin: plugin.id,
        documentType: plugin.documentType,
        bytes: Math.round(inputs.reduce((sum, b) => sum + b.byteLength, 0) / inputs.length),
        pool: { threads: o.threads, docsPerSecond: pool },
        single: { docsPerSecond: single },
        ...s
      })
    }
    while (batchPaths.length > 0 && batchPaths.length < 10) batchPaths.push(batchPaths[batchPaths.length % batchPaths.length]!)
    log('extract: peak RSS over a batch of 10')
    const batch = batchPaths.length === 0 ? { error: 'no inputs' } : await batchRss(batchPaths)
    return { rows, missing, batch, loadBefore }
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
}

const pct = (part: number, whole: number): string => `${((100 * part) / whole).toFixed(1)}%`

export function extractTable (run: ExtractBenchRun): string {
  const rows = run.rows.map((r) => {
    const total = r.pdfjsMs + r.boundsMs + r.oursMs
    const share = r.oursMs / total
    return [
      `${r.documentType} (${r.plugin})`,
      `${(r.bytes / 1000).toFixed(0)} KB`,
      r.pool.docsPerSecond.toFixed(1),
      r.single.docsPerSecond.toFixed(1),
      `${(r.pool.docsPerSecond / r.single.docsPerSecond).toFixed(2)}×`,
      r.pdfjsMs.toFixed(2),
      r.boundsMs.toFixed(2),
      r.oursMs.toFixed(2),
      `${pct(r.oursMs, total)} ${share < OUR_SHARE_GOAL ? 'PASS' : 'FAIL'}`,
      pct(r.oursMs + r.boundsMs, total)
    ]
  })
  const threads = run.rows[0]?.pool.threads ?? DASH
  const table = markdownTable(
    ['document type', 'size', `docs/s pool (${threads})`, 'docs/s 1 thread', 'ratio', 'pdf.js ms', 'bound ms', 'ours ms', 'ours share (goal < 20%)', 'ours + bound'],
    rows
  )
  const batch = 'error' in run.batch
    ? `Peak RSS over a batch of 10: not measured (${run.batch.error}).`
    : `Peak RSS over a batch of ${run.batch.files} through POST /api/v1/pdf/extract-batch: ${(run.batch.peakRss / 1e6).toFixed(0)} MB ` +
      `(the service process after start-up and one warm-up request: ${(run.batch.baselineRss / 1e6).toFixed(0)} MB; the batch took ${run.batch.ms.toFixed(0)} ms).`
  const notes = [
    batch,
    `Milliseconds are medians per document in one thread; "bound" is the content-size check before pdf.js (pdf-lib parse and measure), counted apart from "ours" (text document + detection + parsing).`,
    `Load average when the run started: ${run.loadBefore.toFixed(2)} on ${availableParallelism()} cores (the machine is shared: absolute numbers move, ratios less).`,
    ...(run.missing.length === 0 ? [] : [`Active plugins without a generator in bench/extract.bench.ts (not measured): ${run.missing.join(', ')}.`])
  ]
  return `### Document extraction\n\n${table}\n\n${notes.join('\n')}`
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({ options: { docs: { type: 'string' }, threads: { type: 'string' }, seeds: { type: 'string' } } })
  const n = (v: string | undefined): number | undefined => v === undefined ? undefined : Number(v)
  const opts: Partial<ExtractBenchOptions> = {}
  if (n(values.docs) !== undefined) opts.docs = n(values.docs)!
  if (n(values.threads) !== undefined) opts.threads = n(values.threads)!
  if (n(values.seeds) !== undefined) opts.seeds = n(values.seeds)!
  benchExtract(opts, (line) => process.stderr.write(`${line}\n`))
    .then((run) => { process.stdout.write(`${extractTable(run)}\n`) })
    .catch((err: unknown) => { process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`); process.exitCode = 1 })
}
