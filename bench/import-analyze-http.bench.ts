/**
 * Scenario: POST /v1/analyze of the 500k-row ledger to the import service (built
 * from dist/, listening on 127.0.0.1) against the reader alone on the same file.
 * The in-process analyze row splits the gap: analysis cost versus upload, temp
 * file and thread hop. Run through bench/run.ts.
 */
import { availableParallelism } from 'node:os'
import { HTTP_CONTENDERS } from './lib/contenders.js'
import { ensureLedger, type BenchLedger } from './lib/ledger-cache.js'
import { find, measureContender, medianOf, peakRssBytes, type ContenderResult, type MeasureSettings } from './lib/measure.js'
import { DASH, integer, markdownTable, megabytes, ratio, seconds, sizeLabel } from './lib/table.js'

export interface HttpSettings extends MeasureSettings {
  rows: number
  seed: number
}

export interface HttpRun {
  ledger: BenchLedger
  results: ContenderResult[]
}

export async function benchImportAnalyzeHttp (settings: HttpSettings): Promise<HttpRun> {
  const ledger = await ensureLedger(settings.rows, settings.seed)
  const results: ContenderResult[] = []
  for (const contender of HTTP_CONTENDERS) results.push(await measureContender(contender, ledger, settings))
  return { ledger, results }
}

/**
 * The least wall time a run could take on this machine's cores with every core busy
 * from its first moment to its last: its CPU time shared out evenly. No overlap of
 * upload and analysis, however clever, gets the HTTP row below this.
 */
export function cpuFloorMs (run: HttpRun, id: string, cores = availableParallelism()): number | undefined {
  const result = find(run, id)
  const cpu = result?.outcome.ok === true ? result.outcome.report.timing.cpuMedianMs : undefined
  return cpu === undefined ? undefined : cpu / cores
}

export function httpTable (run: HttpRun): string {
  const readerMs = medianOf(find(run, 'reader'))
  const notes: string[] = []
  const rows = run.results.map((result) => {
    const { contender, outcome } = result
    if (!outcome.ok) {
      notes.push(`${contender.label}: ${outcome.failure} (${outcome.detail})`)
      return [contender.label, outcome.failure.toUpperCase(), DASH, DASH, DASH, DASH, DASH, DASH]
    }
    if (result.mismatch !== undefined) notes.push(`${contender.label}: ${result.mismatch}`)
    const { medianMs, minMs, samplesMs, cpuMedianMs } = outcome.report.timing
    return [
      contender.label,
      seconds(medianMs),
      seconds(minMs),
      cpuMedianMs === undefined ? DASH : seconds(cpuMedianMs),
      integer(run.ledger.sheetRows / (medianMs / 1000)),
      megabytes(peakRssBytes(result) ?? 0),
      readerMs === undefined ? DASH : ratio(medianMs / readerMs),
      String(samplesMs.length)
    ]
  })
  notes.push('the HTTP row\'s peak RSS is the whole service process: server and worker pool (the client is a process of its own)')
  notes.push('CPU s: user + system time of a run, every thread of the measuring process; the HTTP row adds the client process\'s CPU for its upload')
  const floor = cpuFloorMs(run, 'http')
  if (floor !== undefined && readerMs !== undefined) {
    notes.push(`CPU floor of the HTTP row on this machine's ${availableParallelism()} cores: its CPU time / cores = ${seconds(floor)} s, ${ratio(floor / readerMs)} the reader alone. ` +
      'No overlap of upload and analysis can take the HTTP row below it (README, "Benchmarks")')
  }
  const title = `### /v1/analyze over HTTP — ${sizeLabel(run.ledger.rows)} rows, upload ${megabytes(run.ledger.fileBytes, 1)} MB`
  const table = markdownTable(['contender', 'median s', 'min s', 'CPU s', 'rows/s', 'peak RSS MB', 'ratio vs reader alone', 'runs'], rows)
  return [title, '', table, ...notes.map((n) => `- ${n}`)].join('\n')
}
