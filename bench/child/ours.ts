/**
 * Our side: the streaming reader alone, and the reader feeding analyzeLedger
 * (what the /v1/analyze task does, without the upload and the thread hop).
 */
import type { Cell, InflateEngine } from '../../core/xlsx/index.js'
import { MAX_INFLATED_BYTES, importDist, type Ledger, type Xlsx } from './dist.js'
import type { Pass, SheetTarget } from './protocol.js'

/** `engine` forces one inflate engine; by default the reader picks (core/xlsx/inflate.ts). */
export async function readerPass (job: SheetTarget, engine?: InflateEngine): Promise<Pass> {
  const { readXlsxFirstSheet } = await importDist<Xlsx>(job.distDir, 'core/xlsx/index.js')
  return async () => {
    let rows = 0
    let cells = 0
    // Touching every cell is what any consumer does; the peers are made to do the same.
    const onRow = (_rowNumber: number, row: Cell[]): void => {
      rows++
      for (const cell of row) if (cell !== null && cell !== undefined) cells++
    }
    await readXlsxFirstSheet(job.file, onRow, engine === undefined ? { maxInflatedBytes: MAX_INFLATED_BYTES } : { maxInflatedBytes: MAX_INFLATED_BYTES, inflateEngine: engine })
    return { rows, cells, xmlBytes: 0 }
  }
}

export async function analyzePass (job: SheetTarget): Promise<Pass> {
  const { readXlsxFirstSheet } = await importDist<Xlsx>(job.distDir, 'core/xlsx/index.js')
  const { analyzeLedger } = await importDist<Ledger>(job.distDir, 'core/ledger/index.js')
  return async () => {
    const analysis = await analyzeLedger(
      (onRow) => readXlsxFirstSheet(job.file, onRow, { maxInflatedBytes: MAX_INFLATED_BYTES }),
      { batchSize: 1000 }
    )
    // totalRows counts data rows; the header is the one more row the reader handed over.
    return { rows: analysis.totalRows + 1, cells: 0, xmlBytes: 0 }
  }
}
