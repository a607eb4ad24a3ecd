/**
 * Pool task: sign one PDF. The certificate is read from its file once per worker
 * thread and kept (re-read when the file or the chain file changes, see
 * certificateVersion); the key never leaves this thread.
 * Expected refusals come back as `{ outcome: 'refused', code, message, field }`
 * because the signing codes are not part of the shared catalog that the task wrapper
 * carries across threads; anything unexpected still travels as INTERNAL.
 *
 * The PDF bytes cross the thread boundary by transfer, not by copy: the signed file
 * always, the input when the caller wraps it with `transferPdf`. A copy costs about 1 ms
 * per MB (serialised on one side, deserialised on the other), half of it on the HTTP
 * thread that every request shares.
 */
import { createHash } from 'node:crypto'
import { statSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { move, transferableSymbol, valueSymbol } from 'piscina'
import { SignError, assertSigningKeyUsage, isSignError, isoWithOffset, loadPkcs12, newDocumentIdentifier, readPemCertificates, signPdf } from '../core/sign/index.js'
import type { SignCode, SignatureLevel, SignatureStandard, SignerIdentity, SigningMaterial, VisualMode } from '../core/sign/index.js'
import { defineTask } from './task.js'
import type { TaskResult } from './task.js'

/** Where the signing certificate comes from (SIGN_CERT_PATH, SIGN_CERT_PASSWORD, SIGN_CERT_CHAIN_PATH). */
export interface CertificateSource {
  path: string
  password: string
  /** A PEM file of issuer certificates completing the PKCS#12's chain. */
  chainPath?: string | undefined
  /** A PEM file of ICP-Brasil roots (SIGN_ICP_BRASIL_ROOTS_PATH): decides the chain's kind, not the path. */
  icpRootsPath?: string | undefined
}

export interface SignPdfInput {
  pdf: Uint8Array
  certificate: CertificateSource
  visualMode: VisualMode
  /** The timestamp authority, for levels T, LT and LTA. */
  tsa?: { url: string, timeoutMs: number } | undefined
  /** Default: T with an authority, B without. */
  level?: SignatureLevel | undefined
  /** Bounds on each OCSP/CRL fetch (LT, LTA). */
  revocation?: { timeoutMs: number, maxBytes: number } | undefined
  policy?: { oid: string, hashHex: string, uri?: string | undefined } | undefined
  validatorUrl: string
  timeZone: string
}

/** The signing certificate as the API shows it (`data.certificate`). */
export interface CertificateFacts {
  signerName: string
  signerDocument: string
  certificateAuthority: string
  certificateSerialNumber: string
  validFrom: string
  validUntil: string
}

export type SignPdfOutput =
  | {
    outcome: 'signed'
    pdf: Uint8Array
    sha256: string
    documentIdentifier: string
    signedAt: string
    signatureStandard: SignatureStandard
    timestampApplied: boolean
    certificate: CertificateFacts
    /** For the answer's `warnings`: what was done to the input before signing, and to its pages' stamps. */
    warnings: string[]
  }
  | { outcome: 'refused', code: SignCode, message: string, field: string | null }

const factsByIdentity = new WeakMap<SignerIdentity, Map<string, CertificateFacts>>()

/** The API's view of the certificate, dates in `timeZone`; formatted once per certificate and zone. */
export function certificateFacts (identity: SignerIdentity, timeZone: string): CertificateFacts {
  let byZone = factsByIdentity.get(identity)
  if (byZone === undefined) {
    byZone = new Map()
    factsByIdentity.set(identity, byZone)
  }
  let facts = byZone.get(timeZone)
  if (facts === undefined) {
    facts = {
      signerName: identity.signerName,
      signerDocument: identity.signerDocument,
      certificateAuthority: identity.certificateAuthority,
      certificateSerialNumber: identity.serialNumber,
      validFrom: isoWithOffset(identity.validFrom, timeZone),
      validUntil: isoWithOffset(identity.validUntil, timeZone)
    }
    byZone.set(timeZone, facts)
  }
  return facts
}

/**
 * One version of a file: a file renamed over the old one has another inode, one written
 * over in place another ctime (which, unlike the mtime, no tool can set back), so a copy
 * that keeps the old file's size and mtime (`cp -p`) is still seen as new.
 */
function fileVersion (path: string, what: string): string {
  try {
    // Synchronous: this runs before every signature, and fs/promises' stat is a round trip
    // through libuv's thread pool (about 30 µs of CPU and as long with this thread idle);
    // statSync of a local file takes about 3 µs.
    const s = statSync(path)
    return `${s.dev}:${s.ino}:${s.size}:${s.mtimeMs}:${s.ctimeMs}`
  } catch (err) {
    throw new SignError('SIGN_CERT_INVALID', `${what} cannot be read.`, null, { cause: err })
  }
}

/**
 * What identifies the certificate `source` names as its files are now: equal versions hold
 * the same certificate. Throws SIGN_CERT_INVALID when a file cannot be read. The health
 * routes compare it with the version they last opened, as loadMaterial does in each thread.
 */
export function certificateVersion (source: CertificateSource): string {
  const files = [fileVersion(source.path, 'The signing certificate file (SIGN_CERT_PATH)')]
  if (source.chainPath !== undefined) files.push(fileVersion(source.chainPath, 'The certificate chain file (SIGN_CERT_CHAIN_PATH)'))
  if (source.icpRootsPath !== undefined) files.push(fileVersion(source.icpRootsPath, 'The ICP-Brasil roots file (SIGN_ICP_BRASIL_ROOTS_PATH)'))
  return `${source.path}\0${source.chainPath ?? ''}\0${source.icpRootsPath ?? ''}\0${files.join('\0')}\0${createHash('sha256').update(source.password).digest('hex')}`
}

const cache = new Map<string, SigningMaterial | SignError>()

/**
 * The certificate of `source`, opened once per thread and kept while its files' versions
 * and the password stay the same. A file that cannot be read or opened, or a certificate
 * whose key usage forbids signing, is SIGN_CERT_INVALID (kept too, until the files change).
 */
export async function loadMaterial (source: CertificateSource): Promise<SigningMaterial> {
  // Taken before the files are read: a file replaced while it is read is read again on the next use.
  const version = certificateVersion(source)
  let found = cache.get(version)
  if (found === undefined) {
    try {
      const issuers = source.chainPath === undefined ? [] : readPemCertificates(await readFile(source.chainPath, 'latin1'), 'The certificate chain file (SIGN_CERT_CHAIN_PATH)')
      const icpRoots = source.icpRootsPath === undefined ? [] : readPemCertificates(await readFile(source.icpRootsPath, 'latin1'), 'The ICP-Brasil roots file (SIGN_ICP_BRASIL_ROOTS_PATH)')
      found = loadPkcs12(await readFile(source.path), source.password, issuers, icpRoots)
      assertSigningKeyUsage(found)
    } catch (err) {
      found = err instanceof SignError ? err : new SignError('SIGN_CERT_INVALID', 'The signing certificate file cannot be read (SIGN_CERT_PATH).', null, { cause: err })
    }
    cache.clear()
    cache.set(version, found)
  }
  if (found instanceof SignError) throw found
  return found
}

/** True when `bytes` is the whole of its ArrayBuffer, so that moving the buffer moves nothing else. */
function ownsItsBuffer (bytes: Uint8Array): boolean {
  return bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength && bytes.buffer instanceof ArrayBuffer
}

/**
 * `value` wrapped as a Piscina Transferable that moves `bytes`' memory to the other thread
 * instead of copying it; Piscina unwraps it, so the receiver gets `value` itself. Bytes that
 * share their ArrayBuffer (a small Buffer is a slice of Node's common pool) are copied as
 * usual: moving the pool would detach every other Buffer cut from it.
 */
export function moving<T> (value: T, bytes: Uint8Array): T {
  if (!ownsItsBuffer(bytes)) return value
  const buffer = bytes.buffer
  return move({ get [transferableSymbol] () { return [buffer] }, get [valueSymbol] () { return value as object } }) as T
}

/**
 * The task input with its PDF moved into the worker thread rather than copied. The caller
 * must not touch `input.pdf` afterwards (its memory is gone from the calling thread); a PDF
 * that shares its ArrayBuffer with other data is copied as before.
 */
export function transferPdf (input: SignPdfInput): SignPdfInput {
  return moving(input, input.pdf)
}

const signOne = defineTask(async (input: SignPdfInput): Promise<SignPdfOutput> => {
  try {
    const m = await loadMaterial(input.certificate)
    const signedAt = new Date()
    const documentIdentifier = newDocumentIdentifier()
    const signed = await signPdf(input.pdf, {
      material: m,
      visualMode: input.visualMode,
      tsa: input.tsa,
      level: input.level,
      revocation: input.revocation,
      policy: input.policy === undefined
        ? undefined
        : { oid: input.policy.oid, hash: Buffer.from(input.policy.hashHex, 'hex'), ...(input.policy.uri === undefined ? {} : { uri: input.policy.uri }) },
      validatorUrl: input.validatorUrl,
      timeZone: input.timeZone,
      documentIdentifier,
      signedAt
    })
    return {
      outcome: 'signed',
      pdf: signed.pdf,
      sha256: signed.sha256,
      documentIdentifier,
      signedAt: isoWithOffset(signedAt, input.timeZone),
      signatureStandard: signed.standard,
      timestampApplied: signed.timestampApplied,
      certificate: certificateFacts(m.identity, input.timeZone),
      // The certificate's own remarks (its issuer missing) first: they hold for every signature.
      warnings: [...m.warnings, ...signed.warnings]
    }
  } catch (err) {
    if (err instanceof SignError || isSignError(err)) {
      return { outcome: 'refused', code: err.code, message: err.message, field: err.field }
    }
    throw err
  }
})

/** The pool task: the signed bytes move to the calling thread instead of being copied. */
export default async function signPdfTask (input: SignPdfInput): Promise<TaskResult<SignPdfOutput>> {
  const result = await signOne(input)
  return result.ok && result.value.outcome === 'signed' ? moving(result, result.value.pdf) : result
}
