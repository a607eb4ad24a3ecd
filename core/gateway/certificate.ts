/**
 * What the gateway checks and shows of an uploaded A1 certificate. The PKCS#12 is opened
 * with the signing area's reader (node-forge: it also reads the legacy RC2/3DES bundles
 * many Brazilian A1 files still are). The holder's CNPJ comes from the ICP-Brasil
 * otherName 2.16.76.1.3.3 (DOC-ICP-04; the ICP-Brasil certificate profile), the authoritative field;
 * the subject's serialNumber or `NAME:CNPJ` common name only when it is missing.
 */
import { normalizeCnpj } from '../cnpj.js'
import { EngineError } from '../errors.js'
import { OID_ICP_CNPJ, isSignError, loadPkcs12, readOtherNames } from '../sign/index.js'
import type { OpenPkcs12, SigningMaterial } from '../sign/index.js'

export interface CertificateFacts {
  /** The subject as one line (`C=BR, O=ICP-Brasil, CN=EMPRESA LTDA:11222333000181`). */
  subject: string
  /** 14 characters, upper-case. */
  cnpj: string
  validFrom: Date
  validUntil: Date
  /** SHA-256 of the certificate's DER, upper-case hex without separators. */
  fingerprint: string
}

const DAY_MS = 86_400_000

/** Whole days from `now` until the certificate expires (negative once expired). */
export function daysToExpiry (validUntil: Date, now: Date): number {
  return Math.floor((validUntil.getTime() - now.getTime()) / DAY_MS)
}

/** Opens in the calling thread: for tests and tools; the service passes a worker thread's opener. */
export const openInThread: OpenPkcs12 = async (file, password) => loadPkcs12(file, password)

async function open (pfx: Uint8Array, password: string, openPkcs12: OpenPkcs12): Promise<SigningMaterial> {
  try {
    return await openPkcs12(pfx, password)
  } catch (err) {
    if (!isSignError(err)) throw err
    const message = /wrong password/.test(err.message)
      ? 'The certificate could not be opened with this password.'
      : /no RSA private key|no certificate matching/.test(err.message)
        ? 'The PKCS#12 file holds no private key with its certificate; export the A1 certificate with its key.'
        : /iterations|took too long/.test(err.message)
          ? err.message
          : 'The file is not a readable PKCS#12 (.pfx/.p12) certificate.'
    throw new EngineError('GATEWAY_CERT_UNREADABLE', message, undefined, { cause: err })
  }
}

/**
 * Opens the file with its password and reads its facts; refuses (GATEWAY_CERT_UNREADABLE)
 * a file that does not open or names no valid CNPJ, and (GATEWAY_CERT_EXPIRED) one
 * outside its validity at `now`.
 */
export async function inspectCertificate (pfx: Uint8Array, password: string, now: Date, openPkcs12: OpenPkcs12 = openInThread): Promise<CertificateFacts> {
  const material = await open(pfx, password, openPkcs12)
  const leaf = material.leaf
  const fromOtherName = readOtherNames(leaf.raw).get(OID_ICP_CNPJ)
  const printed = fromOtherName ?? (material.identity.documentKind === 'CNPJ' ? material.identity.signerDocument : undefined)
  const cnpj = printed === undefined ? null : normalizeCnpj(printed)
  if (cnpj === null) {
    throw new EngineError('GATEWAY_CERT_UNREADABLE', printed === undefined
      ? 'The certificate names no CNPJ (ICP-Brasil otherName 2.16.76.1.3.3): the gateway needs a company (e-CNPJ) A1 certificate.'
      : 'The CNPJ the certificate names has invalid check digits.')
  }
  const facts: CertificateFacts = {
    subject: leaf.subject.split('\n').join(', '),
    cnpj,
    validFrom: new Date(leaf.validFrom),
    validUntil: new Date(leaf.validTo),
    fingerprint: leaf.fingerprint256.replace(/:/g, '').toUpperCase()
  }
  assertCurrent(facts, now)
  return facts
}

/** Refuses a certificate outside its validity period at `now`. */
export function assertCurrent (facts: Pick<CertificateFacts, 'validFrom' | 'validUntil'>, now: Date): void {
  if (now.getTime() > facts.validUntil.getTime()) {
    throw new EngineError('GATEWAY_CERT_EXPIRED', `The certificate expired on ${facts.validUntil.toISOString().slice(0, 10)}; upload a current one.`)
  }
  if (now.getTime() < facts.validFrom.getTime()) {
    throw new EngineError('GATEWAY_CERT_EXPIRED', `The certificate is not valid before ${facts.validFrom.toISOString()}.`)
  }
}
