/**
 * The trust store: anchor certificates read from a folder (PEM files with one or more
 * certificates, or DER files; .pem, .crt, .cer, .der). Only self-signed certificates are
 * anchors here: an intermediate in the folder would make every certificate it issued
 * trusted without its root, so one is refused with its file named.
 */
import { readFileSync, readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { X509Certificate } from 'node:crypto'
import type { TrustAnchor } from './chain.js'

const PEM = /-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g
const EXTENSIONS = /\.(pem|crt|cer|der)$/i

/** Certificates of one file's bytes (PEM blocks, else one DER certificate). */
export function certificatesIn (bytes: Buffer): X509Certificate[] {
  const text = bytes.toString('latin1')
  const blocks = text.match(PEM)
  if (blocks !== null) return blocks.map((b) => new X509Certificate(b))
  return [new X509Certificate(bytes)]
}

export class TrustStoreError extends Error {}

/** Reads every anchor of `dir` (not recursive); throws TrustStoreError naming the file at fault. */
export function loadTrustStore (dir: string): TrustAnchor[] {
  let names: string[]
  try {
    names = readdirSync(dir).filter((n) => EXTENSIONS.test(n)).sort()
  } catch (err) {
    throw new TrustStoreError(`The trust store folder ${dir} cannot be read (${(err as NodeJS.ErrnoException).code ?? 'error'}).`)
  }
  const anchors: TrustAnchor[] = []
  for (const name of names) {
    const path = join(dir, name)
    if (!statSync(path).isFile()) continue
    let certs: X509Certificate[]
    try {
      certs = certificatesIn(readFileSync(path))
    } catch {
      throw new TrustStoreError(`${path} in the trust store is not a certificate (PEM or DER).`)
    }
    for (const cert of certs) {
      if (!(cert.checkIssued(cert) && cert.verify(cert.publicKey))) {
        throw new TrustStoreError(`${path} holds a certificate that is not self-signed (${cert.subject.replace(/\n/g, ', ')}); the trust store takes root certificates only.`)
      }
      anchors.push({ cert, source: name })
    }
  }
  return anchors
}

/**
 * The folder of the shipped ICP-Brasil roots (anchors/ beside this module's source): found from
 * the sources and from the build in dist/, which does not copy it.
 */
export function shippedAnchorsDir (): string {
  for (const rel of ['./anchors/', '../../../../core/sign/verify/anchors/']) {
    const dir = new URL(rel, import.meta.url)
    try {
      if (statSync(dir).isDirectory()) return dir.pathname
    } catch { /* try the next layout */ }
  }
  throw new TrustStoreError('The shipped ICP-Brasil root certificates (core/sign/verify/anchors) are missing from this installation.')
}
