/**
 * Certificate paths and their trust: from the signer's certificate through the
 * certificates the file carries (the CMS, the DSS) to an anchor of the configured trust
 * store (RFC 5280 §6, the parts a document signature needs: issuer names and keys,
 * signatures, CA basic constraints and keyCertSign, validity periods), and the revocation
 * data the file carries (OCSP answers and CRLs from the DSS or the CMS, RFC 6960 / RFC 5280 §5).
 */
import { X509Certificate, createHash } from 'node:crypto'
import * as asn1js from 'asn1js'
import * as pkijs from 'pkijs'
import { readKeyUsage } from '../extensions.js'
import { bytesOf, verifyWith, x509 } from './cms.js'

export interface TrustAnchor {
  cert: X509Certificate
  /** Where it came from (a file name), for the report. */
  source: string
}

export interface CertificateFacts {
  subject: string
  issuer: string
  serialNumber: string
  validFrom: Date
  validUntil: Date
  sha256: string
}

export function certificateFacts (cert: X509Certificate): CertificateFacts {
  return {
    subject: oneLine(cert.subject),
    issuer: oneLine(cert.issuer),
    serialNumber: cert.serialNumber.toUpperCase(),
    validFrom: new Date(cert.validFrom),
    validUntil: new Date(cert.validTo),
    sha256: createHash('sha256').update(cert.raw).digest('hex').toUpperCase()
  }
}

const oneLine = (dn: string): string => dn.split('\n').reverse().join(', ')

export interface CertificatePath {
  /** Signer first, then each issuer; ends at the anchor when trusted. */
  certificates: X509Certificate[]
  anchor: TrustAnchor | undefined
  /** Why the path stops short of an anchor or is not acceptable; empty when trusted. */
  problems: string[]
}

export { x509 }

function issues (issuer: X509Certificate, subject: X509Certificate): boolean {
  try {
    return subject.checkIssued(issuer) && subject.verify(issuer.publicKey)
  } catch {
    return false
  }
}

function sameCertificate (a: X509Certificate, b: X509Certificate): boolean {
  return a.raw.equals(b.raw) || (a.subject === b.subject && a.publicKey.equals(b.publicKey))
}

/** Builds the path from `leaf` to an anchor; `pool` holds untrusted intermediates. */
export function buildPath (leaf: X509Certificate, pool: X509Certificate[], anchors: TrustAnchor[]): CertificatePath {
  const certificates = [leaf]
  const problems: string[] = []
  for (let depth = 0; depth < 12; depth++) {
    const current = certificates[certificates.length - 1]!
    const itself = anchors.find((a) => sameCertificate(a.cert, current))
    if (itself !== undefined) return { certificates, anchor: itself, problems: caProblems(certificates) }
    const byAnchor = anchors.find((a) => issues(a.cert, current))
    if (byAnchor !== undefined) {
      certificates.push(byAnchor.cert)
      return { certificates, anchor: byAnchor, problems: caProblems(certificates) }
    }
    const next = pool.find((c) => !certificates.some((p) => sameCertificate(p, c)) && issues(c, current))
    if (next === undefined) {
      const selfSigned = issues(current, current)
      problems.push(selfSigned
        ? `The chain ends at the root "${oneLine(current.subject)}", which is not in the trust store.`
        : `The issuer of "${oneLine(current.subject)}" is neither in the file nor in the trust store.`)
      return { certificates, anchor: undefined, problems: [...caProblems(certificates), ...problems] }
    }
    certificates.push(next)
  }
  return { certificates, anchor: undefined, problems: ['The certificate chain is longer than 12 certificates.'] }
}

function caProblems (path: X509Certificate[]): string[] {
  const out: string[] = []
  for (const issuer of path.slice(1)) {
    const usage = readKeyUsage(issuer.raw)
    if (!issuer.ca) out.push(`"${oneLine(issuer.subject)}" issued a certificate but is not a certification authority (basicConstraints).`)
    else if (usage !== undefined && !usage.includes('keyCertSign')) out.push(`"${oneLine(issuer.subject)}" may not sign certificates (keyUsage without keyCertSign).`)
  }
  return out
}

/** Certificates of the path outside their validity period at `at`. */
export function expiredAt (path: X509Certificate[], at: Date): string[] {
  const t = at.getTime()
  return path.filter((c) => t < new Date(c.validFrom).getTime() || t > new Date(c.validTo).getTime())
    .map((c) => `"${oneLine(c.subject)}" (valid ${new Date(c.validFrom).toISOString()} to ${new Date(c.validTo).toISOString()})`)
}

