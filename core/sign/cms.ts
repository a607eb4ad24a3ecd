/**
 * The CAdES detached signature inside a PAdES baseline signature (ETSI EN 319 122-1,
 * EN 319 142-1). SignedData v1 with no eContent; signed attributes content-type
 * (id-data), message-digest and signing-certificate-v2 (RFC 5035), plus an optional
 * signature-policy-identifier; no signing-time (PAdES keeps the claimed time in the
 * dictionary's /M). The signed attributes are sorted by their DER encodings because
 * validators that re-encode the SET (BouncyCastle-based ones) would otherwise hash
 * different bytes. For B-T the RFC 3161 token over the signature value goes in as the
 * unsigned attribute id-aa-signatureTimeStampToken.
 */
import { createHash, sign } from 'node:crypto'
import { Signer } from '@signpdf/utils'
import type { SigningMaterial } from './certificate.js'
import { child, children, ctx, derNull, integer, octets, oid, readNode, seq, setOf, tlv, TAG } from './der.js'

export const OID = {
  sha256: '2.16.840.1.101.3.4.2.1',
  rsaEncryption: '1.2.840.113549.1.1.1',
  data: '1.2.840.113549.1.7.1',
  signedData: '1.2.840.113549.1.7.2',
  contentType: '1.2.840.113549.1.9.3',
  messageDigest: '1.2.840.113549.1.9.4',
  signingTime: '1.2.840.113549.1.9.5',
  signingCertificateV2: '1.2.840.113549.1.9.16.2.47',
  signaturePolicyIdentifier: '1.2.840.113549.1.9.16.2.15',
  spUri: '1.2.840.113549.1.9.16.5.1',
  signatureTimeStampToken: '1.2.840.113549.1.9.16.2.14'
} as const

/** An explicit signature policy (ICP-Brasil AD-RB / AD-RT), see docs/signature.md. */
export interface SignaturePolicy {
  oid: string
  /** The SHA-256 hash the policy document declares about itself (its signPolicyHash). */
  hash: Buffer
  uri?: string
}

/** Gets an RFC 3161 TimeStampToken (DER ContentInfo) over the signature value's SHA-256. */
export type TimestampSource = (signatureValueDigest: Buffer) => Promise<Buffer>

export interface CadesOptions {
  material: SigningMaterial
  policy?: SignaturePolicy | undefined
  timestamp?: TimestampSource | undefined
}

const sha256Id = (): Buffer => seq(oid(OID.sha256))
const attribute = (type: string, ...values: Buffer[]): Buffer => seq(oid(type), setOf(...values))

/** The issuer Name and serialNumber INTEGER of a certificate, byte for byte. */
export function issuerAndSerial (certDer: Buffer): { issuer: Buffer, serial: Buffer } {
  const fields = children(child(readNode(certDer), 0))
  const at = fields[0]?.tag === 0xa0 ? 1 : 0
  const serial = fields[at]
  const issuer = fields[at + 2]
  if (serial === undefined || issuer === undefined) throw new RangeError('certificate without issuer or serial')
  return { issuer: issuer.bytes, serial: serial.bytes }
}

function signingCertificateV2 (leafDer: Buffer): Buffer {
  const { issuer, serial } = issuerAndSerial(leafDer)
  // ESSCertIDv2: hashAlgorithm DEFAULT sha256 is omitted (DER drops defaults); issuerSerial
  // is GeneralNames { directoryName [4] EXPLICIT Name } plus the serial (RFC 5035 §4).
  const essCertId = seq(octets(createHash('sha256').update(leafDer).digest()), seq(seq(ctx(4, issuer)), serial))
  return attribute(OID.signingCertificateV2, seq(seq(essCertId)))
}

function policyAttribute (policy: SignaturePolicy): Buffer {
  const qualifiers = policy.uri === undefined ? [] : [seq(seq(oid(OID.spUri), tlv(TAG.IA5_STRING, Buffer.from(policy.uri, 'ascii'))))]
  return attribute(OID.signaturePolicyIdentifier, seq(oid(policy.oid), seq(sha256Id(), octets(policy.hash)), ...qualifiers))
}

/**
 * The pieces of the SignedData that depend on the certificate alone. A pool thread signs
 * with one certificate for its whole life, so they are encoded once per material instead
 * of on every signature (parsing the leaf, hashing it and copying the chain: tens of
 * microseconds each time, next to about 0.5 ms for the RSA signature itself).
 */
