/**
 * OCR speed (issue 26, item 3): a one-page and a ten-page scan through the service's own
 * pool task (server/extract/run.ts on a pool of one thread, the built code), wall time
 * and CPU time (every thread of this process: the pool thread and its Tesseract thread),
 * beside the floor: Tesseract's own recognize time on the same page images, with the same
 * worker options, in this thread. The goals: one page under 3 s, ten pages within the
 * service's EXTRACT_DOCUMENT_TIMEOUT_MS (20 s by default).
 *
 * The scans are generated DARFs printed to images the way the tests make them
 * (fixtures/extraction/scans.ts: 200 dpi, a little askew, speckled, JPEG; needs poppler's
 * pdftoppm). "cold" is the first scan of a new pool (the thread loads pdf.js and starts
 * its Tesseract worker); "one page" is the median of `--runs` runs after it (default 3),
 * "ten pages" one run (about half a minute of CPU).
 *
 *   node --import tsx bench/extract-ocr.bench.ts [--runs 3]
 *
 * `benchOcr` and `ocrTable` are exported for bench/run.ts (`--only ocr`).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { availableParallelism, loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { PDFDocument } from 'pdf-lib'
import type * as OcrModule from '../core/extraction/ocr/index.js'
import type * as ExtractRunModule from '../server/extract/run.js'
import type * as PoolModule from '../workers/pool.js'
import { scanOf } from '../fixtures/extraction/scans.js'
import { generateDarf } from '../plugins/darf/fixtures/generate.js'
import { importDist } from './child/dist.js'
import { ensureDist, snapshotDist } from './lib/prepare.js'
import { markdownTable, seconds } from './lib/table.js'

export interface OcrBenchOptions {
  distDir: string
  runs: number
}

export interface OcrTiming {
  wallMs: number
  cpuMs: number
  /** The runs behind a median (wallMs is theirs), for the JSON results; absent for one run. */
  wallSamplesMs?: number[]
}

export interface OcrBenchRow {
  label: string
  pages: number
  service: OcrTiming
  /** Tesseract's recognize alone on the same page images, summed over the pages. */
  floor: OcrTiming
  goalMs: number
}

export interface OcrBenchRun {
  rows: OcrBenchRow[]
  loadBefore: number
  /** RSS of this process (the pool thread and its Tesseract worker included) after the runs. */
  rssAfterBytes: number
  /** EXTRACT_WARM's start-up on a pool of one thread, wall ms. */
  warmUpMs: number
}

/** The service's default EXTRACT_DOCUMENT_TIMEOUT_MS: the ten-page goal. */
const SERVICE_DEADLINE_MS = 20_000
const ONE_PAGE_GOAL_MS = 3_000
/** Generous limits, so that a loaded machine measures instead of failing. */
const LIMITS = { maxPages: 50, documentTimeoutMs: 600_000, queueTimeoutMs: 600_000 }
const SCAN = { dpi: 200, skew: 1.2, noise: 0.001, quality: 70, seed: 5 }

