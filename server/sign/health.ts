/**
 * What the health endpoints say about the signing certificate: the one its files hold now,
 * as the signatures see it. It is opened in the pool (the key stays there) at start-up and
 * again whenever the files' version changes (certificateVersion: inode, size, mtime, ctime),
 * which each health call checks with a stat; expiry is judged at each call.
 */
import { runTask } from '../../workers/pool.js'
import type { WorkerPool } from '../../workers/pool.js'
import type { SignCertificateInput, SignCertificateOutput } from '../../workers/sign-certificate.js'
import { certificateVersion } from '../../workers/sign-pdf.js'
import type { CertificateSource } from '../../workers/sign-pdf.js'

const DAY_MS = 86_400_000
const EXPIRY_NOTICE_DAYS = 30

export class CertificateState {
  constructor (private readonly outcome: SignCertificateOutput) {}

  report (nowMs: number): { status: 'UP' | 'DOWN', warnings: string[] } {
    if (this.outcome.outcome === 'refused') return { status: 'DOWN', warnings: [`The signing certificate is unusable: ${this.outcome.message}`] }
    const warnings = [...this.outcome.warnings]
    const expired = this.expiredOn(nowMs)
    if (expired !== undefined) {
      return { status: 'DOWN', warnings: [...warnings, `The signing certificate expired on ${expired}.`] }
    }
    const daysLeft = this.daysLeft(nowMs)!
    if (daysLeft <= EXPIRY_NOTICE_DAYS) {
      const when = daysLeft === 0 ? 'in less than a day' : `in ${daysLeft} day${daysLeft === 1 ? '' : 's'}`
      warnings.push(`The signing certificate expires on ${this.outcome.certificate.validUntil} (${when}): install the renewed A1 certificate before then.`)
    }
    return { status: 'UP', warnings }
  }

  /** Whole days until the certificate's end (0 on its last day, negative once expired); undefined when it cannot be opened. */
  daysLeft (nowMs: number): number | undefined {
    return this.outcome.outcome === 'loaded' ? Math.floor((this.outcome.validUntilMs - nowMs) / DAY_MS) : undefined
  }

  /** The end of validity (ISO, in SIGN_TIME_ZONE) when it has passed; undefined otherwise. */
  expiredOn (nowMs: number): string | undefined {
    if (this.outcome.outcome === 'loaded') return this.outcome.validUntilMs < nowMs ? this.outcome.certificate.validUntil : undefined
    // Opening refuses a certificate outside its dates too (assertValidAt at signing), but
    // loadMaterial does not check dates, so a refusal here is about the file, not expiry.
    return undefined
  }

  /** For the health answers: the end of validity and the days left, or nulls when the certificate cannot be opened. */
  validity (nowMs: number): { validUntil: string | null, daysLeft: number | null } {
    return this.outcome.outcome === 'loaded'
      ? { validUntil: this.outcome.certificate.validUntil, daysLeft: this.daysLeft(nowMs)! }
      : { validUntil: null, daysLeft: null }
  }

  /** Public facts only: who signs and until when (all of it is in every signed PDF anyway), or why none can. */
  details (): Record<string, unknown> {
    if (this.outcome.outcome === 'refused') return { error: this.outcome.code, message: this.outcome.message }
    const c = this.outcome.certificate
    return { signerName: c.signerName, certificateAuthority: c.certificateAuthority, validUntil: c.validUntil, daysLeft: this.daysLeft(Date.now()) }
  }

  /** For the log line of a change: the serial in use, or the refusal's message. */
  summary (): Record<string, unknown> {
    return this.outcome.outcome === 'refused'
      ? { code: this.outcome.code, reason: this.outcome.message }
      : { serialNumber: this.outcome.certificate.certificateSerialNumber, validUntil: this.outcome.certificate.validUntil }
  }
}

export interface CertificateWatchOptions {
  pool: WorkerPool
  source: CertificateSource
  timeZone: string
  /** Called when a change of the files has been read (not for the first reading). */
  onChange?: (state: CertificateState) => void
  /** Called when the pool could not open the certificate at all (a thread failed). */
  onError?: (err: unknown) => void
}

/**
 * The state of the certificate the configured files hold. Reading it again costs a pool
 * task (opening a PKCS#12: tens of ms), so it is done only when the files' version
 * changed, once however many health calls arrive meanwhile.
 */
export class CertificateWatch {
  private known: { version: string, state: CertificateState } | undefined
  private reading: { version: string, done: Promise<CertificateState> } | undefined

  constructor (private readonly options: CertificateWatchOptions) {}

  async current (): Promise<CertificateState> {
    const version = versionOf(this.options.source)
    if (this.known?.version === version) return this.known.state
    if (this.reading?.version !== version) this.reading = { version, done: this.read(version) }
    return await this.reading.done
  }

  private async read (version: string): Promise<CertificateState> {
    const input: SignCertificateInput = { certificate: this.options.source, timeZone: this.options.timeZone }
    try {
      const state = new CertificateState(await runTask<SignCertificateInput, SignCertificateOutput>(this.options.pool, 'sign-certificate', input))
      // A later change may have started another reading meanwhile: the latest one is kept.
      if (this.reading?.version === version) {
        const first = this.known === undefined
        this.known = { version, state }
        if (!first) this.options.onChange?.(state)
      }
      return state
    } catch (err) {
      // Not kept: the next health call tries again.
      this.options.onError?.(err)
      return new CertificateState({ outcome: 'refused', code: 'SIGN_CERT_INVALID', message: 'The certificate could not be opened: a worker thread failed (see the log).' })
    } finally {
      if (this.reading?.version === version) this.reading = undefined
    }
  }
}

/** The files' version, or, when one cannot be read, the reason (equal while the reason stays). */
function versionOf (source: CertificateSource): string {
  try {
    return certificateVersion(source)
  } catch (err) {
    return `unreadable\0${err instanceof Error ? err.message : String(err)}`
  }
}
