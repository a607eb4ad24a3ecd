/**
 * OCR of a page without a usable text layer: drawn in grey at about 300 dpi
 * (page-image.ts), read by Tesseract with the Portuguese model (tesseract.ts), and its
 * words turned into the text runs a PDF's text layer gives, in the page's user space,
 * each with the word's confidence. The plugins read them as they read any page.
 */
import { EngineError } from '../../errors.js'
import { openWithPdfJs } from '../../pdf/index.js'
import type { PdfJsPage } from '../../pdf/index.js'
import type { PageText, TextRun } from '../text-types.js'
import { isoDate, MONEY_PATTERN } from '../values.js'
import { DEFAULT_MAX_DOCUMENT_IMAGE_PIXELS, DEFAULT_MAX_IMAGE_PIXELS, DEFAULT_MAX_PAGE_IMAGE_PIXELS, refuseImageBombs } from './image-bounds.js'
import type { ImageLimits, PageToDraw } from './image-bounds.js'
import { ImageCensus } from './image-census.js'
import { renderPageGrey, OCR_DPI } from './page-image.js'
import type { PageImage } from './page-image.js'
import { mendTaxIds } from './tax-id-reading.js'
import { OcrTimeout, recognizeWords, warmTesseract } from './tesseract.js'
import { WorkClock } from '../work-clock.js'
import type { WorkBudget } from '../work-clock.js'
import type { OcrWord } from './tesseract.js'

export { refuseImageBombs, DEFAULT_MAX_IMAGE_PIXELS, DEFAULT_MAX_PAGE_IMAGE_PIXELS, DEFAULT_MAX_DOCUMENT_IMAGE_PIXELS } from './image-bounds.js'
export type { ImageLimits, PageToDraw } from './image-bounds.js'
export { ImageCensus } from './image-census.js'
export type { ImageRaster, PageImages } from './image-census.js'
export { keepTesseractWarm, recognizeWords, releaseTesseract, tesseractOptions, TESSERACT_IDLE_MS, TESSERACT_MAX_PAGES, TESSERACT_VERSION } from './tesseract.js'
export { warmUpPdfs } from './warm.js'
export { OCR_DPI } from './page-image.js'
export type { PageImage } from './page-image.js'

export interface OcrLimits {
  /** Resolution pages are drawn at (default OCR_DPI, 200 dpi). */
  dpi?: number
  /** Most pixels one page image may have; a larger page is drawn at less than `dpi` (default 16 million: A3 at 290 dpi). */
  maxPagePixels?: number
  /** Most pixels one image of the file may declare (default 70 million); past it PDF_CONTENT_TOO_LARGE. */
  maxImagePixels?: number
  /** Most pixels the images one scanned page draws may have together (default 70 million). */
  maxPageImagePixels?: number
  /** Most pixels the images of all scanned pages of a document may have together (default 200 million). */
  maxDocumentImagePixels?: number
}

/** The image bounds of `limits`, defaults filled in. */
export function imageLimits (limits: OcrLimits): ImageLimits {
  return {
    maxImagePixels: limits.maxImagePixels ?? DEFAULT_MAX_IMAGE_PIXELS,
    maxPageImagePixels: limits.maxPageImagePixels ?? DEFAULT_MAX_PAGE_IMAGE_PIXELS,
    maxDocumentImagePixels: limits.maxDocumentImagePixels ?? DEFAULT_MAX_DOCUMENT_IMAGE_PIXELS
  }
}

export const DEFAULT_MAX_PAGE_PIXELS = 16_000_000

/**
 * Fewer letters and digits than this on a page and its text layer is not usable: a
 * scanner's stamp ("Digitalizado com ...") or a page number over the scanned image.
 */
export const MIN_TEXT_LAYER_CHARS = 48

/** Letters and digits against control and private-use characters in a page's runs. */
function textCounts (runs: TextRun[]): { usable: number, garbage: number } {
  let usable = 0
  let garbage = 0
  for (const r of runs) {
    usable += r.text.replace(/[^\p{L}\p{N}]/gu, '').length
    garbage += r.text.replace(/[^\p{Cc}\p{Co}\uFFFD]/gu, '').length
  }
  return { usable, garbage }
}

/**
 * True when the page's text layer is too thin to read the document from, or mostly
 * garbage: a PDF printed from a screen can draw its text with fonts that map no glyph to
 * a character, and pdf.js then hands over control characters and private-use code points.
 */
