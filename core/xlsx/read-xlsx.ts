import type { SharedStrings } from './shared-strings.js'
import { SheetScanner } from './sheet-scanner.js'
import type { ReadOptions, ReadSummary, RowVisitor } from './types.js'
import { naming } from './choose-sheet.js'
import { loadWorkbookParts } from './workbook.js'
import { ZipArchive } from './zip.js'

/** Default cap on the inflated size of the metadata parts (shared strings, styles, workbook, relationships). */
export const DEFAULT_MAX_METADATA_BYTES = 256 * 1024 * 1024

/**
 * Streams the first visible worksheet (in workbook order, see choose-sheet.ts) of an
 * XLSX file to `onRow`. Memory stays flat in the number of rows; shared strings are
 * decoded only as the sheet names them (shared-strings.ts).
 */
export async function readXlsxFirstSheet (path: string, onRow: RowVisitor, options: ReadOptions): Promise<ReadSummary> {
  const zip = await ZipArchive.open(path, { maxInflatedBytes: options.maxInflatedBytes, signal: options.signal, engine: options.inflateEngine })
  let strings: SharedStrings | undefined
  try {
    const parts = await loadWorkbookParts(zip, options.maxMetadataBytes ?? DEFAULT_MAX_METADATA_BYTES, options.sheet)
    strings = parts.sharedStrings
    const scanner = new SheetScanner({
      sharedStrings: strings,
      dateStyles: parts.dateStyles,
      date1904: parts.date1904,
      onRow: naming(parts.sheetName, parts.sheets, onRow)
    })
    const total = zip.sizeOf(parts.sheetPart)
    let done = 0
    const stream = zip.streamPart(parts.sheetPart)
    for await (const chunk of stream) {
      done += chunk.length
      strings.allowFor(done)
      scanner.push(chunk)
      // The chunk was copied into the scanner: the sheet's inflater may wait here.
      while (scanner.wantedString >= 0) {
        await strings.fill(scanner.wantedString)
        scanner.resume()
      }
      options.onProgress?.(done, total)
      const wait = options.afterChunk?.()
      if (wait !== undefined) await wait
      // Leaving the loop early runs the generator's finally, which closes the file.
      if (scanner.done) break
    }
    scanner.end()
    while (scanner.wantedString >= 0) {
      await strings.fill(scanner.wantedString)
      scanner.resume()
    }
    return { format: 'xlsx', sheetName: parts.sheetName, rowsRead: scanner.rowsRead, sharedStrings: strings.usage }
  } finally {
    await strings?.close()
    zip.close()
  }
}
