/**
 * Child process entry for the CI guard: two inflate-only baselines and our reader
 * on the same file, alternating in one process. Alternating (and swapping which goes first
 * each round) spreads a noisy neighbour or a CPU-frequency change over both
 * sides, so their ratio holds even when absolute times drift. tinybench runs
 * one task to the end before the next, which is why this loop is by hand.
 *
 *   node bench/out/child/pair-child.js '<PairJob as JSON>'
 */
import { yauzlPass, zipArchivePass } from './inflate.js'
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
  const passes = { inflate: await zipArchivePass(job), streamInflate: yauzlPass(job), reader: await readerPass(job) }
  const samples: Record<keyof typeof passes, number[]> = { inflate: [], streamInflate: [], reader: [] }
  const names = Object.keys(passes) as Array<keyof typeof passes>
  let counts: PassCounts = { rows: 0, cells: 0, xmlBytes: 0 }
  for (let round = 0; round < job.warmupRounds + job.rounds; round++) {
    // Rotate the order each round so drift in the machine's speed spreads over all three.
    const order = names.map((_, i) => names[(i + round) % names.length]!)
    for (const name of order) {
      const { ms, counts: seen } = await timeOnce(passes[name])
      if (name === 'reader') counts = { ...seen, xmlBytes: counts.xmlBytes }
      if (name === 'inflate') counts = { ...counts, xmlBytes: seen.xmlBytes }
      if (round >= job.warmupRounds) samples[name].push(ms)
    }
  }
  const report: PairReport = {
    inflate: timingOf(samples.inflate, job.warmupRounds),
    streamInflate: timingOf(samples.streamInflate, job.warmupRounds),
    reader: timingOf(samples.reader, job.warmupRounds),
    counts,
    maxRssKb: process.resourceUsage().maxRSS
  }
  process.stdout.write(`${REPORT_PREFIX}${JSON.stringify(report)}\n`)
}

main().catch((err: unknown) => {
  process.stderr.write(failureText(err))
  process.exitCode = 1
})