export function needsOcr (runs: TextRun[]): boolean {
  const { usable, garbage } = textCounts(runs)
  return usable < MIN_TEXT_LAYER_CHARS || garbage > usable
}

/**
 * Tesseract's usual confusions inside a number: a token of digits and the marks numbers
 * are printed with (`.`, `,`, `/`, `-`) that holds a letter O, o, I, l or | read for 0
 * or 1. Only when there are at least as many digits as such letters, so words are left
 * alone, and not an ordinal (`1o`, `2o`: 1º, 2º).
 */
export function mendDigits (word: string): string {
  if (!/^[\dOoIl|.,/-]+$/.test(word) || /^\d[oO]$/.test(word)) return word
  const digits = word.replace(/\D/g, '').length
  const letters = word.replace(/[^OoIl|]/g, '').length
  if (letters === 0 || digits === 0 || digits < letters) return word
  return word.replace(/[Oo]/g, '0').replace(/[Il|]/g, '1')
}

/** The digits letters in a date or an amount are read for (S/5, B/8, Z/2, G/6 besides mendDigits' O/0 and I/1). */
const FORMAT_LOOKALIKES: Readonly<Record<string, string>> = { O: '0', o: '0', D: '0', I: '1', l: '1', '|': '1', Z: '2', S: '5', s: '5', G: '6', B: '8' }
const FORMAT_LETTERS = /[OoDIl|ZSsGB]/g
const AMOUNT = new RegExp(`^${MONEY_PATTERN}$`)

/**
 * A date or an amount with letters read for digits, mended only when the format the
 * document prints then holds: `dd/mm/aaaa` a real date (`2S/O9/2024` is 25/09/2024; a
 * 3S/O9 stays as read), or an amount with its thousands dots and two decimals
 * (`1.2B4,S6` is 1.284,56). Digits must outnumber such letters two to one, so a word is
 * never taken for a number.
 */
export function mendFormats (word: string): string {
  const letters = word.match(FORMAT_LETTERS)?.length ?? 0
  if (letters === 0 || word.replace(/\D/g, '').length < 2 * letters) return word
  const mapped = word.replace(FORMAT_LETTERS, (c) => FORMAT_LOOKALIKES[c]!)
  if (isoDate(mapped) !== null || AMOUNT.test(mapped)) return mapped
  return word
}

/**
 * The CNPJ label as Tesseract misreads it: a word of four or five capitals (or the
 * brackets, bars and Is the narrow J comes out as) one edit from `CNPJ` (`CNP)`, `CNPI`,
 * `CNPUJ`), with the colon and the specks read with it (`CNPJ;`, `CNPUJ:.` are `CNPJ:`). No
 * word of a tax document is one edit from CNPJ (CNPq has a small q).
 */
const CNPJ_LIKE = /^([A-Z)\]}|1l!]{4,5})([:;.,]*)$/

/** Edit distance (insertions, deletions, substitutions) of two short strings. */
function editDistance (a: string, b: string): number {
  let row = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const next = [i]
    for (let j = 1; j <= b.length; j++) next.push(Math.min(row[j]! + 1, next[j - 1]! + 1, row[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1)))
    row = next
  }
  return row[b.length]!
}

/**
 * Labels mended the way Tesseract misreads them: the CNPJ label (CNPJ_LIKE: `CNPUJ:.` is
 * `CNPJ:`), and a form's slashes between words (`CNPJ/CPF / NIF`, `CNPJ /CPF`): Tesseract
 * glues a slash to the word before or after it, where the form prints `CNPJ / CPF / NIF`.
 * Only between words of two letters or more, so that `s/n` and `c/c` stay as printed.
 */
export function mendLabel (word: string): string {
  const cnpj = CNPJ_LIKE.exec(word)
  if (cnpj !== null && editDistance(cnpj[1]!, 'CNPJ') <= 1) {
    const marks = cnpj[2]!
    return `CNPJ${/[:;]/.test(marks) ? ':' : marks.includes('.') ? '.' : ''}`
  }
  if (word.includes('/') && /^[\p{L}/]+$/u.test(word)) {
    const parts = word.split('/')
    if (parts.every((p, i) => p.length >= 2 || (p === '' && (i === 0 || i === parts.length - 1)))) return parts.join(' / ').trim()
  }
  return word
}

