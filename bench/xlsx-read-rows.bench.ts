/**
 * Scenario: read every row of 11-column ledgers (100k, 500k, 1M rows by default)
 * with our reader, the peers, and the raw limit of inflating the sheet XML alone.
 * Each contender runs in its own child process (peak RSS is per process), all in
 * the same run, so the ratios compare like with like. Run through bench/run.ts.
 */
import type { Contender } from './lib/contenders.js'
import { ensureLedger, type BenchLedger } from './lib/ledger-cache.js'
import { find, measureContender, medianOf, peakRssBytes, type ContenderResult, type MeasureSettings } from './lib/measure.js'
import { DASH, integer, markdownTable, megabytes, ratio, seconds, sizeLabel } from './lib/table.js'

export interface ReadRowsSettings extends MeasureSettings {
  sizes: readonly number[]
  seed: number
  /** In table order; must include the inflate-only baseline for the ratios. */
  contenders: readonly Contender[]
}

export interface SizeRun {
  ledger: BenchLedger
  results: ContenderResult[]
}

export async function benchXlsxReadRows (settings: ReadRowsSettings, onSize: (run: SizeRun) => void): Promise<SizeRun[]> {
  const runs: SizeRun[] = []
  for (const rows of settings.sizes) {
    const ledger = await ensureLedger(rows, settings.seed)
    const results: ContenderResult[] = []
    for (const contender of settings.contenders) results.push(await measureContender(contender, ledger, settings))
    const run = { ledger, results }
    onSize(run)
    runs.push(run)
  }
  return runs
}

export function readRowsTable (run: SizeRun): string {
  const { ledger } = run
  const inflateMs = medianOf(find(run, 'inflate'))
  const readerMs = medianOf(find(run, 'reader'))
  const notes: string[] = []
  const rows = run.results.map((result) => {
    const { contender, outcome } = result
    if (!outcome.ok) {
      notes.push(`${contender.label}: ${outcome.failure} (${outcome.detail})`)
      return [contender.label, outcome.failure.toUpperCase(), DASH, DASH, DASH, DASH, DASH, DASH, DASH]
    }
    if (result.mismatch !== undefined) notes.push(`${contender.label}: ${result.mismatch}; its times are not comparable`)
    const { medianMs, minMs, samplesMs } = outcome.report.timing
    return [
      contender.label,
      seconds(medianMs),
      seconds(minMs),
      integer(ledger.sheetRows / (medianMs / 1000)),
      megabytes(ledger.sheetXmlBytes / (medianMs / 1000), 1),
      megabytes(peakRssBytes(result) ?? 0),
      inflateMs === undefined ? DASH : ratio(medianMs / inflateMs),
      readerMs === undefined ? DASH : ratio(medianMs / readerMs),
      String(samplesMs.length)
    ]
  })
  const bare = find(run, 'reader')?.outcome
  if (bare?.ok === true) notes.push(`a bare node process is ${megabytes(bare.report.startRssKb * 1024)} MB RSS before importing anything`)
  const title = `### ${sizeLabel(ledger.rows)} rows × 11 columns — sheet XML ${megabytes(ledger.sheetXmlBytes, 1)} MB, file ${megabytes(ledger.fileBytes, 1)} MB`
  const table = markdownTable(
    ['contender', 'median s', 'min s', 'rows/s', 'MB/s of sheet XML', 'peak RSS MB', 'ratio vs inflate-only', 'our speed-up vs contender', 'runs'],
    rows
  )
  return [title, '', table, ...notes.map((n) => `- ${n}`)].join('\n')
}
