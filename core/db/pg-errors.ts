/** PostgreSQL SQLSTATE checks, on the `code` node-postgres copies from the server's error. */
const UNIQUE_VIOLATION = '23505'

export function sqlState (err: unknown): string | undefined {
  const code = typeof err === 'object' && err !== null ? (err as { code?: unknown }).code : undefined
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? code : undefined
}

export function isUniqueViolation (err: unknown, constraint?: string): boolean {
  if (sqlState(err) !== UNIQUE_VIOLATION) return false
  return constraint === undefined || (err as { constraint?: unknown }).constraint === constraint
}

/** Errors of the connection itself (refused, reset, terminated), as opposed to a refused statement. */
export function isConnectionError (err: unknown): boolean {
  const code = typeof err === 'object' && err !== null ? (err as { code?: unknown }).code : undefined
  if (typeof code === 'string' && ['ECONNREFUSED', 'ECONNRESET', 'ENOTFOUND', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH'].includes(code)) return true
  const state = sqlState(err)
  // Class 08: connection exception; 57P01..03: admin shutdown, crash shutdown, cannot connect now.
  if (state !== undefined && (state.startsWith('08') || ['57P01', '57P02', '57P03'].includes(state))) return true
  return err instanceof Error && /Connection terminated|connection.*closed/i.test(err.message)
}
