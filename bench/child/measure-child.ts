/**
 * Child process entry: measures one contender on one file and prints one report
 * line. One contender per process, because peak RSS (maxRSS) is per process and
 * SheetJS's gigabytes would otherwise be charged to whoever ran after it.
 *
 *   node --expose-gc bench/out/child/measure-child.js '<MeasureJob as JSON>'
 */
import { REPORT_PREFIX, failureText, type ContenderId, type MeasureJob, type MeasureReport, type Pass } from './protocol.js'

// Taken before any library loads: protocol.js imports nothing.
const startRssKb = Math.round(process.memoryUsage().rss / 1024)

/**
 * Each contender's module is imported on demand, so the reader's process never
 * loads SheetJS or ExcelJS (tens of MB of code that would count as its RSS).
 */
const PASSES: Record<ContenderId, (job: MeasureJob) => Promise<Pass>> = {
  inflate: async (job) => (await import('./inflate.js')).zipArchivePass(job),
  yauzl: async (job) => (await import('./inflate.js')).yauzlPass(job),
  reader: async (job) => (await import('./ours.js')).readerPass(job),
  'inflate-stream': async (job) => (await import('./inflate.js')).zipArchivePass(job, 'stream'),
  'reader-stream': async (job) => (await import('./ours.js')).readerPass(job, 'stream'),
  analyze: async (job) => (await import('./ours.js')).analyzePass(job),
  sheetjs: async (job) => (await import('./peers.js')).sheetjsPass(job),
  exceljs: async (job) => (await import('./peers.js')).exceljsPass(job),
  sax: async (job) => (await import('./peers.js')).saxPass(job),
  saxes: async (job) => (await import('./peers.js')).saxesPass(job),
  http: async (job) => (await import('./http.js')).httpPass(job)
}

async function main (): Promise<void> {
  const job = JSON.parse(process.argv[2] ?? '') as MeasureJob
  const pass = await PASSES[job.contender](job)
  const { timeRepeated } = await import('./repeat.js')
  const { timing, last } = await timeRepeated(job.contender, pass, job)
  const report: MeasureReport = {
    contender: job.contender,
    counts: last,
    timing,
    maxRssKb: process.resourceUsage().maxRSS,
    startRssKb
  }
  process.stdout.write(`${REPORT_PREFIX}${JSON.stringify(report)}\n`)
}

main().then(
  // The HTTP case leaves a server and a pool behind; nothing else needs a clean shutdown.
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(failureText(err))
    process.exit(1)
  }
)
