/**
 * The extraction service's operational metrics (spec 3 §1 B item 4, §2 B diagnostics):
 * counters in this process's memory, gone when it restarts. One instance per app.
 *
 * What counts where:
 * - an upload refused before the engine saw it (too large, not a PDF by its bytes, no
 *   file, a batch of too many files: one per file where the file is known, one per
 *   request otherwise) is a `rejectedUpload`, never a processed document;
 * - every other file that reached the pool is a processed document, successful when the
 *   response says `success: true`. A file pdf.js could not read (encrypted, damaged, too
 *   long, too slow) is processed and failed, and has no document type;
 * - `byDocumentType` counts processed documents by the `documentType` answered
 *   (`UNKNOWN` included); `byConfidenceLevel` those a parser was chosen for.
 */
import type { ConfidenceLevel, ExtractionResult } from '../../core/extraction/index.js'

/** Codes that mean the upload was refused before any processing. */
const REJECTION_CODES: ReadonlySet<string> = new Set(['REQUEST_TOO_LARGE', 'REQUEST_INCOMPLETE', 'REQUEST_INVALID', 'PDF_NOT_PDF'])

export interface ParserCounts { total: number, active: number, inactive: number }

export interface MetricsSnapshot {
  uptimeSeconds: number
  processedDocuments: number
  successfulDocuments: number
  failedDocuments: number
  successRate: number
  blockedByConfidence: number
  unknownDocuments: number
  rejectedUploads: number
  averageProcessingMs: number
  byDocumentType: Record<string, number>
  byConfidenceLevel: Record<ConfidenceLevel, number>
}

export class ExtractMetrics {
  private readonly startedMs: number
  private processed = 0
  private successful = 0
  private blocked = 0
  private unknown = 0
  private rejected = 0
  private totalMs = 0
  private readonly byType = new Map<string, number>()
  private readonly byLevel: Record<ConfidenceLevel, number> = { HIGH: 0, MEDIUM: 0, LOW: 0 }

  constructor (private readonly now: () => number = () => performance.now()) {
    this.startedMs = now()
  }

  /** True when an error with this code is a refused upload rather than a processed document. */
  static isRejection (code: string): boolean {
    return REJECTION_CODES.has(code)
  }

  /** A document the engine answered for. */
  recordResult (result: ExtractionResult, elapsedMs: number): void {
    this.processed++
    this.totalMs += elapsedMs
    if (result.success) this.successful++
    if (result.engine.parserBlocked) this.blocked++
    if (result.documentType === 'UNKNOWN') this.unknown++
    this.byType.set(result.documentType, (this.byType.get(result.documentType) ?? 0) + 1)
    if (result.engine.detector !== null) this.byLevel[result.engine.confidenceLevel]++
  }

  /** A file that reached the pool and could not be read, or an upload refused before it. */
  recordFailure (code: string, elapsedMs: number): void {
    if (ExtractMetrics.isRejection(code)) {
      this.rejected++
      return
    }
    this.processed++
    this.totalMs += elapsedMs
  }

  /** Uploads refused before processing (`count` files, or one request). */
  recordRejected (count = 1): void {
    this.rejected += count
  }

  snapshot (): MetricsSnapshot {
    const failed = this.processed - this.successful
    return {
      uptimeSeconds: Math.floor((this.now() - this.startedMs) / 1000),
      processedDocuments: this.processed,
      successfulDocuments: this.successful,
      failedDocuments: failed,
      successRate: this.processed === 0 ? 0 : round(this.successful / this.processed, 4),
      blockedByConfidence: this.blocked,
      unknownDocuments: this.unknown,
      rejectedUploads: this.rejected,
      averageProcessingMs: this.processed === 0 ? 0 : round(this.totalMs / this.processed, 1),
      byDocumentType: Object.fromEntries([...this.byType].sort(([a], [b]) => a.localeCompare(b))),
      byConfidenceLevel: { ...this.byLevel }
    }
  }
}

function round (value: number, digits: number): number {
  const f = 10 ** digits
  return Math.round(value * f) / f
}
