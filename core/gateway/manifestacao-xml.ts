/**
 * The manifestação do destinatário's request (issue 35, item 3): one `evento` per NF-e
 * (leiauteConfRecebto_v1.00.xsd, the event schemas e210200..e210240_v1.00.xsd), each signed on
 * its own with the company's A1 certificate, wrapped in `envEvento` (1 to 20 events) and in the
 * SOAP 1.2 envelope of NFeRecepcaoEvento4. Facts and sources: docs/gateway.md, "Manifestação".
 *
 * The signature follows the one profile the NF-e copy of the XMLDSig schema allows
 * (xmldsig-core-schema_v1.01.xsd fixes every algorithm): inclusive C14N 1.0 without comments,
 * RSA-SHA1, one Reference to `#` + infEvento/@Id with the enveloped-signature transform then
 * C14N, SHA-1 digest, KeyInfo holding only X509Data/X509Certificate (the signer's certificate),
 * `Signature` unprefixed in the xmldsig namespace, the last child of `evento`.
 */
import { SignedXml } from 'xml-crypto'
import type { KeyObject } from 'node:crypto'

export const NFE_NS = 'http://www.portalfiscal.inf.br/nfe'
export const EVENTO_WSDL_NS = 'http://www.portalfiscal.inf.br/nfe/wsdl/NFeRecepcaoEvento4'
export const SOAP12_NS = 'http://www.w3.org/2003/05/soap-envelope'
export const XMLDSIG_NS = 'http://www.w3.org/2000/09/xmldsig#'
export const EVENTO_ACTION = `${EVENTO_WSDL_NS}/nfeRecepcaoEvento`
/** SOAP 1.2: the action travels as a Content-Type parameter (the service's WSDL). */
export const EVENTO_CONTENT_TYPE = `application/soap+xml; charset=utf-8; action="${EVENTO_ACTION}"`
/** NFeRecepcaoEvento4 at the Ambiente Nacional, where the four manifestation events go whatever the company's state. */
export const EVENTO_URLS = {
  1: 'https://www.nfe.fazenda.gov.br/NFeRecepcaoEvento4/NFeRecepcaoEvento4.asmx',
  2: 'https://hom1.nfe.fazenda.gov.br/NFeRecepcaoEvento4/NFeRecepcaoEvento4.asmx'
} as const
/** cOrgao of the Ambiente Nacional (the retEvento annotation: "utilizar 91 para identificar o Ambiente Nacional"). */
export const COrgaoAN = '91'
/** envEvento holds at most 20 `evento` (maxOccurs="20"). */
export const MAX_EVENTS_PER_BATCH = 20

export const SIGNATURE_PROFILE = {
  c14n: 'http://www.w3.org/TR/2001/REC-xml-c14n-20010315',
  signature: 'http://www.w3.org/2000/09/xmldsig#rsa-sha1',
  enveloped: 'http://www.w3.org/2000/09/xmldsig#enveloped-signature',
  digest: 'http://www.w3.org/2000/09/xmldsig#sha1'
} as const

export type TpEvento = '210200' | '210210' | '210220' | '210240'

/** The four events: `descEvento` is the schema's enumeration (ASCII, no accents), exactly. */
export const MANIFESTACAO_EVENTS: Record<TpEvento, { nome: string, descEvento: string, xJust: 'absent' | 'optional' | 'required', conclusive: boolean }> = {
  210200: { nome: 'Confirmação da Operação', descEvento: 'Confirmacao da Operacao', xJust: 'absent', conclusive: true },
  210210: { nome: 'Ciência da Operação', descEvento: 'Ciencia da Operacao', xJust: 'absent', conclusive: false },
  210220: { nome: 'Desconhecimento da Operação', descEvento: 'Desconhecimento da Operacao', xJust: 'optional', conclusive: true },
  210240: { nome: 'Operação não Realizada', descEvento: 'Operacao nao Realizada', xJust: 'required', conclusive: true }
}
export const TP_EVENTOS = Object.keys(MANIFESTACAO_EVENTS) as TpEvento[]

export function isTpEvento (v: unknown): v is TpEvento {
  return typeof v === 'string' && Object.hasOwn(MANIFESTACAO_EVENTS, v)
}

export interface EventoFields {
  tpAmb: 1 | 2
  /** The recipient (the event's author): 14 characters. */
  cnpj: string
  chNFe: string
  tpEvento: TpEvento
  /** 1 or 2 (NT 2020.001 v1.50: each conclusive event at most twice). */
  nSeqEvento: number
  /** `AAAA-MM-DDThh:mm:ss-03:00` (eventDateTime). */
  dhEvento: string
  xJust?: string | undefined
}

/** `ID` + tpEvento + chNFe + nSeqEvento in two digits: 54 characters (pattern `ID[0-9]{52}`). */
export function eventoId (tpEvento: string, chNFe: string, nSeqEvento: number): string {
  return `ID${tpEvento}${chNFe}${String(nSeqEvento).padStart(2, '0')}`
}

/**
 * dhEvento in Brasília time (UTC−03:00; no daylight saving since 2019), whole seconds, computed
 * from UTC without any local-time API: the schema's TDateTimeUTC takes whole-hour offsets and no
 * `Z`. It is set a minute back, so a clock a little ahead of the authority's is not answered
 * 578 (event after the processing time).
 */
