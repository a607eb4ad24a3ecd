/**
 * Reads the text layer of a PDF with pdf.js into positioned runs, page by page, in the
 * calling thread (a pool thread in the service), loaded and opened as core/pdf/pdfjs.ts
 * says: the same reader the signature stamp uses, with Unicode normalization on.
 *
 * Bounds for hostile files: the bytes must start with a PDF header (checked before
 * pdf.js sees them), at most `maxPages` pages, at most `maxRunsPerPage` runs a page,
 * and a per-document deadline checked each time pdf.js hands over a batch of text
 * (it yields between its 20 ms slots through promise callbacks only, so a timer cannot
 * interrupt it). A page that never yields a batch (a content stream of megabytes of
 * drawing operators) is stopped by the caller's hard limit: the service aborts the pool
 * task, and Piscina ends the thread.
 */
import { PDFDocument, PDFRef, ParseSpeeds } from 'pdf-lib'
import { EngineError } from '../errors.js'
import { declaredSizeFault, decryptBytes, openPdf, openWithPdfJs, pageRunBatches, pagesWithinContentLimit } from '../pdf/index.js'
import type { PdfJsDocument, PdfJsPage } from '../pdf/index.js'
import { DocumentOcr, imageLimits } from './ocr/index.js'
import type { OcrLimits, PageToDraw } from './ocr/index.js'
import type { PageText, TextRun } from './text.js'
import { WorkClock } from './work-clock.js'

export interface PdfTextLimits {
  /** Documents with more pages are refused (PDF_TOO_MANY_PAGES). */
  maxPages: number
  /**
   * Most work the whole reading may take, ms (PDF_TIMEOUT past it): the processor time of
   * the calling thread and of its Tesseract worker while it reads the document's pages
   * (work-clock.ts), so a busy machine does not count against the document; wall time
   * where the system gives no per-thread processor time.
   */
  deadlineMs: number
  /** Pages with more text runs are refused (PDF_CORRUPT: no tax document has so many). */
  maxRunsPerPage: number
  /** Decoded content one page may have, bytes (PDF_CONTENT_TOO_LARGE past it); default 8 MiB. */
  maxPageContentBytes?: number
  /** Decoded content of all pages together, bytes; default 64 MiB. */
  maxTotalContentBytes?: number
  /** OCR of pages without a usable text layer (core/extraction/ocr/); `false`: such pages stay without text. */
  ocr?: OcrLimits | false
  /**
   * Read the text layer only: when a page wants OCR, measure the pages to draw (image
   * bombs are refused here) and throw OcrWanted instead of drawing them. The service reads
   * a document this way first and gives a scan its OCR turn afterwards (server/extract/run.ts).
   */
  deferOcr?: boolean
}

/** Thrown by readPdfText with `deferOcr` when pages want OCR: `pages`, their numbers. */
export class OcrWanted extends Error {
  constructor (readonly pages: number[]) {
    super(`pages ${pages.join(', ')} want OCR`)
    this.name = 'OcrWanted'
  }
}

export const DEFAULT_PDF_TEXT_LIMITS: PdfTextLimits = { maxPages: 50, deadlineMs: 20_000, maxRunsPerPage: 50_000 }

/**
 * Tax documents draw a page in tens to hundreds of KiB of operators; pdf.js walks about
 * 10 MB of them a second (the 200 MB bomb: 20 s, 630 MB), so 8 MiB is under a second.
 */
const DEFAULT_MAX_PAGE_CONTENT_BYTES = 8 << 20
const DEFAULT_MAX_TOTAL_CONTENT_BYTES = 64 << 20

/** How far into the file the header may sit: ISO 32000-1 7.5.2 says at the start; readers accept some leading junk. */
const HEADER_WINDOW = 1024

/** True when the bytes carry a `%PDF-` header in their first KiB. */
export function looksLikePdf (bytes: Uint8Array): boolean {
  return Buffer.from(bytes.buffer, bytes.byteOffset, Math.min(bytes.byteLength, HEADER_WINDOW)).includes('%PDF-')
}

/**
 * The positioned text of every page. Throws EngineError PDF_NOT_PDF, PDF_ENCRYPTED,
 * PDF_CORRUPT, PDF_TOO_MANY_PAGES, PDF_CONTENT_TOO_LARGE or PDF_TIMEOUT. A scanned page
 * (no usable text layer, and an image to read) is read by OCR (`source: 'OCR'`) unless
 * `limits.ocr` is false; a page with no text and nothing OCR could read has no runs.
 */
