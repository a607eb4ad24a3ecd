/**
 * NF-e distribution (`NFeDistribuicaoDFe`, operation `nfeDistDFeInteresse`, layout 1.01)
 * in `distNSU` mode: the SOAP 1.2 envelope, one POST over the certificate's agent, and
 * the `retDistDFeInt` answer read with a real XML parser. `docZip` is handed back as the
 * text node the authority sent, never decoded (spec 3 §1 A.2). Protocol facts:
 * NT 2014.002, see docs/gateway-queries.md.
 */
import sax from 'sax'
import type { Agent } from 'node:https'
import { GatewayError } from './errors.js'
import { callHttps } from './https-call.js'
import type { HttpsAnswer } from './https-call.js'

export const NFE_DIST_URLS = {
  1: 'https://www1.nfe.fazenda.gov.br/NFeDistribuicaoDFe/NFeDistribuicaoDFe.asmx',
  2: 'https://hom1.nfe.fazenda.gov.br/NFeDistribuicaoDFe/NFeDistribuicaoDFe.asmx'
} as const

export const SOAP12_NS = 'http://www.w3.org/2003/05/soap-envelope'
export const SOAP11_NS = 'http://schemas.xmlsoap.org/soap/envelope/'
export const NFE_WSDL_NS = 'http://www.portalfiscal.inf.br/nfe/wsdl/NFeDistribuicaoDFe'
export const NFE_NS = 'http://www.portalfiscal.inf.br/nfe'
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

export interface NfeDocument {
  /** The `NSU` attribute as sent; absent only in consChNFe answers, never in distNSU ones. */
  nsu: string | null
  schema: string
  /** Base64 of the gzip stream, exactly the text the authority sent. */
  docZip: string
}

export interface RetDistDFeInt {
  tpAmb: string
  verAplic: string
  cStat: string
  xMotivo: string
  dhResp: string
  ultNSU: string
  maxNSU: string
  documentos: NfeDocument[]
}

export interface SoapFault {
  /** `Sender`/`Receiver` (SOAP 1.2 Code/Value without prefix) or the SOAP 1.1 faultcode. */
  code: string
  reason: string
}

/** Where the raw upstream answer goes (pino-compatible): debug level only. */
export interface GatewayLog {
  debug: (obj: Record<string, unknown>, msg: string) => void
}

/** The envelope of NT 2014.002, see docs/gateway-queries.md; the data area without whitespace between tags (sped-nfe does the same). */
export function buildDistNsuEnvelope (r: DistNsuRequest): string {
  const data = `<distDFeInt xmlns="${NFE_NS}" versao="1.01">` +
    `<tpAmb>${r.tpAmb}</tpAmb>` +
    (r.cUFAutor === undefined ? '' : `<cUFAutor>${r.cUFAutor}</cUFAutor>`) +
    `<CNPJ>${escapeXml(r.cnpj)}</CNPJ>` +
    `<distNSU><ultNSU>${escapeXml(r.ultNSU)}</ultNSU></distNSU>` +
    '</distDFeInt>'
  return '<?xml version="1.0" encoding="utf-8"?>' +
    `<soap:Envelope xmlns:soap="${SOAP12_NS}" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xmlns:xsd="http://www.w3.org/2001/XMLSchema">` +
    `<soap:Body><nfeDistDFeInteresse xmlns="${NFE_WSDL_NS}"><nfeDadosMsg>${data}</nfeDadosMsg></nfeDistDFeInteresse></soap:Body>` +
    '</soap:Envelope>'
}

