/**
 * Certificates in the ICP-Brasil shape for development and tests: a root, an
 * intermediate and an e-CNPJ (or e-CPF) end-entity with the DOC-ICP-04 otherName
 * entries, or a timestamp-authority certificate (critical timeStamping EKU, RFC 3161
 * §2.3). Every name says TESTE / DESENVOLVIMENTO: nothing here is trusted anywhere.
 * Pure: returns PEM/DER in memory; writing files is the caller's business.
 */
import { generateKeyPairSync, randomBytes } from 'node:crypto'
import forge from 'node-forge'
import { DEV_ROOT_NAME, OID_ICP_CNPJ, OID_ICP_CPF_HOLDER, OID_ICP_RESPONSIBLE_DATA, OID_ICP_RESPONSIBLE_NAME } from './icp-brasil.js'

export interface IssuedCertificate {
  certPem: string
  keyPem: string
  cert: forge.pki.Certificate
  key: forge.pki.rsa.PrivateKey
}

export interface IssueOptions {
  commonName: string
  organization?: string
  organizationalUnit?: string
  /** Issuer; omitted: self-signed (a root). */
  issuer?: IssuedCertificate
  kind: 'root' | 'ca' | 'signer' | 'tsa' | 'server'
  notBefore: Date
  notAfter: Date
  /** otherName entries of the subjectAltName: OID → value (encoded as OCTET STRING). */
  otherNames?: Array<[string, string]>
  keyBits?: number
  /** A `server` certificate's subjectAltName: host names and IP addresses (a loopback fake's `localhost`, `127.0.0.1`). */
  dnsNames?: string[]
  ipAddresses?: string[]
  /**
   * The keyUsage bits (always critical) in place of the kind's usual ones: a certificate
   * meant for something else, such as a TLS server's keyEncipherment alone.
   */
  keyUsage?: KeyUsageName[]
  /** Serial number, hex (a test's OCSP index names it before the certificate exists); default 16 random bytes. */
  serialNumber?: string
  /** Authority Information Access id-ad-ocsp URLs (RFC 5280 §4.2.2.1): where this certificate's status is answered. */
  ocspUrls?: string[]
  /** CRL distribution point URLs (RFC 5280 §4.2.1.13). */
  crlUrls?: string[]
  /** certificatePolicies OIDs (RFC 5280 §4.2.1.4): an ICP-Brasil policy makes a test chain read as ICP-Brasil. */
  policies?: string[] | undefined
}

/** RFC 5280 §4.2.1.3 key usage bits, in node-forge's spelling (nonRepudiation is contentCommitment). */
export type KeyUsageName = 'digitalSignature' | 'nonRepudiation' | 'keyEncipherment' | 'dataEncipherment' | 'keyAgreement' | 'keyCertSign' | 'cRLSign'

type Attr = { shortName?: string, name?: string, value: string }

function subjectOf (o: IssueOptions): Attr[] {
  const attrs: Attr[] = [{ shortName: 'C', value: 'BR' }, { shortName: 'O', value: o.organization ?? 'ICP-Brasil TESTE' }]
  if (o.organizationalUnit !== undefined) attrs.push({ shortName: 'OU', value: o.organizationalUnit })
  attrs.push({ shortName: 'CN', value: o.commonName })
  return attrs
}

function otherNamesExtension (entries: Array<[string, string]>): { id: string, value: forge.asn1.Asn1 } {
  const { asn1 } = forge
  const names = entries.map(([oid, value]) => asn1.create(asn1.Class.CONTEXT_SPECIFIC, 0, true, [
    asn1.create(asn1.Class.UNIVERSAL, asn1.Type.OID, false, asn1.oidToDer(oid).getBytes()),
    asn1.create(asn1.Class.CONTEXT_SPECIFIC, 0, true, [asn1.create(asn1.Class.UNIVERSAL, asn1.Type.OCTETSTRING, false, value)])
  ]))
  return { id: '2.5.29.17', value: asn1.create(asn1.Class.UNIVERSAL, asn1.Type.SEQUENCE, true, names) }
}

