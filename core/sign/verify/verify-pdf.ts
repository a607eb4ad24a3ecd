/**
 * Verifies every signature and document time-stamp of a PDF (ETSI EN 319 102-1 in the
 * shape PAdES needs): structure and coverage of the ByteRange, integrity of the signed
 * bytes, the signed attributes, the signer's certificate and its path to the trust
 * store, validity at the proven signing time and now, revocation data the file carries,
 * the signature time-stamp, the PAdES level and signature policy, and what later
 * incremental updates changed, against any certification's DocMDP permission.
 *
 * Verdicts: VALID (everything checks), INDETERMINATE (intact, but trust or time cannot be
 * established: a chain that reaches no anchor, a time-stamp authority not trusted, a
 * certificate expired now with no proof of the signing time) and INVALID (the bytes, the
 * signature, the time-stamp or the document were changed, or the format is broken). The
 * file's verdict is the worst of its signatures'; a file without any is UNSIGNED.
 */
import { createHash } from 'node:crypto'
import type { X509Certificate } from 'node:crypto'
import * as asn1js from 'asn1js'
import { SignError } from '../errors.js'
import { declaredSizeFault } from '../../pdf/index.js'
import { OID_ICP_CNPJ, OID_ICP_CPF_HOLDER, OID_ICP_RESPONSIBLE_DATA, OID_ICP_RESPONSIBLE_NAME, readOtherNames, readSignerIdentity } from '../icp-brasil.js'
import { readKeyUsage } from '../extensions.js'
import { changesAfter, allowedBy, exceeds, NO_CHANGES } from './changes.js'
import type { ChangesAfter } from './changes.js'
import { OID, bytesOf, checkSigner, derOf, parseCms, readPolicy, signedAttribute, signingCertificateMatches, unsignedAttribute } from './cms.js'
import type { PolicyReference } from './cms.js'
import { buildPath, certificateFacts, expiredAt, revocationStatus, x509 } from './chain.js'
import type { CertificateFacts, RevocationData, RevocationStatus, TrustAnchor } from './chain.js'
import { ICP_BRASIL_PADES_POLICIES, isIcpBrasilPolicy } from './policies.js'
import { readStructure } from './structure.js'
import type { SignatureDictionary } from './structure.js'
import { checkTimestamp } from './timestamp.js'
import type { TimestampCheck } from './timestamp.js'

export type Verdict = 'VALID' | 'INDETERMINATE' | 'INVALID'
export type PadesLevel = 'B-B' | 'B-T' | 'B-LT' | 'B-LTA'

export interface VerifyOptions {
  /** Trust anchors (the configured trust store). */
  anchors: TrustAnchor[]
  /** "Now" for the validity checks; default the current time. */
  now?: Date
}

export interface SignerReport {
  name: string
  /** CPF or CNPJ, as readSignerIdentity finds it (subject serialNumber, then otherName, then CN). */
  document: string
  documentKind: 'CPF' | 'CNPJ' | null
  /** The ICP-Brasil otherName entries of the subjectAltName (DOC-ICP-04), decoded. */
  icpBrasil: { cpf: string | null, cnpj: string | null, responsibleName: string | null, responsibleCpf: string | null, birthDate: string | null }
  certificate: CertificateFacts
  keyUsageAllowsSigning: boolean
}

export interface SignatureReport {
  /** 1 for the oldest signature in the file. */
  index: number
  kind: 'signature' | 'document-timestamp'
  fieldName: string | null
  subFilter: string | null
  verdict: Verdict
  /** Why the verdict is not VALID, one sentence each; empty when VALID. */
  problems: string[]
  /** Remarks that do not change the verdict. */
  notes: string[]
  signer: SignerReport | null
  claimedSigningTime: Date | null
  reason: string | null
  location: string | null
  integrity: {
    byteRange: number[]
    coverage: 'WHOLE_FILE' | 'REVISION' | 'UNCLEAR'
    digestAlgorithm: string | null
    /** The signed bytes hash to the value the signature (or time-stamp) carries. */
    digestMatches: boolean
    signatureValid: boolean
    /** The signing-certificate(-v2) attribute names the certificate that verifies it; null without one. */
    signingCertificateMatches: boolean | null
  }
  chain: {
    certificates: CertificateFacts[]
    trusted: boolean
    anchor: string | null
  }
  validity: {
    /** The signing time the checks used and where it comes from. */
    signingTime: Date | null
    signingTimeSource: 'SIGNATURE_TIMESTAMP' | 'DOCUMENT_TIMESTAMP' | 'CLAIMED' | null
    atSigningTime: boolean | null
    now: boolean
  }
  revocation: {
    status: RevocationStatus['status']
    checked: Array<{ subject: string, status: RevocationStatus['status'], source: RevocationStatus['source'], revokedAt: Date | null }>
  }
  timestamp: { time: Date | null, authority: string | null, valid: boolean, trusted: boolean } | null
  pades: {
    level: PadesLevel | null
    policy: (PolicyReference & { name: string | null, publishedHash: boolean | null }) | null
    forbiddenAttributes: string[]
  }
  changesAfter: ChangesAfter
  /** The DocMDP permission of a certification signature (1, 2 or 3); null for an approval signature. */
  docMdp: 1 | 2 | 3 | null
}

