/**
 * Pool task: sign one PDF. The certificate is read from its file once per worker
 * thread and kept (re-read when the file changes); the key never leaves this thread.
 * Expected refusals come back as `{ outcome: 'refused', code, message, field }`
 * because the signing codes are not part of the shared catalog that the task wrapper
 * carries across threads; anything unexpected still travels as INTERNAL.
 */
import { createHash } from 'node:crypto'
import { readFile, stat } from 'node:fs/promises'
import { SignError, isSignError, isoWithOffset, loadPkcs12, newDocumentIdentifier, signPdf } from '../core/sign/index.js'
import type { SignCode, SignerIdentity, SigningMaterial, VisualMode } from '../core/sign/index.js'
import { defineTask } from './task.js'

export interface SignPdfInput {
  pdf: Uint8Array
  certificate: { path: string, password: string }
  visualMode: VisualMode
  /** Set: PAdES-T. */
  tsa?: { url: string, timeoutMs: number } | undefined
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
    signatureStandard: 'PAdES-B' | 'PAdES-T'
    timestampApplied: boolean
    certificate: CertificateFacts
  }
  | { outcome: 'refused', code: SignCode, message: string, field: string | null }

/** The API's view of the certificate, dates in `timeZone`. */
export function certificateFacts (identity: SignerIdentity, timeZone: string): CertificateFacts {
  return {
    signerName: identity.signerName,
    signerDocument: identity.signerDocument,
    certificateAuthority: identity.certificateAuthority,
    certificateSerialNumber: identity.serialNumber,
    validFrom: isoWithOffset(identity.validFrom, timeZone),
    validUntil: isoWithOffset(identity.validUntil, timeZone)
  }
}

const cache = new Map<string, SigningMaterial | SignError>()

/**
 * The certificate of `path`, opened once per thread and kept while the file's mtime, size
 * and the password stay the same. A file that cannot be read or opened is SIGN_CERT_INVALID.
 */
export async function loadMaterial (path: string, password: string): Promise<SigningMaterial> {
  let key: string
  try {
    const s = await stat(path)
    key = `${path}\0${s.mtimeMs}\0${s.size}\0${createHash('sha256').update(password).digest('hex')}`
  } catch (err) {
    throw new SignError('SIGN_CERT_INVALID', 'The signing certificate file cannot be read (SIGN_CERT_PATH).', null, { cause: err })
  }
  let found = cache.get(key)
  if (found === undefined) {
    try {
      found = loadPkcs12(await readFile(path), password)
    } catch (err) {
      found = err instanceof SignError ? err : new SignError('SIGN_CERT_INVALID', 'The signing certificate file cannot be read (SIGN_CERT_PATH).', null, { cause: err })
    }
    cache.clear()
    cache.set(key, found)
  }
  if (found instanceof SignError) throw found
  return found
}

export default defineTask(async (input: SignPdfInput): Promise<SignPdfOutput> => {
  try {
    const m = await loadMaterial(input.certificate.path, input.certificate.password)
    const signedAt = new Date()
    const documentIdentifier = newDocumentIdentifier()
    const signed = await signPdf(input.pdf, {
      material: m,
      visualMode: input.visualMode,
      tsa: input.tsa,
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
      certificate: certificateFacts(m.identity, input.timeZone)
    }
  } catch (err) {
    if (err instanceof SignError || isSignError(err)) {
      return { outcome: 'refused', code: err.code, message: err.message, field: err.field }
    }
    throw err
  }
})
