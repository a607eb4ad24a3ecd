/**
 * The error catalog shared by every area of razao.
 *
 * Codes are SCREAMING_SNAKE with an area prefix. A message may be reworded;
 * a code never changes meaning and is never reused. Core errors carry no HTTP
 * status: each service maps codes to its spec's statuses in server/<svc>/errors.ts.
 */
export const Code = {
  /** The upload is neither a ZIP (XLSX), an OLE2 compound file or BIFF stream (XLS), nor CSV/TXT text. */
  SHEET_UNSUPPORTED_FORMAT: 'SHEET_UNSUPPORTED_FORMAT',
  /** A CSV/TXT upload is not text in one encoding: UTF-8 broken by other bytes, UTF-8 inside Windows-1252 text, a cut character, or UTF-16. */
  CSV_ENCODING: 'CSV_ENCODING',
  /** A CSV/TXT upload's structure cannot be read: a quote never closed, a NUL byte, a line past the length bound, too many fields. */
  CSV_MALFORMED: 'CSV_MALFORMED',
  /** The workbook is password-protected (encrypted OOXML package or BIFF FILEPASS). */
  SHEET_ENCRYPTED: 'SHEET_ENCRYPTED',
  /** The workbook lists no worksheet, or its first sheet part is missing. */
  SHEET_NO_SHEETS: 'SHEET_NO_SHEETS',
  /** The file has the right signature but its structure cannot be read. */
  SHEET_CORRUPT: 'SHEET_CORRUPT',
  /** Declared or actual inflated size passes the configured limit. */
  XLSX_ZIP_BOMB: 'XLSX_ZIP_BOMB',
  /** An XML part carries a DTD or entity declarations, which we never expand. */
  XLSX_DTD_FORBIDDEN: 'XLSX_DTD_FORBIDDEN',
  /**
   * The ZIP (XLSX) archive reads differently depending on the reader: two entries whose
   * names differ only in case, or a central directory that disagrees with the local headers.
   */
  XLSX_AMBIGUOUS_ARCHIVE: 'XLSX_AMBIGUOUS_ARCHIVE',
  /** The first row lacks columns the ledger contract requires. */
  LEDGER_MISSING_COLUMNS: 'LEDGER_MISSING_COLUMNS',
  /** The sheet has no header row at all. */
  LEDGER_EMPTY: 'LEDGER_EMPTY',
  /** Debit and credit totals of the file differ; nothing is written. */
  LEDGER_UNBALANCED: 'LEDGER_UNBALANCED',
  /** Cells that cannot be stored as typed (bad amount, date or integer); nothing is written. */
  LEDGER_INVALID_CELLS: 'LEDGER_INVALID_CELLS',
  /** The same `id` on more than one row of the file: a movement's identity must be unique; nothing is written. */
  LEDGER_DUPLICATE_IDS: 'LEDGER_DUPLICATE_IDS',
  /** No company is registered under the given `codigo_dominio`. */
  COMPANY_NOT_FOUND: 'COMPANY_NOT_FOUND',
  /** The company exists but is inactive. */
  COMPANY_INACTIVE: 'COMPANY_INACTIVE',
  /** A company with that `codigo_dominio` already exists (registry maintenance). */
  COMPANY_EXISTS: 'COMPANY_EXISTS',
  /** Another active company already has that CNPJ (one active company per CNPJ). */
  COMPANY_CNPJ_EXISTS: 'COMPANY_CNPJ_EXISTS',
  /** The company has an active (VALIDADO) import of the same file; NORMAL mode refuses it. */
  IMPORT_DUPLICATE: 'IMPORT_DUPLICATE',
  /** Movements of the file (by their `id`) are already active in other imports of the company; NORMAL mode refuses it. */
  IMPORT_OVERLAP: 'IMPORT_OVERLAP',
  /** The rows stored differ from the file's count or totals; the load was rolled back. */
  IMPORT_VALIDATION_FAILED: 'IMPORT_VALIDATION_FAILED',
  /** The import was cancelled on request (DELETE /v1/imports/{id}, `razao imports cancel`, Ctrl-C); nothing of it was kept. */
  IMPORT_CANCELLED: 'IMPORT_CANCELLED',
  /** The instance or process running the import stopped before it finished; nothing of it was kept. */
  IMPORT_INTERRUPTED: 'IMPORT_INTERRUPTED',
  /** No import has this id. */
  IMPORT_NOT_FOUND: 'IMPORT_NOT_FOUND',
  /** The import has already ended (VALIDADO, SUBSTITUIDO, FALHOU or CANCELADO): there is nothing left to cancel. */
  IMPORT_FINISHED: 'IMPORT_FINISHED',
  /** The import was started by /v1/process, which ends with its request: it cannot be cancelled from elsewhere. */
  IMPORT_NOT_CANCELLABLE: 'IMPORT_NOT_CANCELLABLE',
  /** An Idempotency-Key already names an import of another file or other fields. */
  IMPORT_IDEMPOTENCY_MISMATCH: 'IMPORT_IDEMPOTENCY_MISMATCH',
  /** The import has no rejected cells on record (it was not refused for invalid cells). */
  IMPORT_NO_PROBLEMS: 'IMPORT_NO_PROBLEMS',
  /** The database cannot be reached or refused the work; nothing was committed. */
  DATABASE_UNAVAILABLE: 'DATABASE_UNAVAILABLE',
  /** A request parameter is outside its contract (batch size, mode, missing file). */
  REQUEST_INVALID: 'REQUEST_INVALID',
  /** The request is missing something it must carry (the file part, a required field). */
  REQUEST_INCOMPLETE: 'REQUEST_INCOMPLETE',
  /** The upload passed the configured size limit. */
  REQUEST_TOO_LARGE: 'REQUEST_TOO_LARGE',
  /** The request body stopped arriving: nothing came for longer than the service's body timeout. */
  REQUEST_TIMEOUT: 'REQUEST_TIMEOUT',
  /** The service is saturated: the work waited for a worker thread past the queue's bound; try again later. */
  SERVICE_BUSY: 'SERVICE_BUSY',
  /** The caller gave up (client abort, shutdown); nothing is to be reported to it. */
  ABORTED: 'ABORTED',
  /** The upload is not a PDF: its bytes do not start with the `%PDF-` header. */
  PDF_NOT_PDF: 'PDF_NOT_PDF',
  /** The PDF is encrypted (password to open); its text cannot be read. */
  PDF_ENCRYPTED: 'PDF_ENCRYPTED',
  /** The PDF's structure cannot be read (truncated, damaged). */
  PDF_CORRUPT: 'PDF_CORRUPT',
  /** The PDF has more pages than the extraction reads (a bound against hostile files). */
  PDF_TOO_MANY_PAGES: 'PDF_TOO_MANY_PAGES',
  /** Reading the PDF's text passed the per-document deadline and was abandoned. */
  PDF_TIMEOUT: 'PDF_TIMEOUT',
  /** A page's content (or all pages' together) inflates past the extraction's cap: a decompression bomb, refused before pdf.js reads it. */
  PDF_CONTENT_TOO_LARGE: 'PDF_CONTENT_TOO_LARGE',
  /** The PDF has no text layer (a scan): nothing can be read without OCR. A result, not a failure of ours. */
  PDF_NO_TEXT_LAYER: 'PDF_NO_TEXT_LAYER',
  /** No extraction plugin recognised the document (unknown type). */
  PLUGIN_NO_MATCH: 'PLUGIN_NO_MATCH',
  /** A plugin recognised the document below its minimum confidence; its parser did not run. */
  PLUGIN_BLOCKED: 'PLUGIN_BLOCKED',
  /** The plugin that recognised the document failed to parse it. */
  PLUGIN_PARSE_FAILED: 'PLUGIN_PARSE_FAILED',
  /** A plugin's consistency check failed on the extracted data (a warning: the data is still returned). */
  PLUGIN_CHECK_FAILED: 'PLUGIN_CHECK_FAILED',
  /** A warning: the document was read by OCR and no consistency check confirmed its digits, so its confidence is kept below HIGH. */
  OCR_UNVERIFIED: 'OCR_UNVERIFIED',
  /** The gateway knows no company with the given `empresa_codigo`. */
  GATEWAY_COMPANY_NOT_FOUND: 'GATEWAY_COMPANY_NOT_FOUND',
  /** The company exists but is deactivated: the gateway does not query for it. */
  GATEWAY_COMPANY_INACTIVE: 'GATEWAY_COMPANY_INACTIVE',
  /** The company has no certificate of its own and inherits none (or its head office has none). */
  GATEWAY_CERT_MISSING: 'GATEWAY_CERT_MISSING',
  /** The certificate is past its validity (or not valid yet). */
  GATEWAY_CERT_EXPIRED: 'GATEWAY_CERT_EXPIRED',
  /** The certificate's CNPJ root (first 8 characters) is not the company's. */
  GATEWAY_CERT_CNPJ_MISMATCH: 'GATEWAY_CERT_CNPJ_MISMATCH',
  /** The upload is not a PKCS#12 file this password opens, or it names no CNPJ (not an e-CNPJ). */
  GATEWAY_CERT_UNREADABLE: 'GATEWAY_CERT_UNREADABLE',
  /** A stored certificate was sealed under another master key (GATEWAY_MASTER_KEY changed), or its sealed bytes were altered. */
  GATEWAY_STORE_KEY_MISMATCH: 'GATEWAY_STORE_KEY_MISMATCH',
  /** No webhook endpoint has the given id (issue 35: the gateway's notifications). */
  WEBHOOK_NOT_FOUND: 'WEBHOOK_NOT_FOUND',
  /** Anything we did not expect. The message is never shown to clients. */
  INTERNAL: 'INTERNAL'
} as const
export type Code = keyof typeof Code

