/**
 * Repeated timing inside one child process, with tinybench. The JIT needs a few
 * passes before a streaming parser's hot loops are optimised, so the first pass
 * is a probe that doubles as warm-up and sizes the measured runs to the budget.
 * Short passes are then warmed for WARMUP_MS more (at least one pass): on the 100k
 * ledger our reader took 96, 62, 50, 52, 29 ms over its first five passes and
 * 26-29 ms from then on, so two passes of warm-up left the median on V8's compile
 * phase, not on the reader. Every contender is warmed the same way.
 */
import { Bench } from 'tinybench'
import type { PassOptions, Timing } from './protocol.js'

/**
 * Past this, a pass is long enough that JIT warm-up is lost in it (SheetJS on a
 * million rows takes half a minute): the probe alone is the warm-up.
 */
const SLOW_PASS_MS = 5_000
/** Warm-up time for passes shorter than SLOW_PASS_MS (about 40 passes of the 100k reader). */
const WARMUP_MS = 1_500

// Present when the child runs with --expose-gc (see PassOptions.collectBetweenPasses).
const collectGarbage = (globalThis as { gc?: () => void }).gc

export async function timeRepeated<T extends { helperCpuMs?: number }> (name: string, pass: () => Promise<T>, options: PassOptions): Promise<{ timing: Timing, last: T }> {
  const collect = options.collectBetweenPasses ? collectGarbage : undefined
  const probeStart = performance.now()
  let last = await pass()
  const probeMs = performance.now() - probeStart
  const extraWarmup = probeMs < SLOW_PASS_MS ? Math.max(1, Math.ceil(WARMUP_MS / probeMs)) : 0
  const iterations = Math.min(options.maxIterations, Math.max(options.minIterations, Math.floor(options.budgetMs / probeMs)))

  const bench = new Bench({
    iterations,
    time: 0,
    warmup: extraWarmup > 0,
    warmupIterations: extraWarmup,
    warmupTime: 0,
    retainSamples: true,
    throws: true
  })
  // CPU per run, warm-up runs included (tinybench runs them through the same function first).
  const cpuMs: number[] = []
  bench.add(name, async () => {
    const before = process.cpuUsage()
    last = await pass()
    const used = process.cpuUsage(before)
    cpuMs.push((used.user + used.system) / 1000 + (last.helperCpuMs ?? 0))
  }, { beforeEach: () => { collect?.() } })
  await bench.run()
  const result = bench.getTask(name)?.result
  if (result === undefined || !('latency' in result)) throw new Error(`tinybench produced no timing for ${name}`)
  const samplesMs = [...(result.latency.samples ?? [])]
  return {
    timing: {
      samplesMs,
      medianMs: result.latency.p50,
      minMs: result.latency.min,
      warmupRuns: 1 + extraWarmup,
      cpuMedianMs: median(cpuMs.slice(-samplesMs.length))
    },
    last
  }
}

/** Median of plain samples (the pair runner alternates by hand, outside tinybench). */
export function median (values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = sorted.length >> 1
  if (sorted.length === 0) return Number.NaN
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
}
