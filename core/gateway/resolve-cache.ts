/**
 * The resolved certificate of each company, kept for a few seconds (issue 24): a query
 * then costs no registry read and no decryption, only while the same company is queried
 * again and again. The gateway app clears it whenever an admin route changes a company or
 * a certificate through this instance; a change made through another instance reaches
 * this one within `ttlMs` (the same bound as the operational key's cache).
 *
 * Concurrent misses for one company share one read. Failures are not kept: an unknown
 * company, a missing certificate or an unreachable database are asked again next time.
 */
import type { ResolveCertificate, ResolvedCertificate } from './store.js'

export const DEFAULT_CACHE_MS = 5000

export class ResolvedCertificateCache {
  private readonly entries = new Map<string, { at: number, value: Promise<ResolvedCertificate> }>()

  constructor (private readonly resolve: ResolveCertificate, readonly ttlMs = DEFAULT_CACHE_MS, private readonly now: () => number = Date.now) {}

  get (empresaCodigo: string): Promise<ResolvedCertificate> {
    const t = this.now()
    const hit = this.entries.get(empresaCodigo)
    if (hit !== undefined && t - hit.at <= this.ttlMs) return hit.value
    const value = this.resolve(empresaCodigo)
    const entry = { at: t, value }
    this.entries.set(empresaCodigo, entry)
    value.catch(() => { if (this.entries.get(empresaCodigo) === entry) this.entries.delete(empresaCodigo) })
    if (this.entries.size > 4096) this.sweep(t)
    return value
  }

  /** Forgets every company: a branch inherits its head office's certificate, so one change may touch many. */
  clear (): void {
    this.entries.clear()
  }

  private sweep (t: number): void {
    for (const [code, entry] of this.entries) if (t - entry.at > this.ttlMs) this.entries.delete(code)
  }
}
