/**
 * What each suite hands its table, filled with figures of the size this machine measures
 * (bench/README.md, docs/benchmarks.md), for the tests of the JSON results, bench:compare
 * and bench:report: the converters run on the suites' own result types, nothing measured.
 */
import type { AgentBenchResult } from '../agent.bench.js'
import type { MeasureReport, PairReport, Timing } from '../child/protocol.js'
import type { ExtractBenchRow, ExtractBenchRun } from '../extract.bench.js'
import type { OcrBenchRun } from '../extract-ocr.bench.js'
import type { GatewayBenchResult, GatewayBenchRow } from '../gateway.bench.js'
import type { HttpRun } from '../import-analyze-http.bench.js'
import type { ProcessRun } from '../import-process.bench.js'
import type { SignBenchResult, SignBenchRow } from '../sign.bench.js'
import type { SizeRun } from '../xlsx-read-rows.bench.js'
import type { LedgerFacts } from '../../fixtures/ledger/plan.js'
import { HTTP_CONTENDERS, READ_CONTENDERS, type Contender } from './contenders.js'
import { agentFigures, extractFigures, gatewayFigures, httpFigures, ocrFigures, processFigures, quickPairFigures, readRowsFigures, signFigures } from './figures.js'
import type { BenchLedger } from './ledger-cache.js'
import type { ContenderResult } from './measure.js'
import { ResultsRecorder, type BenchResults } from './results.js'
import { medianOf, spreadOf } from './spread.js'

export function sampleLedger (rows: number): BenchLedger {
  return {
    path: `/tmp/ledger-${rows}r-s1.xlsx`,
    rows,
    seed: 1,
    sheetRows: rows + 1,
    sheetPart: 'xl/worksheets/sheet1.xml',
    sheetXmlBytes: rows * 415,
    sheetCells: (rows + 1) * 11,
    fileBytes: rows * 55,
    facts: { totalRows: rows } as LedgerFacts
  }
}

export function sampleTiming (samplesMs: number[], cpuMedianMs?: number): Timing {
  const sorted = [...samplesMs].sort((a, b) => a - b)
  return { samplesMs: sorted, medianMs: medianOf(sorted), minMs: sorted[0]!, warmupRuns: 2, ...(cpuMedianMs === undefined ? {} : { cpuMedianMs }) }
}

function contender (id: string, list: readonly Contender[] = READ_CONTENDERS): Contender {
  return list.find((c) => c.id === id)!
}

function measured (c: Contender, samplesMs: number[], maxRssKb: number, ledger: BenchLedger, cpuMedianMs?: number): ContenderResult {
  const report: MeasureReport = {
    contender: c.id,
    counts: { rows: ledger.sheetRows, cells: ledger.sheetCells, xmlBytes: ledger.sheetXmlBytes },
    timing: sampleTiming(samplesMs, cpuMedianMs),
    maxRssKb,
    startRssKb: 42_500
  }
  return { contender: c, outcome: { ok: true, report }, mismatch: undefined }
}

/** 100k rows: inflate, the reader, ExcelJS, and SheetJS out of memory. `slowdown` scales the reader. */
export function sampleReadRuns (slowdown = 1): SizeRun[] {
  const ledger = sampleLedger(100_000)
  return [{
    ledger,
    results: [
      measured(contender('inflate'), [21.0, 21.4, 22.0, 21.2, 23.5], 61_000, ledger),
      measured(contender('reader'), [26.1, 26.8, 27.9, 26.5, 29.0].map((ms) => ms * slowdown), 88_000, ledger),
      measured(contender('exceljs'), [702, 715, 731], 190_000, ledger),
      { contender: contender('sheetjs'), outcome: { ok: false, failure: 'out of memory', detail: 'JavaScript heap out of memory' }, mismatch: undefined }
    ]
  }]
}

export function sampleHttpRun (): HttpRun {
  const ledger = sampleLedger(500_000)
  return {
    ledger,
    results: [
      measured(contender('reader', HTTP_CONTENDERS), [118, 120, 123], 95_000, ledger, 206),
      measured(contender('analyze', HTTP_CONTENDERS), [146, 150, 152], 120_000, ledger, 236),
      measured(contender('http', HTTP_CONTENDERS), [171, 176, 190], 210_000, ledger, 302)
    ]
  }
}

