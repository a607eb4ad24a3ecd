/**
 * NF-e distribution (`NFeDistribuicaoDFe`, operation `nfeDistDFeInteresse`, layout 1.01)
 * in `distNSU` mode: the SOAP 1.2 envelope, one POST over the certificate's agent, and
 * the `retDistDFeInt` answer read as it arrives by dist-answer.ts, which accepts only what
 * the schema allows. `docZip` is handed back as the text the authority sent, never decoded
 * (spec 3 §1 A.2). Protocol facts: NT 2014.002, see docs/gateway-queries.md.
 */
import type { Agent } from 'node:https'
import { AnswerRefused } from './answer-encoding.js'
import { DistAnswerReader, NFE_NS, NFE_WSDL_NS, SOAP12_NS } from './dist-answer.js'
import type { DistAnswer, RetDistDFeInt } from './dist-answer.js'
import { GatewayError } from './errors.js'
import { callHttps } from './https-call.js'
import type { AnswerReader, GatewayLog } from './https-call.js'

export const NFE_DIST_URLS = {
  1: 'https://www1.nfe.fazenda.gov.br/NFeDistribuicaoDFe/NFeDistribuicaoDFe.asmx',
  2: 'https://hom1.nfe.fazenda.gov.br/NFeDistribuicaoDFe/NFeDistribuicaoDFe.asmx'
} as const

export const NFE_DIST_ACTION = `${NFE_WSDL_NS}/nfeDistDFeInteresse`
/** SOAP 1.2 carries the action as a Content-Type parameter; there is no SOAPAction header (NT 2014.002, see docs/gateway-queries.md). */
export const NFE_DIST_CONTENT_TYPE = `application/soap+xml; charset=utf-8; action="${NFE_DIST_ACTION}"`

export interface DistNsuRequest {
  tpAmb: 1 | 2
  /** IBGE code of the interested party's state; optional in the XSD, sent when configured. */
  cUFAutor?: number
  /** 14 characters, upper case, no punctuation (letters allowed in the first 12). */
  cnpj: string
  /** Exactly 15 digits. */
  ultNSU: string
}

/**
 * The three queries of distDFeInt_v1.01.xsd: `distNSU` (the documents after ultNSU),
 * `consNSU` (the one document of an NSU) and `consChNFe` (a note by its access key).
 */
export type DistRequest = Omit<DistNsuRequest, 'ultNSU'> & ({ ultNSU: string } | { consNSU: string } | { consChNFe: string })

function queryElement (r: DistRequest): string {
  if ('consNSU' in r) return `<consNSU><NSU>${escapeXml(r.consNSU)}</NSU></consNSU>`
  if ('consChNFe' in r) return `<consChNFe><chNFe>${escapeXml(r.consChNFe)}</chNFe></consChNFe>`
  return `<distNSU><ultNSU>${escapeXml(r.ultNSU)}</ultNSU></distNSU>`
}

/** The envelope of NT 2014.002, see docs/gateway-queries.md; the data area without whitespace between tags (sped-nfe does the same). */
export function buildDistNsuEnvelope (r: DistRequest): string {
  const data = `<distDFeInt xmlns="${NFE_NS}" versao="1.01">` +
    `<tpAmb>${r.tpAmb}</tpAmb>` +
    (r.cUFAutor === undefined ? '' : `<cUFAutor>${r.cUFAutor}</cUFAutor>`) +
    `<CNPJ>${escapeXml(r.cnpj)}</CNPJ>` +
    queryElement(r) +
    '</distDFeInt>'
  return '<?xml version="1.0" encoding="utf-8"?>' +
    `<soap:Envelope xmlns:soap="${SOAP12_NS}" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xmlns:xsd="http://www.w3.org/2001/XMLSchema">` +
    `<soap:Body><nfeDistDFeInteresse xmlns="${NFE_WSDL_NS}"><nfeDadosMsg>${data}</nfeDadosMsg></nfeDistDFeInteresse></soap:Body>` +
    '</soap:Envelope>'
}

