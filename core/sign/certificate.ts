/**
 * The server's signing certificate: a PKCS#12 (A1) file opened with node-forge,
 * which also reads the legacy RC2/3DES bundles many Brazilian A1 files still are
 * (Node's OpenSSL 3 needs its legacy provider for those). The private key goes
 * straight into a node:crypto KeyObject; the chain is ordered leaf → root.
 */
import { X509Certificate, createPrivateKey } from 'node:crypto'
import type { KeyObject } from 'node:crypto'
import forge from 'node-forge'
import { SignError } from './errors.js'
import { readSignerIdentity } from './icp-brasil.js'
import { assertPkcs12Iterations } from './pkcs12-limits.js'
import type { SignerIdentity } from './icp-brasil.js'

/** Everything the signer needs; `key` never leaves the thread that loaded it. */
export interface SigningMaterial {
  key: KeyObject
  /** DER certificates, the signer's first, then its issuers as far as the file holds them. */
  chain: Buffer[]
  leaf: X509Certificate
  identity: SignerIdentity
  /** Non-fatal remarks for the health `warnings` (a chain without intermediates, expiry soon). */
  warnings: string[]
}

/**
 * How a service opens a PKCS#12 file: loadPkcs12's result, from wherever it runs (the
 * gateway hands in workers/pkcs12-isolate.ts, so that no certificate is opened on its
 * main thread).
 */
export type OpenPkcs12 = (file: Uint8Array, password: string) => Promise<SigningMaterial>

function certificateDer (bag: forge.pkcs12.Bag): Buffer | undefined {
  // forge keeps the parsed TBSCertificate, so re-encoding gives back the original DER.
  const asn1 = bag.cert !== undefined && bag.cert !== null ? forge.pki.certificateToAsn1(bag.cert) : bag.asn1
  return asn1 === undefined ? undefined : Buffer.from(forge.asn1.toDer(asn1).getBytes(), 'binary')
}

/**
 * Opens a PKCS#12 file; a wrong password, a missing key, an unparsable file or iteration
 * counts past the caps (pkcs12-limits.ts, checked before any key derivation) is
 * SIGN_CERT_INVALID. Synchronous and up to seconds of CPU for a file at the caps: the
 * services call it in a worker thread, never on the main one.
 */
export function loadPkcs12 (file: Uint8Array, password: string): SigningMaterial {
  let p12: forge.pkcs12.Pkcs12Pfx
  try {
    const asn1 = forge.asn1.fromDer(Buffer.from(file).toString('binary'))
    assertPkcs12Iterations(asn1, password)
    p12 = forge.pkcs12.pkcs12FromAsn1(asn1, false, password)
  } catch (err) {
    if (err instanceof SignError) throw err
    const wrongPassword = err instanceof Error && /MAC|password|decrypt/i.test(err.message)
    throw new SignError('SIGN_CERT_INVALID', wrongPassword
      ? 'The signing certificate could not be opened: wrong password (SIGN_CERT_PASSWORD).'
      : 'The signing certificate file is not a readable PKCS#12 (.pfx/.p12) file.', null, { cause: err })
  }
  const keyBags = [
    ...(p12.getBags({ bagType: forge.pki.oids.pkcs8ShroudedKeyBag })[forge.pki.oids.pkcs8ShroudedKeyBag!] ?? []),
    ...(p12.getBags({ bagType: forge.pki.oids.keyBag })[forge.pki.oids.keyBag!] ?? [])
  ]
  const forgeKey = keyBags.find((b) => b.key !== undefined)?.key
  if (forgeKey === undefined) throw new SignError('SIGN_CERT_INVALID', 'The signing certificate file holds no RSA private key.')
  const key = createPrivateKey(forge.pki.privateKeyToPem(forgeKey as forge.pki.rsa.PrivateKey))
  const certs: X509Certificate[] = []
  for (const bag of p12.getBags({ bagType: forge.pki.oids.certBag })[forge.pki.oids.certBag!] ?? []) {
    const der = certificateDer(bag)
    if (der !== undefined) certs.push(new X509Certificate(der))
  }
  return materialFrom(key, certs)
}

/** Orders the certificates into the signer's path and reads its identity. */
export function materialFrom (key: KeyObject, certs: X509Certificate[]): SigningMaterial {
  const leaf = certs.find((c) => c.checkPrivateKey(key))
  if (leaf === undefined) throw new SignError('SIGN_CERT_INVALID', 'The signing certificate file has no certificate matching its private key.')
  const path = [leaf]
  const rest = certs.filter((c) => c !== leaf)
  for (let current = leaf; current.issuer !== current.subject || !current.verify(current.publicKey);) {
    const issuer = rest.find((c) => !path.includes(c) && current.checkIssued(c) && current.verify(c.publicKey))
    if (issuer === undefined) break
    path.push(issuer)
    current = issuer
  }
  const warnings: string[] = []
  if (path.length === 1 && leaf.issuer !== leaf.subject) {
    warnings.push('The certificate file holds no issuer certificates: the signature carries only the signer certificate, and validators must find the chain elsewhere.')
  }
  return { key, leaf, chain: path.map((c) => c.raw), identity: readSignerIdentity(leaf), warnings }
}

/** Refuses a certificate outside its validity period at `at`. */
export function assertValidAt (material: SigningMaterial, at: Date): void {
  const { validFrom, validUntil } = material.identity
  if (at.getTime() < validFrom.getTime()) {
    throw new SignError('SIGN_CERT_INVALID', `The signing certificate is not valid before ${validFrom.toISOString()}.`)
  }
  if (at.getTime() > validUntil.getTime()) {
    throw new SignError('SIGN_CERT_INVALID', `The signing certificate expired on ${validUntil.toISOString()}.`)
  }
}