export interface VerificationReport {
  verdict: Verdict | 'UNSIGNED'
  signatures: SignatureReport[]
  pageCount: number
  securityStore: { certificates: number, ocspResponses: number, crls: number, vriEntries: number } | null
}

/** Signatures and document time-stamps verified in one file, at most (real files hold a handful). */
export const MAX_SIGNATURES = 100

const WORST: Verdict[] = ['VALID', 'INDETERMINATE', 'INVALID']
const worstOf = (verdicts: Verdict[]): Verdict => verdicts.reduce<Verdict>((w, v) => WORST.indexOf(v) > WORST.indexOf(w) ? v : w, 'VALID')

/** Verifies `bytes`; throws SignError SIGN_PDF_INVALID when they are not a readable PDF. */
export async function verifyPdf (bytes: Uint8Array, options: VerifyOptions): Promise<VerificationReport> {
  const now = options.now ?? new Date()
  if (!Buffer.from(bytes.buffer, bytes.byteOffset, Math.min(1024, bytes.byteLength)).includes('%PDF-')) {
    throw new SignError('SIGN_PDF_INVALID', 'The file is not a PDF (no %PDF- header in its first 1024 bytes).', 'pdfBase64')
  }
  // Counts the file declares beyond what it holds are refused before pdf-lib allocates for them.
  const fault = declaredSizeFault(bytes)
  if (fault !== undefined) throw new SignError('SIGN_PDF_INVALID', `The PDF declares more than it holds: ${fault}. The file is damaged or crafted.`, 'pdfBase64')
  let structure
  try {
    structure = await readStructure(bytes)
  } catch (err) {
    throw new SignError('SIGN_PDF_INVALID', 'The PDF cannot be read: its structure is damaged.', 'pdfBase64', { cause: err })
  }
  // Each signature hashes up to the whole file: thousands of fields over one large file would hold a thread for minutes.
  if (structure.signatures.length > MAX_SIGNATURES) {
    throw new SignError('SIGN_PDF_UNSUPPORTED', `The PDF holds ${structure.signatures.length} signature fields with a value; this service verifies at most ${MAX_SIGNATURES} in one file.`, 'pdfBase64')
  }
  const dss = structure.dss
  const dssRevocation: RevocationData = { ocsps: dss?.ocsps ?? [], crls: dss?.crls ?? [] }
  const dssCertificates = (dss?.certs ?? []).flatMap((der) => { try { return [x509(der)] } catch { return [] } })

  // Document time-stamps first: their times prove when the signatures they cover existed.
  const reports: SignatureReport[] = []
  const contexts: Array<{ dict: SignatureDictionary, end: number }> = structure.signatures.map((dict) => ({ dict, end: (dict.byteRange[2] ?? 0) + (dict.byteRange[3] ?? 0) }))
  const docTimestamps: Array<{ end: number, check: TimestampCheck }> = []
  for (const { dict, end } of contexts) {
    if (dict.kind !== 'document-timestamp' || dict.contents === undefined || dict.problems.length > 0) continue
    const token = trimmedDer(dict.contents)
    docTimestamps.push({ end, check: checkTimestamp(token, (hash) => rangeDigest(bytes, dict.byteRange, hash), options.anchors, dssCertificates, now) })
  }
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)

  for (const [i, { dict, end }] of contexts.entries()) {
    const report = await verifyOne(bytes, dict, end, i + 1, {
      anchors: options.anchors,
      now,
      revisionEnds: structure.revisionEnds,
      dssCertificates,
      dssRevocation,
      hasDss: dss !== null,
      // Where the DSS was first written after this signature (-1: not found as text, e.g. inside an object stream).
      dssAfter: dss === null ? -1 : text.indexOf('/DSS', end),
      docTimestamps: docTimestamps.filter((d) => d.end > end)
    })
    const own = docTimestamps.find((d) => d.end === end)
    if (dict.kind === 'document-timestamp' && own !== undefined) applyDocTimestamp(report, own.check)
    reports.push(report)
  }
  return {
    verdict: reports.length === 0 ? 'UNSIGNED' : worstOf(reports.map((r) => r.verdict)),
    signatures: reports,
    pageCount: structure.pageCount,
    securityStore: dss === null ? null : { certificates: dss.certs.length, ocspResponses: dss.ocsps.length, crls: dss.crls.length, vriEntries: dss.vriCount }
  }
}

