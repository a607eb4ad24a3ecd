/**
 * Seeded ledgers for the benchmarks, generated once and cached under bench/out/
 * keyed by rows and seed: a million rows takes about 18 s to write, far longer
 * than reading it, so reruns must not pay for it again.
 */
import { mkdir, readFile, readdir, rename, rm, stat, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import yauzl from 'yauzl'
import { findEntry } from '../child/zip-entry.js'
import { generateLedger, type LedgerFacts } from '../../fixtures/ledger/generate.js'
import { OUT_DIR, REPO_ROOT } from './paths.js'

/** The generator writes the one sheet under its usual name unless asked for odd part names. */
const SHEET_PART = 'xl/worksheets/sheet1.xml'

export interface BenchLedger {
  path: string
  rows: number
  seed: number
  /** Rows a reader should hand over: the header plus every data row (no blank rows are generated). */
  sheetRows: number
  sheetPart: string
  /** Inflated size of the sheet XML, the denominator of MB/s. */
  sheetXmlBytes: number
  /** Cell elements in the sheet: every one carries a value, so every reader must hand each over. */
  sheetCells: number
  fileBytes: number
  facts: LedgerFacts
}

type CachedMeta = Omit<BenchLedger, 'path'>

export async function ensureLedger (rows: number, seed: number): Promise<BenchLedger> {
  return await cachedFile<CachedMeta>(join(OUT_DIR, `ledger-${rows}r-s${seed}`), 'xlsx', `${rows.toLocaleString('en-US')}-row ledger (seed ${seed})`, async (partial) => {
    const facts = await generateLedger({ path: partial, format: 'xlsx', rows, seed })
    const sheet = await scanSheet(partial, SHEET_PART)
    return {
      rows,
      seed,
      sheetRows: facts.lastSheetRow - facts.blankRows,
      sheetPart: SHEET_PART,
      sheetXmlBytes: sheet.xmlBytes,
      sheetCells: sheet.cells,
      fileBytes: (await stat(partial)).size,
      facts
    }
  }, (meta) => typeof meta.sheetCells === 'number')
}

/** The same ledger (rows and seed) as a CSV export: `;`, `1.234,56`, UTF-8, the way ERPs write it. */
export async function ensureCsvLedger (rows: number, seed: number): Promise<{ path: string, facts: LedgerFacts, fileBytes: number }> {
  return await cachedFile(join(OUT_DIR, `ledger-${rows}r-s${seed}-csv`), 'csv', `${rows.toLocaleString('en-US')}-row CSV ledger (seed ${seed})`, async (partial) => {
    const facts = await generateLedger({ path: partial, format: 'csv', rows, seed })
    return { facts, fileBytes: (await stat(partial)).size }
  })
}

/**
 * `base.ext` with its facts in `base.json`, made by `make` when missing or stale (older than the
 * generator's sources, another size, or not `usable`). Written aside and renamed, so an
 * interrupted run never leaves a half file in the cache.
 */
async function cachedFile<M extends { fileBytes: number }> (
  base: string, ext: string, what: string, make: (partial: string) => Promise<M>, usable: (meta: M) => boolean = () => true
): Promise<{ path: string } & M> {
  await mkdir(OUT_DIR, { recursive: true })
  const path = `${base}.${ext}`
  const metaPath = `${base}.json`
  try {
    const [fileStat, metaStat] = await Promise.all([stat(path), stat(metaPath)])
    const meta = JSON.parse(await readFile(metaPath, 'utf8')) as M
    if (metaStat.mtimeMs >= await newestGeneratorSourceMs() && meta.fileBytes === fileStat.size && usable(meta)) return { path, ...meta }
  } catch { /* not cached yet */ }
  process.stderr.write(`generating a ${what} into bench/out/ ...\n`)
  const started = performance.now()
  const partial = `${base}.partial-${process.pid}.${ext}`
  try {
    const meta = await make(partial)
    await rename(partial, path)
    await writeFile(metaPath, JSON.stringify(meta))
    process.stderr.write(`  done in ${((performance.now() - started) / 1000).toFixed(1)} s\n`)
    return { path, ...meta }
  } finally {
    await rm(partial, { force: true })
  }
}

async function newestGeneratorSourceMs (): Promise<number> {
  const dir = join(REPO_ROOT, 'fixtures', 'ledger')
  const names = (await readdir(dir)).filter((n) => n.endsWith('.ts') && !n.endsWith('.test.ts'))
  const times = await Promise.all(names.map(async (n) => (await stat(join(dir, n))).mtimeMs))
  return Math.max(0, ...times)
}

/**
 * Inflates the sheet once to size it and count its cells. The generator writes
 * every cell as an unprefixed `<c ` element with a value, so counting that
 * byte pattern (across chunk boundaries) counts the cells.
 */
async function scanSheet (path: string, part: string): Promise<{ xmlBytes: number, cells: number }> {
  const zip = await yauzl.openPromise(path, { lazyEntries: true, autoClose: false })
  try {
    const entry = await findEntry(zip, part)
    let xmlBytes = 0
    let cells = 0
    let tail = Buffer.alloc(0)
    for await (const chunk of await zip.openReadStreamPromise(entry) as AsyncIterable<Buffer>) {
      xmlBytes += chunk.length
      const data = Buffer.concat([tail, chunk])
      for (let at = data.indexOf(CELL_OPEN); at !== -1; at = data.indexOf(CELL_OPEN, at + CELL_OPEN.length)) cells++
      tail = data.subarray(data.length - (CELL_OPEN.length - 1))
    }
    return { xmlBytes, cells }
  } finally {
    zip.close()
  }
}

const CELL_OPEN = Buffer.from('<c ')
