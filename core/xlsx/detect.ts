import { open } from 'node:fs/promises'
import { sniffText } from '../csv/index.js'
import { EngineError } from '../errors.js'

export type SpreadsheetFormat = 'xlsx' | 'xls' | 'csv'

/** Bytes judged to tell text from binary (docs/import.md, "CSV and TXT ledgers"). */
const TEXT_PROBE_BYTES = 1024

/** Local file header signature, "PK\x03\x04" (APPNOTE 4.3.7). */
const ZIP_MAGIC = Buffer.from([0x50, 0x4b, 0x03, 0x04])
/** Compound File Binary header signature ([MS-CFB] 2.2). */
const OLE2_MAGIC = Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1])

/** What the import reads, said in every refusal of a format (docs/import.md). */
export const ACCEPTED_FORMATS = 'The import accepts XLSX and XLS workbooks and CSV/TXT text files'

/** `mimetype`, the first entry of every OpenDocument package, stored uncompressed (ODF 1.2 part 3, 3.3). */
const ODF_MIMETYPE_ENTRY = 'mimetype'
/** "%PDF-": a PDF file's header (ISO 32000-1, 7.5.2). */
const PDF_MAGIC = Buffer.from('%PDF-', 'latin1')

/**
 * The refusal of an OpenDocument package, from the text of its `mimetype` entry: found at
 * the head of the file (where ODF puts it) or, for writers that put it elsewhere, by the
 * workbook reader once no workbook part was found.
 */
export function openDocumentRefusal (mimetype: string): EngineError {
  if (mimetype.includes('opendocument.spreadsheet')) {
    return new EngineError('SHEET_UNSUPPORTED_FORMAT', `Unsupported file format: the file is an OpenDocument spreadsheet (.ods), which this service does not read. ${ACCEPTED_FORMATS}: open it in LibreOffice Calc and save it as .xlsx (File > Save As, Excel 2007-365) or as .csv.`)
  }
  return new EngineError('SHEET_UNSUPPORTED_FORMAT', `Unsupported file format: the file is an OpenDocument file (.odt, .odp, …), not a spreadsheet. ${ACCEPTED_FORMATS}.`)
}

/** Formats a person sends by mistake, named in the refusal with what to do instead. */
function refuseKnownOther (head: Buffer): void {
  if (head.subarray(0, 4).equals(ZIP_MAGIC) && head.length >= 38 && head.toString('latin1', 30, 38) === ODF_MIMETYPE_ENTRY) {
    throw openDocumentRefusal(head.toString('latin1', 38, 120))
  }
  if (head.subarray(0, 5).equals(PDF_MAGIC)) {
    throw new EngineError('SHEET_UNSUPPORTED_FORMAT', `Unsupported file format: the file is a PDF, not a spreadsheet. ${ACCEPTED_FORMATS}; PDFs go to the extraction service (POST /api/v1/pdf/extract, razao extract).`)
  }
}

/**
 * Decides the format from the file's first bytes only: an XLSX is a ZIP archive; an XLS
 * is an OLE2 compound file or, from Excel 2.x-4.0 and old exporters, a bare BIFF stream;
 * anything else whose first KiB is text (no NUL, no control bytes but tab and line
 * breaks) is read as CSV/TXT, and the CSV reader then looks for the ledger's header.
 * Names and content types are whatever the client's software put there and are never trusted.
 */
export async function detectFormat (path: string): Promise<SpreadsheetFormat> {
  const handle = await open(path, 'r')
  let text: ReturnType<typeof sniffText>
  try {
    const head = Buffer.alloc(TEXT_PROBE_BYTES)
    const { bytesRead } = await handle.read(head, 0, TEXT_PROBE_BYTES, 0)
    const first = head.subarray(0, 8)
    refuseKnownOther(head.subarray(0, bytesRead))
    if (bytesRead >= 4 && first.subarray(0, 4).equals(ZIP_MAGIC)) return 'xlsx'
    if (bytesRead >= 8 && first.equals(OLE2_MAGIC)) return 'xls'
    if (bytesRead >= 8 && isBiffStream(first)) return 'xls'
    text = sniffText(head.subarray(0, bytesRead))
  } finally {
    await handle.close()
  }
  if (text === 'text' || text === 'utf-16') return 'csv'
  if (text === 'markup') {
    throw new EngineError('SHEET_UNSUPPORTED_FORMAT', `Unsupported file format: the file is an HTML or XML document (some systems save a web page or an Excel 2003 XML file under an .xls name). ${ACCEPTED_FORMATS}: open it in Excel or LibreOffice and save it as .xlsx or .csv.`)
  }
  throw new EngineError('SHEET_UNSUPPORTED_FORMAT', `Unsupported file format: the file is neither an XLSX nor an XLS workbook, nor a CSV/TXT text file. ${ACCEPTED_FORMATS}: save the ledger as .xlsx, .xls or .csv.`)
}

/** BOF record ids of BIFF2, BIFF3, BIFF4 and BIFF5-8 ([MS-XLS] 2.4.21; OpenOffice's "Excel File Format", 5.8). */
const BOF_RECORD_IDS = new Set([0x0009, 0x0209, 0x0409, 0x0809])
/** Sheet types a BOF may open with: workbook globals, worksheet, BIFF4 workbook, chart, macro sheet. */
const BOF_SHEET_TYPES = new Set([0x0005, 0x0010, 0x0100, 0x0020, 0x0040])

/**
 * A bare BIFF record stream, as Excel 2.x-4.0 and older export components write it
 * (no OLE2 container around the workbook): it opens with a BOF record, whose
 * payload (4 to 20 bytes) starts with the BIFF version and the sheet type.
 */
export function isBiffStream (head: Buffer): boolean {
  if (head.length < 8) return false
  const length = head.readUInt16LE(2)
  return BOF_RECORD_IDS.has(head.readUInt16LE(0)) && length >= 4 && length <= 20 && BOF_SHEET_TYPES.has(head.readUInt16LE(6))
}
