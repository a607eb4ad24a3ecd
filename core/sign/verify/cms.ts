/**
 * Reading and checking one CMS SignedData (RFC 5652) as PAdES and RFC 3161 use it: the
 * structure is parsed with pkijs/asn1js, the digests and the signature value are checked
 * with node:crypto (faster than WebCrypto for the megabytes a PDF's ByteRange covers, and
 * it reads every RSA/EC key the certificates carry).
 */
import { X509Certificate, createHash, constants, verify as verifySignature } from 'node:crypto'
import * as asn1js from 'asn1js'
import * as pkijs from 'pkijs'

export const OID = {
  signedData: '1.2.840.113549.1.7.2',
  data: '1.2.840.113549.1.7.1',
  tstInfo: '1.2.840.113549.1.9.16.1.4',
  contentType: '1.2.840.113549.1.9.3',
  messageDigest: '1.2.840.113549.1.9.4',
  signingTime: '1.2.840.113549.1.9.5',
  signingCertificate: '1.2.840.113549.1.9.16.2.12',
  signingCertificateV2: '1.2.840.113549.1.9.16.2.47',
  signaturePolicyIdentifier: '1.2.840.113549.1.9.16.2.15',
  signatureTimeStampToken: '1.2.840.113549.1.9.16.2.14',
  adobeRevocationInfo: '1.2.840.113583.1.1.8',
  spUri: '1.2.840.113549.1.9.16.5.1',
  ekuTimeStamping: '1.3.6.1.5.5.7.3.8'
} as const

const HASHES: Record<string, string> = {
  '1.3.14.3.2.26': 'sha1',
  '2.16.840.1.101.3.4.2.4': 'sha224',
  '2.16.840.1.101.3.4.2.1': 'sha256',
  '2.16.840.1.101.3.4.2.2': 'sha384',
  '2.16.840.1.101.3.4.2.3': 'sha512'
}

/** Signature algorithms that name their hash (RSA PKCS#1 v1.5 and ECDSA). */
const SIGNATURE_HASHES: Record<string, { hash: string, ec: boolean }> = {
  '1.2.840.113549.1.1.5': { hash: 'sha1', ec: false },
  '1.2.840.113549.1.1.14': { hash: 'sha224', ec: false },
  '1.2.840.113549.1.1.11': { hash: 'sha256', ec: false },
  '1.2.840.113549.1.1.12': { hash: 'sha384', ec: false },
  '1.2.840.113549.1.1.13': { hash: 'sha512', ec: false },
  '1.2.840.10045.4.1': { hash: 'sha1', ec: true },
  '1.2.840.10045.4.3.1': { hash: 'sha224', ec: true },
  '1.2.840.10045.4.3.2': { hash: 'sha256', ec: true },
  '1.2.840.10045.4.3.3': { hash: 'sha384', ec: true },
  '1.2.840.10045.4.3.4': { hash: 'sha512', ec: true }
}
const RSA_ENCRYPTION = '1.2.840.113549.1.1.1'
const EC_PUBLIC_KEY = '1.2.840.10045.2.1'
const RSA_PSS = '1.2.840.113549.1.1.10'

const parsedCertificates = new Map<string, X509Certificate>()

/** Parsed once per process: the same chain comes back in every file one signer signed. */
export function x509 (der: Buffer): X509Certificate {
  const key = createHash('sha1').update(der).digest('base64')
  let cert = parsedCertificates.get(key)
  if (cert === undefined) {
    cert = new X509Certificate(der)
    if (parsedCertificates.size > 2000) parsedCertificates.clear()
    parsedCertificates.set(key, cert)
  }
  return cert
}

export function hashName (oid: string): string | undefined {
  return HASHES[oid]
}

export const bytesOf = (view: ArrayBuffer | Uint8Array): Buffer =>
  view instanceof Uint8Array ? Buffer.from(view.buffer, view.byteOffset, view.byteLength) : Buffer.from(view)