/**
 * A word mended in its line: a CNPJ or CPF chosen by its check digits (tax-id-reading.ts),
 * else digits mended (mendDigits), and a date or an amount whose format then holds
 * (mendFormats); a label mended (mendLabel); a lone O or I between numbers is a digit (a
 * check digit of a collection line).
 */
function mendWord (words: OcrWord[], i: number): string {
  const w = words[i]!
  const taxId = mendTaxIds(w.text)
  let text = mendLabel(taxId !== w.text ? taxId : mendFormats(mendDigits(w.text)))
  const numeric = (n: OcrWord | undefined): boolean => n !== undefined && n.line === w.line && /^\d+$/.test(n.text)
  if (/^[OoIl|]$/.test(text) && numeric(words[i - 1]) && numeric(words[i + 1])) text = /[Oo]/.test(text) ? '0' : '1'
  return text
}

/**
 * A label's colon Tesseract read as a word of its own (`CNPJ :.` for `CNPJ:`), often with
 * a speck of the form's dotted leader beside it: only a colon and dots or commas.
 */
const DETACHED_COLON = /^[.,]*:[.,]*$/

/**
 * Words closer than this share of their line's height (the line's band, about an em and
 * a fifth) are one phrase: a word space is a quarter to a third of an em, and Tesseract's
 * boxes of small or bold print leave gaps up to about an em between words of one label;
 * the cells of a form sit further apart. Measured on the generated and real DANFSe scans.
 */
const PHRASE_GAP = 1

/**
 * Words in image pixels (origin top-left), in Tesseract's reading order, to runs in user
 * space (origin bottom-left, points). The words of a phrase become one run, as a text
 * layer draws a label or a value: the grid queries (TextRegion.under, table, column) find
 * a label as a run of its own. A detached colon joins the label before it, so that
 * `CNPJ:` reads as printed. A run's confidence is its lowest word's.
 */
export function wordsToRuns (words: OcrWord[], imageHeight: number, scale: number): TextRun[] {
  const runs: TextRun[] = []
  let previous: { word: OcrWord, run: TextRun } | undefined
  words.forEach((w, i) => {
    const text = mendWord(words, i)
    const last = previous
    if (last !== undefined && last.word.line === w.line && w.x0 - last.word.x1 <= PHRASE_GAP * (w.bottom - w.top)) {
      const colon = DETACHED_COLON.test(text) && /\p{L}$/u.test(last.run.text)
      last.run.text += colon ? ':' : ` ${text}`
      last.run.box.width = (w.x1 / scale) - last.run.box.x
      last.run.confidence = Math.min(last.run.confidence ?? 1, w.confidence)
      last.word = w
      return
    }
    const run = {
      text,
      box: { x: w.x0 / scale, y: (imageHeight - w.bottom) / scale, width: (w.x1 - w.x0) / scale, height: (w.bottom - w.top) / scale },
      confidence: w.confidence
    }
    runs.push(run)
    previous = { word: w, run }
  })
  // A CNPJ or CPF Tesseract split into two words is whole in its phrase.
  for (const run of runs) run.text = mendTaxIds(run.text)
  return runs
}

/** A scanned page handed to Tesseract: its text comes later (wrapped, so that awaiting the start does not wait for it). */
export interface PendingOcrPage {
  text: Promise<PageText>
}

/**
 * The OCR of one document's scanned pages. The pages to draw are measured together
 * (`admit`: image bombs) before the first is drawn; a document with a text layer never
 * pays for it.
 */
export class DocumentOcr {
  private readonly admitted = new Set<number>()
  private images: boolean | undefined
  private previous: Promise<void> = Promise.resolve()
  private imageCensus: ImageCensus | undefined

  /**
   * `budget` is the document's work budget (its clock counts the Tesseract worker's CPU
   * time while it reads the document's pages: ../work-clock.ts), quoted in the timeout's
   * message; `decrypt` reads an encrypted file's streams (core/pdf/raw-objects.ts).
   */
  constructor (private readonly bytes: Uint8Array, private readonly limits: OcrLimits, private readonly budget: WorkBudget, private readonly decrypt?: (data: Uint8Array, num: number, gen: number) => Uint8Array) {}

  private census (): ImageCensus {
    this.imageCensus ??= new ImageCensus(this.bytes, this.decrypt === undefined ? {} : { decrypt: this.decrypt })
    return this.imageCensus
  }

