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
  IMPORT_DUPLICATE: 500,
  IMPORT_VALIDATION_FAILED: 500,
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
  OCR_UNVERIFIED: 500
}
