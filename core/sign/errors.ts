/**
 * Failure codes of the signing area. They live here rather than in core/errors.ts so
 * the signer stays self-contained; the pool task turns a SignError into a plain
 * `{ code, message, field }` outcome (class identity does not cross threads) and
 * server/sign/errors.ts maps each code to spec 2's public code and HTTP status.
 */
export const SignCode = {
  /** Not a PDF, truncated, damaged, or encrypted without permission to modify. */
  SIGN_PDF_INVALID: 'SIGN_PDF_INVALID',
  /** A readable PDF whose structure we cannot append a signature to without breaking it. */
  SIGN_PDF_UNSUPPORTED: 'SIGN_PDF_UNSUPPORTED',
  /** The configured certificate cannot be read, has no usable key, or is outside its validity. */
  SIGN_CERT_INVALID: 'SIGN_CERT_INVALID',
  /** The timestamp authority could not be reached or gave an unusable answer. */
  TSA_FAILED: 'TSA_FAILED',
  /** PAdES-B-LT/LTA: a certificate's revocation status could not be obtained (no source named, unreachable, timed out, unusable answer). */
  SIGN_REVOCATION_UNAVAILABLE: 'SIGN_REVOCATION_UNAVAILABLE',
  /** PAdES-B-LT/LTA: an OCSP responder or CRL says a certificate of the chain is revoked. */
  SIGN_CERT_REVOKED: 'SIGN_CERT_REVOKED'
} as const
export type SignCode = keyof typeof SignCode

/** An expected signing failure. `field` names the request field at fault, when there is one. */
export class SignError extends Error {
  constructor (readonly code: SignCode, message: string, readonly field: string | null = null, opts?: ErrorOptions) {
    super(message, opts)
    this.name = 'SignError'
  }
}

/** True when `value` carries one of the signing codes (works on plain objects from another thread). */
export function isSignError (value: unknown): value is { code: SignCode, message: string, field: string | null } {
  if (typeof value !== 'object' || value === null) return false
  const code = (value as { code?: unknown }).code
  return typeof code === 'string' && code in SignCode
}
