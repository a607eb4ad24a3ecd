/**
 * Pool task: verify the signatures of one PDF (core/sign/verify). The trust anchors come
 * with each task as DER (a few kilobytes); their parsed form is kept per thread. The PDF
 * moves in (see transferVerifyPdf) rather than being copied.
 */
import { createHash, X509Certificate } from 'node:crypto'
import { SignError, isSignError } from '../core/sign/index.js'
import type { SignCode } from '../core/sign/index.js'
import { verifyPdf } from '../core/sign/verify/index.js'
import type { TrustAnchor, VerificationReport } from '../core/sign/verify/index.js'
import { moving } from './sign-pdf.js'
import { defineTask } from './task.js'

export interface VerifyPdfInput {
  pdf: Uint8Array
  /** The trust store: each anchor's DER and the file it came from. */
  anchors: Array<{ der: Uint8Array, source: string }>
}

export type VerifyPdfOutput =
  | { outcome: 'verified', report: VerificationReport }
  | { outcome: 'refused', code: SignCode, message: string, field: string | null }

const parsed = new Map<string, TrustAnchor[]>()

function anchorsOf (input: VerifyPdfInput['anchors']): TrustAnchor[] {
  const key = createHash('sha256').update(input.map((a) => `${a.source}\0${Buffer.from(a.der).toString('base64')}`).join('\n')).digest('hex')
  let anchors = parsed.get(key)
  if (anchors === undefined) {
    anchors = input.map((a) => ({ cert: new X509Certificate(a.der), source: a.source }))
    parsed.clear()
    parsed.set(key, anchors)
  }
  return anchors
}

/** The task input with its PDF moved into the worker thread (the caller must not use it afterwards). */
export function transferVerifyPdf (input: VerifyPdfInput): VerifyPdfInput {
  return moving(input, input.pdf)
}

export default defineTask(async (input: VerifyPdfInput): Promise<VerifyPdfOutput> => {
  try {
    return { outcome: 'verified', report: await verifyPdf(input.pdf, { anchors: anchorsOf(input.anchors) }) }
  } catch (err) {
    if (err instanceof SignError || isSignError(err)) return { outcome: 'refused', code: err.code, message: err.message, field: err.field }
    throw err
  }
})