  /**
   * Whether a page with these runs is worth OCR: its text layer is unusable, and there is
   * something to read, an image in the file (a scan) or glyphs without characters. A page
   * of drawings only (lines, boxes) is not drawn and read for nothing: drawing megabytes
   * of paths costs seconds. Text drawn as outlines without any image is therefore not read.
   */
  wants (runs: TextRun[]): boolean {
    if (!needsOcr(runs)) return false
    const { garbage } = textCounts(runs)
    if (garbage > 0) return true
    try {
      this.images ??= this.census().imageStreams().length > 0 || this.census().file().length > 0
    } catch {
      // Objects that cannot be read within bounds: `admit` refuses the file.
      this.images = true
    }
    return this.images
  }

  /**
   * Measures the images the pages to draw decode (image-bounds.ts), before any is drawn:
   * throws PDF_CONTENT_TOO_LARGE past a bound. `pages` are all the pages the document will
   * draw, so that the document's bound refuses it at once.
   */
  admit (pages: readonly PageToDraw[]): void {
    for (const page of refuseImageBombs(() => this.census(), pages, imageLimits(this.limits)).keys()) this.admitted.add(page)
  }

  /** The page in grey at the OCR resolution. */
  async pageImage (page: PdfJsPage): Promise<PageImage> {
    return await renderPageGrey(page, this.limits.dpi ?? OCR_DPI, this.limits.maxPagePixels ?? DEFAULT_MAX_PAGE_PIXELS)
  }

  /**
   * Draws the page for OCR and hands it to Tesseract, as displayed (its /Rotate applied:
   * the frame a person reads it in). Returns once the page is drawn and the previous
   * page's words are in, so that the caller reads and draws the next page while
   * Tesseract, in its own thread, reads this one: at most two page images at a time.
   * A page not admitted before is admitted alone (PDF_CONTENT_TOO_LARGE for an image
   * bomb); the text rejects with PDF_TIMEOUT past the deadline.
   */
  async start (page: PdfJsPage, pageNumber: number): Promise<PendingOcrPage> {
    if (!this.admitted.has(pageNumber)) this.admit([{ number: pageNumber, object: page.ref?.num }])
    warmTesseract()
    const image = await this.pageImage(page)
    await this.previous
    const text = this.recognize(image, pageNumber)
    // Awaited by the caller after the last page; a failure before that is raised by the next
    // start. Both are marked handled here: when no later start or Promise.all comes (the last
    // page, or the loop stopped by an error of its own), a rejection left unhandled would end
    // the pool's thread.
    text.catch(() => undefined)
    this.previous = text.then(() => undefined)
    this.previous.catch(() => undefined)
    return { text }
  }

  private async recognize (image: PageImage, pageNumber: number): Promise<PageText> {
    let words: OcrWord[]
    try {
      words = await recognizeWords(image.pgm, image.dpi, this.budget)
    } catch (err) {
      if (err instanceof OcrTimeout) throw new EngineError('PDF_TIMEOUT', `Reading the scanned PDF by OCR took more than ${this.budget.limitMs} ms of ${this.budget.clock.counts === 'cpu' ? 'processor time' : 'time'} and was abandoned; send fewer pages at a time.`)
      throw new EngineError('PDF_CORRUPT', `The image of page ${pageNumber} could not be read by OCR.`)
    }
    return {
      page: pageNumber,
      width: image.width / image.scale,
      height: image.height / image.scale,
      runs: wordsToRuns(words, image.height, image.scale),
      source: 'OCR'
    }
  }
}

/** Every page of `bytes` as OCR takes it, whatever its text layer (bench/extract-ocr.bench.ts times Tesseract alone on them). */
export async function ocrPageImages (bytes: Uint8Array, limits: OcrLimits = {}): Promise<PageImage[]> {
  const doc = await (await openWithPdfJs(bytes, { maxImagePixels: imageLimits(limits).maxImagePixels })).promise
  try {
    const ocr = new DocumentOcr(bytes, limits, { clock: new WorkClock(), limitMs: Number.POSITIVE_INFINITY })
    const pages = await Promise.all(Array.from({ length: doc.numPages }, async (_, i) => await doc.getPage(i + 1)))
    ocr.admit(pages.map((page, i) => ({ number: i + 1, object: page.ref?.num })))
    const images: PageImage[] = []
    for (const page of pages) images.push(await ocr.pageImage(page))
    return images
  } finally {
    await doc.destroy()
  }
}
