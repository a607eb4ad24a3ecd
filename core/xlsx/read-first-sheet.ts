import { readCsv } from '../csv/index.js'
import { detectFormat } from './detect.js'
import type { SpreadsheetFormat } from './detect.js'
import { readXlsFirstSheet } from './read-xls.js'
import { readXlsxFirstSheet } from './read-xlsx.js'
import type { ReadOptions, ReadSummary, RowVisitor } from './types.js'

/**
 * Reads the first sheet of either format, decided by the file's bytes. For XLS it
 * runs SheetJS in the calling thread, so call it only where that thread is thrown
 * away afterwards: the one-shot XLS worker (workers/xls-isolate.ts), or a test.
 */
export async function readFirstSheet (path: string, onRow: RowVisitor, options: ReadOptions): Promise<ReadSummary> {
  return await sheetReader(await detectFormat(path))(path, onRow, options)
}

export type SheetReader = (path: string, onRow: RowVisitor, options: ReadOptions) => Promise<ReadSummary>

/** The reader of a format; a CSV's rows are its records, and its cells their text. */
export function sheetReader (format: SpreadsheetFormat): SheetReader {
  switch (format) {
    case 'xlsx': return readXlsxFirstSheet
    case 'xls': return readXlsFirstSheet
    case 'csv': return async (path, onRow, options) => await readCsv(path, onRow, options)
  }
}