export function sampleProcessRuns (): ProcessRun[] {
  const ledger = sampleLedger(100_000)
  return [{
    ledger,
    outcome: {
      ok: true,
      report: {
        timings: {
          'raw-copy': sampleTiming([88, 90, 93, 95, 89]),
          analyze: sampleTiming([31, 32, 32, 33, 35]),
          'process-http': sampleTiming([97, 99, 104, 101, 98])
        },
        maxRssKb: 310_000
      }
    },
    service: { ok: true, report: { timings: {}, maxRssKb: 200_000 } }
  }]
}

function signRow (pages: number, contender: SignBenchRow['contender'], concurrency: number, latencies: number[]): SignBenchRow {
  const sorted = [...latencies].sort((a, b) => a - b)
  return {
    pages, contender, concurrency, tasks: sorted.length, medianMs: medianOf(sorted), p95Ms: sorted[Math.ceil(0.95 * sorted.length) - 1]!,
    spread: spreadOf(sorted), workerMedianMs: medianOf(sorted) * 0.9, perSecond: (1000 / medianOf(sorted)) * Math.min(concurrency, 2) * 0.9,
    cpuMsPerTask: medianOf(sorted) * 1.1, inputBytes: pages * 2200, outputBytes: pages * 2200 + 24_000
  }
}

export function sampleSign (): SignBenchResult {
  const rows: SignBenchRow[] = []
  for (const [contender, base] of [['baseline', 42.8], ['NONE', 0.8], ['STAMP_AND_PAGE', 1.6]] as const) {
    for (const concurrency of [1, 8]) rows.push(signRow(1, contender, concurrency, [0.95, 1, 1.02, 1.05, 1.1, 1.3].map((f) => f * base * (concurrency === 8 ? 4 : 1))))
  }
  return { rows, baseline: '@signpdf/signer-p12', threads: 2, warmupMs: 3000 }
}

function extractRow (plugin: string, documentType: string): ExtractBenchRow {
  return {
    plugin, documentType, bytes: 14_000,
    pool: { threads: 2, docsPerSecond: 61, mainMsPerDoc: 0.4, cpuMsPerDoc: 31 },
    single: { docsPerSecond: 33, mainMsPerDoc: 0.3, cpuMsPerDoc: 29 },
    floor: { single: 34, pair: 63, ratio: 63 / 34, cpuMsPerDoc: { single: 28, pair: 30 } },
    pdfjsMs: 21, boundsMs: 3.1, oursMs: 2.6,
    splitSamples: { count: 16, pdfjs: spreadOf([20, 21, 22, 21.5]), bounds: spreadOf([3, 3.1, 3.3]), ours: spreadOf([2.5, 2.6, 2.8]) }
  }
}

export function sampleExtract (): ExtractBenchRun {
  return {
    rows: [extractRow('darf', 'DARF'), { ...extractRow('das', 'DAS'), floor: { error: 'exit 1' } }],
    missing: [],
    serve: {
      afterHealthRss: 108e6, afterBatchRss: 244e6, peakRss: 251e6, batchFiles: 10, batchMs: 420, mainCpuMsPerDoc: 1.9,
      http: { threads: 2, oneClient: 30, fourClients: 49, cpuMsPerDoc: { oneClient: 35, fourClients: 36 }, floor: { single: 32, pair: 52, ratio: 52 / 32, cpuMsPerDoc: { single: 29, pair: 31 } } }
    },
    loadBefore: 1.4
  }
}

export function sampleOcr (): OcrBenchRun {
  const goal = 3000
  return {
    loadBefore: 1.3,
    rssAfterBytes: 420e6,
    warmUpMs: 6100,
    rows: [
      { label: 'one page, cold thread', pages: 1, service: { wallMs: 3900, cpuMs: 4400 }, floor: { wallMs: 1800, cpuMs: 1800 }, goalMs: goal },
      { label: 'one page', pages: 1, service: { wallMs: 2100, cpuMs: 2300, wallSamplesMs: [1980, 2100, 2380] }, floor: { wallMs: 1800, cpuMs: 1800 }, goalMs: goal },
      { label: 'ten pages', pages: 10, service: { wallMs: 17_300, cpuMs: 18_000 }, floor: { wallMs: 16_300, cpuMs: 16_300 }, goalMs: 20_000 }
    ]
  }
}

