/**
 * Pool task: warm this thread for extraction (EXTRACT_WARM). A thread's first documents
 * cost several times what later ones do while V8 optimises pdf.js, the plugins and
 * Tesseract's WebAssembly; this reads made-up documents first (core/extraction/ocr/warm.ts):
 * a page with a text layer a few times, then, when OCR is on, its scan twice, and keeps
 * this thread's Tesseract worker warm from then on (re-warmed whenever it is replaced).
 * The service runs it once per thread at start-up, on a pool whose threads never end idle.
 */
import { threadId } from 'node:worker_threads'
import type { PdfTextLimits } from '../core/extraction/index.js'
import { keepTesseractWarm, OCR_DPI, warmUpPdfs } from '../core/extraction/ocr/index.js'
import { extractPdfBytes } from './extract-document.js'
import { defineTask } from './task.js'

export interface ExtractWarmInput {
  /** The service's limits: the warm-up reads as the service does (OCR on or off, its resolution). */
  limits: PdfTextLimits
}

export interface ExtractWarmOutput {
  threadId: number
  /** Wall time of the warm-up, ms. */
  ms: number
  /** Text-layer reads and OCR reads done. */
  textReads: number
  scanReads: number
}

/** Text-layer reads: pdf.js's text path and the detectors get most of their speed within the first few documents. */
const TEXT_READS = 8
/** Scanned-page reads: after two, the next page costs what it does on a thread that has read hundreds (measured: 2.3-2.4 s CPU against 5.0 for the first). */
const SCAN_READS = 2
/** A warm-up on a loaded machine measures nothing and must not fail for time. */
const WARM_DEADLINE_MS = 120_000

export default defineTask(async (input: ExtractWarmInput): Promise<ExtractWarmOutput> => {
  const started = performance.now()
  const limits: PdfTextLimits = { ...input.limits, deadlineMs: WARM_DEADLINE_MS }
  const ocr = input.limits.ocr
  const pdfs = await warmUpPdfs(ocr === false ? OCR_DPI : ocr?.dpi ?? OCR_DPI)
  const read = async (bytes: Uint8Array): Promise<void> => { await extractPdfBytes(bytes, limits) }
  for (let i = 0; i < TEXT_READS; i++) await read(pdfs.text)
  let scanReads = 0
  if (ocr !== false) {
    for (; scanReads < SCAN_READS; scanReads++) await read(pdfs.scan)
    keepTesseractWarm(async () => { for (let i = 0; i < SCAN_READS; i++) await read(pdfs.scan) })
  }
  return { threadId, ms: performance.now() - started, textReads: TEXT_READS, scanReads }
})
