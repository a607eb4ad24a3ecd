import { EngineError } from '../../core/errors.js'

export const BATCH_SIZE_MIN = 100
export const BATCH_SIZE_MAX = 10_000
export const BATCH_SIZE_DEFAULT = 1000

/** `batch_size` form field (spec 1, section 8): 100..10000, default 1000. */
export function parseBatchSize (raw: string | undefined): number {
  if (raw === undefined || raw.trim() === '') return BATCH_SIZE_DEFAULT
  const text = raw.trim()
  const n = Number(text)
  if (!/^\d+$/.test(text) || n < BATCH_SIZE_MIN || n > BATCH_SIZE_MAX) {
    throw new EngineError('REQUEST_INVALID', `batch_size must be a whole number from ${BATCH_SIZE_MIN} to ${BATCH_SIZE_MAX}; got "${text.slice(0, 40)}".`)
  }
  return n
}

export const IMPORT_MODES = ['NORMAL', 'REIMPORTAR'] as const
export type ImportMode = typeof IMPORT_MODES[number]

/** `modo_importacao` form field: NORMAL (default) or REIMPORTAR. */
export function parseImportMode (raw: string | undefined): ImportMode {
  if (raw === undefined || raw.trim() === '') return 'NORMAL'
  const text = raw.trim()
  if (!(IMPORT_MODES as readonly string[]).includes(text)) {
    throw new EngineError('REQUEST_INVALID', `modo_importacao must be NORMAL or REIMPORTAR; got "${text.slice(0, 40)}".`)
  }
  return text as ImportMode
}

/** `codigo_dominio`: required on /v1/process, optional on /v1/analyze (undefined when absent). */
export function parseCodigoDominio (raw: string | undefined, required: boolean): string | undefined {
  const code = (raw ?? '').trim()
  if (code === '') {
    if (required) throw new EngineError('REQUEST_INCOMPLETE', 'The request has no codigo_dominio: send the company code in that multipart field.')
    return undefined
  }
  if (code.length > 64) throw new EngineError('REQUEST_INVALID', 'codigo_dominio must be at most 64 characters.')
  // PostgreSQL text cannot hold U+0000: refused here rather than failing in the database (a 500).
  if (code.includes('\u0000')) throw new EngineError('REQUEST_INVALID', 'codigo_dominio holds a NUL character.')
  return code
}

/**
 * `sheet` (beyond the spec): which sheet to read, by name or by 1-based position; absent or
 * blank, the first visible sheet. Digits only mean a position: a sheet named "2024" is
 * chosen by its position.
 */
export function parseSheet (raw: string | undefined): string | number | undefined {
  if (raw === undefined || raw.trim() === '') return undefined
  const text = raw.trim()
  if (/^\d{1,4}$/.test(text)) {
    const n = Number(text)
    if (n < 1) throw new EngineError('REQUEST_INVALID', 'sheet counts from 1 (the first tab).')
    return n
  }
  if (text.length > 200 || text.includes('\u0000')) throw new EngineError('REQUEST_INVALID', 'sheet must be a sheet name of at most 200 characters, or its position from 1.')
  return raw
}
