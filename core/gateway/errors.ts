/**
 * The gateway's expected failures. Unlike the rest of core (core/errors.ts, where codes
 * carry no status), a gateway failure is born with the spec's HTTP status (spec 3 §7 A),
 * because the certificate store (admin side) and the query clients (this folder) both
 * throw it and both answer `{ "detail": ... }`: one small type both sides share.
 * `detail` is written for the caller: it never holds a certificate, password or key.
 */

export const GatewayCode = {
  /** No company is registered under that `empresa_codigo`, or it is inactive. */
  GATEWAY_COMPANY_NOT_FOUND: 'GATEWAY_COMPANY_NOT_FOUND',
  /** The company's certificate cannot be used: expired, CNPJ root mismatch, unreadable. */
  GATEWAY_CERTIFICATE_INCOMPATIBLE: 'GATEWAY_CERTIFICATE_INCOMPATIBLE',
  /** The tax authority answered and refused the query (SOAP Fault, rejection cStat, HTTP 4xx). */
  GATEWAY_QUERY_REFUSED: 'GATEWAY_QUERY_REFUSED',
  /** The tax authority could not be reached, dropped the connection or answered something unreadable. */
  GATEWAY_UPSTREAM_UNAVAILABLE: 'GATEWAY_UPSTREAM_UNAVAILABLE',
  /** The tax authority did not answer within the configured time. */
  GATEWAY_UPSTREAM_TIMEOUT: 'GATEWAY_UPSTREAM_TIMEOUT',
  /** The gateway itself holds the query back: the authority's waiting period for that CNPJ is running. */
  GATEWAY_COOLDOWN: 'GATEWAY_COOLDOWN',
  /** A request field is missing or outside its contract. */
  GATEWAY_INVALID_REQUEST: 'GATEWAY_INVALID_REQUEST',
  /**
   * A distributed document (docZip, ArquivoXml) broke a bound (core/gateway/doc-zip.ts), 503:
   * nothing of the answer is kept. Base64; its size; a bomb (size or ratio); not gzip; a DOCTYPE; not well-formed XML.
   */
  DOCZIP_BASE64: 'DOCZIP_BASE64',
  DOCZIP_TOO_LARGE: 'DOCZIP_TOO_LARGE',
  DOCZIP_BOMB: 'DOCZIP_BOMB',
  DOCZIP_NOT_GZIP: 'DOCZIP_NOT_GZIP',
  DOCZIP_DTD: 'DOCZIP_DTD',
  DOCZIP_XML: 'DOCZIP_XML',
  /** No document is kept under that access key. */
  GATEWAY_DOCUMENT_NOT_FOUND: 'GATEWAY_DOCUMENT_NOT_FOUND',
  /**
   * A manifestação event the authority refused (its cStat and xMotivo in the body: 631 another
   * recipient's NF-e, 297 signature, 596 out of time…), or one the gateway will not send
   * (a conclusive event already registered twice), 422.
   */
  GATEWAY_EVENT_REFUSED: 'GATEWAY_EVENT_REFUSED',
  /**
   * 422: a one-off distribution query (distNSU) for a CNPJ whose managed feed is on. Two readers of one
   * NSU sequence break it: the authority answers 656 and blocks the CNPJ for an hour.
   */
  GATEWAY_FEED_ACTIVE: 'GATEWAY_FEED_ACTIVE',
  /** 429: the CNPJ's point lookups (consNSU, consChNFe) of the last hour are used up (20 an hour, NT 2014.002). */
  GATEWAY_LOOKUP_LIMIT: 'GATEWAY_LOOKUP_LIMIT'
} as const
export type GatewayCode = keyof typeof GatewayCode

export interface GatewayErrorOptions extends ErrorOptions {
  /** Seconds for a `Retry-After` header (429 and some 503 answers). */
  retryAfterS?: number
  /** Extra plain fields for the error body beside `detail` (a refused NF-e query's cStat, xMotivo, ultNSU, maxNSU). */
  body?: Record<string, string | number | null>
}

export class GatewayError extends Error {
  readonly retryAfterS: number | undefined
  readonly body: Record<string, string | number | null> | undefined

  constructor (readonly status: number, readonly code: GatewayCode, readonly detail: string, options: GatewayErrorOptions = {}) {
    super(detail, options)
    this.name = 'GatewayError'
    this.retryAfterS = options.retryAfterS
    this.body = options.body
  }
}

/** Compares by shape, not class identity (errors cross module copies and threads). */
export function isGatewayError (e: unknown): e is GatewayError {
  return e instanceof Error && e.name === 'GatewayError' && typeof (e as GatewayError).status === 'number' && typeof (e as GatewayError).detail === 'string'
}

export const companyNotFound = (empresaCodigo: string): GatewayError =>
  new GatewayError(404, 'GATEWAY_COMPANY_NOT_FOUND', `No active company is registered under empresa_codigo "${empresaCodigo}".`)

export const certificateIncompatible = (why: string): GatewayError =>
  new GatewayError(422, 'GATEWAY_CERTIFICATE_INCOMPATIBLE', `The company's certificate cannot be used: ${why}`)
