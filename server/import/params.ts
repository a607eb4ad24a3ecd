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

/** `limit` of GET /v1/imports: 1..500, default 50. */
export const IMPORT_LIST_LIMIT_DEFAULT = 50
export const IMPORT_LIST_LIMIT_MAX = 500

export function parseListLimit (raw: unknown): number {
  if (raw === undefined || raw === '') return IMPORT_LIST_LIMIT_DEFAULT
  const text = typeof raw === 'string' ? raw.trim() : ''
  const n = Number(text)
  if (!/^\d+$/.test(text) || n < 1 || n > IMPORT_LIST_LIMIT_MAX) {
    throw new EngineError('REQUEST_INVALID', `limit must be a whole number from 1 to ${IMPORT_LIST_LIMIT_MAX}${typeof raw === 'string' ? `; got "${raw.slice(0, 40)}"` : ', given once'}.`)
  }
  return n
}

/** `status` of GET /v1/imports: one of the statuses, or absent. */
export function parseImportStatus<S extends string> (raw: unknown, statuses: readonly S[]): S | undefined {
  if (raw === undefined || raw === '') return undefined
  if (typeof raw !== 'string' || !(statuses as readonly string[]).includes(raw.trim())) {
    throw new EngineError('REQUEST_INVALID', `status must be one of ${statuses.join(', ')}${typeof raw === 'string' ? `; got "${raw.slice(0, 40)}"` : ', given once'}.`)
  }
  return raw.trim() as S
}

/** A query parameter given once, as text (a repeated one is refused rather than guessed). */
export function singleQueryValue (name: string, raw: unknown): string | undefined {
  if (raw === undefined) return undefined
  if (typeof raw !== 'string') throw new EngineError('REQUEST_INVALID', `${name} must be given once.`)
  return raw
}

export const IDEMPOTENCY_KEY_MAX = 255

/**
 * The Idempotency-Key header (draft-ietf-httpapi-idempotency-key-header): a Structured
 * Field String, `"..."` with `\"` and `\\` escapes; a bare token (what many clients send)
 * is taken as it is. Printable ASCII, 1 to 255 characters; absent: undefined.
 */
export function parseIdempotencyKey (raw: string | string[] | undefined): string | undefined {
  if (raw === undefined) return undefined
  const bad = (why: string): EngineError => new EngineError('REQUEST_INVALID', `The Idempotency-Key header ${why}: send one key of 1 to ${IDEMPOTENCY_KEY_MAX} printable ASCII characters, best a UUID, as a quoted string ("...").`)
  if (Array.isArray(raw)) throw bad('is given more than once')
  const text = raw.trim()
  let key: string
  if (text.startsWith('"')) {
    const match = /^"((?:[\x20\x21\x23-\x5B\x5D-\x7E]|\\["\\])*)"$/.exec(text)
    if (match === null) throw bad('is not a valid quoted string')
    key = match[1]!.replace(/\\(["\\])/g, '$1')
  } else {
    if (!/^[\x21-\x7E]+$/.test(text)) throw bad('holds characters a key cannot have')
    key = text
  }
  if (key.length === 0 || key.length > IDEMPOTENCY_KEY_MAX) throw bad(key.length === 0 ? 'is empty' : 'is too long')
  return key
}
