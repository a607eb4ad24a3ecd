/**
 * Pool task: open the configured certificate for the health report (who signs, until
 * when, what is odd about the files), at start-up and whenever its files change. It opens
 * it as a signature does (loadMaterial: the same checks, the same cache) and returns only
 * public facts; the thread that ran it keeps the opened certificate for its next signature.
 */
import { SignError, isSignError } from '../core/sign/index.js'
import type { SignCode } from '../core/sign/index.js'
import { certificateFacts, loadMaterial } from './sign-pdf.js'
import type { CertificateFacts, CertificateSource } from './sign-pdf.js'
import { defineTask } from './task.js'

export interface SignCertificateInput {
  certificate: CertificateSource
  timeZone: string
}

export type SignCertificateOutput =
  | { outcome: 'loaded', certificate: CertificateFacts, validUntilMs: number, warnings: string[] }
  | { outcome: 'refused', code: SignCode, message: string }

export default defineTask(async (input: SignCertificateInput): Promise<SignCertificateOutput> => {
  try {
    const { identity, warnings } = await loadMaterial(input.certificate)
    return { outcome: 'loaded', certificate: certificateFacts(identity, input.timeZone), validUntilMs: identity.validUntil.getTime(), warnings }
  } catch (err) {
    if (err instanceof SignError || isSignError(err)) return { outcome: 'refused', code: err.code, message: err.message }
    throw err
  }
})