/** An expected failure with a catalog code; `details` must be plain, cloneable data. */
export class EngineError extends Error {
  constructor (readonly code: Code, message: string, readonly details?: Record<string, unknown>, opts?: ErrorOptions) {
    super(message, opts)
    this.name = 'EngineError'
  }
}

/** The shape an error takes when it crosses a thread (structured clone keeps only plain data). */
export interface WireError {
  code: Code
  message: string
  details?: Record<string, unknown>
}

/** True when `value` is an error carrying `code` (works across threads, unlike instanceof). */
export function hasCode (value: unknown, code: Code): boolean {
  return typeof value === 'object' && value !== null && (value as { code?: unknown }).code === code
}

/** Turns anything thrown into a WireError; unknown failures become INTERNAL with a neutral message. */
export function toWire (err: unknown): WireError {
  if (err instanceof EngineError) {
    return err.details === undefined
      ? { code: err.code, message: err.message }
      : { code: err.code, message: err.message, details: err.details }
  }
  if (isWireError(err)) return err
  return { code: 'INTERNAL', message: err instanceof Error ? err.message : String(err) }
}

/** Rebuilds an EngineError from its wire form; an unknown shape becomes INTERNAL. */
export function fromWire (wire: unknown): EngineError {
  if (isWireError(wire)) return new EngineError(wire.code, wire.message, wire.details)
  return new EngineError('INTERNAL', 'worker returned an unrecognised error')
}

function isWireError (value: unknown): value is WireError {
  if (typeof value !== 'object' || value === null) return false
  const v = value as { code?: unknown, message?: unknown }
  return typeof v.code === 'string' && v.code in Code && typeof v.message === 'string'
}
