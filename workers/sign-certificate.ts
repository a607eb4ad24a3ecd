/**
 * Pool task: open the configured certificate once at start-up, for the health report
 * (who signs, until when, what is odd about the file). Returns only public facts.
 */
import { readFile } from 'node:fs/promises'
import { SignError, isSignError, isoWithOffset, loadPkcs12 } from '../core/sign/index.js'
import type { SignCode } from '../core/sign/index.js'
import type { CertificateFacts } from './sign-pdf.js'
import { defineTask } from './task.js'

export interface SignCertificateInput {
  path: string
  password: string
  timeZone: string
}

export type SignCertificateOutput =
  | { outcome: 'loaded', certificate: CertificateFacts, validUntilMs: number, warnings: string[] }
  | { outcome: 'refused', code: SignCode, message: string }

export default defineTask(async (input: SignCertificateInput): Promise<SignCertificateOutput> => {
  try {
    let file: Buffer
    try {
      file = await readFile(input.path)
    } catch (err) {
      throw new SignError('SIGN_CERT_INVALID', 'The signing certificate file cannot be read (SIGN_CERT_PATH).', null, { cause: err })
    }
    const { identity, warnings } = loadPkcs12(file, input.password)
    return {
      outcome: 'loaded',
      certificate: {
        signerName: identity.signerName,
        signerDocument: identity.signerDocument,
        certificateAuthority: identity.certificateAuthority,
        certificateSerialNumber: identity.serialNumber,
        validFrom: isoWithOffset(identity.validFrom, input.timeZone),
        validUntil: isoWithOffset(identity.validUntil, input.timeZone)
      },
      validUntilMs: identity.validUntil.getTime(),
      warnings
    }
  } catch (err) {
    if (err instanceof SignError || isSignError(err)) return { outcome: 'refused', code: err.code, message: err.message }
    throw err
  }
})
