/**
 * Spreadsheet reading: the first sheet of an XLSX or XLS file as rows of cells.
 * XLSX is streamed by our own scanner; XLS goes through SheetJS and must be read
 * in a throw-away worker (workers/xls-isolate.ts), never in a shared thread.
 */
export { DateCell, ErrorCell, UncomputedFormula, serialToISO, dateToSerial, EXCEL_MAX_CELL_CHARS } from './cells.js'
export type { Cell } from './cells.js'
export type { ReadOptions, ReadSummary, RowVisitor } from './types.js'
export type { InflateEngine } from './inflate.js'
export { defaultInflateEngine } from './inflate.js'
export { detectFormat } from './detect.js'
export type { SpreadsheetFormat } from './detect.js'
export { readXlsxFirstSheet, DEFAULT_MAX_METADATA_BYTES } from './read-xlsx.js'
export { readXlsFirstSheet } from './read-xls.js'
export { isDateFormatCode, isBuiltinDateFormat } from './number-format.js'
export { readFirstSheet, sheetReader } from './read-first-sheet.js'
export type { SheetReader } from './read-first-sheet.js'