function infoAccessExtension (ocspUrls: string[]): { id: string, value: forge.asn1.Asn1 } {
  const { asn1 } = forge
  const descriptions = ocspUrls.map((url) => asn1.create(asn1.Class.UNIVERSAL, asn1.Type.SEQUENCE, true, [
    asn1.create(asn1.Class.UNIVERSAL, asn1.Type.OID, false, asn1.oidToDer('1.3.6.1.5.5.7.48.1').getBytes()),
    asn1.create(asn1.Class.CONTEXT_SPECIFIC, 6, false, url)
  ]))
  return { id: '1.3.6.1.5.5.7.1.1', value: asn1.create(asn1.Class.UNIVERSAL, asn1.Type.SEQUENCE, true, descriptions) }
}

function policiesExtension (oids: string[]): { id: string, value: forge.asn1.Asn1 } {
  const { asn1 } = forge
  const infos = oids.map((oid) => asn1.create(asn1.Class.UNIVERSAL, asn1.Type.SEQUENCE, true, [
    asn1.create(asn1.Class.UNIVERSAL, asn1.Type.OID, false, asn1.oidToDer(oid).getBytes())
  ]))
  return { id: '2.5.29.32', value: asn1.create(asn1.Class.UNIVERSAL, asn1.Type.SEQUENCE, true, infos) }
}

/** Issues one certificate with a fresh RSA key (node:crypto generates it: forge's is far slower). */
export function issueCertificate (o: IssueOptions): IssuedCertificate {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: o.keyBits ?? 2048 })
  const cert = forge.pki.createCertificate()
  cert.publicKey = forge.pki.publicKeyFromPem(publicKey.export({ type: 'spki', format: 'pem' }).toString())
  const serial = randomBytes(16)
  serial[0] = (serial[0]! & 0x3f) | 0x10
  cert.serialNumber = o.serialNumber ?? serial.toString('hex')
  cert.validity.notBefore = o.notBefore
  cert.validity.notAfter = o.notAfter
  cert.setSubject(subjectOf(o))
  cert.setIssuer(o.issuer === undefined ? subjectOf(o) : o.issuer.cert.subject.attributes)
  const isCa = o.kind === 'root' || o.kind === 'ca'
  const extensions: object[] = [
    { name: 'basicConstraints', cA: isCa, critical: true },
    o.keyUsage !== undefined
      ? { name: 'keyUsage', critical: true, ...Object.fromEntries(o.keyUsage.map((bit) => [bit, true])) }
      : isCa
      ? { name: 'keyUsage', keyCertSign: true, cRLSign: true, critical: true }
      : o.kind === 'tsa'
        ? { name: 'keyUsage', digitalSignature: true, nonRepudiation: true, critical: true }
        : { name: 'keyUsage', digitalSignature: true, nonRepudiation: true, keyEncipherment: true, critical: true },
    { name: 'subjectKeyIdentifier' }
  ]
  if (o.issuer !== undefined) {
    extensions.push({ name: 'authorityKeyIdentifier', keyIdentifier: o.issuer.cert.generateSubjectKeyIdentifier().getBytes() })
  }
  if (o.kind === 'signer') extensions.push({ name: 'extKeyUsage', clientAuth: true, emailProtection: true })
  if (o.kind === 'tsa') extensions.push({ name: 'extKeyUsage', timeStamping: true, critical: true })
  if (o.kind === 'server') {
    extensions.push({ name: 'extKeyUsage', serverAuth: true })
    const altNames = [...(o.dnsNames ?? []).map((value) => ({ type: 2, value })), ...(o.ipAddresses ?? []).map((ip) => ({ type: 7, ip }))]
    if (altNames.length > 0) extensions.push({ name: 'subjectAltName', altNames })
  }
  if (o.otherNames !== undefined && o.otherNames.length > 0) extensions.push(otherNamesExtension(o.otherNames))
  if (o.ocspUrls !== undefined && o.ocspUrls.length > 0) extensions.push(infoAccessExtension(o.ocspUrls))
  if (o.crlUrls !== undefined && o.crlUrls.length > 0) extensions.push({ name: 'cRLDistributionPoints', altNames: o.crlUrls.map((value) => ({ type: 6, value })) })
  if (o.policies !== undefined && o.policies.length > 0) extensions.push(policiesExtension(o.policies))
  cert.setExtensions(extensions)
  const key = forge.pki.privateKeyFromPem(privateKey.export({ type: 'pkcs8', format: 'pem' }).toString()) as forge.pki.rsa.PrivateKey
  cert.sign(o.issuer?.key ?? key, forge.md.sha256.create())
  return { cert, key, certPem: forge.pki.certificateToPem(cert), keyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString() }
}