export function eventDateTime (nowMs: number): string {
  const t = new Date(Math.floor(nowMs / 1000) * 1000 - 60_000 - 3 * 3_600_000)
  return `${t.toISOString().slice(0, 19)}-03:00`
}

/** 15 digits: the time in ms (13) and two random digits; unique enough for our own log lines, which is all the authority uses it for. */
export function newIdLote (nowMs: number): string {
  return `${String(nowMs).padStart(13, '0').slice(-13)}${String(Math.floor(Math.random() * 100)).padStart(2, '0')}`
}

export function escapeXml (s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;')
}

/** The unsigned `evento`, with its own default namespace, no whitespace between tags (cStat 588 otherwise). */
export function buildEvento (f: EventoFields): string {
  const ev = MANIFESTACAO_EVENTS[f.tpEvento]
  const xJust = f.xJust === undefined || ev.xJust === 'absent' ? '' : `<xJust>${escapeXml(f.xJust)}</xJust>`
  return `<evento xmlns="${NFE_NS}" versao="1.00">` +
    `<infEvento Id="${eventoId(f.tpEvento, f.chNFe, f.nSeqEvento)}">` +
    `<cOrgao>${COrgaoAN}</cOrgao><tpAmb>${f.tpAmb}</tpAmb><CNPJ>${escapeXml(f.cnpj)}</CNPJ><chNFe>${f.chNFe}</chNFe>` +
    `<dhEvento>${f.dhEvento}</dhEvento><tpEvento>${f.tpEvento}</tpEvento><nSeqEvento>${f.nSeqEvento}</nSeqEvento><verEvento>1.00</verEvento>` +
    `<detEvento versao="1.00"><descEvento>${ev.descEvento}</descEvento>${xJust}</detEvento>` +
    '</infEvento></evento>'
}

/** Signs one `evento` (the profile above); returns the signed `evento` as text. */
export function signEvento (evento: string, signer: { key: KeyObject, certDer: Buffer }): string {
  const sig = new SignedXml({
    privateKey: signer.key.export({ type: 'pkcs8', format: 'pem' }),
    signatureAlgorithm: SIGNATURE_PROFILE.signature,
    canonicalizationAlgorithm: SIGNATURE_PROFILE.c14n,
    // Only the signer's certificate: no chain, no X509IssuerSerial (the NF-e xmldsig schema).
    getKeyInfoContent: () => `<X509Data><X509Certificate>${signer.certDer.toString('base64')}</X509Certificate></X509Data>`
  })
  sig.addReference({
    xpath: "/*[local-name(.)='evento']/*[local-name(.)='infEvento']",
    transforms: [SIGNATURE_PROFILE.enveloped, SIGNATURE_PROFILE.c14n],
    digestAlgorithm: SIGNATURE_PROFILE.digest
  })
  sig.computeSignature(evento, { location: { reference: "/*[local-name(.)='evento']", action: 'append' } })
  return sig.getSignedXml()
}

/** `envEvento` 1.00 around 1 to 20 signed events, and the SOAP 1.2 envelope around it. */
export function buildEnvEventoEnvelope (idLote: string, signedEventos: string[]): string {
  if (signedEventos.length < 1 || signedEventos.length > MAX_EVENTS_PER_BATCH) throw new RangeError(`envEvento holds 1 to ${MAX_EVENTS_PER_BATCH} events, not ${signedEventos.length}`)
  const env = `<envEvento xmlns="${NFE_NS}" versao="1.00"><idLote>${idLote}</idLote>${signedEventos.join('')}</envEvento>`
  return '<?xml version="1.0" encoding="utf-8"?>' +
    `<soap:Envelope xmlns:soap="${SOAP12_NS}"><soap:Body><nfeDadosMsg xmlns="${EVENTO_WSDL_NS}">${env}</nfeDadosMsg></soap:Body></soap:Envelope>`
}

/** `procEventoNFe` 1.00 (procEventoNFe_v1.00.xsd): the signed event followed by the authority's retEvento, as archived. */
export function buildProcEventoNFe (signedEvento: string, retEvento: string): string {
  return `<procEventoNFe xmlns="${NFE_NS}" versao="1.00">${signedEvento}${retEvento}</procEventoNFe>`
}

/**
 * xJust: 15 to 255 characters of U+0020..U+00FF with no blank at either end (the schema's
 * pattern `[!-ÿ]{1}[ -ÿ]{0,}[!-ÿ]{1}`). Blanks around it are trimmed; anything else outside
 * the rule is refused with a sentence naming it (undefined: valid).
 */
export function xJustProblem (xJust: string): string | undefined {
  if (xJust.length < 15) return `it has ${xJust.length} characters; the authority requires 15 to 255`
  if (xJust.length > 255) return `it has ${xJust.length} characters; the authority allows at most 255`
  const bad = /[^\u0020-\u007e\u00a0-\u00ff]/.exec(xJust)
  if (bad !== null) {
    const code = bad[0].codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')
    return `it holds a character the authority does not accept (U+${code}${code < '0020' ? ', a line break or control character' : ''}): only Latin-1 letters, digits, punctuation and spaces, on one line`
  }
  return undefined
}