interface Context {
  anchors: TrustAnchor[]
  now: Date
  revisionEnds: number[]
  dssCertificates: X509Certificate[]
  dssRevocation: RevocationData
  hasDss: boolean
  dssAfter: number
  /** Valid-or-not document time-stamps whose revision comes after this signature's. */
  docTimestamps: Array<{ end: number, check: TimestampCheck }>
}

/** The DER value without the placeholder's trailing zeros. */
function trimmedDer (contents: Buffer): Buffer {
  const parsed = asn1js.fromBER(contents)
  return parsed.offset > 0 ? contents.subarray(0, parsed.offset) : contents
}

function rangeDigest (bytes: Uint8Array, range: number[], hash: string): Buffer {
  const [a = 0, l1 = 0, s2 = 0, l2 = 0] = range
  return createHash(hash).update(bytes.subarray(a, a + l1)).update(bytes.subarray(s2, s2 + l2)).digest()
}

function emptyReport (dict: SignatureDictionary, index: number): SignatureReport {
  return {
    index,
    kind: dict.kind,
    fieldName: dict.fieldName,
    subFilter: dict.subFilter,
    verdict: 'VALID',
    problems: [],
    notes: [],
    signer: null,
    claimedSigningTime: dict.claimedTime,
    reason: dict.reason,
    location: dict.location,
    integrity: { byteRange: dict.byteRange, coverage: 'UNCLEAR', digestAlgorithm: null, digestMatches: false, signatureValid: false, signingCertificateMatches: null },
    chain: { certificates: [], trusted: false, anchor: null },
    validity: { signingTime: null, signingTimeSource: null, atSigningTime: null, now: false },
    revocation: { status: 'NO_DATA', checked: [] },
    timestamp: null,
    pades: { level: null, policy: null, forbiddenAttributes: [] },
    changesAfter: NO_CHANGES,
    docMdp: dict.docMdp
  }
}

