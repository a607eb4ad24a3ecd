/**
 * What the health endpoints say about the signing certificate. It is opened once at
 * start-up in the pool (the key stays there); expiry is judged at each health call.
 */
import { runTask } from '../../workers/pool.js'
import type { WorkerPool } from '../../workers/pool.js'
import type { SignCertificateInput, SignCertificateOutput } from '../../workers/sign-certificate.js'

const DAY_MS = 86_400_000
const EXPIRY_NOTICE_DAYS = 30

export class CertificateState {
  constructor (private readonly outcome: SignCertificateOutput) {}

  report (nowMs: number): { status: 'UP' | 'DOWN', warnings: string[] } {
    if (this.outcome.outcome === 'refused') return { status: 'DOWN', warnings: [`The signing certificate is unusable: ${this.outcome.message}`] }
    const warnings = [...this.outcome.warnings]
    const daysLeft = Math.floor((this.outcome.validUntilMs - nowMs) / DAY_MS)
    if (this.outcome.validUntilMs < nowMs) {
      return { status: 'DOWN', warnings: [...warnings, `The signing certificate expired on ${this.outcome.certificate.validUntil}.`] }
    }
    if (daysLeft < EXPIRY_NOTICE_DAYS) warnings.push(`The signing certificate expires on ${this.outcome.certificate.validUntil} (in ${daysLeft} days).`)
    return { status: 'UP', warnings }
  }

  /** Public facts only: who signs and until when (all of it is in every signed PDF anyway). */
  details (): Record<string, unknown> {
    if (this.outcome.outcome === 'refused') return { error: this.outcome.code }
    const c = this.outcome.certificate
    return { signerName: c.signerName, certificateAuthority: c.certificateAuthority, validUntil: c.validUntil }
  }
}

export async function probeCertificate (pool: WorkerPool, certificate: { path: string, password: string }, timeZone: string): Promise<CertificateState> {
  const input: SignCertificateInput = { path: certificate.path, password: certificate.password, timeZone }
  return new CertificateState(await runTask<SignCertificateInput, SignCertificateOutput>(pool, 'sign-certificate', input))
}
