/**
 * The extraction service's answers in the spec's words (spec 3 §2 B), shared by the
 * routes and `razao extract`: the single-extraction response of a result, and the same
 * shape for a file that could not be extracted, with its HTTP status.
 */
import type { ExtractionResult } from '../../core/extraction/index.js'
import type { Code } from '../../core/errors.js'
import { EXTRACT_STATUSES, FRAMEWORK_ERRORS } from './errors.js'

/** The single-extraction response of a request that could not be extracted at all. */
export function failure (requestId: string, code: string, message: string): Record<string, unknown> {
  return { success: false, documentType: null, pages: 0, data: null, warnings: [], errors: [{ code, message }], requestId }
}

/** The spec's single-extraction response; `evidence` (beyond the spec) only when asked for. */
export function toResponse (result: ExtractionResult, requestId: string, evidence: boolean): Record<string, unknown> {
  const body: Record<string, unknown> = {
    success: result.success,
    documentType: result.documentType,
    pages: result.pages,
    data: result.data,
    warnings: result.warnings,
    errors: result.errors,
    requestId,
    engine: result.engine
  }
  if (evidence) {
    body.evidence = result.evidence
    body.candidates = result.candidates
  }
  return body
}

export interface ErrorAnswer {
  status: number
  /** The public code in the body. */
  code: string
  body: Record<string, unknown>
  /** A 500: the body says only which request id to quote; `logCode` is for the log. */
  internal: boolean
  logCode: string
}

/**
 * Catalog codes by the service's table, Fastify's by FRAMEWORK_ERRORS, other 4xx as
 * REQUEST_INVALID; anything else a 500 whose message names no cause (no stack, no path).
 */
export function errorBody (error: unknown, requestId: string): ErrorAnswer {
  const e = error as { code?: unknown, message?: unknown, statusCode?: unknown }
  const code = typeof e.code === 'string' ? e.code : ''
  const answer = (status: number, publicCode: string, message: string): ErrorAnswer =>
    ({ status, code: publicCode, body: failure(requestId, publicCode, message), internal: false, logCode: publicCode })
  // Every status but 500 is an answer in the catalog's words (a 503 SERVICE_BUSY among them).
  if (code in EXTRACT_STATUSES && EXTRACT_STATUSES[code as Code] !== 500) return answer(EXTRACT_STATUSES[code as Code], code, String(e.message))
  const framework = FRAMEWORK_ERRORS[code]
  if (framework !== undefined) return answer(framework.status, framework.code, framework.message)
  if (!(code in EXTRACT_STATUSES) && typeof e.statusCode === 'number' && e.statusCode >= 400 && e.statusCode < 500) return answer(e.statusCode, 'REQUEST_INVALID', String(e.message))
  return { ...answer(500, 'INTERNAL', `Internal error; quote requestId ${requestId} when reporting it.`), internal: true, logCode: code === '' ? 'INTERNAL' : code }
}