interface CertificateParts {
  /** The signing-certificate-v2 attribute. */
  signingCertificate: Buffer
  /** IssuerAndSerialNumber of the leaf, the SignerInfo's sid. */
  sid: Buffer
  /** The chain as the [0] IMPLICIT CertificateSet. */
  certificates: Buffer
}

const partsByMaterial = new WeakMap<SigningMaterial, CertificateParts>()

function certificateParts (material: SigningMaterial): CertificateParts {
  let parts = partsByMaterial.get(material)
  if (parts === undefined) {
    const leaf = material.chain[0]
    if (leaf === undefined) throw new RangeError('empty certificate chain')
    const { issuer, serial } = issuerAndSerial(leaf)
    parts = { signingCertificate: signingCertificateV2(leaf), sid: seq(issuer, serial), certificates: tlv(0xa0, ...material.chain) }
    partsByMaterial.set(material, parts)
  }
  return parts
}

function attributesWith (contentDigest: Buffer, signingCertificate: Buffer, policy?: SignaturePolicy): Buffer[] {
  const attrs = [
    attribute(OID.contentType, oid(OID.data)),
    attribute(OID.messageDigest, octets(contentDigest)),
    signingCertificate
  ]
  if (policy !== undefined) attrs.push(policyAttribute(policy))
  return attrs
}

/** The signed attributes, each a DER Attribute; the SET sorts them. */
export function signedAttributes (contentDigest: Buffer, leafDer: Buffer, policy?: SignaturePolicy): Buffer[] {
  return attributesWith(contentDigest, signingCertificateV2(leafDer), policy)
}

/** Builds the DER ContentInfo(SignedData) for a detached signature over content hashing to `contentDigest`. */
export async function buildCades (contentDigest: Buffer, options: CadesOptions): Promise<Buffer> {
  const { material } = options
  const parts = certificateParts(material)
  const signedSet = setOf(...attributesWith(contentDigest, parts.signingCertificate, options.policy))
  // The signature covers the attributes encoded as a SET (tag 0x31); in the SignerInfo
  // the same content carries the [0] IMPLICIT tag (RFC 5652 §5.4).
  const signature = sign('sha256', signedSet, material.key)
  const unsigned: Buffer[] = []
  if (options.timestamp !== undefined) {
    const token = await options.timestamp(createHash('sha256').update(signature).digest())
    unsigned.push(attribute(OID.signatureTimeStampToken, token))
  }
  const signerInfo = seq(
    integer(1),
    parts.sid,
    sha256Id(),
    tlv(0xa0, readNode(signedSet).content),
    seq(oid(OID.rsaEncryption), derNull()),
    octets(signature),
    ...(unsigned.length > 0 ? [tlv(0xa1, readNode(setOf(...unsigned)).content)] : [])
  )
  const signedData = seq(
    integer(1),
    setOf(sha256Id()),
    seq(oid(OID.data)),
    parts.certificates,
    setOf(signerInfo)
  )
  return seq(oid(OID.signedData), ctx(0, signedData))
}

/** Bytes of /Contents to reserve: chain + attributes + signature, plus a token budget for B-T. */
export function cmsSizeBudget (material: SigningMaterial, withTimestamp: boolean, policy?: SignaturePolicy): number {
  const chainBytes = material.chain.reduce((n, c) => n + c.length, 0)
  const keyBytes = (material.key.asymmetricKeyDetails?.modulusLength ?? 4096) / 8
  const policyBytes = policy === undefined ? 0 : 200 + (policy.uri?.length ?? 0)
  // A token carries its own CMS, the TSA's certificates and chain (ICP-Brasil ACT chains
  // with 4096-bit keys run to about 8 KB); 16 KiB keeps a margin.
  return chainBytes + keyBytes + policyBytes + 2048 + (withTimestamp ? 16_384 : 0)
}

/**
 * The @signpdf Signer: receives the ByteRange bytes from `@signpdf/signpdf`, returns
 * our CAdES. The digest is taken here with node:crypto, never as a binary string.
 */
export class CadesSigner extends Signer {
  constructor (private readonly options: CadesOptions) { super() }

  override async sign (pdfBuffer: Buffer): Promise<Buffer> {
    return await buildCades(createHash('sha256').update(pdfBuffer).digest(), this.options)
  }
}
