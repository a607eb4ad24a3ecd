import type { StatusTable } from '../http-errors.js'

/** HTTP statuses of the import service (spec 1, section 7). */
export const IMPORT_STATUSES: StatusTable = {
  SHEET_UNSUPPORTED_FORMAT: 400,
  SHEET_ENCRYPTED: 400,
  SHEET_NO_SHEETS: 400,
  SHEET_CORRUPT: 400,
  XLSX_ZIP_BOMB: 400,
  XLSX_DTD_FORBIDDEN: 400,
  LEDGER_MISSING_COLUMNS: 400,
  LEDGER_EMPTY: 400,
  REQUEST_INVALID: 400,
  REQUEST_INCOMPLETE: 422,
  REQUEST_TOO_LARGE: 413,
  // The client has gone; the status is only for our logs.
  ABORTED: 499,
  INTERNAL: 500
}
