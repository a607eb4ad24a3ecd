/**
 * Revocation data for PAdES-B-LT: for every certificate of the chains a signature relies
 * on (the signer's, the timestamp authority's), an OCSP response (RFC 6960) from the
 * responder its Authority Information Access names, or failing that a CRL (RFC 5280 §5)
 * from its CRL distribution points. Each answer is checked before it is embedded: an
 * OCSP response must be signed by the certificate's issuer or by a responder that issuer
 * delegated (pkijs checks both), be about this certificate, repeat our nonce when it
 * echoes one and be current; a CRL must be signed by the issuer and be current. A
 * certificate found revoked is SIGN_CERT_REVOKED; one whose status cannot be obtained is
 * SIGN_REVOCATION_UNAVAILABLE, naming the certificate and what failed.
 *
 * ASN.1 is read and written with pkijs/asn1js. Self-signed certificates (the roots) are
 * trust anchors and have no status to fetch.
 */
import { X509Certificate, randomBytes } from 'node:crypto'
import * as asn1js from 'asn1js'
import * as pkijs from 'pkijs'
import { SignError } from './errors.js'

const OID_AIA = '1.3.6.1.5.5.7.1.1'
const OID_AD_OCSP = '1.3.6.1.5.5.7.48.1'
const OID_CRL_DP = '2.5.29.31'
const OID_OCSP_BASIC = '1.3.6.1.5.5.7.48.1.1'
const OID_OCSP_NONCE = '1.3.6.1.5.5.7.48.1.2'
/** GeneralName's uniformResourceIdentifier choice. */
const GN_URI = 6
/** Clocks of the responder and ours may disagree by this much. */
const CLOCK_SKEW_MS = 5 * 60_000

export interface RevocationOptions {
  /** Longest one fetch (one OCSP request or one CRL download) may take. */
  timeoutMs: number
  /** Largest answer accepted from a responder or a CRL distribution point. */
  maxBytes: number
  /** The time the data must be current at (default now). */
  now?: Date | undefined
}

/** What a DSS holds (ETSI EN 319 142-1 §5.4.2): DER certificates, full OCSPResponses, CRLs. */
export interface ValidationData {
  certificates: Buffer[]
  ocsps: Buffer[]
  crls: Buffer[]
}

interface Cert {
  der: Buffer
  x509: X509Certificate
  pki: pkijs.Certificate
  sources: { ocsp: string[], crl: string[] }
  selfSigned: boolean
}

/**
 * Parsed certificates, kept between signatures: a thread signs with one chain for its life,
 * and asn1js parsing a certificate costs more than checking the answers about it. Bounded;
 * the oldest entry goes first.
 */
const parsed = new Map<string, Cert>()
const PARSED_MAX = 64

function parse (der: Buffer): Cert {
  const key = der.toString('base64')
  let cert = parsed.get(key)
  if (cert === undefined) {
    const x509 = new X509Certificate(der)
    cert = { der, x509, pki: pkijs.Certificate.fromBER(der), sources: revocationSources(der), selfSigned: x509.checkIssued(x509) && x509.verify(x509.publicKey) }
    if (parsed.size >= PARSED_MAX) parsed.delete(parsed.keys().next().value!)
    parsed.set(key, cert)
  }
  return cert
}

/** The certificate as a person reads it in a message: its subject's CN and its serial. */
function describe (cert: Cert): string {
  const cn = /(?:^|\n)CN=([^\n]+)/.exec(cert.x509.subject)?.[1] ?? cert.x509.subject.replace(/\n/g, ', ')
  return `"${cn}" (serial ${cert.x509.serialNumber})`
}