async function verifyOne (bytes: Uint8Array, dict: SignatureDictionary, end: number, index: number, ctx: Context): Promise<SignatureReport> {
  const report = emptyReport(dict, index)
  const invalid = (sentence: string): void => { report.problems.push(sentence); report.verdict = 'INVALID' }
  const indeterminate = (sentence: string): void => { report.problems.push(sentence); if (report.verdict === 'VALID') report.verdict = 'INDETERMINATE' }
  for (const p of dict.problems) invalid(p)
  if (dict.contents === undefined) return report

  // Coverage: the whole file, or exactly one revision (ending at a %%EOF).
  if (end === bytes.length) report.integrity.coverage = 'WHOLE_FILE'
  else if (ctx.revisionEnds.includes(end) || latin1(bytes, end - 5, end) === '%%EOF') report.integrity.coverage = 'REVISION'
  else invalid('The signed bytes stop in the middle of a revision: the signature does not cover a whole version of the document.')
  if (report.integrity.coverage !== 'UNCLEAR') {
    report.changesAfter = report.integrity.coverage === 'WHOLE_FILE' ? NO_CHANGES : changesAfter(bytes, end)
    judgeChanges(report, dict, invalid)
  }
  if (dict.kind === 'document-timestamp') return report

  let cms
  try {
    cms = parseCms(dict.contents)
  } catch (err) {
    invalid(`The signature value cannot be read: ${(err as Error).message}.`)
    return report
  }
  if (cms.trailing.some((b) => b !== 0)) report.notes.push('/Contents holds bytes after the signature value other than zero padding.')
  if (dict.subFilter !== 'ETSI.CAdES.detached' && dict.subFilter !== 'adbe.pkcs7.detached') report.notes.push(`SubFilter /${dict.subFilter ?? 'none'} is not one PAdES defines (ETSI.CAdES.detached, adbe.pkcs7.detached).`)
  if (cms.signedData.encapContentInfo.eContent !== undefined) invalid('The CMS carries the content inside it (not detached), which a PDF signature must not.')

  const signer = checkSigner(cms, (hash) => rangeDigest(bytes, dict.byteRange, hash), OID.data)
  report.integrity.digestAlgorithm = signer.digestAlgorithm
  report.integrity.digestMatches = signer.digestMatches
  report.integrity.signatureValid = signer.signatureValid
  for (const p of signer.problems) invalid(p)
  const leafDer = signer.certificate
  if (leafDer === undefined) return report
  const leaf = x509(leafDer)
  const essCert = signingCertificateMatches(cms.signer, leafDer)
  report.integrity.signingCertificateMatches = essCert.present ? essCert.matches : null
  if (essCert.present && !essCert.matches) invalid('The signing-certificate attribute names another certificate than the one the signature carries: the certificate was replaced.')
  report.signer = signerReport(leaf)
  if (!report.signer.keyUsageAllowsSigning) invalid('The signer certificate\'s key usage allows neither digitalSignature nor nonRepudiation.')

  // Forbidden and required attributes of a PAdES baseline signature (ETSI EN 319 142-1 §6.3).
  const etsi = dict.subFilter === 'ETSI.CAdES.detached'
  if (etsi && signedAttribute(cms.signer, OID.signingTime) !== undefined) {
    report.pades.forbiddenAttributes.push('signing-time')
    invalid('The signature carries a signed signing-time attribute, which a PAdES signature (ETSI.CAdES.detached) must not: the claimed time belongs in /M.')
  }
  const policy = readPolicy(cms.signer)
  if (policy !== null) {
    const known = ICP_BRASIL_PADES_POLICIES.get(policy.oid)
    report.pades.policy = { ...policy, name: known?.name ?? null, publishedHash: known === undefined ? null : known.hashes.includes(policy.hash) }
    if (known !== undefined && !known.hashes.includes(policy.hash)) report.notes.push(`The policy hash is not one ${known.name} publishes.`)
    if (known === undefined && isIcpBrasilPolicy(policy.oid)) report.notes.push(`The ICP-Brasil policy ${policy.oid} is not one this verifier knows.`)
  }

  // The signature time-stamp (B-T): over the signature value.
  const pool = [...cms.certificates.map((d) => x509(d)), ...ctx.dssCertificates]
  const tokenAttr = unsignedAttribute(cms.signer, OID.signatureTimeStampToken)
  let proven: { time: Date, source: 'SIGNATURE_TIMESTAMP' | 'DOCUMENT_TIMESTAMP' } | undefined
  if (tokenAttr !== undefined) {
    const signatureValue = bytesOf(cms.signer.signature.valueBlock.valueHexView)
    const check = checkTimestamp(derOf(tokenAttr.values[0]!), (hash) => createHash(hash).update(signatureValue).digest(), ctx.anchors, pool, ctx.now)
    report.timestamp = { time: check.time, authority: check.authority, valid: check.valid, trusted: check.trusted }
    if (!check.valid) for (const p of check.problems) invalid(p)
    else if (!check.trusted) for (const p of check.problems) indeterminate(p)
    if (check.valid && check.trusted && check.time !== null) proven = { time: check.time, source: 'SIGNATURE_TIMESTAMP' }
    pool.push(...check.certificates.map((d) => x509(d)))
  }
  const laterStamp = ctx.docTimestamps.find((d) => d.check.valid && d.check.trusted && d.check.time !== null)
  if (proven === undefined && laterStamp !== undefined) proven = { time: laterStamp.check.time!, source: 'DOCUMENT_TIMESTAMP' }

  // The certificate path and its validity.
  const path = buildPath(leaf, pool, ctx.anchors)
  report.chain = { certificates: path.certificates.map(certificateFacts), trusted: path.anchor !== undefined && path.problems.length === 0, anchor: path.anchor?.source ?? null }
  for (const p of path.problems) indeterminate(p)
  const signingTime = proven?.time ?? dict.claimedTime
  report.validity.signingTime = signingTime
  report.validity.signingTimeSource = proven?.source ?? (dict.claimedTime === null ? null : 'CLAIMED')
  const expiredNow = expiredAt(path.certificates, ctx.now)
  report.validity.now = expiredNow.length === 0
  if (signingTime !== null) {
    const expiredThen = expiredAt(path.certificates, signingTime)
    report.validity.atSigningTime = expiredThen.length === 0
    if (expiredThen.length > 0) {
      const sentence = `Certificates outside their validity at the signing time (${signingTime.toISOString()}): ${expiredThen.join('; ')}.`
      if (proven !== undefined) invalid(sentence)
      else indeterminate(`${sentence} That time is only claimed by the signer (no time-stamp).`)
    }
  }
  if (expiredNow.length > 0 && proven === undefined) {
    indeterminate(`Certificates are outside their validity now and no time-stamp proves the signature was made before: ${expiredNow.join('; ')}.`)
  } else if (expiredNow.length > 0) {
    report.notes.push(`Certificates have expired since signing (the time-stamp proves the signature existed before): ${expiredNow.join('; ')}.`)
  }

  // Revocation data the file carries: the DSS and Adobe's revocation-info attribute.
  const revocation = mergeRevocation(ctx.dssRevocation, adobeRevocation(cms.signer))
  const at = signingTime ?? ctx.now
  let dssCovers = path.certificates.length > 1
  for (let k = 0; k + 1 < path.certificates.length; k++) {
    const cert = path.certificates[k]!
    const state = await revocationStatus(cert, path.certificates[k + 1]!, revocation, at)
    report.revocation.checked.push({ subject: certificateFacts(cert).subject, status: state.status, source: state.source, revokedAt: state.revokedAt })
    if (state.status === 'REVOKED') invalid(`"${certificateFacts(cert).subject}" was revoked${state.revokedAt === null ? '' : ` on ${state.revokedAt.toISOString()}`}, before the signing time.`)
    if (ctx.hasDss && (await revocationStatus(cert, path.certificates[k + 1]!, ctx.dssRevocation, at)).status === 'NO_DATA') dssCovers = false
  }
  const statuses = report.revocation.checked.map((c) => c.status)
  report.revocation.status = statuses.includes('REVOKED') ? 'REVOKED' : statuses.includes('UNKNOWN') ? 'UNKNOWN' : statuses.length > 0 && statuses.every((s) => s === 'GOOD') ? 'GOOD' : 'NO_DATA'
  if (report.revocation.status === 'NO_DATA' || (statuses.includes('NO_DATA') && report.revocation.status === 'GOOD')) report.notes.push('The file carries no revocation data for some certificates of the chain; their revocation was not checked (the verifier does not go online).')

  // PAdES baseline level (ETSI EN 319 142-1 §6).
  const baseline = etsi && essCert.present && report.pades.forbiddenAttributes.length === 0
  if (!baseline) {
    report.notes.push(etsi ? 'Not a PAdES baseline signature: the signing-certificate attribute is missing or a forbidden attribute is present.' : 'Not a PAdES baseline signature (SubFilter adbe.pkcs7.detached, PAdES Part 2 / PKCS#7).')
  } else {
    const timed = (report.timestamp?.valid ?? false) || ctx.docTimestamps.some((d) => d.check.valid)
    const longTerm = timed && ctx.hasDss && dssCovers
    const archived = longTerm && ctx.docTimestamps.some((d) => d.check.valid && (ctx.dssAfter < 0 || d.end > ctx.dssAfter))
    report.pades.level = archived ? 'B-LTA' : longTerm ? 'B-LT' : timed ? 'B-T' : 'B-B'
    if (timed && ctx.hasDss && !dssCovers) report.notes.push('The DSS does not hold revocation data for every certificate of the signer\'s chain, so the level stays B-T.')
  }
  return report
}

