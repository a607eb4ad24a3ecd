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
