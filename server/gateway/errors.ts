/**
 * HTTP statuses of the gateway (spec 3 §7 A): 400 invalid or missing fields, 401 key
 * (answered by the app's hook), 404 route or company, 422 incompatible certificate or
 * refused request, 503 service unavailable. The table has no 409, so a registration
 * the registry refuses (a codigo_dominio already taken) is a refused request: 422.
 */
import type { StatusTable } from '../http-errors.js'

export const GATEWAY_STATUSES: StatusTable = {
  REQUEST_INVALID: 400,
  REQUEST_INCOMPLETE: 400,
  REQUEST_TOO_LARGE: 413,
  REQUEST_TIMEOUT: 408,
  SERVICE_BUSY: 503,
  COMPANY_EXISTS: 422,
  COMPANY_CNPJ_EXISTS: 409,
  COMPANY_NOT_FOUND: 404,
  COMPANY_INACTIVE: 404,
  GATEWAY_COMPANY_NOT_FOUND: 404,
  GATEWAY_COMPANY_INACTIVE: 404,
  GATEWAY_CERT_MISSING: 422,
  GATEWAY_CERT_EXPIRED: 422,
  GATEWAY_CERT_CNPJ_MISMATCH: 422,
  GATEWAY_CERT_UNREADABLE: 422,
  GATEWAY_STORE_KEY_MISMATCH: 503,
  DATABASE_UNAVAILABLE: 503,
  // The client has gone; the status is only for our logs.
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
  PDF_NOT_PDF: 500,
  PDF_ENCRYPTED: 500,
  PDF_CORRUPT: 500,
  PDF_TOO_MANY_PAGES: 500,
  PDF_CONTENT_TOO_LARGE: 500,
  PDF_TIMEOUT: 500,
  PDF_NO_TEXT_LAYER: 500,
  PLUGIN_NO_MATCH: 500,
  PLUGIN_BLOCKED: 500,
  PLUGIN_PARSE_FAILED: 500,
  PLUGIN_CHECK_FAILED: 500,
  OCR_UNVERIFIED: 500,
  WEBHOOK_NOT_FOUND: 404
}

/** The 401 of the query routes: the header, and where the operational key comes from (server/gateway/start.ts). */
export const GATEWAY_KEY_HELP = 'Invalid or missing API key. Send the gateway\'s operational key in the X-API-Key header: the value of GATEWAY_API_KEY where the gateway runs or, when that was not set, the key printed once when the gateway first started (only its hash is kept; a lost key is replaced with POST /admin/api-key/rotate and the admin token).'
