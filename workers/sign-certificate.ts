/**
 * Pool task: open the configured certificate once at start-up, for the health report
 * (who signs, until when, what is odd about the file). Returns only public facts; the
 * thread that ran it keeps the opened certificate for its first signature.
 */
import { SignError, isSignError } from '../core/sign/index.js'
import type { SignCode } from '../core/sign/index.js'
import { certificateFacts, loadMaterial } from './sign-pdf.js'
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
    const { identity, warnings } = await loadMaterial(input.path, input.password)
    return { outcome: 'loaded', certificate: certificateFacts(identity, input.timeZone), validUntilMs: identity.validUntil.getTime(), warnings }
  } catch (err) {
    if (err instanceof SignError || isSignError(err)) return { outcome: 'refused', code: err.code, message: err.message }
    throw err
  }
})
