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
import { readKeyUsage } from './extensions.js'
import type { KeyUsage } from './extensions.js'
import { chainKind, dnAttribute, readSignerIdentity } from './icp-brasil.js'
import { assertPkcs12Iterations } from './pkcs12-limits.js'
import type { ChainKind, SignerIdentity } from './icp-brasil.js'

/** Everything the signer needs; `key` never leaves the thread that loaded it. */
export interface SigningMaterial {
  key: KeyObject
  /** DER certificates, the signer's first, then its issuers as far as the file holds them. */
  chain: Buffer[]
  leaf: X509Certificate
  identity: SignerIdentity
  /** The signer certificate's keyUsage bits; undefined when it has no keyUsage extension. */
  keyUsage: KeyUsage[] | undefined
  /** Non-fatal remarks for the health and signature `warnings` (the signer's issuer missing). */
  warnings: string[]
  /** ICP-Brasil, our development chain or another: decides what the stamp and final page may claim. */
  chainKind: ChainKind
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
export function loadPkcs12 (file: Uint8Array, password: string, issuers: X509Certificate[] = [], icpRoots: X509Certificate[] = []): SigningMaterial {
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
  return materialFrom(key, certs, issuers, icpRoots)
}

const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[A-Za-z0-9+/=\s]+?-----END CERTIFICATE-----/g

/**
 * The certificates of a PEM file (a chain file: intermediates, perhaps the root). A file
 * with no certificate, or one that does not parse, is SIGN_CERT_INVALID: it was named in
 * the configuration to be used.
 */
export function readPemCertificates (text: string, what: string): X509Certificate[] {
  const blocks = text.match(PEM_CERTIFICATE) ?? []
  if (blocks.length === 0) throw new SignError('SIGN_CERT_INVALID', `${what} holds no PEM certificate (-----BEGIN CERTIFICATE-----).`)
  try {
    return blocks.map((pem) => new X509Certificate(pem))
  } catch (err) {
    throw new SignError('SIGN_CERT_INVALID', `${what} holds a certificate that cannot be read.`, null, { cause: err })
  }
}

/**
 * Orders the certificates into the signer's path and reads its identity. `issuers` are
 * more certificates to build the path from (a chain file beside the PKCS#12); only those
 * on the path are kept. `icpRoots` are configured ICP-Brasil roots (chainKind).
 */
export function materialFrom (key: KeyObject, certs: X509Certificate[], issuers: X509Certificate[] = [], icpRoots: X509Certificate[] = []): SigningMaterial {
  const leaf = certs.find((c) => c.checkPrivateKey(key))
  if (leaf === undefined) throw new SignError('SIGN_CERT_INVALID', 'The signing certificate file has no certificate matching its private key.')
  const path = [leaf]
  const rest = [...certs, ...issuers].filter((c) => c !== leaf)
  for (let current = leaf; current.issuer !== current.subject || !current.verify(current.publicKey);) {
    const issuer = rest.find((c) => !path.some((p) => p.raw.equals(c.raw)) && current.checkIssued(c) && current.verify(c.publicKey))
    if (issuer === undefined) break
    path.push(issuer)
    current = issuer
  }
  const warnings: string[] = []
  if (path.length === 1 && leaf.issuer !== leaf.subject) {
    // Only the first link is certain to be missing: a path that stops at an intermediate may
    // simply leave out the root, which validators hold (pades.md: "optionally the root").
    const issuerName = dnAttribute(leaf.issuer, 'CN') ?? leaf.issuer.replace(/\n/g, ', ')
    warnings.push(`The certificate of the signer's issuer (${issuerName}) is not in the certificate file${issuers.length > 0 ? ' nor in the chain file' : ''}: signatures carry the signer certificate without it, and a validator that does not already hold it cannot trace them to a root. Add the issuer certificates to the PKCS#12 file or name a PEM file of them in SIGN_CERT_CHAIN_PATH.`)
  }
  return { key, leaf, chain: path.map((c) => c.raw), identity: readSignerIdentity(leaf), keyUsage: readKeyUsage(leaf.raw), warnings, chainKind: chainKind(path, icpRoots) }
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

/**
 * Refuses a signer certificate whose keyUsage extension allows neither digitalSignature
 * nor nonRepudiation (RFC 5280 §4.2.1.3): validators reject a document signature made
 * with it (reference/pades-verify-lt.md, check 12). ICP-Brasil A1 certificates carry both;
 * a certificate without the extension is not limited.
 */
export function assertSigningKeyUsage (material: SigningMaterial): void {
  const usage = material.keyUsage
  if (usage === undefined || usage.includes('digitalSignature') || usage.includes('nonRepudiation')) return
  throw new SignError('SIGN_CERT_INVALID', `The signing certificate's key usage (${usage.length === 0 ? 'no bit set' : usage.join(', ')}) allows neither digitalSignature nor nonRepudiation, so it may not sign documents: it is meant for something else (a TLS server's certificate, for one). Configure the A1 signing certificate (e-CNPJ or e-CPF).`)
}