export async function readPdfText (bytes: Uint8Array, limits: PdfTextLimits = DEFAULT_PDF_TEXT_LIMITS): Promise<PageText[]> {
  if (!looksLikePdf(bytes)) throw new EngineError('PDF_NOT_PDF', 'The file is not a PDF: its content does not start with a PDF header, whatever its name or declared type.')
  const clock = new WorkClock()
  const overdue = (): boolean => clock.exceeds(limits.deadlineMs)
  // Before either parser: both allocate for what the file declares (core/pdf/declared-sizes.ts).
  const fault = declaredSizeFault(bytes)
  if (fault !== undefined) throw new EngineError('PDF_CORRUPT', `The PDF declares more than it holds: ${fault}. The file is damaged or crafted.`)
  const { decrypt } = await refuseContentBombs(bytes, limits)
  const ocrLimits = limits.ocr === false ? undefined : limits.ocr ?? {}
  const task = await openWithPdfJs(bytes, ocrLimits === undefined ? {} : { maxImagePixels: imageLimits(ocrLimits).maxImagePixels })
  let doc: PdfJsDocument | undefined
  try {
    try {
      doc = await task.promise
    } catch (err) {
      if ((err as { name?: unknown }).name === 'PasswordException') throw new EngineError('PDF_ENCRYPTED', 'The PDF is protected by a password; send it unprotected.')
      throw new EngineError('PDF_CORRUPT', 'The PDF cannot be read: its structure is damaged or incomplete.')
    }
    if (doc.numPages > limits.maxPages) throw new EngineError('PDF_TOO_MANY_PAGES', `The PDF has ${doc.numPages} pages; this service reads documents of at most ${limits.maxPages}.`, { pages: doc.numPages, maxPages: limits.maxPages })
    const ocr = ocrLimits === undefined ? undefined : new DocumentOcr(bytes, ocrLimits, { clock, limitMs: limits.deadlineMs }, decrypt)
    // Every page's text layer first: which pages want OCR is then known, and their images
    // are measured together before any is drawn.
    const pages: Array<PageText | Promise<PageText>> = []
    const scanned: PageToDraw[] = []
    for (let n = 1; n <= doc.numPages; n++) {
      if (overdue()) throw timeout(limits, clock)
      const page = await pageOf(doc, n)
      const [x0, y0, x1, y1] = page.view as [number, number, number, number]
      const runs: TextRun[] = []
      try {
        for await (const batch of pageRunBatches(page, true)) {
          runs.push(...batch)
          if (runs.length > limits.maxRunsPerPage) throw new EngineError('PDF_CORRUPT', `Page ${n} holds more than ${limits.maxRunsPerPage} pieces of text; it is not a document this service reads.`)
          if (overdue()) throw timeout(limits, clock)
        }
      } catch (err) {
        if (err instanceof EngineError) throw err
        throw new EngineError('PDF_CORRUPT', `The text of page ${n} cannot be read: the file is damaged.`)
      }
      if (ocr?.wants(runs) === true) scanned.push({ number: n, object: page.ref?.num })
      pages.push({ page: n, width: x1 - x0, height: y1 - y0, runs })
      page.cleanup()
    }
    if (ocr === undefined || scanned.length === 0) return pages as PageText[]
    ocr.admit(scanned)
    if (limits.deferOcr === true) throw new OcrWanted(scanned.map((p) => p.number))
    // A scanned page's text arrives while the next one is drawn (DocumentOcr.start).
    for (const { number } of scanned) {
      if (overdue()) throw timeout(limits, clock)
      const page = await pageOf(doc, number)
      pages[number - 1] = (await ocr.start(page, number)).text
      // The page's decoded images go now, not with the document.
      page.cleanup()
    }
    return await Promise.all(pages)
  } finally {
    await (doc === undefined ? task.destroy() : doc.destroy()).catch(() => undefined)
  }
}

async function pageOf (doc: PdfJsDocument, n: number): Promise<PdfJsPage> {
  try {
    return await doc.getPage(n)
  } catch {
    throw new EngineError('PDF_CORRUPT', `Page ${n} of the PDF cannot be read: the file is damaged.`)
  }
}