function gatewayRow (path: GatewayBenchRow['path'], concurrency: number, latencies: number[], cpu: number): GatewayBenchRow {
  const sorted = [...latencies].sort((a, b) => a - b)
  return {
    path, concurrency, calls: sorted.length, medianMs: medianOf(sorted), p95Ms: sorted[Math.ceil(0.95 * sorted.length) - 1]!, spread: spreadOf(sorted),
    perSecond: concurrency * 1000 / medianOf(sorted), handshakes: 0, cpuMsPerCall: { process: cpu, database: path === 'gateway' ? 0.12 : 0 }
  }
}

export function sampleGateway (): GatewayBenchResult {
  const rows: GatewayBenchRow[] = []
  for (const [c, f] of [[1, 1], [16, 6]] as const) {
    rows.push(gatewayRow('direct', c, [1.1, 1.2, 1.25, 1.3, 1.6].map((x) => x * f), 0))
    rows.push(gatewayRow('relay', c, [1.6, 1.7, 1.8, 1.9, 2.2].map((x) => x * f), 0.3))
    rows.push(gatewayRow('gateway', c, [1.7, 1.85, 1.9, 2.0, 2.5].map((x) => x * f), 0.45))
  }
  return { rows, docs: 10, answerBytes: 41_000 }
}

export function sampleAgent (): AgentBenchResult {
  const round = (n: number, agentMs: number): AgentBenchResult['rounds'][number] => ({
    round: n, directMs: 2100, floorMs: 3600, agentMs, submitMs: 900, succeeded: 1000, rssAfterBytes: 120e6 + n * 4e6, directCpuMs: 0.9, agentCpuMs: 1.2
  })
  return { options: { jobs: 1000, rounds: 2, program: 'sh', distDir: undefined }, rssBeforeBytes: 96.5e6, rounds: [round(1, 3790), round(2, 3870)] }
}

/** The pair child keeps its samples in round order (bench/child/pair-child.ts). */
function roundsTiming (samplesMs: number[]): Timing {
  return { samplesMs, medianMs: medianOf(samplesMs), minMs: Math.min(...samplesMs), warmupRuns: 2 }
}

export function samplePair (): PairReport {
  return {
    inflate: roundsTiming([41, 42, 42.5, 43, 44, 41.5, 42.2, 43.1, 42.8]),
    streamInflate: roundsTiming([101, 103, 104, 99, 102, 105, 103, 100, 102]),
    reader: roundsTiming([50, 51, 52, 53, 51.5, 50.8, 52.2, 51.1, 54]),
    counts: { rows: 200_001, cells: 200_001 * 11, xmlBytes: 200_000 * 415 },
    maxRssKb: 90_000
  }
}

/** A `npm run bench` run of every suite, as run.ts records it. */
export function sampleBenchResults (options: { readerSlowdown?: number } = {}): BenchResults {
  const recorder = new ResultsRecorder('bench', { argv: ['--sizes', '100000', '--json', '/tmp/b.json'], resolved: { sizes: [100_000] } }, { commit: '0123456789abcdef0123456789abcdef01234567', dirty: false })
  readRowsFigures(recorder.suite('reader'), sampleReadRuns(options.readerSlowdown))
  httpFigures(recorder.suite('http'), sampleHttpRun(), 2)
  processFigures(recorder.suite('process'), sampleProcessRuns())
  signFigures(recorder.suite('sign'), sampleSign())
  extractFigures(recorder.suite('extract'), sampleExtract())
  ocrFigures(recorder.suite('ocr'), sampleOcr())
  gatewayFigures(recorder.suite('gateway'), sampleGateway())
  agentFigures(recorder.suite('agent'), sampleAgent())
  return recorder.finish()
}

/** A `npm run bench:quick` run, as ci-quick.ts records it. */
export function sampleQuickResults (): BenchResults {
  const recorder = new ResultsRecorder('bench:quick', { argv: [], resolved: { rows: 200_000 } }, null)
  const suite = recorder.suite('quick')
  quickPairFigures(suite, samplePair(), sampleLedger(200_000))
  processFigures(suite, sampleProcessRuns(), 'process/')
  suite.check('gate: reader / inflate (ZipArchive) at most 2.00×', '1.22×', true)
  return recorder.finish()
}
