import { detectFormat } from './detect.js'
import { readXlsFirstSheet } from './read-xls.js'
import { readXlsxFirstSheet } from './read-xlsx.js'
import type { ReadOptions, ReadSummary, RowVisitor } from './types.js'

/**
 * Reads the first sheet of either format, decided by the file's bytes. For XLS it
 * runs SheetJS in the calling thread, so call it only where that thread is thrown
 * away afterwards: the one-shot XLS worker (workers/xls-isolate.ts), or a test.
 */
export async function readFirstSheet (path: string, onRow: RowVisitor, options: ReadOptions): Promise<ReadSummary> {
  const format = await detectFormat(path)
  return format === 'xlsx'
    ? await readXlsxFirstSheet(path, onRow, options)
    : await readXlsFirstSheet(path, onRow, options)
}