function judgeChanges (report: SignatureReport, dict: SignatureDictionary, invalid: (s: string) => void): void {
  const changes = report.changesAfter
  if (changes.level === 'NONE') return
  const what = [
    changes.pagesAdded > 0 ? `${changes.pagesAdded} page(s) added` : '',
    changes.pagesRemoved > 0 ? `${changes.pagesRemoved} page(s) removed` : '',
    changes.annotationsAddedOrChanged > 0 ? `${changes.annotationsAddedOrChanged} annotation(s) added or changed` : '',
    changes.formFieldsAddedOrChanged > 0 ? `${changes.formFieldsAddedOrChanged} form field(s) added or changed` : '',
    changes.signaturesAdded > 0 ? `${changes.signaturesAdded} signature(s) added` : '',
    changes.documentTimestampsAdded > 0 ? `${changes.documentTimestampsAdded} document time-stamp(s) added` : '',
    changes.securityStoreAdded ? 'validation data (DSS) added' : ''
  ].filter((s) => s !== '')
  if (changes.level === 'OTHER') {
    invalid(`The document was changed after this signature in a way no signature allows: ${[...changes.other, ...what].join('; ')}.`)
  } else {
    report.notes.push(`Changed after this signature by ${changes.updates} incremental update(s): ${what.join('; ') || 'metadata'}.`)
  }
  const certification = dict.docMdp ?? (dict.certifies ? 2 : null)
  if (certification !== null && changes.level !== 'OTHER' && exceeds(changes.level, allowedBy(certification))) {
    invalid(`This certification signature allows ${certification === 1 ? 'no changes' : certification === 2 ? 'only form filling and signing' : 'only form filling, signing and annotations'} (DocMDP P=${certification}), but the document was changed after it: ${what.join('; ')}.`)
  }
}

