/**
 * NFS-e distribution of the national environment (ADN Contribuintes v1):
 * `GET {base}/DFe/{NSU}?cnpjConsulta=...&lote=true` over mutual TLS, JSON answer
 * `LoteDistribuicaoNSUResponse` (the ADN's OpenAPI description). The items of `LoteDFe` are handed
 * back exactly as the ADN sent them (PascalCase keys, `ArquivoXml` still gzip+Base64).
 */
import type { Agent } from 'node:https'
import { GatewayError } from './errors.js'
import { callHttps } from './https-call.js'
import { httpError, logAnswer } from './nfe-distribution.js'
import type { GatewayLog } from './nfe-distribution.js'

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

interface AdnMessage { Codigo?: unknown, Descricao?: unknown, Complemento?: unknown }
interface AdnEnvelope {
  StatusProcessamento?: unknown
  LoteDFe?: unknown
  Erros?: unknown
  TipoAmbiente?: unknown
}

export function adnDistributionUrl (baseUrl: string, cnpj: string, nsu: number): string {
  return `${baseUrl.replace(/\/+$/, '')}/DFe/${nsu}?cnpjConsulta=${encodeURIComponent(cnpj)}&lote=true`
}

/**
 * One query. 200 with documents and 404 `NENHUM_DOCUMENTO_LOCALIZADO` (E2220) are
 * answers (the latter with no documents); 400 `REJEICAO` is a refused query (422, its
 * `Erros` in the message); a 429 (an HTML page, not JSON) is passed on as 429; other
 * failures are 503.
 */
export async function queryAdnDistribution (call: AdnDistributionCall): Promise<AdnAnswer> {
  const answer = await callHttps({
    url: adnDistributionUrl(call.baseUrl, call.cnpj, call.nsu),
    method: 'GET',
    headers: { accept: 'application/json' },
    agent: call.agent,
    timeoutMs: call.timeoutMs,
    service: SERVICE
  })
  logAnswer(call.log, 'adn-dfe', answer)
  if (answer.status === 429) {
    const given = Number(answer.headers['retry-after'])
    throw new GatewayError(429, 'GATEWAY_QUERY_REFUSED', `${SERVICE} is limiting the rate of queries (HTTP 429); wait before asking again.`,
      Number.isSafeInteger(given) && given > 0 ? { retryAfterS: given } : {})
  }
  const envelope = readEnvelope(answer.body)
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
  const lote = envelope.LoteDFe
  if (lote !== null && lote !== undefined && !Array.isArray(lote)) {
    throw new GatewayError(503, 'GATEWAY_UPSTREAM_UNAVAILABLE', `${SERVICE} answered a LoteDFe that is not a list.`)
  }
  const documentos = (lote ?? []).filter((item): item is AdnDocument => typeof item === 'object' && item !== null && !Array.isArray(item))
  return { statusProcessamento: envelope.StatusProcessamento, documentos }
}

function readEnvelope (body: string): AdnEnvelope | null {
  try {
    const value: unknown = JSON.parse(body)
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? value as AdnEnvelope : null
  } catch {
    return null
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
