/**
 * Who an ICP-Brasil certificate names (DOC-ICP-04, item 7.1.2.2): the holder's CPF or
 * CNPJ is read from the subject serialNumber (2.5.4.5, DOC-ICP-04 v8.3), then from the
 * subjectAltName otherName entries (2.16.76.1.3.1 e-CPF: birth date ddmmaaaa + CPF;
 * 2.16.76.1.3.3 e-CNPJ: CNPJ), then from the `NAME:digits` common name. The otherName
 * 2.16.76.1.3.4 carries the *responsible person's* CPF on an e-CNPJ and is never
 * taken as the holder's. CNPJ may become alphanumeric, so it stays a string.
 */
import type { X509Certificate } from 'node:crypto'
import { children, decodeOid, readNode } from './der.js'
import { OID_SUBJECT_ALT_NAME, extensionValue, readCertificatePolicies } from './extensions.js'

export const OID_ICP_CPF_HOLDER = '2.16.76.1.3.1'
export const OID_ICP_RESPONSIBLE_NAME = '2.16.76.1.3.2'
export const OID_ICP_CNPJ = '2.16.76.1.3.3'
export const OID_ICP_RESPONSIBLE_DATA = '2.16.76.1.3.4'

export interface SignerIdentity {
  signerName: string
  /** CPF (11 digits) or CNPJ (14 characters); empty when the certificate names neither. */
  signerDocument: string
  documentKind: 'CPF' | 'CNPJ' | null
  certificateAuthority: string
  /** Upper-case hexadecimal, as validators print it. */
  serialNumber: string
  validFrom: Date
  validUntil: Date
}

const CPF = /^\d{11}$/
const CNPJ = /^[0-9A-Z]{12}\d{2}$/

function kindOf (value: string): 'CPF' | 'CNPJ' | null {
  if (CPF.test(value)) return 'CPF'
  if (CNPJ.test(value)) return 'CNPJ'
  return null
}

/** Reads one attribute of a Node-formatted distinguished name (`CN=...` lines). */
export function dnAttribute (dn: string, name: string): string | undefined {
  const prefix = `${name}=`
  const line = dn.split('\n').reverse().find((l) => l.startsWith(prefix))
  return line?.slice(prefix.length)
}

/** The otherName entries of the subjectAltName extension, value decoded as text. */
export function readOtherNames (certDer: Buffer): Map<string, string> {
  const out = new Map<string, string>()
  const value = extensionValue(certDer, OID_SUBJECT_ALT_NAME)
  if (value === undefined) return out
  for (const name of children(readNode(value))) {
    if (name.tag !== 0xa0) continue
    const [typeId, wrapped] = children(name)
    if (typeId === undefined || wrapped === undefined) continue
    // [0] EXPLICIT around an OCTET STRING, PrintableString, UTF8String or IA5String.
    const inner = children(wrapped)[0]
    const text = (inner ?? wrapped).content.toString('latin1')
    out.set(decodeOid(typeId.content), text)
  }
  return out
}

function documentFromOtherNames (names: Map<string, string>): { value: string, kind: 'CPF' | 'CNPJ' } | undefined {
  const cnpj = names.get(OID_ICP_CNPJ)?.trim()
  if (cnpj !== undefined && CNPJ.test(cnpj) && !/^0+$/.test(cnpj)) return { value: cnpj, kind: 'CNPJ' }
  const pf = names.get(OID_ICP_CPF_HOLDER)
  const cpf = pf?.slice(8, 19)
  if (cpf !== undefined && CPF.test(cpf) && !/^0+$/.test(cpf)) return { value: cpf, kind: 'CPF' }
  return undefined
}

export function readSignerIdentity (cert: X509Certificate): SignerIdentity {
  const cn = dnAttribute(cert.subject, 'CN') ?? ''
  const colon = cn.lastIndexOf(':')
  const cnSuffix = colon >= 0 ? cn.slice(colon + 1).trim() : ''
  const cnHasDocument = kindOf(cnSuffix) !== null
  const signerName = cnHasDocument ? cn.slice(0, colon).trim() : cn

  let document: { value: string, kind: 'CPF' | 'CNPJ' | null } = { value: '', kind: null }
  const serial = dnAttribute(cert.subject, 'serialNumber')?.toUpperCase().replace(/[^0-9A-Z]/g, '')
  const fromOtherNames = documentFromOtherNames(readOtherNames(cert.raw))
  if (serial !== undefined && kindOf(serial) !== null) document = { value: serial, kind: kindOf(serial) }
  else if (fromOtherNames !== undefined) document = fromOtherNames
  else if (cnHasDocument) document = { value: cnSuffix, kind: kindOf(cnSuffix) }

  const issuerCn = dnAttribute(cert.issuer, 'CN') ?? dnAttribute(cert.issuer, 'O') ?? cert.issuer.replace(/\n/g, ', ')
  return {
    signerName,
    signerDocument: document.value,
    documentKind: document.kind,
    certificateAuthority: issuerCn,
    serialNumber: cert.serialNumber.toUpperCase(),
    validFrom: new Date(cert.validFrom),
    validUntil: new Date(cert.validTo)
  }
}

/** The arc of ICP-Brasil's OIDs (certificate policies 2.16.76.1.2.*, DPCs 2.16.76.1.1.*, signature policies 2.16.76.1.7.*). */
export const ICP_BRASIL_ARC = '2.16.76.1.'
/** The common name of createDevChain's root (dev-chain.ts): no real authority uses it. */
export const DEV_ROOT_NAME = 'AC RAIZ RAZAO DESENVOLVIMENTO - NAO CONFIAVEL'

/**
 * What the signer's chain is, for the words the stamp and the final page may use:
 * - `ICP_BRASIL`: a certificate of the path declares an ICP-Brasil certificate policy
 *   (an OID under 2.16.76.1., as every ICP-Brasil end-entity and intermediate does), or the
 *   path reaches one of `roots` (a configured ICP-Brasil root: the top certificate is one,
 *   or was issued and signed by one);
 * - `DEVELOPMENT`: the path ends at our development root (createDevChain);
 * - `OTHER`: anything else (a company's own authority, a foreign one).
 * ICP-Brasil-looking names or otherNames prove nothing: anyone can write them, and the
 * development chain does.
 */
export type ChainKind = 'ICP_BRASIL' | 'DEVELOPMENT' | 'OTHER'

export function chainKind (path: X509Certificate[], roots: X509Certificate[] = []): ChainKind {
  if (path.some((c) => readCertificatePolicies(c.raw).some((oid) => oid.startsWith(ICP_BRASIL_ARC)))) return 'ICP_BRASIL'
  const top = path[path.length - 1]
  if (top !== undefined && roots.some((r) => r.raw.equals(top.raw) || (top.checkIssued(r) && top.verify(r.publicKey)))) return 'ICP_BRASIL'
  if (top !== undefined && dnAttribute(top.issuer, 'CN') === DEV_ROOT_NAME) return 'DEVELOPMENT'
  return 'OTHER'
}
