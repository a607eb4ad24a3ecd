import { open } from 'node:fs/promises'
import { EngineError } from '../errors.js'

export type SpreadsheetFormat = 'xlsx' | 'xls'

/** Local file header signature, "PK\x03\x04" (APPNOTE 4.3.7). */
const ZIP_MAGIC = Buffer.from([0x50, 0x4b, 0x03, 0x04])
/** Compound File Binary header signature ([MS-CFB] 2.2). */
const OLE2_MAGIC = Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1])

/**
 * Decides the format from the file's first bytes only. Names and content types
 * are whatever the client's software put there and are never trusted.
 */
export async function detectFormat (path: string): Promise<SpreadsheetFormat> {
  const handle = await open(path, 'r')
  try {
    const head = Buffer.alloc(8)
    const { bytesRead } = await handle.read(head, 0, 8, 0)
    if (bytesRead >= 4 && head.subarray(0, 4).equals(ZIP_MAGIC)) return 'xlsx'
    if (bytesRead === 8 && head.equals(OLE2_MAGIC)) return 'xls'
  } finally {
    await handle.close()
  }
  throw new EngineError('SHEET_UNSUPPORTED_FORMAT', 'Unsupported file format: the file is neither an XLSX nor an XLS workbook. Upload the ledger saved as .xlsx or .xls.')
}