/** The DER a parsed asn1js block was read from. */
export const derOf = (block: asn1js.AsnType): Buffer => bytesOf((block as asn1js.BaseBlock).valueBeforeDecodeView)

/**
 * Verifies `signature` over `data` with `cert`'s public key and an AlgorithmIdentifier that
 * is either a full signature algorithm or (CMS allows it) the bare key algorithm, the hash
 * then coming from `digestOid`.
 */
export function verifyWith (cert: X509Certificate, algorithm: pkijs.AlgorithmIdentifier, digestOid: string | undefined, data: Buffer, signature: Buffer): boolean {
  const id = algorithm.algorithmId
  try {
    if (id === RSA_PSS) {
      const params = new pkijs.RSASSAPSSParams({ schema: algorithm.algorithmParams })
      const hash = hashName(params.hashAlgorithm.algorithmId) ?? 'sha1'
      return verifySignature(hash, data, { key: cert.publicKey, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: params.saltLength }, signature)
    }
    const named = SIGNATURE_HASHES[id]
    const hash = named?.hash ?? (digestOid === undefined ? undefined : hashName(digestOid))
    if (hash === undefined) return false
    const ec = named?.ec ?? id === EC_PUBLIC_KEY
    if (named === undefined && id !== RSA_ENCRYPTION && id !== EC_PUBLIC_KEY) return false
    return verifySignature(hash, data, ec ? { key: cert.publicKey, dsaEncoding: 'der' } : { key: cert.publicKey, padding: constants.RSA_PKCS1_PADDING }, signature)
  } catch {
    return false
  }
}

export interface ParsedCms {
  signedData: pkijs.SignedData
  signer: pkijs.SignerInfo
  /** Certificates carried in the CMS, as DER, in their order. */
  certificates: Buffer[]
  /** Bytes of /Contents after the DER ended (the placeholder's zero padding). */
  trailing: Buffer
}

/**
 * Parses a DER ContentInfo holding SignedData with exactly one SignerInfo; throws a sentence
 * otherwise. asn1js is handed a copy of the bytes alone: given a view into a large buffer
 * (the whole PDF) it converts far more than it reads, several times slower.
 */
export function parseCms (bytes: Buffer): ParsedCms {
  const parsed = asn1js.fromBER(new Uint8Array(bytes))
  if (parsed.offset === -1) throw new Error('the signature value is not a DER structure')
  const info = new pkijs.ContentInfo({ schema: parsed.result })
  if (info.contentType !== OID.signedData || !(info.content instanceof asn1js.Sequence)) throw new Error(`the signature value is not CMS SignedData (content type ${info.contentType})`)
  // The certificates as they were read (the [0] IMPLICIT CertificateSet), not re-encoded; then
  // taken out of the tree: pkijs would parse each one again (milliseconds each), and only their
  // DER is used here (node:crypto reads them).
  const fields = info.content.valueBlock.value
  const at = fields.findIndex((f) => f.idBlock.tagClass === 3 && f.idBlock.tagNumber === 0)
  const set = fields[at] as asn1js.Constructed | undefined
  const certificates = (set?.valueBlock.value ?? []).filter((c) => c instanceof asn1js.Sequence).map(derOf)
  if (at >= 0) fields.splice(at, 1)
  const signedData = new pkijs.SignedData({ schema: info.content })
  if (signedData.signerInfos.length !== 1) throw new Error(`the CMS holds ${signedData.signerInfos.length} signer infos; exactly one is expected`)
  return { signedData, signer: signedData.signerInfos[0]!, certificates, trailing: bytes.subarray(parsed.offset) }
}

export function signedAttribute (signer: pkijs.SignerInfo, type: string): pkijs.Attribute | undefined {
  return signer.signedAttrs?.attributes.find((a) => a.type === type)
}

export function unsignedAttribute (signer: pkijs.SignerInfo, type: string): pkijs.Attribute | undefined {
  return signer.unsignedAttrs?.attributes.find((a) => a.type === type)
}

