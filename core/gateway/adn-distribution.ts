/**
 * NFS-e distribution of the national environment (ADN Contribuintes v1):
 * `GET {base}/DFe/{NSU}?cnpjConsulta=...&lote=true` over mutual TLS, JSON answer
 * `LoteDistribuicaoNSUResponse` (the ADN's OpenAPI description). The items of `LoteDFe` are handed
 * back exactly as the ADN sent them (PascalCase keys, `ArquivoXml` still gzip+Base64), once
 * they have the schema's shape (issue 32): at most 50, each an object of plain values.
 */
import type { Agent } from 'node:https'
import { AnswerRefused } from './answer-encoding.js'
import { GatewayError } from './errors.js'
import { callHttps } from './https-call.js'
import type { AnswerReader, GatewayLog } from './https-call.js'
import { httpError, refusedAs } from './nfe-distribution.js'

export const ADN_BASE_URLS = {
  1: 'https://adn.nfse.gov.br/contribuintes',
  2: 'https://adn.producaorestrita.nfse.gov.br/contribuintes'
} as const

const EXPECTED_AMBIENTE = { 1: 'PRODUCAO', 2: 'HOMOLOGACAO' } as const

export interface AdnDistributionCall {
  /** Base URL up to `/contribuintes`. */
  baseUrl: string
  tpAmb: 1 | 2
  cnpj: string
  /** The last NSU the caller holds; the ADN answers the documents after it, up to 50. */
  nsu: number
  /** false: only the document of exactly `nsu` (a gap refilled); default true, up to 50 after it. */
  lote?: boolean
  agent: Agent
  timeoutMs: number
  log?: GatewayLog
}

/** One `LoteDFe` item as received (NSU, ChaveAcesso, TipoDocumento, TipoEvento, ArquivoXml, DataHoraGeracao). */
export type AdnDocument = Record<string, unknown>

export interface AdnAnswer {
  statusProcessamento: string
  documentos: AdnDocument[]
}

const SERVICE = 'NFS-e national distribution (ADN)'

/** The most items one answer holds: "up to 50" documents after the NSU (the ADN's contributor manual, distribution by NSU). */
export const MAX_ADN_DOCUMENTS = 50
/**
 * The deepest an answer nests: the envelope's deepest field is 4 levels down (Erros > item >
 * Parametros); a deeper answer is refused before JSON.parse, so nothing downstream (the
 * reply's serializer, the log) ever recurses through it.
 */
export const MAX_JSON_DEPTH = 16

interface AdnMessage { Codigo?: unknown, Descricao?: unknown, Complemento?: unknown }
interface AdnEnvelope {
  StatusProcessamento?: unknown
  LoteDFe?: unknown
  Erros?: unknown
  TipoAmbiente?: unknown
}

export function adnDistributionUrl (baseUrl: string, cnpj: string, nsu: number, lote = true): string {
  return `${baseUrl.replace(/\/+$/, '')}/DFe/${nsu}?cnpjConsulta=${encodeURIComponent(cnpj)}&lote=${String(lote)}`
}

/**
 * One query. 200 with documents and 404 `NENHUM_DOCUMENTO_LOCALIZADO` (E2220) are
 * answers (the latter with no documents); 400 `REJEICAO` is a refused query (422, its
 * `Erros` in the message); a 429 (an HTML page, not JSON) is passed on as 429; other
 * failures are 503, and so is a 200 outside the schema (nested deeper than
 * MAX_JSON_DEPTH, more than 50 items, an item that is not an object of plain values).
 */
export async function queryAdnDistribution (call: AdnDistributionCall): Promise<AdnAnswer> {
  const answer = await callHttps<AdnEnvelope | null>({
    url: adnDistributionUrl(call.baseUrl, call.cnpj, call.nsu, call.lote ?? true),
    method: 'GET',
    headers: { accept: 'application/json' },
    agent: call.agent,
    timeoutMs: call.timeoutMs,
    service: SERVICE,
    ...(call.log === undefined ? {} : { log: { to: call.log, upstream: 'adn-dfe' } }),
    // The 429 is an HTML page: not read. A 200 nested too deep is refused as the ADN's fault; another status is its HTTP error.
    read: (status) => status === 429
      ? { write: () => undefined, end: () => null }
      : refusedAs(new JsonEnvelopeReader(), (why) => status === 200
        ? new GatewayError(503, 'GATEWAY_UPSTREAM_UNAVAILABLE', `${SERVICE} answered HTTP 200 with something its schema does not allow: ${why}.`)
        : httpError(SERVICE, status))
  })
  if (answer.status === 429) {
    const given = Number(answer.headers['retry-after'])
    throw new GatewayError(429, 'GATEWAY_QUERY_REFUSED', `${SERVICE} is limiting the rate of queries (HTTP 429); wait before asking again.`,
      Number.isSafeInteger(given) && given > 0 ? { retryAfterS: given } : {})
  }
  const envelope = answer.body
  if (answer.status === 404 && envelope?.StatusProcessamento === 'NENHUM_DOCUMENTO_LOCALIZADO') {
    checkAmbiente(envelope, call.tpAmb)
    return { statusProcessamento: 'NENHUM_DOCUMENTO_LOCALIZADO', documentos: [] }
  }
  if (answer.status === 400 && envelope !== null) {
    throw new GatewayError(422, 'GATEWAY_QUERY_REFUSED', `${SERVICE} refused the query: ${describeErrors(envelope.Erros)}.`)
  }
  if (answer.status !== 200) throw httpError(SERVICE, answer.status)
  if (envelope === null || typeof envelope.StatusProcessamento !== 'string') {
    throw new GatewayError(503, 'GATEWAY_UPSTREAM_UNAVAILABLE', `${SERVICE} answered HTTP 200 without a readable JSON envelope.`)
  }
  checkAmbiente(envelope, call.tpAmb)
  if (envelope.StatusProcessamento === 'REJEICAO') {
    throw new GatewayError(422, 'GATEWAY_QUERY_REFUSED', `${SERVICE} refused the query: ${describeErrors(envelope.Erros)}.`)
  }
  return { statusProcessamento: envelope.StatusProcessamento, documentos: readLote(envelope.LoteDFe) }
}