async function timed<T> (f: () => Promise<T>): Promise<{ value: T } & OcrTiming> {
  const cpu = process.cpuUsage()
  const started = performance.now()
  const value = await f()
  const used = process.cpuUsage(cpu)
  return { value, wallMs: performance.now() - started, cpuMs: (used.user + used.system) / 1000 }
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!

/** DARFs of `pages` seeds in one PDF, scanned. */
async function scannedDarfs (pages: number): Promise<Uint8Array> {
  const merged = await PDFDocument.create()
  for (let seed = 1; seed <= pages; seed++) {
    const source = await PDFDocument.load((await generateDarf({ seed, layout: 'SENDA' })).pdf)
    for (const page of await merged.copyPages(source, source.getPageIndices())) merged.addPage(page)
  }
  return await scanOf(await merged.save(), SCAN)
}

/** Tesseract alone on the page images OCR reads for `pdf`, in this thread, after one warm-up page. */
async function floor (ocr: typeof OcrModule, pdf: Uint8Array): Promise<OcrTiming> {
  const images = await ocr.ocrPageImages(pdf)
  // A deadline far off (a timer cannot take Infinity).
  const deadline = (): number => performance.now() + LIMITS.documentTimeoutMs
  await ocr.recognizeWords(images[0]!.pgm, images[0]!.dpi, deadline())
  const total = { wallMs: 0, cpuMs: 0 }
  for (const image of images) {
    const t = await timed(async () => await ocr.recognizeWords(image.pgm, image.dpi, deadline()))
    total.wallMs += t.wallMs
    total.cpuMs += t.cpuMs
  }
  return total
}

/**
 * The first scan read by a thread EXTRACT_WARM warmed at start: a new pool of one kept
 * thread, warmPool, then the one-page scan. Its own pool, so that the cold row above
 * stays the cold thread of a pool that was not warmed.
 */
async function warmedFirstScan (poolModule: typeof PoolModule, run: typeof ExtractRunModule, path: string): Promise<{ warmUpMs: number, scan: OcrTiming }> {
  const pool = poolModule.createPool({ maxThreads: 1, keepThreads: true })
  try {
    const warmUp = await run.warmPool(pool, LIMITS)
    const scan = await timed(async () => await run.extractStoredFile(pool, path, LIMITS))
    if (!scan.value.success || scan.value.engine.ocrPages.length !== 1) throw new Error(`${path}: not read by OCR after the warm-up`)
    return { warmUpMs: warmUp.ms, scan }
  } finally {
    await pool.destroy()
  }
}

export async function benchOcr (options: Partial<OcrBenchOptions> & Pick<OcrBenchOptions, 'distDir'>, log: (line: string) => void = () => undefined): Promise<OcrBenchRun> {
  const runs = options.runs ?? 3
  const loadBefore = loadavg()[0]!
  const [ocr, run, poolModule] = await Promise.all([
    importDist<typeof OcrModule>(options.distDir, 'core/extraction/ocr/index.js'),
    importDist<typeof ExtractRunModule>(options.distDir, 'server/extract/run.js'),
    importDist<typeof PoolModule>(options.distDir, 'workers/pool.js')
  ])
  const dir = await mkdtemp(join(tmpdir(), 'razao-ocr-bench-'))
  const pool = poolModule.createPool({ maxThreads: 1 })
  try {
    log('making the scans (pdftoppm, cached)')
    const onePage = await scannedDarfs(1)
    const tenPages = await scannedDarfs(10)
    const paths = { one: join(dir, 'one.pdf'), ten: join(dir, 'ten.pdf') }
    await writeFile(paths.one, onePage)
    await writeFile(paths.ten, tenPages)
    const extract = async (path: string, pages: number): Promise<OcrTiming> => {
      const t = await timed(async () => await run.extractStoredFile(pool, path, LIMITS))
      if (!t.value.success || t.value.engine.ocrPages.length !== pages) throw new Error(`${path}: not read by OCR (${t.value.errors[0]?.code ?? t.value.engine.textSource})`)
      return t
    }
    const medianOf = async (path: string, pages: number): Promise<OcrTiming> => {
      const times: OcrTiming[] = []
      for (let i = 0; i < runs; i++) times.push(await extract(path, pages))
      return { wallMs: median(times.map((t) => t.wallMs)), cpuMs: median(times.map((t) => t.cpuMs)), wallSamplesMs: times.map((t) => t.wallMs) }
    }
    log('one page, cold then warm')
    const cold = await extract(paths.one, 1)
    const one = await medianOf(paths.one, 1)
    log('ten pages, once')
    const ten = await extract(paths.ten, 10)
    const rssAfterBytes = process.memoryUsage().rss
    log('one page on a new pool warmed at start (EXTRACT_WARM)')
    const warmed = await warmedFirstScan(poolModule, run, paths.one)
    log('floor: Tesseract alone on the same images')
    const floorOne = await floor(ocr, onePage)
    const floorTen = await floor(ocr, tenPages)
    await ocr.releaseTesseract()
    return {
      loadBefore,
      rssAfterBytes,
      warmUpMs: warmed.warmUpMs,
      rows: [
        { label: 'one page, cold thread', pages: 1, service: cold, floor: floorOne, goalMs: ONE_PAGE_GOAL_MS },
        { label: 'one page, first scan after EXTRACT_WARM', pages: 1, service: warmed.scan, floor: floorOne, goalMs: ONE_PAGE_GOAL_MS },
        { label: 'one page', pages: 1, service: one, floor: floorOne, goalMs: ONE_PAGE_GOAL_MS },
        { label: 'ten pages', pages: 10, service: ten, floor: floorTen, goalMs: SERVICE_DEADLINE_MS }
      ]
    }
  } finally {
    await pool.destroy()
    await rm(dir, { recursive: true, force: true })
  }
}

export function ocrTable (run: OcrBenchRun): string {
  const table = markdownTable(
    ['scan', 'wall s', 'CPU s', 'Tesseract alone: wall s', 'CPU s', 'goal s', 'within goal'],
    run.rows.map((r) => [r.label, seconds(r.service.wallMs), seconds(r.service.cpuMs), seconds(r.floor.wallMs), seconds(r.floor.cpuMs), seconds(r.goalMs), r.service.wallMs <= r.goalMs ? 'PASS' : 'FAIL'])
  )
  const notes = [
    'Scans: generated DARFs at 200 dpi, 1.2° askew, speckled, JPEG 70, one image per page. Through the pool task on one thread (built code); CPU is every thread of this process (pool thread and its Tesseract thread).',
    '"Tesseract alone": recognize on the same page images in this thread, summed over the pages, after a warm-up page: the floor the service cannot go under.',
    `RSS of this process after the service runs: ${(run.rssAfterBytes / 1e6).toFixed(0)} MB.`,
    `EXTRACT_WARM's warm-up of one thread before its first scan: ${seconds(run.warmUpMs)} s wall (once per thread, at the service's start).`,
    `Load average when the run started: ${run.loadBefore.toFixed(2)} on ${availableParallelism()} cores (the machine may be shared: wall times carry its load).`
  ]
  return `### OCR of scans\n\n${table}\n\n${notes.join('\n')}`
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({ options: { runs: { type: 'string' } } })
  const main = async (): Promise<void> => {
    await ensureDist()
    const dist = await snapshotDist()
    try {
      const run = await benchOcr({ distDir: dist.dir, ...(values.runs === undefined ? {} : { runs: Number(values.runs) }) }, (line) => process.stderr.write(`${line}\n`))
      process.stdout.write(`${ocrTable(run)}\n`)
    } finally {
      await dist.remove()
    }
  }
  main().catch((err: unknown) => { process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`); process.exitCode = 1 })
}
