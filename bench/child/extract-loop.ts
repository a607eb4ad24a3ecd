/**
 * Child of bench/extract.bench.ts: reads and extracts the given PDFs in a loop in its one
 * thread (the work of one pool task, without the pool), and prints `{ docsPerSecond }`.
 * One copy alone, then two at once, give how much this machine runs two independent
 * copies of the work faster than one: the ceiling any pool of two threads can reach here.
 *
 *   node bench/out/child/extract-loop.js '{"distDir":"...","paths":[...],"docs":200}'
 */
import { readFile } from 'node:fs/promises'
import type * as ExtractionModule from '../../core/extraction/index.js'
import type * as PdfModule from '../../core/pdf/index.js'
import type * as PluginsModule from '../../plugins/index.js'
import { importDist } from './dist.js'

interface LoopJob { distDir: string, paths: string[], docs: number }

async function main (): Promise<void> {
  const job = JSON.parse(process.argv[2] ?? '') as LoopJob
  const { TextDocument, extractDocument, readPdfText } = await importDist<typeof ExtractionModule>(job.distDir, 'core/extraction/index.js')
  const { refuseRawContentBombs } = await importDist<typeof PdfModule>(job.distDir, 'core/pdf/index.js')
  const { plugins } = await importDist<typeof PluginsModule>(job.distDir, 'plugins/index.js')
  const inputs = await Promise.all(job.paths.map(async (p) => await readFile(p)))
  const one = async (bytes: Buffer): Promise<void> => {
    refuseRawContentBombs(bytes)
    const result = extractDocument(new TextDocument(await readPdfText(bytes, { maxPages: 50, deadlineMs: 20_000, maxRunsPerPage: 50_000 })), plugins)
    if (!result.success) throw new Error('a benchmark input was not extracted')
  }
  for (let round = 0; round < 3; round++) for (const bytes of inputs) await one(bytes)
  const started = performance.now()
  for (let i = 0; i < job.docs; i++) await one(inputs[i % inputs.length]!)
  process.stdout.write(JSON.stringify({ docsPerSecond: job.docs / ((performance.now() - started) / 1000) }))
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`)
  process.exitCode = 1
})
