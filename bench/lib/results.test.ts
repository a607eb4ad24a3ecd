import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { problemsOf, readResults, SCHEMA_ID, SuiteBuilder, writeResults, type BenchResults, type Figure } from './results.js'
import { samplePair, sampleBenchResults, sampleQuickResults } from './sample-results.js'
import { spreadOf, sumSpread } from './spread.js'

let dir: string
beforeAll(async () => { dir = await mkdtemp(join(tmpdir(), 'razao-bench-json-')) })
afterAll(async () => { await rm(dir, { recursive: true, force: true }) })

const figure = (doc: BenchResults, id: string): Figure => {
  const found = doc.suites.flatMap((s) => s.figures).find((f) => f.id === id)
  if (found === undefined) throw new Error(`no figure ${id}`)
  return found
}

describe('spread', () => {
  it('gives min, max, median, MAD and MAD / median of the samples', () => {
    expect(spreadOf([10, 12, 11, 30, 9])).toEqual({ min: 9, max: 30, median: 11, mad: 1, rel: 1 / 11 })
    expect(spreadOf([5])).toBeUndefined()
  })

  it('adds up the spreads of a sum', () => {
    const s = sumSpread(spreadOf([1, 2, 3]), spreadOf([10, 20, 30]))!
    expect(s).toMatchObject({ min: 11, max: 33, median: 22, mad: 11 })
    expect(s.rel).toBeCloseTo(0.5)
  })
})

