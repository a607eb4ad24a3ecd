/** Parent side of one measurement: spawn the child, check what it saw, log progress. */
import { join } from 'node:path'
import type { MeasureJob, MeasureReport, RepeatOptions } from '../child/protocol.js'
import type { Contender } from './contenders.js'
import type { BenchLedger } from './ledger-cache.js'
import { OUT_DIR } from './paths.js'
import { childScript } from './prepare.js'
import { runChild, type ChildOutcome } from './spawn-child.js'
import { seconds, sizeLabel } from './table.js'

export interface MeasureSettings {
  /** The snapshot of dist/ the children import (see snapshotDist). */
  distDir: string
  repeat: RepeatOptions
  /** Hard limit per child process; past it the contender is reported as timed out. */
  timeoutMs: number
}

export interface ContenderResult {
  contender: Contender
  outcome: ChildOutcome<MeasureReport>
  /** Set when the contender saw other rows or bytes than the ledger has. */
  mismatch: string | undefined
}

export async function measureContender (contender: Contender, ledger: BenchLedger, settings: MeasureSettings): Promise<ContenderResult> {
  const job: MeasureJob = {
    contender: contender.id,
    file: ledger.path,
    sheetPart: ledger.sheetPart,
    distDir: settings.distDir,
    scratchDir: join(OUT_DIR, 'scratch'),
    ...settings.repeat,
    collectBetweenPasses: contender.collectBetweenPasses
  }
  process.stderr.write(`  ${sizeLabel(ledger.rows).padStart(5)} ${contender.id.padEnd(8)} `)
  const outcome = await runChild<MeasureReport>(childScript('measure-child'), job, {
    timeoutMs: settings.timeoutMs,
    nodeArgs: contender.nodeArgs
  })
  const mismatch = outcome.ok ? checkCounts(contender, outcome.report, ledger) : undefined
  process.stderr.write(outcome.ok
    ? `median ${seconds(outcome.report.timing.medianMs)} s over ${outcome.report.timing.samplesMs.length} runs${mismatch === undefined ? '' : ` (${mismatch})`}\n`
    : `${outcome.failure}: ${outcome.detail}\n`)
  return { contender, outcome, mismatch }
}

function checkCounts (contender: Contender, report: MeasureReport, ledger: BenchLedger): string | undefined {
  const { rows, cells, xmlBytes } = report.counts
  if (contender.sees !== 'bytes' && rows !== ledger.sheetRows) return `saw ${rows} rows, the sheet has ${ledger.sheetRows}`
  if (contender.sees === 'cells' && cells !== ledger.sheetCells) return `saw ${cells} cells, the sheet has ${ledger.sheetCells}`
  if (contender.sees === 'bytes' && xmlBytes !== ledger.sheetXmlBytes) return `inflated ${xmlBytes} bytes, the sheet XML has ${ledger.sheetXmlBytes}`
  return undefined
}

export function find (run: { results: readonly ContenderResult[] }, id: string): ContenderResult | undefined {
  return run.results.find((r) => r.contender.id === id)
}

/** Median in ms of a successful, consistent result; undefined otherwise. */
export function medianOf (result: ContenderResult | undefined): number | undefined {
  return result?.outcome.ok === true && result.mismatch === undefined ? result.outcome.report.timing.medianMs : undefined
}

export function peakRssBytes (result: ContenderResult | undefined): number | undefined {
  return result?.outcome.ok === true ? result.outcome.report.maxRssKb * 1024 : undefined
}