/**
 * Measures every page's decoded content with pdf-lib (core/pdf/content-size.ts, made for
 * the signature stamp) before pdf.js sees the file, and refuses a page past the cap: pdf.js
 * cannot be interrupted inside a page, and a bomb's memory goes before any deadline is
 * checked. Only deflate is inflated to measure (with a ceiling); other filters are
 * estimated. A file pdf-lib cannot parse at all is left to pdf.js, which repairs more (its
 * time stays bounded by the deadline and the pool's hard limit); a file with more pages
 * than `maxPages` is refused as such. A page pdf-lib can parse but not walk is refused
 * with the bombs: its size is unknown.
 */
async function refuseContentBombs (bytes: Uint8Array, limits: PdfTextLimits): Promise<{ decrypt?: (data: Uint8Array, num: number, gen: number) => Uint8Array }> {
  const maxPage = limits.maxPageContentBytes ?? DEFAULT_MAX_PAGE_CONTENT_BYTES
  const maxTotal = limits.maxTotalContentBytes ?? DEFAULT_MAX_TOTAL_CONTENT_BYTES
  let doc: PDFDocument | undefined
  let count = 0
  try {
    doc = await loadForMeasure(bytes)
    count = doc.getPageCount()
  } catch {
    doc = undefined
  }
  // Encrypted streams do not inflate as stored, and pdf-lib cannot even reach the pages of
  // an encrypted file with object streams; pdf.js, opening it with the empty user password,
  // would decrypt and inflate all of it. So an encrypted file is measured on its decrypted
  // objects, as the signer reads them, and one they cannot be read from is not handed on.
  const data = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  let decrypt: ((data: Uint8Array, num: number, gen: number) => Uint8Array) | undefined
  if (doc?.isEncrypted ?? data.includes('/Encrypt')) {
    try {
      const opened = await openPdf(bytes)
      doc = opened.doc
      count = doc.getPageCount()
      const handler = opened.encryption?.handler
      // The image census (OCR) reads the file's streams itself: with the same key.
      if (handler !== undefined) decrypt = (stored, num, gen) => decryptBytes(handler, handler.streams, PDFRef.of(num, gen), stored)
    } catch {
      throw new EngineError('PDF_ENCRYPTED', 'The PDF is encrypted and its content cannot be read without a password; send it unprotected.')
    }
  }
  const found = decrypt === undefined ? {} : { decrypt }
  // A file pdf-lib cannot parse at all is left to pdf.js (see above).
  if (doc === undefined) return found
  if (count > limits.maxPages) throw new EngineError('PDF_TOO_MANY_PAGES', `The PDF has ${count} pages; this service reads documents of at most ${limits.maxPages}.`, { pages: count, maxPages: limits.maxPages })
  // No total cap here, so that a missing page means that page alone is too large.
  const sizes = pagesWithinContentLimit(doc, maxPage, Number.POSITIVE_INFINITY)
  const measured = new Set(sizes.map((s) => s.page))
  for (let n = 1; n <= count; n++) {
    if (!measured.has(n)) throw new EngineError('PDF_CONTENT_TOO_LARGE', `The content of page ${n} would inflate past ${mib(maxPage)} (or cannot be measured); no tax document draws a page with so much. The file may be crafted.`, { page: n, maxPageContentBytes: maxPage })
  }
  const total = sizes.reduce((sum, s) => sum + s.bytes, 0)
  if (total > maxTotal) throw new EngineError('PDF_CONTENT_TOO_LARGE', `The pages' content would inflate to ${mib(total)}, past ${mib(maxTotal)}; the file may be crafted.`, { maxTotalContentBytes: maxTotal })
  return found
}

/** Encryption is ignored: only sizes are read (an encrypted deflate stream does not inflate and counts at its stored size). */
async function loadForMeasure (bytes: Uint8Array): Promise<PDFDocument> {
  return await PDFDocument.load(bytes, { ignoreEncryption: true, updateMetadata: false, throwOnInvalidObject: false, parseSpeed: ParseSpeeds.Fastest })
}

const mib = (bytes: number): string => `${(bytes / (1 << 20)).toFixed(1)} MiB`

function timeout (limits: PdfTextLimits, clock: WorkClock): EngineError {
  return new EngineError('PDF_TIMEOUT', `Reading the PDF took more than ${limits.deadlineMs} ms of ${clock.counts === 'cpu' ? 'processor time' : 'time'} and was abandoned; the file may be damaged or crafted.`)
}