/** The certificate the SignerInfo's sid names (issuer + serial, or subject key identifier). */
export function findSignerCertificate (signer: pkijs.SignerInfo, certificates: Buffer[]): Buffer | undefined {
  const sid = signer.sid as pkijs.IssuerAndSerialNumber | asn1js.OctetString
  if (sid instanceof pkijs.IssuerAndSerialNumber) {
    const serial = bytesOf(sid.serialNumber.valueBlock.valueHexView).toString('hex').replace(/^(00)+(?=.)/, '').toUpperCase()
    const bySerial = certificates.filter((der) => x509(der).serialNumber.toUpperCase().replace(/^(00)+(?=.)/, '') === serial)
    // Serials are unique per issuer only: with two candidates, the issuer decides (parsing a certificate with pkijs costs milliseconds).
    if (bySerial.length <= 1) return bySerial[0]
    return bySerial.find((der) => pkijs.Certificate.fromBER(new Uint8Array(der)).issuer.isEqual(sid.issuer))
  }
  const wanted = bytesOf(sid.valueBlock.valueHexView).toString('hex').toUpperCase()
  return certificates.find((der) => {
    const ski = pkijs.Certificate.fromBER(new Uint8Array(der)).extensions?.find((e) => e.extnID === '2.5.29.14')
    const value = ski?.parsedValue as asn1js.OctetString | undefined
    return value !== undefined && bytesOf(value.valueBlock.valueHexView).toString('hex').toUpperCase() === wanted
  })
}

export interface SignerCheck {
  digestAlgorithm: string
  /** The message-digest attribute equals the hash of the content. */
  digestMatches: boolean
  /** The signature value verifies over the signed attributes with the signer certificate's key. */
  signatureValid: boolean
  /** The signer certificate (DER), when the sid found it. */
  certificate: Buffer | undefined
  problems: string[]
}

/**
 * The checks of RFC 5652 §5.4 and §5.6 on the single SignerInfo: the content's hash against
 * message-digest, the content-type attribute, then the signature over the signed attributes
 * re-encoded as a SET. `contentDigest` gives the content's hash by algorithm name.
 */
export function checkSigner (cms: ParsedCms, contentDigest: (hash: string) => Buffer, expectedContentType: string): SignerCheck {
  const { signer } = cms
  const problems: string[] = []
  const digestOid = signer.digestAlgorithm.algorithmId
  const hash = hashName(digestOid)
  const certificate = findSignerCertificate(signer, cms.certificates)
  const out: SignerCheck = { digestAlgorithm: hash ?? digestOid, digestMatches: false, signatureValid: false, certificate, problems }
  if (hash === undefined) {
    problems.push(`The digest algorithm ${digestOid} is not supported.`)
    return out
  }
  if (certificate === undefined) problems.push('The signer\'s certificate is not in the signature.')
  const attrs = signer.signedAttrs
  if (attrs === undefined) {
    problems.push('The signature has no signed attributes (PAdES and RFC 3161 require them).')
    return out
  }
  const contentType = signedAttribute(signer, OID.contentType)?.values[0]
  if (!(contentType instanceof asn1js.ObjectIdentifier) || contentType.valueBlock.toString() !== expectedContentType) {
    problems.push('The content-type signed attribute is missing or wrong.')
  }
  const digest = signedAttribute(signer, OID.messageDigest)?.values[0]
  if (!(digest instanceof asn1js.OctetString)) {
    problems.push('The message-digest signed attribute is missing.')
  } else {
    out.digestMatches = bytesOf(digest.valueBlock.valueHexView).equals(contentDigest(hash))
    if (!out.digestMatches) problems.push('The signed bytes do not match the signature\'s message digest: the content was changed after signing.')
  }
  if (certificate !== undefined) {
    // Signed over the DER of the attributes with the SET tag, not the [0] of the SignerInfo.
    const encoded = Buffer.from(attrs.encodedValue.byteLength > 0 ? bytesOf(attrs.encodedValue) : bytesOf(attrs.toSchema().toBER(false)))
    encoded[0] = 0x31
    out.signatureValid = verifyWith(x509(certificate), signer.signatureAlgorithm, digestOid, encoded, bytesOf(signer.signature.valueBlock.valueHexView))
    if (!out.signatureValid) problems.push('The signature value does not verify with the signer certificate\'s key.')
  }
  return out
}

