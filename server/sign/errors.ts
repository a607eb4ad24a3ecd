/**
 * Spec 2's public error codes and statuses, and the one envelope every error answer
 * uses. The envelope is the enriched one (success, message, requestId, data null,
 * errors[], warnings[]) and also carries the earlier shape's code, timestamp and path,
 * so clients of either release read it.
 */
import type { SignCode } from '../../core/sign/index.js'
import type { Code } from '../../core/errors.js'

export type PublicCode =
  | 'UNAUTHORIZED' | 'VALIDATION_ERROR' | 'INVALID_JSON' | 'INVALID_REQUEST' | 'INVALID_PDF' | 'FILE_TOO_LARGE'
  | 'TIMESTAMP_ERROR' | 'INTERNAL_ERROR' | 'INVALID_CERTIFICATE' | 'UNSUPPORTED_MEDIA_TYPE' | 'RESOURCE_NOT_FOUND'
  | 'REVOCATION_ERROR'
  // Spec 2 §7: a multipart upload that cannot be read (no file part, a second file, a malformed body); 400.
  | 'MULTIPART_ERROR'

/** Status and public code of every signing failure (the compiler flags a missing code). */
export const SIGN_ERRORS: Record<SignCode, { code: PublicCode, status: number }> = {
  SIGN_PDF_INVALID: { code: 'INVALID_PDF', status: 400 },
  SIGN_PDF_UNSUPPORTED: { code: 'INVALID_REQUEST', status: 400 },
  // Spec 2 §7 "500 internal failure, certificate, timestamp authority".
  SIGN_CERT_INVALID: { code: 'INVALID_CERTIFICATE', status: 500 },
  TSA_FAILED: { code: 'TIMESTAMP_ERROR', status: 500 },
  // Not in spec 2 (it predates PAdES-B-LT): an outside service failed, as for TIMESTAMP_ERROR.
  SIGN_REVOCATION_UNAVAILABLE: { code: 'REVOCATION_ERROR', status: 500 },
  // "certificate invalid or unavailable" (spec 2 §7).
  SIGN_CERT_REVOKED: { code: 'INVALID_CERTIFICATE', status: 500 }
}

/**
 * Shared-catalog codes that can reach this service: runTask only produces ABORTED (the
 * client left) and INTERNAL (a worker failed). Any other catalog code is answered as
 * INTERNAL_ERROR, so codes other areas add later need no entry here.
 */
export const ENGINE_ERRORS: Partial<Record<Code, { code: PublicCode, status: number }>> = {
  ABORTED: { code: 'INTERNAL_ERROR', status: 499 },
  INTERNAL: { code: 'INTERNAL_ERROR', status: 500 }
}

/** A refusal decided in the HTTP thread (validation, size, auth). */
export class HttpRefusal extends Error {
  constructor (readonly status: number, readonly publicCode: PublicCode, message: string, readonly field: string | null = null) {
    super(message)
    this.name = 'HttpRefusal'
  }
}

export interface ErrorEnvelope {
  success: false
  message: string
  requestId: string
  data: null
  errors: Array<{ code: PublicCode, message: string, field: string | null }>
  warnings: string[]
  code: PublicCode
  timestamp: string
  path: string
}

export function errorEnvelope (requestId: string, path: string, code: PublicCode, message: string, field: string | null, timestamp: string): ErrorEnvelope {
  return { success: false, message, requestId, data: null, errors: [{ code, message, field }], warnings: [], code, timestamp, path }
}
