/**
 * CSV/TXT ledgers: detection from the first bytes, the encoding settled and held while
 * streaming, the separator chosen from the header, and records streamed to a visitor
 * with the cells as text (docs/import.md, "CSV and TXT ledgers").
 */
export { readCsv, readCsvChunks, DEFAULT_CSV_LIMITS } from './read-csv.js'
export type { CsvLimits, CsvReadOptions, CsvReadSummary } from './read-csv.js'
export type { CsvField, RecordVisitor } from './parse.js'
export { sniffText } from './text.js'
export type { CsvEncoding, TextKind } from './text.js'
export { DELIMITERS } from './header.js'
