import type { Cell } from './cells.js'
import type { InflateEngine } from './inflate.js'

/**
 * Called once per non-empty row, in sheet order. `rowNumber` is the row number a
 * spreadsheet user sees (1-based, gaps kept). `cells[0]` is column A; trailing
 * empty cells are not padded, skipped columns inside the row are `null`.
 * Return `false` to stop reading early (the read then resolves normally).
 */
export type RowVisitor = (rowNumber: number, cells: Cell[]) => void | boolean

export interface ReadOptions {
  /** Zip-bomb guard: the most bytes any one part may declare or actually inflate to. */
  maxInflatedBytes: number
  /** Cap on the inflated size of the metadata parts (shared strings, styles, workbook, relationships). */
  maxMetadataBytes?: number
  signal?: AbortSignal
  /** How the sheet is inflated; tests compare both, everything else keeps the default (inflate.ts). */
  inflateEngine?: InflateEngine
  /**
   * Backpressure for slow consumers: awaited after each inflated chunk when given
   * (the CLI's `rows` command waits here for stdout to drain).
   */
  afterChunk?: () => Promise<void> | undefined
  /** Progress over the inflated sheet XML (or the whole file for XLS and CSV), in bytes. */
  onProgress?: (doneBytes: number, totalBytes: number) => void
  /** The sheet to read, by name or 1-based position (choose-sheet.ts); default the first visible one. */
  sheet?: string | number | undefined
  /**
   * CSV only: the header names to look for, which choose the separator; a header holding
   * none of them is refused as not a ledger (core/csv/read-csv.ts).
   */
  headerColumns?: readonly string[]
}

export interface ReadSummary {
  format: 'xlsx' | 'xls' | 'csv'
  sheetName: string
  /** Rows handed to the visitor. */
  rowsRead: number
  /**
   * XLSX: shared-string items decoded, and bytes of the table inflated. Both follow what
   * the sheet names, not the table's size (shared-strings.ts).
   */
  sharedStrings?: { decoded: number, inflatedBytes: number }
}