/** Packs a key and its chain into PKCS#12 DER (AES-256 PBES2, or 3DES for the legacy shape). */
export function toPkcs12 (signer: IssuedCertificate, chain: IssuedCertificate[], password: string, algorithm: 'aes256' | '3des' = 'aes256'): Buffer {
  const asn1 = forge.pkcs12.toPkcs12Asn1(signer.key, [signer.cert, ...chain.map((c) => c.cert)], password, { algorithm, friendlyName: 'razao-signer' })
  return Buffer.from(forge.asn1.toDer(asn1).getBytes(), 'binary')
}

export interface DevChain {
  root: IssuedCertificate
  intermediate: IssuedCertificate
  signer: IssuedCertificate
  /** PKCS#12 with the signer key and all three certificates. */
  pkcs12: Buffer
  password: string
}

export interface DevChainOptions {
  now?: Date
  /** The signer certificate's validity; default one year from an hour ago. */
  signerNotBefore?: Date
  signerNotAfter?: Date
  holder?: 'CNPJ' | 'CPF'
  /** Company (e-CNPJ) or person (e-CPF) name; default a clearly fake company. */
  name?: string
  document?: string
  password?: string
  algorithm?: 'aes256' | '3des'
  /** The signer's certificatePolicies (default none): e.g. 2.16.76.1.2.1.x to stand for an ICP-Brasil A1 in tests. */
  signerPolicies?: string[] | undefined
}

const DAY_MS = 86_400_000

/** A development e-CNPJ (or e-CPF) chain in the ICP-Brasil style, labelled as such in every name. */
export function createDevChain (o: DevChainOptions = {}): DevChain {
  const now = o.now ?? new Date()
  const start = new Date(now.getTime() - 3_600_000)
  const root = issueCertificate({
    kind: 'root', commonName: DEV_ROOT_NAME, organization: 'ICP-Brasil TESTE (desenvolvimento)',
    notBefore: start, notAfter: new Date(start.getTime() + 3650 * DAY_MS)
  })
  const intermediate = issueCertificate({
    kind: 'ca', commonName: 'AC RAZAO DESENVOLVIMENTO v1 - TESTE', organization: 'ICP-Brasil TESTE (desenvolvimento)',
    issuer: root, notBefore: start, notAfter: new Date(start.getTime() + 1825 * DAY_MS)
  })
  const holder = o.holder ?? 'CNPJ'
  const document = o.document ?? (holder === 'CNPJ' ? '11222333000181' : '52998224725')
  const name = o.name ?? (holder === 'CNPJ' ? 'EMPRESA DESENVOLVIMENTO RAZAO TESTE LTDA' : 'FULANO DE TAL TESTE')
  const responsible = '01011980' + '52998224725' + '0'.repeat(11) + '0'.repeat(15) + '0'.repeat(6)
  const otherNames: Array<[string, string]> = holder === 'CNPJ'
    ? [[OID_ICP_RESPONSIBLE_DATA, responsible], [OID_ICP_RESPONSIBLE_NAME, 'FULANO DE TAL TESTE'], [OID_ICP_CNPJ, document], ['2.16.76.1.3.7', '0'.repeat(12)]]
    : [[OID_ICP_CPF_HOLDER, '01011980' + document + '0'.repeat(11) + '0'.repeat(15) + '0'.repeat(6)]]
  const signer = issueCertificate({
    kind: 'signer', commonName: `${name}:${document}`, organization: 'ICP-Brasil TESTE (desenvolvimento)',
    organizationalUnit: holder === 'CNPJ' ? 'Certificado PJ A1 TESTE' : 'Certificado PF A1 TESTE',
    issuer: intermediate, otherNames, policies: o.signerPolicies,
    notBefore: o.signerNotBefore ?? start, notAfter: o.signerNotAfter ?? new Date(start.getTime() + 365 * DAY_MS)
  })
  const password = o.password ?? randomBytes(18).toString('base64url')
  return { root, intermediate, signer, password, pkcs12: toPkcs12(signer, [intermediate, root], password, o.algorithm ?? 'aes256') }
}