/** The items of `LoteDFe` as sent, once each has the shape of the OpenAPI's DistribuicaoNSU; a 503 otherwise. */
function readLote (lote: unknown): AdnDocument[] {
  const refuse = (why: string): GatewayError => new GatewayError(503, 'GATEWAY_UPSTREAM_UNAVAILABLE', `${SERVICE} answered HTTP 200 with something its schema does not allow: ${why}.`)
  if (lote === null || lote === undefined) return []
  if (!Array.isArray(lote)) throw refuse('LoteDFe is not a list')
  if (lote.length > MAX_ADN_DOCUMENTS) throw refuse(`LoteDFe holds ${lote.length} items, more than the ${MAX_ADN_DOCUMENTS} the ADN answers at most`)
  lote.forEach((item: unknown, i) => {
    if (typeof item !== 'object' || item === null || Array.isArray(item)) throw refuse(`LoteDFe item ${i + 1} is not an object`)
    for (const [key, value] of Object.entries(item)) {
      const why = fieldProblem(key, value)
      if (why !== undefined) throw refuse(`LoteDFe item ${i + 1} has ${JSON.stringify(key.slice(0, 40))} ${why}`)
    }
  })
  return lote as AdnDocument[]
}

/**
 * DistribuicaoNSU's fields are plain values: NSU an integer, the others strings, each may be
 * null. A field the OpenAPI does not name passes through if it is a plain value too, so the
 * ADN may add one without breaking the route; a nested value never passes.
 */
function fieldProblem (key: string, value: unknown): string | undefined {
  if (value === null) return undefined
  if (key === 'NSU') return Number.isSafeInteger(value) && (value as number) >= 0 ? undefined : 'that is not a non-negative integer'
  if (['ChaveAcesso', 'TipoDocumento', 'TipoEvento', 'ArquivoXml', 'DataHoraGeracao'].includes(key)) return typeof value === 'string' ? undefined : 'that is not a string'
  return typeof value === 'object' ? 'holding a nested value, where the schema has only plain values' : undefined
}

/**
 * Keeps a JSON answer's bytes and scans its nesting as they arrive; refuses (AnswerRefused)
 * once it nests deeper than MAX_JSON_DEPTH. JSON's structural characters are ASCII, and no
 * byte of a multi-byte UTF-8 sequence is, so the bytes can be scanned before decoding.
 * At the end: the envelope object, or null when the bytes are not UTF-8 JSON holding an object.
 */
class JsonEnvelopeReader implements AnswerReader<AdnEnvelope | null> {
  private readonly chunks: Buffer[] = []
  private depth = 0
  private inString = false
  private escaped = false

  write (bytes: Buffer): void {
    this.chunks.push(bytes)
    let { depth, inString, escaped } = this
    for (let i = 0; i < bytes.length; i++) {
      const b = bytes[i]!
      if (inString) {
        if (escaped) escaped = false
        else if (b === 0x5c) escaped = true
        else if (b === 0x22) inString = false
      } else if (b === 0x22) {
        inString = true
      } else if (b === 0x7b || b === 0x5b) {
        if (++depth > MAX_JSON_DEPTH) throw new AnswerRefused(`its JSON nests deeper than ${MAX_JSON_DEPTH} levels`)
      } else if (b === 0x7d || b === 0x5d) {
        depth--
      }
    }
    this.depth = depth
    this.inString = inString
    this.escaped = escaped
  }

  end (): AdnEnvelope | null {
    try {
      // RFC 8259 §8.1: JSON between systems is UTF-8; bytes that are not make it unreadable, never replaced.
      const value: unknown = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(Buffer.concat(this.chunks)))
      return typeof value === 'object' && value !== null && !Array.isArray(value) ? value as AdnEnvelope : null
    } catch {
      return null
    }
  }
}

/** An answer from the other environment means GATEWAY_ADN_URL points at the wrong host: never hand its documents on. */
function checkAmbiente (envelope: AdnEnvelope, tpAmb: 1 | 2): void {
  const expected = EXPECTED_AMBIENTE[tpAmb]
  if (typeof envelope.TipoAmbiente === 'string' && envelope.TipoAmbiente !== expected) {
    throw new GatewayError(503, 'GATEWAY_UPSTREAM_UNAVAILABLE',
      `${SERVICE} answered from environment ${envelope.TipoAmbiente}, but this gateway is configured for ${expected}; check GATEWAY_ADN_URL and GATEWAY_TP_AMB.`)
  }
}

function describeErrors (erros: unknown): string {
  if (!Array.isArray(erros) || erros.length === 0) return 'no reason given'
  return erros.slice(0, 5).map((e: AdnMessage) => {
    const code = typeof e.Codigo === 'string' ? e.Codigo : '?'
    const text = [e.Descricao, e.Complemento].filter((s): s is string => typeof s === 'string' && s !== '').join(' - ')
    return `${code} ${text}`.trim()
  }).join('; ')
}
