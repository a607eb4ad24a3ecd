/**
 * Child of bench/extract.bench.ts: runs the pool's own task (workers/extract-document.js,
 * called directly in this one thread: the stored file read, the bounds, pdf.js, the
 * engine) over the given PDFs in a loop, and prints `{ docsPerSecond, cpuMsPerDoc }`.
 * One copy alone, then two at once, give how much this machine runs two independent
 * copies of the work faster than one: the ceiling any pool of two threads can reach here.
 *
 * `warm` documents go first, unmeasured, as the benchmark warms each pool thread: the
 * CPU one document costs keeps falling for dozens of documents while V8 compiles pdf.js's
 * hot paths, so a floor warmed longer than the pool's threads would not be the same work.
 *
 *   node bench/out/child/extract-loop.js '{"distDir":"...","paths":[...],"docs":40,"warm":24}'
 */
import type * as ExtractDocumentModule from '../../workers/extract-document.js'
import { importDist } from './dist.js'

interface LoopJob { distDir: string, paths: string[], docs: number, warm: number }

/** User + system CPU of this whole process (every thread: V8's compiler and GC helpers too), ms. */
const processCpuMs = (): number => {
  const { userCPUTime, systemCPUTime } = process.resourceUsage()
  return (userCPUTime + systemCPUTime) / 1000
}

async function main (): Promise<void> {
  const job = JSON.parse(process.argv[2] ?? '') as LoopJob
  const { default: extract } = await importDist<typeof ExtractDocumentModule>(job.distDir, 'workers/extract-document.js')
  const one = async (i: number): Promise<void> => {
    const result = await extract({ path: job.paths[i % job.paths.length]!, limits: { maxPages: 50, deadlineMs: 600_000, maxRunsPerPage: 50_000 } })
    if (!result.ok || !('success' in result.value) || !result.value.success) throw new Error('a benchmark input was not extracted')
  }
  for (let i = 0; i < job.warm; i++) await one(i)
  const cpuBefore = processCpuMs()
  const started = performance.now()
  for (let i = 0; i < job.docs; i++) await one(i)
  const elapsed = performance.now() - started
  process.stdout.write(JSON.stringify({ docsPerSecond: job.docs / (elapsed / 1000), cpuMsPerDoc: (processCpuMs() - cpuBefore) / job.docs }))
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`)
  process.exitCode = 1
})