function escapeXml (s: string): string {
  return s.replace(/[<>&"']/g, (c) => `&#${c.charCodeAt(0)};`)
}

const RET_FIELDS = ['tpAmb', 'verAplic', 'cStat', 'xMotivo', 'dhResp', 'ultNSU', 'maxNSU'] as const

/**
 * Reads a SOAP answer: the `retDistDFeInt` inside it, or its SOAP Fault, or neither
 * (null: not an answer of this service). Throws on XML that does not parse.
 */
export function parseDistAnswer (xml: string): { ret: RetDistDFeInt } | { fault: SoapFault } | null {
  const parser = sax.parser(true, { xmlns: true, trim: false, normalize: false })
  const stack: Array<{ uri: string, local: string }> = []
  let ret: RetDistDFeInt | undefined
  let inRet = -1
  let field: typeof RET_FIELDS[number] | undefined
  let doc: NfeDocument | undefined
  let fault: SoapFault | undefined
  let faultPart: 'code' | 'reason' | undefined
  let text = ''
  parser.onerror = (e) => { throw e }
  parser.ondoctype = () => { throw new Error('a DOCTYPE is not allowed in a SOAP answer') }
  parser.onopentag = (tag) => {
    const t = tag as sax.QualifiedTag
    const parent = stack[stack.length - 1]
    stack.push({ uri: t.uri, local: t.local })
    text = ''
    if (t.uri === NFE_NS && t.local === 'retDistDFeInt' && ret === undefined) {
      ret = { tpAmb: '', verAplic: '', cStat: '', xMotivo: '', dhResp: '', ultNSU: '', maxNSU: '', documentos: [] }
      inRet = stack.length
      return
    }
    if (ret !== undefined && stack.length === inRet + 1 && t.uri === NFE_NS) {
      field = (RET_FIELDS as readonly string[]).includes(t.local) ? t.local as typeof RET_FIELDS[number] : undefined
      return
    }
    if (ret !== undefined && stack.length === inRet + 2 && parent?.local === 'loteDistDFeInt' && t.uri === NFE_NS && t.local === 'docZip') {
      const nsu = t.attributes.NSU
      const schema = t.attributes.schema
      doc = { nsu: nsu === undefined ? null : nsu.value, schema: schema?.value ?? '', docZip: '' }
      return
    }
    if ((t.uri === SOAP12_NS || t.uri === SOAP11_NS) && t.local === 'Fault') fault = { code: '', reason: '' }
    if (fault !== undefined) {
      if ((t.local === 'Value' && parent?.local === 'Code') || t.local === 'faultcode') faultPart = 'code'
      else if ((t.local === 'Text' && parent?.local === 'Reason') || t.local === 'faultstring') faultPart = 'reason'
    }
  }
  parser.ontext = (s) => { text += s }
  parser.oncdata = (s) => { text += s }
  parser.onclosetag = () => {
    const closing = stack.pop()
    if (ret !== undefined && doc !== undefined && closing?.local === 'docZip') {
      doc.docZip = text
      ret.documentos.push(doc)
      doc = undefined
    } else if (ret !== undefined && field !== undefined && stack.length === inRet) {
      ret[field] = text
      field = undefined
    } else if (fault !== undefined && faultPart !== undefined) {
      fault[faultPart] = faultPart === 'code' ? text.replace(/^[^:]*:/, '').trim() : text.trim()
      faultPart = undefined
    }
    if (stack.length < inRet) inRet = Number.MAX_SAFE_INTEGER
    text = ''
  }
  parser.write(xml).close()
  if (ret !== undefined) return { ret }
  if (fault !== undefined) return { fault }
  return null
}

export interface NfeDistributionCall extends DistNsuRequest {
  url: string
  agent: Agent
  timeoutMs: number
  log?: GatewayLog
}

const SERVICE = 'NF-e distribution (NFeDistribuicaoDFe)'

/**
 * One distNSU query. Returns the authority's `retDistDFeInt` whatever its cStat (the
 * caller decides what a cStat means for the caller and for the waiting period); throws
 * a GatewayError for a SOAP Fault or an HTTP error (422 when the authority refused the
 * request, 503 when it failed or could not be reached) and for transport failures.
 */
export async function queryNfeDistribution (call: NfeDistributionCall): Promise<RetDistDFeInt> {
  const answer = await callHttps({
    url: call.url,
    method: 'POST',
    headers: { 'content-type': NFE_DIST_CONTENT_TYPE, accept: 'application/soap+xml, text/xml' },
    body: buildDistNsuEnvelope(call),
    agent: call.agent,
    timeoutMs: call.timeoutMs,
    service: SERVICE
  })
  logAnswer(call.log, 'nfe-distribuicao-dfe', answer)
  let parsed: ReturnType<typeof parseDistAnswer>
  try {
    parsed = parseDistAnswer(answer.body)
  } catch {
    parsed = null
  }
  if (parsed !== null && 'fault' in parsed) {
    const { code, reason } = parsed.fault
    const status = /receiver|server/i.test(code) ? 503 : 422
    throw new GatewayError(status, status === 422 ? 'GATEWAY_QUERY_REFUSED' : 'GATEWAY_UPSTREAM_UNAVAILABLE',
      `${SERVICE} answered with a SOAP Fault (HTTP ${answer.status}, ${code || 'no code'}): ${reason || 'no reason given'}.`)
  }
  if (answer.status !== 200) throw httpError(SERVICE, answer.status)
  if (parsed === null) throw new GatewayError(503, 'GATEWAY_UPSTREAM_UNAVAILABLE', `${SERVICE} answered HTTP 200 without a readable retDistDFeInt.`)
  return parsed.ret
}

export function httpError (service: string, status: number): GatewayError {
  return status >= 400 && status < 500 && status !== 408 && status !== 429
    ? new GatewayError(422, 'GATEWAY_QUERY_REFUSED', `${service} refused the request with HTTP ${status}.`)
    : new GatewayError(503, 'GATEWAY_UPSTREAM_UNAVAILABLE', `${service} failed with HTTP ${status}; try again later.`)
}

/** Raw answers at debug level, cut to 64 KiB. They hold no secret of ours: the certificate travels in the TLS layer, not in the body. */
export function logAnswer (log: GatewayLog | undefined, upstream: string, answer: HttpsAnswer): void {
  if (log === undefined) return
  const max = 65_536
  log.debug({
    upstream,
    status: answer.status,
    contentType: answer.headers['content-type'],
    reusedConnection: answer.reusedConnection,
    bytes: Buffer.byteLength(answer.body),
    body: answer.body.length > max ? `${answer.body.slice(0, max)}…[cut]` : answer.body
  }, 'raw upstream answer')
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
