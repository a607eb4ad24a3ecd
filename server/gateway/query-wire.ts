/**
 * The query routes' request fields (spec 3 §2 A, §8 A, issue 15), checked one by one so
 * that a 400 says which field is wrong. `cnpj_consulta` is read as "14 characters":
 * numeric or alphanumeric (IN RFB 2.229/2024), punctuation and lower case accepted and
 * normalized, check digits verified.
 */
import { cnpjChars, isValidCnpj } from '../../core/cnpj.js'
import { GatewayError } from '../../core/gateway/index.js'

export interface NfeQuery {
  empresaCodigo: string
  cnpj: string
  ultNSU: string
}

export interface AdnQuery {
  empresaCodigo: string
  cnpj: string
  nsu: number
}

function invalid (detail: string): GatewayError {
  return new GatewayError(400, 'GATEWAY_INVALID_REQUEST', detail)
}

function objectBody (body: unknown): Record<string, unknown> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw invalid('The request body must be a JSON object (Content-Type: application/json).')
  }
  return body as Record<string, unknown>
}

function empresaCodigoOf (body: Record<string, unknown>): string {
  const v = body.empresa_codigo
  if (v === undefined || v === null) throw invalid('empresa_codigo is required.')
  if (typeof v !== 'string' || v.trim() === '' || v.length > 100) throw invalid('empresa_codigo must be a non-empty text of at most 100 characters.')
  return v.trim()
}

function cnpjConsultaOf (body: Record<string, unknown>): string {
  const v = body.cnpj_consulta
  if (v === undefined || v === null) throw invalid('cnpj_consulta is required.')
  if (typeof v !== 'string') throw invalid('cnpj_consulta must be a text of 14 characters (a number would lose its leading zeros).')
  // Shape first, then the check digits, so that the message says which of the two is wrong.
  const cnpj = cnpjChars(v)
  if (cnpj === null) throw invalid('cnpj_consulta must have 14 characters: 12 digits or letters, then 2 check digits (punctuation is allowed).')
  if (!isValidCnpj(cnpj)) throw invalid(`cnpj_consulta ${cnpj} is not a valid CNPJ: its check digits do not verify.`)
  return cnpj
}

export function readNfeQuery (raw: unknown): NfeQuery {
  const body = objectBody(raw)
  const empresaCodigo = empresaCodigoOf(body)
  const cnpj = cnpjConsultaOf(body)
  const v = body.ult_nsu
  if (v === undefined || v === null) throw invalid('ult_nsu is required.')
  if (typeof v !== 'string' || !/^[0-9]{15}$/.test(v)) throw invalid('ult_nsu must be a text of exactly 15 digits, zero-padded (000000000000000 to start).')
  return { empresaCodigo, cnpj, ultNSU: v }
}

export function readAdnQuery (raw: unknown): AdnQuery {
  const body = objectBody(raw)
  const empresaCodigo = empresaCodigoOf(body)
  const cnpj = cnpjConsultaOf(body)
  const v = body.nsu
  if (v === undefined || v === null) throw invalid('nsu is required.')
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0) throw invalid('nsu must be a whole number, zero or more.')
  return { empresaCodigo, cnpj, nsu: v }
}

/** POST /v1/documents/{chave}/buscar: which company asks (its certificate, its CNPJ). */
export function readFetchKeyBody (raw: unknown): { empresaCodigo: string } {
  return { empresaCodigo: empresaCodigoOf(objectBody(raw)) }
}
