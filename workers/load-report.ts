/**
 * A running load's progress, as snapshots: the importation it took, its phase, rows read and
 * sent to the database, bytes of the sheet read of its total. The load keeps counters (a
 * field increment per row); snapshots are taken only when the reader reports a chunk (about
 * every megabyte of sheet XML), at most every REPORT_INTERVAL_MS, plus at once on a new
 * phase, and once more at the end so that the last figures are never held back. Over a
 * MessagePort (a pool task, an XLS isolate) or to a function (the CLI's in-process load).
 */
import type { MessagePort } from 'node:worker_threads'
import type { LoadCounters, LoadPhase } from '../core/importer/load-state.js'
import type { LoadOptions } from '../core/importer/process-ledger.js'

/** What a load reports; every snapshot is whole, so a reader may keep only the last. */
export interface LoadSnapshot {
  importacaoId: string | null
  phase: LoadPhase | null
  rowsRead: number
  rowsLoaded: number
  /** Of the sheet's XML as inflated (the whole file for XLS). */
  bytesRead: number
  bytesTotal: number | null
}

export const REPORT_INTERVAL_MS = 250

export class LoadReporter {
  readonly counters: LoadCounters = { rowsRead: 0, rowsLoaded: 0 }
  private importacaoId: string | null = null
  private phase: LoadPhase | null = null
  private bytesRead = 0
  private bytesTotal: number | null = null
  private lastSent = 0
  private trailing: NodeJS.Timeout | undefined

  constructor (private readonly send: (snapshot: LoadSnapshot) => void, private readonly intervalMs = REPORT_INTERVAL_MS) {}

  /** The processLedger options that feed this reporter. */
  loadOptions (): Pick<LoadOptions, 'onStart' | 'onPhase' | 'counters'> {
    return {
      counters: this.counters,
      onStart: (id) => { this.importacaoId = id; this.phase = 'lendo'; this.now() },
      onPhase: (phase) => { this.phase = phase; this.now() }
    }
  }

  /** The reader's onProgress. */
  readonly bytes = (done: number, total: number): void => {
    this.bytesRead = done
    this.bytesTotal = total
    const wait = this.lastSent + this.intervalMs - Date.now()
    if (wait <= 0) {
      this.now()
    } else if (this.trailing === undefined) {
      // The figures of a load that stalls (the database waits on a lock) still go out.
      this.trailing = setTimeout(() => this.now(), wait)
      this.trailing.unref?.()
    }
  }

  /** Sends the figures now (at the end of the load, or on a new phase). */
  now (): void {
    clearTimeout(this.trailing)
    this.trailing = undefined
    this.lastSent = Date.now()
    this.send({
      importacaoId: this.importacaoId,
      phase: this.phase,
      rowsRead: this.counters.rowsRead,
      rowsLoaded: this.counters.rowsLoaded,
      bytesRead: this.bytesRead,
      bytesTotal: this.bytesTotal
    })
  }

  stop (): void {
    clearTimeout(this.trailing)
    this.trailing = undefined
  }
}

/** A reporter that posts to `port` (transferred with the task), closed at the end. */
export function portReporter (port: MessagePort): { reporter: LoadReporter, close: () => void } {
  const reporter = new LoadReporter((snapshot) => port.postMessage(snapshot))
  return {
    reporter,
    close: () => {
      reporter.now()
      reporter.stop()
      port.close()
    }
  }
}
