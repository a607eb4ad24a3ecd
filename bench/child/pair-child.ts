/**
 * Child process entry for the CI guard: inflate-only and our reader on the same
 * file, alternating in one process. Alternating (and swapping which goes first
 * each round) spreads a noisy neighbour or a CPU-frequency change over both
 * sides, so their ratio holds even when absolute times drift. tinybench runs
 * one task to the end before the next, which is why this loop is by hand.
 *
 *   node bench/out/child/pair-child.js '<PairJob as JSON>'
 */
import { zipArchivePass } from './inflate.js'
import { readerPass } from './ours.js'
import { REPORT_PREFIX, failureText, type PairJob, type PairReport, type PassCounts, type Timing } from './protocol.js'
import { median } from './repeat.js'

async function timeOnce (pass: () => Promise<PassCounts>): Promise<{ ms: number, counts: PassCounts }> {
  const started = performance.now()
  const counts = await pass()
  return { ms: performance.now() - started, counts }
}

function timingOf (samplesMs: number[], warmupRuns: number): Timing {
  return { samplesMs, medianMs: median(samplesMs), minMs: Math.min(...samplesMs), warmupRuns }
}

async function main (): Promise<void> {
  const job = JSON.parse(process.argv[2] ?? '') as PairJob
  const inflate = await zipArchivePass(job)
  const reader = await readerPass(job)
  const inflateMs: number[] = []
  const readerMs: number[] = []
  let counts: PassCounts = { rows: 0, cells: 0, xmlBytes: 0 }
  for (let round = 0; round < job.warmupRounds + job.rounds; round++) {
    const readerFirst = round % 2 === 1
    const a = await timeOnce(readerFirst ? reader : inflate)
    const b = await timeOnce(readerFirst ? inflate : reader)
    const [r, i] = readerFirst ? [a, b] : [b, a]
    counts = { ...r.counts, xmlBytes: i.counts.xmlBytes }
    if (round < job.warmupRounds) continue
    readerMs.push(r.ms)
    inflateMs.push(i.ms)
  }
  const report: PairReport = {
    inflate: timingOf(inflateMs, job.warmupRounds),
    reader: timingOf(readerMs, job.warmupRounds),
    counts,
    maxRssKb: process.resourceUsage().maxRSS
  }
  process.stdout.write(`${REPORT_PREFIX}${JSON.stringify(report)}\n`)
}

main().catch((err: unknown) => {
  process.stderr.write(failureText(err))
  process.exitCode = 1
})