function applyDocTimestamp (report: SignatureReport, check: TimestampCheck): void {
  report.timestamp = { time: check.time, authority: check.authority, valid: check.valid, trusted: check.trusted }
  report.integrity.digestMatches = check.valid
  report.integrity.signatureValid = check.valid
  report.integrity.digestAlgorithm = 'from the token'
  report.validity = { signingTime: check.time, signingTimeSource: check.time === null ? null : 'DOCUMENT_TIMESTAMP', atSigningTime: check.valid && check.trusted, now: check.validNow }
  if (!check.valid) {
    report.problems.push(...check.problems)
    report.verdict = 'INVALID'
  } else if (!check.trusted) {
    report.problems.push(...check.problems)
    if (report.verdict === 'VALID') report.verdict = 'INDETERMINATE'
  }
}

function signerReport (cert: X509Certificate): SignerReport {
  const identity = readSignerIdentity(cert)
  const names = readOtherNames(cert.raw)
  const holder = names.get(OID_ICP_CPF_HOLDER)
  const responsible = names.get(OID_ICP_RESPONSIBLE_DATA)
  const digits = (s: string | undefined): string | null => s !== undefined && /^\d+$/.test(s) && !/^0+$/.test(s) ? s : null
  const usage = readKeyUsage(cert.raw)
  return {
    name: identity.signerName,
    document: identity.signerDocument,
    documentKind: identity.documentKind,
    icpBrasil: {
      cpf: digits(holder?.slice(8, 19)),
      birthDate: digits(holder?.slice(0, 8)),
      cnpj: names.get(OID_ICP_CNPJ)?.trim() || null,
      responsibleName: names.get(OID_ICP_RESPONSIBLE_NAME)?.trim() || null,
      responsibleCpf: digits(responsible?.slice(8, 19))
    },
    certificate: certificateFacts(cert),
    keyUsageAllowsSigning: usage === undefined || usage.includes('digitalSignature') || usage.includes('nonRepudiation')
  }
}

function mergeRevocation (a: RevocationData, b: RevocationData): RevocationData {
  return { ocsps: [...a.ocsps, ...b.ocsps], crls: [...a.crls, ...b.crls] }
}

/** Adobe's signed attribute adbe-revocationInfoArchival: { crl [0] SEQUENCE OF CRL, ocsp [1] SEQUENCE OF OCSPResponse }. */
function adobeRevocation (signer: Parameters<typeof signedAttribute>[0]): RevocationData {
  const out: RevocationData = { ocsps: [], crls: [] }
  const value = signedAttribute(signer, OID.adobeRevocationInfo)?.values[0]
  if (!(value instanceof asn1js.Sequence)) return out
  for (const tagged of value.valueBlock.value) {
    const list = (tagged as asn1js.Constructed).valueBlock?.value?.[0] as asn1js.Sequence | undefined
    const items = list?.valueBlock?.value ?? []
    if (tagged.idBlock.tagNumber === 0) out.crls.push(...items.map(derOf))
    if (tagged.idBlock.tagNumber === 1) out.ocsps.push(...items.map(derOf))
  }
  return out
}

const latin1 = (bytes: Uint8Array, start: number, end: number): string =>
  start < 0 ? '' : Buffer.from(bytes.buffer, bytes.byteOffset + start, end - start).toString('latin1')
