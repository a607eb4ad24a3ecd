/**
 * The targets, checked against a run. `npm run bench` prints them and
 * exits 0 whatever they say; only bench/ci-quick.ts fails a build.
 */
import { availableParallelism } from 'node:os'
import { cpuFloorMs } from '../import-analyze-http.bench.js'
import type { HttpRun } from '../import-analyze-http.bench.js'
import type { SizeRun } from '../xlsx-read-rows.bench.js'
import { find, medianOf, peakRssBytes } from './measure.js'
import { DASH, markdownTable, megabytes, ratio, sizeLabel } from './table.js'

export interface TargetCheck {
  target: string
  measured: string
  /** undefined: not measured in this run (subset, or a contender failed). */
  pass: boolean | undefined
}

export const TARGETS = {
  maxReaderOverInflate: 1.5,
  minSpeedupOverSheetjs: 10,
  minSpeedupOverExceljs: 8,
  maxReaderRssBytes: 150e6,
  /** "Flat from 100k to 1M rows": the largest size may use at most this much more. */
  maxRssGrowth: 1.2,
  maxHttpOverReader: 1.3
} as const

export function readTargets (runs: readonly SizeRun[]): TargetCheck[] {
  const checks: TargetCheck[] = []
  for (const run of runs) {
    const size = sizeLabel(run.ledger.rows)
    const reader = medianOf(find(run, 'reader'))
    const inflate = medianOf(find(run, 'inflate'))
    checks.push(atMost(`${size}: reader within ${TARGETS.maxReaderOverInflate}× of inflate-only`, reader, inflate, TARGETS.maxReaderOverInflate))
    if (find(run, 'sheetjs') !== undefined) {
      checks.push(atLeast(`${size}: at least ${TARGETS.minSpeedupOverSheetjs}× SheetJS`, medianOf(find(run, 'sheetjs')), reader, TARGETS.minSpeedupOverSheetjs))
    }
    if (find(run, 'exceljs') !== undefined) {
      checks.push(atLeast(`${size}: at least ${TARGETS.minSpeedupOverExceljs}× ExcelJS streaming`, medianOf(find(run, 'exceljs')), reader, TARGETS.minSpeedupOverExceljs))
    }
    const rss = peakRssBytes(find(run, 'reader'))
    checks.push({
      target: `${size}: reader peak RSS under ${megabytes(TARGETS.maxReaderRssBytes)} MB`,
      measured: rss === undefined ? DASH : `${megabytes(rss)} MB`,
      pass: rss === undefined ? undefined : rss < TARGETS.maxReaderRssBytes
    })
  }
  const first = runs[0]
  const last = runs[runs.length - 1]
  if (first !== undefined && last !== undefined && first !== last) {
    const small = peakRssBytes(find(first, 'reader'))
    const large = peakRssBytes(find(last, 'reader'))
    checks.push(atMost(
      `reader peak RSS flat from ${sizeLabel(first.ledger.rows)} to ${sizeLabel(last.ledger.rows)} (at most ${TARGETS.maxRssGrowth}×)`,
      large, small, TARGETS.maxRssGrowth
    ))
  }
  return checks
}

export function httpTargets (run: HttpRun): TargetCheck[] {
  const readerMs = medianOf(find(run, 'reader'))
  const floorMs = cpuFloorMs(run, 'http')
  return [atMost(
    `${sizeLabel(run.ledger.rows)}: /v1/analyze over HTTP within ${TARGETS.maxHttpOverReader}× of the reader alone`,
    medianOf(find(run, 'http')), readerMs, TARGETS.maxHttpOverReader
  ), {
    // Not a target: the least the row above could measure on these cores (its CPU time / cores).
    target: `${sizeLabel(run.ledger.rows)}: (for reference) the same request's CPU floor on ${availableParallelism()} cores`,
    measured: floorMs === undefined || readerMs === undefined ? DASH : ratio(floorMs / readerMs),
    pass: undefined
  }]
}

function atMost (target: string, value: number | undefined, base: number | undefined, limit: number): TargetCheck {
  if (value === undefined || base === undefined) return { target, measured: DASH, pass: undefined }
  return { target, measured: ratio(value / base), pass: value / base <= limit }
}

/** `slow` / `fast` must reach `limit`: how many times faster we are. */
function atLeast (target: string, slow: number | undefined, fast: number | undefined, limit: number): TargetCheck {
  if (slow === undefined || fast === undefined) return { target, measured: DASH, pass: undefined }
  return { target, measured: ratio(slow / fast), pass: slow / fast >= limit }
}

export function targetsTable (checks: readonly TargetCheck[]): string {
  const verdict = (pass: boolean | undefined): string => (pass === undefined ? 'n/a' : pass ? 'PASS' : 'FAIL')
  return markdownTable(['target', 'measured', 'result'], checks.map((c) => [c.target, c.measured, verdict(c.pass)]))
}