export interface RevocationData {
  /** DER OCSPResponse values. */
  ocsps: Buffer[]
  /** DER CertificateList values. */
  crls: Buffer[]
}

export interface RevocationStatus {
  status: 'GOOD' | 'REVOKED' | 'UNKNOWN' | 'NO_DATA'
  source: 'OCSP' | 'CRL' | null
  revokedAt: Date | null
}

const OCSP_BASIC = '1.3.6.1.5.5.7.48.1.1'
const EKU_OCSP_SIGNING = '1.3.6.1.5.5.7.3.9'

const sameSerial = (a: asn1js.Integer, b: asn1js.Integer): boolean => a.isEqual(b)

/** What the OCSP answers and CRLs say about `cert` (issued by `issuer`) at `at`; only data signed by the issuer (or its delegated OCSP responder) counts. */
export async function revocationStatus (cert: X509Certificate, issuer: X509Certificate, data: RevocationData, at: Date): Promise<RevocationStatus> {
  if (data.ocsps.length === 0 && data.crls.length === 0) return { status: 'NO_DATA', source: null, revokedAt: null }
  const subject = pkijs.Certificate.fromBER(new Uint8Array(cert.raw))
  const issuerCert = pkijs.Certificate.fromBER(new Uint8Array(issuer.raw))
  for (const der of data.ocsps) {
    try {
      const response = pkijs.OCSPResponse.fromBER(new Uint8Array(der))
      if (response.responseStatus.valueBlock.valueDec !== 0 || response.responseBytes?.responseType !== OCSP_BASIC) continue
      const basic = pkijs.BasicOCSPResponse.fromBER(response.responseBytes.response.valueBlock.valueHexView)
      const state = await basic.getCertificateStatus(subject, issuerCert)
      if (!state.isForCertificate) continue
      if (!ocspSignedByIssuer(basic, issuer)) continue
      const single = basic.tbsResponseData.responses.find((r) => sameSerial(r.certID.serialNumber, subject.serialNumber))
      if (state.status === 1) {
        const revokedAt = revocationTimeOf(single?.certStatus)
        if (revokedAt === null || revokedAt.getTime() <= at.getTime()) return { status: 'REVOKED', source: 'OCSP', revokedAt }
        return { status: 'GOOD', source: 'OCSP', revokedAt }
      }
      return { status: state.status === 0 ? 'GOOD' : 'UNKNOWN', source: 'OCSP', revokedAt: null }
    } catch { /* not an OCSP answer we can read: try the next */ }
  }
  for (const der of data.crls) {
    try {
      const crl = pkijs.CertificateRevocationList.fromBER(new Uint8Array(der))
      if (!crl.issuer.isEqual(subject.issuer)) continue
      if (!verifyWith(issuer, crl.signature, undefined, bytesOf(crl.tbsView), bytesOf(crl.signatureValue.valueBlock.valueHexView))) continue
      const entry = crl.revokedCertificates?.find((r) => sameSerial(r.userCertificate, subject.serialNumber))
      if (entry === undefined) return { status: 'GOOD', source: 'CRL', revokedAt: null }
      const revokedAt = entry.revocationDate.value
      if (revokedAt.getTime() <= at.getTime()) return { status: 'REVOKED', source: 'CRL', revokedAt }
      return { status: 'GOOD', source: 'CRL', revokedAt }
    } catch { /* not a CRL we can read */ }
  }
  return { status: 'NO_DATA', source: null, revokedAt: null }
}

function revocationTimeOf (status: unknown): Date | null {
  // certStatus revoked [1] IMPLICIT RevokedInfo { revocationTime GeneralizedTime, ... }
  const block = status as asn1js.Constructed | undefined
  const first = block?.valueBlock?.value?.[0]
  if (first instanceof asn1js.GeneralizedTime) return first.toDate()
  return null
}

function ocspSignedByIssuer (basic: pkijs.BasicOCSPResponse, issuer: X509Certificate): boolean {
  const tbs = bytesOf(basic.tbsResponseData.tbsView)
  const signature = bytesOf(basic.signature.valueBlock.valueHexView)
  if (verifyWith(issuer, basic.signatureAlgorithm, undefined, tbs, signature)) return true
  for (const c of basic.certs ?? []) {
    const responder = new X509Certificate(bytesOf(c.toSchema().toBER(false)))
    const delegated = issues(issuer, responder) && (responder.keyUsage ?? []).includes(EKU_OCSP_SIGNING)
    if (delegated && verifyWith(responder, basic.signatureAlgorithm, undefined, tbs, signature)) return true
  }
  return false
}