describe('the JSON results of a run (razao-bench/1)', () => {
  it('writes every suite\'s figures with units, samples, spreads and ratios, and reads them back', async () => {
    const file = join(dir, 'sub', 'run.json')
    await writeResults(file, sampleBenchResults())
    const doc = await readResults(file)
    expect(doc.schema).toBe(SCHEMA_ID)
    expect(doc.suites.map((s) => s.suite)).toEqual(['reader', 'http', 'process', 'sign', 'extract', 'ocr', 'gateway', 'agent'])
    for (const suite of doc.suites) {
      expect(suite.figures.length, suite.suite).toBeGreaterThan(3)
      for (const f of suite.figures) {
        expect(f.id.startsWith(`${suite.suite}/`), f.id).toBe(true)
        expect(f.unit, f.id).not.toBe('')
        expect(Number.isFinite(f.value), f.id).toBe(true)
      }
    }
    expect(doc.machine.cores).toBeGreaterThan(0)
    expect(doc.machine.node).toBe(process.version)
    expect(doc.machine.load.start).toHaveLength(3)
    expect(doc.git).toEqual({ commit: '0123456789abcdef0123456789abcdef01234567', dirty: false })
    expect(doc.options.argv).toContain('--json')
    expect(Date.parse(doc.finishedAt)).toBeGreaterThanOrEqual(Date.parse(doc.startedAt))
  })

  it('computes each figure as its table does, from the same samples', () => {
    const doc = sampleBenchResults()
    // The reader at 100k: samples 26.1 … 29.0 ms, median 26.8; inflate's median 21.4 ms.
    const reader = figure(doc, 'reader/100k/reader/median')
    expect(reader).toMatchObject({ unit: 's', better: 'lower', role: 'ours', samples: 5 })
    expect(reader.value).toBeCloseTo(0.0268, 6)
    expect(reader.spread!.min).toBeCloseTo(0.0261, 9)
    expect(reader.spread!.max).toBeCloseTo(0.029, 9)
    const toInflate = reader.ratios!.find((r) => r.to === 'reader/100k/inflate/median')!
    expect(toInflate.value).toBeCloseTo(26.8 / 21.4, 6)
    expect(toInflate.rel).toBeCloseTo(reader.spread!.rel + figure(doc, 'reader/100k/inflate/median').spread!.rel, 9)
    // Our speed-up over ExcelJS is the inverse of this ratio.
    expect(reader.ratios!.find((r) => r.to === 'reader/100k/exceljs/median')!.value).toBeCloseTo(26.8 / 715, 6)
    expect(figure(doc, 'reader/100k/reader/rows-per-s').value).toBeCloseTo(100_001 / 0.0268, 0)
    expect(figure(doc, 'reader/100k/exceljs/median').role).toBe('peer')
    // A contender that failed has no figures, only a note.
    expect(doc.suites[0]!.figures.some((f) => f.id.includes('sheetjs'))).toBe(false)
    expect(doc.suites[0]!.notes.join('\n')).toContain('out of memory')
    // /v1/process over HTTP against analyze + raw COPY (32 + 90 ms).
    expect(figure(doc, 'process/100k/analyze+raw-copy/median').value).toBeCloseTo(0.122, 6)
    expect(figure(doc, 'process/100k/process-http/median').ratios![0]).toMatchObject({ to: 'process/100k/analyze+raw-copy/median' })
    expect(figure(doc, 'process/100k/process-http/median').ratios![0]!.value).toBeCloseTo(99 / 122, 6)
    // The HTTP row's CPU floor on 2 cores: 302 ms / 2.
    expect(figure(doc, 'http/500k/cpu-floor/wall').role).toBe('floor')
    expect(figure(doc, 'http/500k/cpu-floor/wall').value).toBeCloseTo(0.151, 9)
    // Extraction: the pool's speed-up over its floor; a floor that failed is a note.
    const pool = figure(doc, 'extract/darf/pool/speedup')
    expect(pool.ratios![0]!.to).toBe('extract/darf/floor/speedup')
    expect(pool.ratios![0]!.value).toBeCloseTo((61 / 33) / (63 / 34), 6)
    expect(doc.suites.find((s) => s.suite === 'extract')!.notes.join('\n')).toContain('DAS (das): floor not measured (exit 1)')
    // Signing: ours against @signpdf at the same pages and concurrency.
    expect(figure(doc, 'sign/1p/none/c1/median').ratios![0]!.to).toBe('sign/1p/signpdf/c1/median')
    expect(figure(doc, 'sign/1p/stamp-and-page/c1/median').ratios!.map((r) => r.to)).toEqual(['sign/1p/signpdf/c1/median', 'sign/1p/none/c1/median'])
    expect(figure(doc, 'gateway/c16/gateway/median').ratios!.map((r) => r.to)).toEqual(['gateway/c16/direct/median', 'gateway/c16/relay/median'])
    expect(figure(doc, 'ocr/one-page/service/wall')).toMatchObject({ samples: 3, value: 2.1 })
    expect(figure(doc, 'agent/rounds/agent/ms-per-job').samples).toBe(2)
    expect(figure(doc, 'agent/rounds/agent/ms-per-job').value).toBeCloseTo(3.83, 9)
    expect(doc.suites.find((s) => s.suite === 'ocr')!.checks.map((c) => c.pass)).toEqual([false, true, true])
  })

  it('takes the spread of bench:quick\'s reader ÷ inflate from the ratios of its rounds', () => {
    const pair = samplePair()
    const ratio = figure(sampleQuickResults(), 'quick/200k/reader/median').ratios![0]!
    expect(ratio.to).toBe('quick/200k/inflate/median')
    expect(ratio.value).toBeCloseTo(pair.reader.medianMs / pair.inflate.medianMs, 9)
    expect(ratio.rel).toBeCloseTo(spreadOf(pair.reader.samplesMs.map((ms, i) => ms / pair.inflate.samplesMs[i]!))!.rel, 9)
  })

  it('gives every figure an id of its own and every ratio a figure of the same suite', () => {
    expect(problemsOf(sampleBenchResults())).toEqual([])
    expect(problemsOf(sampleQuickResults())).toEqual([])
    const s = new SuiteBuilder('x')
    s.add({ id: 'a', label: 'a', value: 1, unit: 's', better: 'lower', role: 'ours' })
    expect(() => s.add({ id: 'a', label: 'a', value: 2, unit: 's', better: 'lower', role: 'ours' })).toThrow(/twice/)
    expect(s.add({ id: 'b', label: 'b', value: Number.NaN, unit: 's', better: 'lower', role: 'ours' })).toBeUndefined()
  })

  it('refuses to write, or to read, a document that does not conform', async () => {
    const broken = sampleQuickResults()
    broken.suites[0]!.figures[0]!.ratios = [{ to: 'quick/nothing', value: 1, rel: 0 }]
    await expect(writeResults(join(dir, 'broken.json'), broken)).rejects.toThrow(/quick\/nothing/)
    await writeFile(join(dir, 'other.json'), JSON.stringify({ schema: 'something/2' }))
    await expect(readResults(join(dir, 'other.json'))).rejects.toThrow(/not a benchmark result of schema razao-bench\/1/)
    await writeFile(join(dir, 'bad.json'), '{"schema": "razao-')
    await expect(readResults(join(dir, 'bad.json'))).rejects.toThrow(/is not JSON/)
    await expect(readResults(join(dir, 'missing.json'))).rejects.toThrow(/cannot read .*ENOENT/)
  })

  it('keeps six significant digits in the file', async () => {
    const file = join(dir, 'quick.json')
    await writeResults(file, sampleQuickResults())
    const text = await readFile(file, 'utf8')
    const numbers: number[] = []
    JSON.parse(text, (_key, value: unknown) => { if (typeof value === 'number') numbers.push(value); return value })
    expect(numbers.length).toBeGreaterThan(50)
    expect(numbers.filter((x) => !Number.isInteger(x) && Number(x.toPrecision(6)) !== x)).toEqual([])
    expect((JSON.parse(text) as BenchResults).suites[0]!.checks[0]).toEqual({ target: 'gate: reader / inflate (ZipArchive) at most 2.00×', measured: '1.22×', pass: true })
  })
})
