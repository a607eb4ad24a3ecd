import { SheetScanner } from './sheet-scanner.js'
import type { ReadOptions, ReadSummary, RowVisitor } from './types.js'
import { loadWorkbookParts } from './workbook.js'
import { ZipArchive } from './zip.js'

/** Default cap for parts held whole in memory (shared strings, styles, workbook). */
export const DEFAULT_MAX_METADATA_BYTES = 256 * 1024 * 1024

/**
 * Streams the first worksheet (in workbook order) of an XLSX file to `onRow`.
 * Memory stays flat in the number of rows: only the shared strings are held whole.
 */
export async function readXlsxFirstSheet (path: string, onRow: RowVisitor, options: ReadOptions): Promise<ReadSummary> {
  const zip = await ZipArchive.open(path, { maxInflatedBytes: options.maxInflatedBytes, signal: options.signal, engine: options.inflateEngine })
  try {
    const parts = await loadWorkbookParts(zip, options.maxMetadataBytes ?? DEFAULT_MAX_METADATA_BYTES)
    const scanner = new SheetScanner({
      sharedStrings: parts.sharedStrings,
      dateStyles: parts.dateStyles,
      date1904: parts.date1904,
      onRow
    })
    const total = zip.sizeOf(parts.sheetPart)
    let done = 0
    const stream = zip.streamPart(parts.sheetPart)
    for await (const chunk of stream) {
      scanner.push(chunk)
      done += chunk.length
      options.onProgress?.(done, total)
      const wait = options.afterChunk?.()
      if (wait !== undefined) await wait
      // Leaving the loop early runs the generator's finally, which closes the file.
      if (scanner.done) break
    }
    scanner.end()
    return { format: 'xlsx', sheetName: parts.sheetName, rowsRead: scanner.rowsRead }
  } finally {
    zip.close()
  }
}