function uris (names: pkijs.GeneralName[] | undefined): string[] {
  return (names ?? []).filter((n) => n.type === GN_URI && typeof n.value === 'string').map((n) => n.value as string)
    .filter((u) => /^https?:\/\//i.test(u))
}

/** OCSP responder and CRL URLs the certificate names (http and https only; LDAP is not fetched). */
export function revocationSources (der: Buffer): { ocsp: string[], crl: string[] } {
  const cert = pkijs.Certificate.fromBER(der)
  const ocsp: string[] = []
  const crl: string[] = []
  for (const ext of cert.extensions ?? []) {
    if (ext.extnID === OID_AIA && ext.parsedValue instanceof pkijs.InfoAccess) {
      for (const d of ext.parsedValue.accessDescriptions) {
        if (d.accessMethod === OID_AD_OCSP) ocsp.push(...uris([d.accessLocation]))
      }
    }
    if (ext.extnID === OID_CRL_DP && ext.parsedValue instanceof pkijs.CRLDistributionPoints) {
      for (const dp of ext.parsedValue.distributionPoints) {
        if (Array.isArray(dp.distributionPoint)) crl.push(...uris(dp.distributionPoint))
      }
    }
  }
  return { ocsp, crl }
}

/** A failure of one source; the caller tries the next and reports them all if none works. */
class SourceFailed extends Error {}

async function download (url: string, options: RevocationOptions, init: RequestInit, what: string): Promise<Buffer> {
  let res: Response
  try {
    res = await fetch(url, { ...init, signal: AbortSignal.timeout(options.timeoutMs), redirect: 'follow' })
  } catch (err) {
    const timedOut = err instanceof Error && (err.name === 'TimeoutError' || err.name === 'AbortError')
    throw new SourceFailed(timedOut ? `${what} ${url} did not answer within ${options.timeoutMs} ms` : `${what} ${url} could not be reached`)
  }
  if (!res.ok) {
    await res.body?.cancel()
    throw new SourceFailed(`${what} ${url} answered HTTP ${res.status}`)
  }
  const declared = Number(res.headers.get('content-length') ?? '0')
  if (declared > options.maxBytes) {
    await res.body?.cancel()
    throw new SourceFailed(`${what} ${url} sent ${declared} bytes, more than the ${options.maxBytes} accepted`)
  }
  const chunks: Uint8Array[] = []
  let size = 0
  try {
    for await (const chunk of res.body ?? []) {
      size += chunk.byteLength
      if (size > options.maxBytes) {
        throw new SourceFailed(`${what} ${url} sent more than the ${options.maxBytes} bytes accepted`)
      }
      chunks.push(chunk)
    }
  } catch (err) {
    if (err instanceof SourceFailed) throw err
    const timedOut = err instanceof Error && (err.name === 'TimeoutError' || err.name === 'AbortError')
    throw new SourceFailed(timedOut ? `${what} ${url} did not finish answering within ${options.timeoutMs} ms` : `${what} ${url} broke off its answer`)
  }
  return Buffer.concat(chunks)
}

function current (thisUpdate: Date, nextUpdate: Date | undefined, now: Date): string | undefined {
  if (thisUpdate.getTime() > now.getTime() + CLOCK_SKEW_MS) return `is dated ${thisUpdate.toISOString()}, in the future`
  if (nextUpdate !== undefined && nextUpdate.getTime() < now.getTime() - CLOCK_SKEW_MS) return `expired at ${nextUpdate.toISOString()} (nextUpdate)`
  return undefined
}

type Status = { kind: 'good', ocsp?: Buffer, crl?: Buffer, extraCerts: Buffer[] } | { kind: 'revoked', at: Date | undefined, source: string }

async function ocspStatus (url: string, cert: Cert, issuer: Cert, known: Cert[], options: RevocationOptions): Promise<Status> {
  const now = options.now ?? new Date()
  const request = new pkijs.OCSPRequest()
  await request.createForCertificate(cert.pki, { hashAlgorithm: 'SHA-1', issuerCertificate: issuer.pki })
  const nonce = randomBytes(16)
  request.tbsRequest.requestExtensions = [new pkijs.Extension({
    extnID: OID_OCSP_NONCE,
    extnValue: new asn1js.OctetString({ valueHex: nonce }).toBER()
  })]
  const body = Buffer.from(request.toSchema(true).toBER())
  const answer = await download(url, options, { method: 'POST', headers: { 'content-type': 'application/ocsp-request', accept: 'application/ocsp-response' }, body }, 'The OCSP responder')
  let response: pkijs.OCSPResponse
  let basic: pkijs.BasicOCSPResponse
  try {
    response = pkijs.OCSPResponse.fromBER(answer)
    const status = response.responseStatus.valueBlock.valueDec
    if (status !== 0) throw new SourceFailed(`The OCSP responder ${url} refused the request (OCSPResponseStatus ${status})`)
    if (response.responseBytes?.responseType !== OID_OCSP_BASIC) throw new SourceFailed(`The OCSP responder ${url} sent no basic OCSP response`)
    basic = pkijs.BasicOCSPResponse.fromBER(response.responseBytes.response.valueBlock.valueHexView)
  } catch (err) {
    if (err instanceof SourceFailed) throw err
    throw new SourceFailed(`The OCSP responder ${url} sent an answer that is not a DER OCSPResponse`)
  }
  // The issuer itself may answer (the common case, checked first: pkijs compares every
  // certificate it is given by re-encoding it); otherwise a delegated responder must chain to
  // the certificates given (the signer's and the authority's chains), and pkijs checks its
  // OCSPSigning EKU.
  let signed = await basic.verify({ trustedResponders: [issuer.pki], issuerCerts: [issuer.pki] }).catch(() => false)
  if (!signed) signed = await basic.verify({ trustedCerts: known.map((c) => c.pki), issuerCerts: [issuer.pki] }).catch(() => false)
  if (!signed) throw new SourceFailed(`The OCSP response from ${url} is not signed by the certificate's issuer or a responder it authorized`)
  const echoed = basic.tbsResponseData.responseExtensions?.find((e) => e.extnID === OID_OCSP_NONCE)
  if (echoed !== undefined) {
    const inner = asn1js.fromBER(echoed.extnValue.valueBlock.valueHexView).result
    const value = inner instanceof asn1js.OctetString ? Buffer.from(inner.valueBlock.valueHexView) : Buffer.alloc(0)
    if (!value.equals(nonce)) throw new SourceFailed(`The OCSP response from ${url} does not repeat the request's nonce`)
  }
  const single = findSingle(basic, request.tbsRequest.requestList[0]!.reqCert)
  if (single === undefined) throw new SourceFailed(`The OCSP response from ${url} is about another certificate`)
  const stale = current(single.thisUpdate, single.nextUpdate, now)
  if (stale !== undefined) throw new SourceFailed(`The OCSP response from ${url} ${stale}`)
  const certStatus = single.certStatus as asn1js.BaseBlock & { idBlock: { tagNumber: number } }
  const tag = certStatus.idBlock.tagNumber
  if (tag === 1) {
    const at = (certStatus as unknown as { valueBlock: { value?: asn1js.GeneralizedTime[] } }).valueBlock.value?.[0]
    return { kind: 'revoked', at: at instanceof asn1js.GeneralizedTime ? at.toDate() : undefined, source: `the OCSP responder ${url}` }
  }
  if (tag !== 0) throw new SourceFailed(`The OCSP responder ${url} does not know the certificate (status unknown)`)
  return { kind: 'good', ocsp: answer, extraCerts: (basic.certs ?? []).map((c) => Buffer.from(c.toSchema().toBER())) }
}

/** The answer about the certificate our request named (its CertID, SHA-1 as asked). */
function findSingle (basic: pkijs.BasicOCSPResponse, asked: pkijs.CertID): { certStatus: unknown, thisUpdate: Date, nextUpdate: Date | undefined } | undefined {
  const single = basic.tbsResponseData.responses.find((r) => r.certID.isEqual(asked))
  return single === undefined ? undefined : { certStatus: single.certStatus, thisUpdate: single.thisUpdate, nextUpdate: single.nextUpdate }
}

/**
 * CRLs downloaded, parsed and found signed by an issuer, kept for CRL_REUSE_MS (and never past
 * their nextUpdate): a CA's CRL can run to megabytes, and within minutes a new download gives
 * the same list. OCSP answers are never reused: each signature gets its own, newer than it.
 */
interface CachedCrl { der: Buffer, crl: pkijs.CertificateRevocationList, fetchedAt: number, signedBy: Set<string> }
const crlCache = new Map<string, CachedCrl>()
const CRL_CACHE_MAX = 16
export const CRL_REUSE_MS = 5 * 60_000

/** Forgets the CRLs kept between signatures (tests that change what a distribution point serves). */
export function forgetCachedCrls (): void {
  crlCache.clear()
}

async function fetchCrl (url: string, options: RevocationOptions, now: Date): Promise<CachedCrl> {
  const kept = crlCache.get(url)
  if (kept !== undefined && now.getTime() - kept.fetchedAt < CRL_REUSE_MS && (kept.crl.nextUpdate === undefined || kept.crl.nextUpdate.value.getTime() > now.getTime())) return kept
  const der = await download(url, options, { method: 'GET', headers: { accept: 'application/pkix-crl' } }, 'The CRL distribution point')
  let crl: pkijs.CertificateRevocationList
  try {
    crl = pkijs.CertificateRevocationList.fromBER(der)
  } catch {
    throw new SourceFailed(`The CRL distribution point ${url} sent something that is not a DER CRL`)
  }
  const fresh = { der, crl, fetchedAt: now.getTime(), signedBy: new Set<string>() }
  crlCache.delete(url)
  if (crlCache.size >= CRL_CACHE_MAX) crlCache.delete(crlCache.keys().next().value!)
  crlCache.set(url, fresh)
  return fresh
}

async function crlStatus (url: string, cert: Cert, issuer: Cert, options: RevocationOptions, crls: Map<string, Promise<CachedCrl>>): Promise<Status> {
  const now = options.now ?? new Date()
  let pending = crls.get(url)
  if (pending === undefined) {
    pending = fetchCrl(url, options, now)
    crls.set(url, pending)
  }
  const fetched = await pending
  const { der, crl } = fetched
  if (!crl.issuer.isEqual(cert.pki.issuer)) throw new SourceFailed(`The CRL from ${url} is issued by another authority than the certificate`)
  const issuerKey = issuer.der.toString('base64')
  if (!fetched.signedBy.has(issuerKey)) {
    const signed = await crl.verify({ issuerCertificate: issuer.pki }).catch(() => false)
    if (!signed) throw new SourceFailed(`The CRL from ${url} is not signed by the certificate's issuer`)
    fetched.signedBy.add(issuerKey)
  }
  const stale = current(crl.thisUpdate.value, crl.nextUpdate?.value, now)
  if (stale !== undefined) throw new SourceFailed(`The CRL from ${url} ${stale}`)
  const entry = crl.revokedCertificates?.find((r) => Buffer.from(r.userCertificate.valueBlock.valueHexView).equals(Buffer.from(cert.pki.serialNumber.valueBlock.valueHexView)))
  if (entry !== undefined) return { kind: 'revoked', at: entry.revocationDate.value, source: `the CRL from ${url}` }
  return { kind: 'good', crl: der, extraCerts: [] }
}

/** The status of one certificate: each OCSP responder in turn, then each CRL; the first usable answer decides. */
async function statusOf (cert: Cert, issuer: Cert, known: Cert[], options: RevocationOptions, crls: Map<string, Promise<CachedCrl>>): Promise<Status & { kind: 'good' }> {
  const { sources } = cert
  if (sources.ocsp.length === 0 && sources.crl.length === 0) {
    throw new SignError('SIGN_REVOCATION_UNAVAILABLE', `The certificate ${describe(cert)} names no OCSP responder and no CRL distribution point (http), so its revocation status cannot be embedded for PAdES-B-LT.`)
  }
  const failures: string[] = []
  const attempts = [
    ...sources.ocsp.map((url) => async () => await ocspStatus(url, cert, issuer, known, options)),
    ...sources.crl.map((url) => async () => await crlStatus(url, cert, issuer, options, crls))
  ]
  for (const attempt of attempts) {
    let status: Status
    try {
      status = await attempt()
    } catch (err) {
      if (!(err instanceof SourceFailed)) throw err
      failures.push(err.message)
      continue
    }
    if (status.kind === 'revoked') {
      throw new SignError('SIGN_CERT_REVOKED', `The certificate ${describe(cert)} is revoked${status.at === undefined ? '' : ` since ${status.at.toISOString()}`}, according to ${status.source}; it cannot sign.`)
    }
    return status
  }
  throw new SignError('SIGN_REVOCATION_UNAVAILABLE', `The revocation status of the certificate ${describe(cert)} could not be obtained: ${failures.join('; ')}.`)
}

/**
 * Certificates and revocation data for the given chains (each ordered leaf first; a
 * certificate's issuer is looked for among all certificates given). Fetches run in
 * parallel, one per certificate, each within `timeoutMs`; a CRL shared by several
 * certificates is downloaded once.
 */
export async function collectValidationData (chains: Buffer[][], options: RevocationOptions): Promise<ValidationData> {
  const all = new Map<string, Cert>()
  for (const der of chains.flat()) all.set(der.toString('base64'), parse(der))
  const certs = [...all.values()]
  const crls = new Map<string, Promise<CachedCrl>>()
  const statuses = await Promise.all(certs.filter((c) => !c.selfSigned).map(async (cert) => {
    const issuer = certs.find((c) => c !== cert && cert.x509.checkIssued(c.x509) && cert.x509.verify(c.x509.publicKey))
    if (issuer === undefined) {
      throw new SignError('SIGN_REVOCATION_UNAVAILABLE', `The issuer of the certificate ${describe(cert)} is not in the chain, so its revocation status cannot be checked; complete the chain (SIGN_CERT_CHAIN_PATH) or use the timestamp authority's full chain.`)
    }
    return await statusOf(cert, issuer, certs, options, crls)
  }))
  const certificates = new Map<string, Buffer>(certs.map((c) => [c.der.toString('base64'), c.der]))
  const ocsps: Buffer[] = []
  const crlSet = new Map<string, Buffer>()
  for (const s of statuses) {
    if (s.ocsp !== undefined) ocsps.push(s.ocsp)
    if (s.crl !== undefined) crlSet.set(s.crl.toString('base64'), s.crl)
    for (const extra of s.extraCerts) certificates.set(extra.toString('base64'), extra)
  }
  return { certificates: [...certificates.values()], ocsps, crls: [...crlSet.values()] }
}
