/**
 * XLS (BIFF8 in an OLE2 container, or a bare BIFF2-BIFF5 stream) through SheetJS. The published `xlsx` package has advisories for
 * crafted files (prototype pollution, ReDoS), so this module must only run in a
 * worker thread that is discarded after the file (see workers/xls-isolate.ts):
 * whatever a hostile file does to that isolate dies with it.
 */
import { readFile } from 'node:fs/promises'
import type * as SheetJSModule from 'xlsx'
import type { CellObject, WorkBook } from 'xlsx'
import { EngineError } from '../errors.js'
import { DATE1904_OFFSET_DAYS, DateCell, ErrorCell } from './cells.js'
import { chooseSheet, naming } from './choose-sheet.js'
import type { SheetVisibility } from './choose-sheet.js'
import { isBiffStream } from './detect.js'
import type { Cell } from './cells.js'
import type { ReadOptions, ReadSummary, RowVisitor } from './types.js'

type SheetJS = typeof SheetJSModule.default

/**
 * SheetJS is loaded on first use, not with this module: it costs about 30 MB of
 * memory, which XLSX reads (everything but the XLS isolate) never need.
 */
async function loadSheetJS (): Promise<SheetJS> {
  return (await import('xlsx')).default
}

export async function readXlsFirstSheet (path: string, onRow: RowVisitor, options: ReadOptions): Promise<ReadSummary> {
  const XLSX = await loadSheetJS()
  const bytes = await readFile(path)
  // A bare BIFF2-BIFF5 stream (detect.ts) has no container to check; SheetJS reads its records directly.
  if (!isBiffStream(bytes)) {
    const container = readContainer(XLSX, bytes)
    if (XLSX.CFB.find(container, 'EncryptedPackage') !== null || XLSX.CFB.find(container, 'EncryptionInfo') !== null) {
      throw new EngineError('SHEET_ENCRYPTED', 'The workbook is encrypted. Save it without a password and upload it again.')
    }
    if (XLSX.CFB.find(container, 'Workbook') === null && XLSX.CFB.find(container, 'Book') === null) {
      throw new EngineError('SHEET_UNSUPPORTED_FORMAT', 'Unsupported file format: the file is an OLE2 compound document (a Word document, say) but not an Excel workbook. The import accepts XLSX and XLS workbooks and CSV/TXT text files: save the ledger as .xlsx, .xls or .csv.')
    }
  }
  if (options.signal?.aborted === true) throw new EngineError('ABORTED', 'The read was cancelled.')
  let workbook = parseWorkbook(XLSX, bytes, 0)
  // SheetJS parses the cells of the sheets asked for only; the listing (with each sheet's
  // visibility) comes with any read, so a hidden first sheet costs one more parse.
  const listing = workbook.SheetNames.map((name, i) => ({ name, visibility: xlsVisibility(workbook.Workbook?.Sheets?.[i]?.Hidden) }))
  const index = chooseSheet(listing, options.sheet)
  if (index !== 0) workbook = parseWorkbook(XLSX, bytes, index)
  const sheetName = workbook.SheetNames[index]
  const sheet = sheetName === undefined ? undefined : workbook.Sheets[sheetName]
  if (sheetName === undefined || sheet === undefined) throw new EngineError('SHEET_NO_SHEETS', 'The workbook has no sheets.')
  const dateOffset = workbook.Workbook?.WBProps?.date1904 === true ? DATE1904_OFFSET_DAYS : 0
  const ref = sheet['!ref']
  options.onProgress?.(bytes.length, bytes.length)
  if (ref === undefined) return { format: 'xls', sheetName, rowsRead: 0 }
  const range = XLSX.utils.decode_range(ref)
  const visit = naming(sheetName, listing, onRow)
  let rowsRead = 0
  for (let r = range.s.r; r <= range.e.r; r++) {
    const cells: Cell[] = []
    for (let c = range.s.c; c <= range.e.c; c++) {
      const cell = sheet[XLSX.utils.encode_cell({ r, c })] as CellObject | undefined
      const value = cell === undefined ? null : toCell(XLSX, cell, dateOffset)
      if (value === null) continue
      while (cells.length < c) cells.push(null)
      cells.push(value)
    }
    if (cells.length === 0) continue
    rowsRead++
    if (visit(r + 1, cells) === false) break
  }
  return { format: 'xls', sheetName, rowsRead }
}

function parseWorkbook (XLSX: SheetJS, bytes: Buffer, sheet: number): WorkBook {
  try {
    return XLSX.read(bytes, { type: 'buffer', cellDates: false, cellNF: true, cellHTML: false, cellFormula: false, sheets: sheet })
  } catch (err) {
    const message = err instanceof Error ? err.message : ''
    if (/password|encrypt/i.test(message)) {
      throw new EngineError('SHEET_ENCRYPTED', 'The workbook is encrypted. Save it without a password and upload it again.')
    }
    throw new EngineError('SHEET_CORRUPT', 'The XLS workbook is damaged and cannot be read.', undefined, { cause: err })
  }
}

/** BoundSheet8's hsState ([MS-XLS] 2.4.28), as SheetJS reports it: 0 visible, 1 hidden, 2 very hidden. */
function xlsVisibility (hidden: number | undefined): SheetVisibility {
  return hidden === undefined || hidden === 0 ? 'visible' : hidden === 2 ? 'veryHidden' : 'hidden'
}

function readContainer (XLSX: SheetJS, bytes: Buffer): ReturnType<SheetJS['CFB']['read']> {
  try {
    return XLSX.CFB.read(bytes, { type: 'buffer' })
  } catch (err) {
    throw new EngineError('SHEET_CORRUPT', 'The file starts like an XLS (OLE2) workbook but its structure is damaged.', undefined, { cause: err })
  }
}

function toCell (XLSX: SheetJS, cell: CellObject, dateOffset: number): Cell {
  switch (cell.t) {
    case 'n': {
      const v = cell.v as number
      return typeof cell.z === 'string' && XLSX.SSF.is_date(cell.z) ? new DateCell(v + dateOffset) : v
    }
    case 's': return cell.v as string
    case 'b': return cell.v as boolean
    case 'e': return new ErrorCell(cell.w ?? XLSX.SSF.format('General', cell.v as number))
    case 'd': return new DateCell((cell.v as Date).getTime() / 86_400_000 + 25_569)
    default: return null
  }
}
