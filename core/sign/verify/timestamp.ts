/**
 * RFC 3161 time-stamp tokens: the signature-time-stamp of a PAdES-T signature (its
 * messageImprint is the hash of the signature value) and the document time-stamp of
 * B-LTA (/DocTimeStamp, its imprint the hash of the ByteRange bytes). A token is a CMS
 * SignedData over a TSTInfo (RFC 3161 §2.4.2), signed by a certificate whose extended
 * key usage is timeStamping alone and critical (§2.3).
 */
import { createHash } from 'node:crypto'
import type { X509Certificate } from 'node:crypto'
import * as pkijs from 'pkijs'
import { OID, bytesOf, checkSigner, encapsulatedContent, hashName, parseCms } from './cms.js'
import { buildPath, certificateFacts, expiredAt, x509 } from './chain.js'
import type { TrustAnchor } from './chain.js'

export interface TimestampCheck {
  /** The authority's time (TSTInfo genTime), when the token could be read. */
  time: Date | null
  /** The authority's certificate subject (or the TSTInfo tsa name). */
  authority: string | null
  /** Token intact, over the right bytes, signed by a time-stamping certificate. */
  valid: boolean
  /** The authority's certificate chains to an anchor of the trust store and was valid at `time`. */
  trusted: boolean
  /** Every certificate of the authority's chain is inside its validity now. */
  validNow: boolean
  problems: string[]
  /** Certificates the token carries (DER), for the validation pool. */
  certificates: Buffer[]
}

/** Checks `token` (DER ContentInfo); `imprintOf(hash)` hashes the bytes it must cover; `now` is the verification's "now". */
export function checkTimestamp (token: Buffer, imprintOf: (hash: string) => Buffer, anchors: TrustAnchor[], pool: X509Certificate[], now: Date): TimestampCheck {
  const out: TimestampCheck = { time: null, authority: null, valid: false, trusted: false, validNow: false, problems: [], certificates: [] }
  let cms
  try {
    cms = parseCms(token)
  } catch (err) {
    out.problems.push(`The time-stamp token cannot be read: ${(err as Error).message}.`)
    return out
  }
  out.certificates = cms.certificates
  const content = encapsulatedContent(cms.signedData)
  if (cms.signedData.encapContentInfo.eContentType !== OID.tstInfo || content === undefined) {
    out.problems.push('The time-stamp token does not hold a TSTInfo.')
    return out
  }
  let info: pkijs.TSTInfo
  try {
    info = pkijs.TSTInfo.fromBER(new Uint8Array(content))
  } catch {
    out.problems.push('The time-stamp token\'s TSTInfo cannot be read.')
    return out
  }
  out.time = info.genTime
  const imprintHash = hashName(info.messageImprint.hashAlgorithm.algorithmId)
  const imprintOk = imprintHash !== undefined && bytesOf(info.messageImprint.hashedMessage.valueBlock.valueHexView).equals(imprintOf(imprintHash))
  if (!imprintOk) out.problems.push('The time-stamp was issued over other bytes than the ones it is attached to (messageImprint mismatch).')
  const signer = checkSigner(cms, (hash) => createHash(hash).update(content).digest(), OID.tstInfo)
  out.problems.push(...signer.problems.map((p) => `Time-stamp token: ${p}`))
  let ekuOk = false
  if (signer.certificate !== undefined) {
    const tsa = x509(signer.certificate)
    out.authority = certificateFacts(tsa).subject
    const eku = pkijs.Certificate.fromBER(new Uint8Array(signer.certificate)).extensions?.find((e) => e.extnID === '2.5.29.37')
    ekuOk = eku !== undefined && eku.critical && (tsa.keyUsage ?? []).length === 1 && tsa.keyUsage?.[0] === OID.ekuTimeStamping
    if (!ekuOk) out.problems.push('The time-stamp authority\'s certificate is not a time-stamping certificate (RFC 3161 §2.3: critical extended key usage timeStamping).')
    const path = buildPath(tsa, [...cms.certificates.map(x509), ...pool], anchors)
    const expired = expiredAt(path.certificates, info.genTime)
    if (expired.length > 0) out.problems.push(`The time-stamp authority's chain was not valid at its time: ${expired.join('; ')}.`)
    out.problems.push(...path.problems.map((p) => `Time-stamp authority: ${p}`))
    out.trusted = path.anchor !== undefined && path.problems.length === 0 && expired.length === 0
    out.validNow = expiredAt(path.certificates, now).length === 0
  }
  out.valid = imprintOk && signer.digestMatches && signer.signatureValid && ekuOk
  return out
}
