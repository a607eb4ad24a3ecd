/**
 * HTTP statuses of the extraction service. Spec 3 §7 B names no codes or statuses; ours:
 * the file is wrong (not a PDF by its bytes: 415; unreadable, encrypted, too many pages,
 * too slow: 422), the request is wrong (400), too big (413). What the engine decides about
 * a readable PDF (unknown type, blocked parser, no text layer) is a 200 with
 * `success: false` and the reason in `errors`.
 */
import type { StatusTable } from '../http-errors.js'

export const EXTRACT_STATUSES: StatusTable = {
  PDF_NOT_PDF: 415,
  PDF_ENCRYPTED: 422,
  PDF_CORRUPT: 422,
  PDF_TOO_MANY_PAGES: 422,
  PDF_CONTENT_TOO_LARGE: 422,
  PDF_TIMEOUT: 422,
  PDF_NO_TEXT_LAYER: 200,
  PLUGIN_NO_MATCH: 200,
  PLUGIN_BLOCKED: 200,
  PLUGIN_PARSE_FAILED: 200,
  PLUGIN_CHECK_FAILED: 200,
  OCR_UNVERIFIED: 200,
  WEBHOOK_NOT_FOUND: 500,
  REQUEST_INVALID: 400,
  REQUEST_INCOMPLETE: 400,
  REQUEST_TOO_LARGE: 413,
  REQUEST_TIMEOUT: 408,
  SERVICE_BUSY: 503,
  ABORTED: 499,
  INTERNAL: 500,
  // Codes of other services that never reach this one; the table is total.
  SHEET_UNSUPPORTED_FORMAT: 500,
  CSV_ENCODING: 500,
  CSV_MALFORMED: 500,
  SHEET_ENCRYPTED: 500,
  SHEET_NO_SHEETS: 500,
  SHEET_CORRUPT: 500,
  XLSX_ZIP_BOMB: 500,
  XLSX_DTD_FORBIDDEN: 500,
  XLSX_AMBIGUOUS_ARCHIVE: 500,
  LEDGER_MISSING_COLUMNS: 500,
  LEDGER_EMPTY: 500,
  LEDGER_UNBALANCED: 500,
  LEDGER_INVALID_CELLS: 500,
  LEDGER_DUPLICATE_IDS: 500,
  COMPANY_NOT_FOUND: 500,
  COMPANY_INACTIVE: 500,
  COMPANY_EXISTS: 500,
  COMPANY_CNPJ_EXISTS: 500,
  IMPORT_DUPLICATE: 500,
  IMPORT_OVERLAP: 500,
  IMPORT_VALIDATION_FAILED: 500,
  IMPORT_CANCELLED: 500,
  IMPORT_INTERRUPTED: 500,
  IMPORT_NOT_FOUND: 500,
  IMPORT_FINISHED: 500,
  IMPORT_NOT_CANCELLABLE: 500,
  IMPORT_IDEMPOTENCY_MISMATCH: 500,
  IMPORT_NO_PROBLEMS: 500,
  DATABASE_UNAVAILABLE: 500,
  GATEWAY_COMPANY_NOT_FOUND: 500,
  GATEWAY_COMPANY_INACTIVE: 500,
  GATEWAY_CERT_MISSING: 500,
  GATEWAY_CERT_EXPIRED: 500,
  GATEWAY_CERT_CNPJ_MISMATCH: 500,
  GATEWAY_CERT_UNREADABLE: 500,
  GATEWAY_STORE_KEY_MISMATCH: 500
}

/** Fastify / multipart errors answered with our words. */
export const FRAMEWORK_ERRORS: Record<string, { status: number, code: string, message: string }> = {
  FST_REQ_FILE_TOO_LARGE: { status: 413, code: 'REQUEST_TOO_LARGE', message: 'The file is larger than this service accepts (EXTRACT_MAX_FILE_BYTES).' },
  FST_FILES_LIMIT: { status: 400, code: 'REQUEST_INVALID', message: 'Too many files in the request.' },
  FST_PARTS_LIMIT: { status: 400, code: 'REQUEST_INVALID', message: 'The request has too many multipart parts.' },
  FST_FIELDS_LIMIT: { status: 400, code: 'REQUEST_INVALID', message: 'The request has too many form fields.' },
  FST_INVALID_MULTIPART_CONTENT_TYPE: { status: 400, code: 'REQUEST_INVALID', message: 'The request body must be multipart/form-data.' },
  FST_MP_PREMATURE_CLOSE: { status: 400, code: 'REQUEST_INVALID', message: 'The upload ended before the multipart body was complete.' },
  FST_PROTO_VIOLATION: { status: 400, code: 'REQUEST_INVALID', message: 'A form field name is not allowed.' },
  FST_ERR_CTP_INVALID_MEDIA_TYPE: { status: 415, code: 'REQUEST_INVALID', message: 'Send the PDF as multipart/form-data in the field "file".' }
}