function escapeXml (s: string): string {
  return s.replace(/[<>&"']/g, (c) => `&#${c.charCodeAt(0)};`)
}

export type NfeDistributionCall = DistRequest & {
  url: string
  agent: Agent
  timeoutMs: number
  log?: GatewayLog
}

const SERVICE = 'NF-e distribution (NFeDistribuicaoDFe)'
const AMBIENTE: Record<string, string> = { 1: 'production', 2: 'homologation' }

/**
 * One distNSU query. Returns the authority's `retDistDFeInt` whatever its cStat (the
 * caller decides what a cStat means for the caller and for the waiting period); throws
 * a GatewayError for a SOAP Fault or an HTTP error (422 when the authority refused the
 * request, 503 when it failed or could not be reached), for an answer outside its schema
 * or from the other environment (503) and for transport failures.
 */
export async function queryNfeDistribution (call: NfeDistributionCall): Promise<RetDistDFeInt> {
  const answer = await callHttps<DistAnswer>({
    url: call.url,
    method: 'POST',
    headers: { 'content-type': NFE_DIST_CONTENT_TYPE, accept: 'application/soap+xml, text/xml' },
    body: buildDistNsuEnvelope(call),
    agent: call.agent,
    timeoutMs: call.timeoutMs,
    service: SERVICE,
    ...(call.log === undefined ? {} : { log: { to: call.log, upstream: 'nfe-distribuicao-dfe' } }),
    // A 200 must be a retDistDFeInt (or a Fault); another status may carry a Fault, and is its HTTP error otherwise.
    read: (status, headers) => refusedAs(new DistAnswerReader(headers['content-type']), (why) => status === 200
      ? new GatewayError(503, 'GATEWAY_UPSTREAM_UNAVAILABLE', `${SERVICE} answered HTTP 200 with something its schema (retDistDFeInt_v1.01.xsd, SOAP) does not allow: ${why}.`)
      : httpError(SERVICE, status))
  })
  const parsed = answer.body
  if ('fault' in parsed) {
    const { code, reason } = parsed.fault
    const status = /receiver|server/i.test(code) ? 503 : 422
    throw new GatewayError(status, status === 422 ? 'GATEWAY_QUERY_REFUSED' : 'GATEWAY_UPSTREAM_UNAVAILABLE',
      `${SERVICE} answered with a SOAP Fault (HTTP ${answer.status}, ${code || 'no code'}): ${reason || 'no reason given'}.`)
  }
  if (answer.status !== 200) throw httpError(SERVICE, answer.status)
  // As the ADN route does: an answer from the other environment is never handed on.
  if (parsed.ret.tpAmb !== String(call.tpAmb)) {
    throw new GatewayError(503, 'GATEWAY_UPSTREAM_UNAVAILABLE',
      `${SERVICE} answered from environment tpAmb ${parsed.ret.tpAmb} (${AMBIENTE[parsed.ret.tpAmb] ?? '?'}), but this gateway is configured for tpAmb ${call.tpAmb} (${AMBIENTE[call.tpAmb]}); check GATEWAY_NFE_URL and GATEWAY_TP_AMB.`)
  }
  return parsed.ret
}

/** The reader's AnswerRefused becomes the caller's GatewayError. */
export function refusedAs<T> (reader: { write: (bytes: Buffer) => void, end: () => T }, toError: (why: string) => GatewayError): AnswerReader<T> {
  const guard = <R>(step: () => R): R => {
    try {
      return step()
    } catch (e) {
      throw e instanceof AnswerRefused ? toError(e.message) : e
    }
  }
  return { write: (bytes) => { guard(() => reader.write(bytes)) }, end: () => guard(() => reader.end()) }
}

export function httpError (service: string, status: number): GatewayError {
  return status >= 400 && status < 500 && status !== 408 && status !== 429
    ? new GatewayError(422, 'GATEWAY_QUERY_REFUSED', `${service} refused the request with HTTP ${status}.`)
    : new GatewayError(503, 'GATEWAY_UPSTREAM_UNAVAILABLE', `${service} failed with HTTP ${status}; try again later.`)
}

/** cStat values of a completed query (NT 2014.002, see docs/gateway-queries.md): 137 nothing new, 138 documents found. */
export const NFE_OK_STATUSES: ReadonlySet<string> = new Set(['137', '138'])
/** Service paused (108 short, 109 without forecast): the authority is unavailable, not refusing. */
const NFE_PAUSED_STATUSES: ReadonlySet<string> = new Set(['108', '109'])

/**
 * The route's view of an answer: 137/138 are answers; 108/109 a paused service (503);
 * every other cStat a refused query (422) whose body still carries cStat, xMotivo,
 * ultNSU and maxNSU, so a caller can resynchronise (656 carries the last ultNSU).
 */
export function assertAnswered (ret: RetDistDFeInt): void {
  if (NFE_OK_STATUSES.has(ret.cStat)) return
  const body = { cStat: ret.cStat, xMotivo: ret.xMotivo, ultNSU: ret.ultNSU, maxNSU: ret.maxNSU }
  if (NFE_PAUSED_STATUSES.has(ret.cStat)) {
    throw new GatewayError(503, 'GATEWAY_UPSTREAM_UNAVAILABLE', `${SERVICE} is paused (cStat ${ret.cStat}: ${ret.xMotivo}); try again later.`, { body })
  }
  throw new GatewayError(422, 'GATEWAY_QUERY_REFUSED', `${SERVICE} refused the query: cStat ${ret.cStat} (${ret.xMotivo}).`, { body })
}