/** ESSCertID(v2) of the signing-certificate attributes (RFC 2634, RFC 5035): does it name `certificate`? */
export function signingCertificateMatches (signer: pkijs.SignerInfo, certificate: Buffer): { present: boolean, matches: boolean } {
  const v2 = signedAttribute(signer, OID.signingCertificateV2)
  const v1 = signedAttribute(signer, OID.signingCertificate)
  const attr = v2 ?? v1
  if (attr === undefined) return { present: false, matches: false }
  try {
    const outer = attr.values[0] as asn1js.Sequence
    const certs = outer.valueBlock.value[0] as asn1js.Sequence
    const first = certs.valueBlock.value[0] as asn1js.Sequence
    const fields = first.valueBlock.value
    let hash = v2 === undefined ? 'sha1' : 'sha256'
    let at = 0
    if (v2 !== undefined && fields[0] instanceof asn1js.Sequence) {
      hash = hashName(new pkijs.AlgorithmIdentifier({ schema: fields[0] }).algorithmId) ?? ''
      at = 1
    }
    const certHash = fields[at] as asn1js.OctetString
    if (hash === '') return { present: true, matches: false }
    return { present: true, matches: bytesOf(certHash.valueBlock.valueHexView).equals(createHash(hash).update(certificate).digest()) }
  } catch {
    return { present: true, matches: false }
  }
}

export interface PolicyReference {
  oid: string
  hashAlgorithm: string
  /** Upper-case hexadecimal. */
  hash: string
  uri: string | null
}

/** The signature-policy-identifier attribute (ETSI EN 319 122-1 §5.2.9), or null when the policy is implied or absent. */
export function readPolicy (signer: pkijs.SignerInfo): PolicyReference | null {
  const attr = signedAttribute(signer, OID.signaturePolicyIdentifier)
  const value = attr?.values[0]
  if (!(value instanceof asn1js.Sequence)) return null
  const [id, hashes, qualifiers] = value.valueBlock.value
  if (!(id instanceof asn1js.ObjectIdentifier) || !(hashes instanceof asn1js.Sequence)) return null
  const [alg, hash] = hashes.valueBlock.value
  let uri: string | null = null
  if (qualifiers instanceof asn1js.Sequence) {
    for (const q of qualifiers.valueBlock.value) {
      const [qid, qvalue] = (q as asn1js.Sequence).valueBlock.value
      if (qid instanceof asn1js.ObjectIdentifier && qid.valueBlock.toString() === OID.spUri && qvalue instanceof asn1js.IA5String) uri = qvalue.valueBlock.value
    }
  }
  return {
    oid: id.valueBlock.toString(),
    hashAlgorithm: alg instanceof asn1js.Sequence ? (hashName(new pkijs.AlgorithmIdentifier({ schema: alg }).algorithmId) ?? 'unknown') : 'unknown',
    hash: hash instanceof asn1js.OctetString ? bytesOf(hash.valueBlock.valueHexView).toString('hex').toUpperCase() : '',
    uri
  }
}

/** The eContent octets of a SignedData (primitive or constructed OCTET STRING). */
export function encapsulatedContent (signedData: pkijs.SignedData): Buffer | undefined {
  const content = signedData.encapContentInfo.eContent
  if (content === undefined) return undefined
  return content.idBlock.isConstructed ? bytesOf(content.getValue()) : bytesOf(content.valueBlock.valueHexView)
}
