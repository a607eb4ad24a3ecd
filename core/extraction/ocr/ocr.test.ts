import { existsSync, readdirSync } from 'node:fs'
import { basename, isAbsolute, join } from 'node:path'
import { PDFDocument, PDFName } from 'pdf-lib'
import { afterAll, describe, expect, it } from 'vitest'
import { writeTextPdf } from '../../../fixtures/extraction/pdf-writer.js'
import { scanOf } from '../../../fixtures/extraction/scans.js'
import { readPdfText } from '../pdf-text.js'
import { TextDocument } from '../text.js'
import { ImageCensus, imageLimits, mendDigits, mendFormats, mendLabel, needsOcr, refuseImageBombs, releaseTesseract, tesseractOptions, wordsToRuns } from './index.js'
import { openWithPdfJs } from '../../pdf/index.js'
import { renderPageGrey, renderScale } from './page-image.js'
import type { PageImage } from './page-image.js'
import { CORE_FILE, OcrTimeout, recognizeWords, tesseractCore } from './tesseract.js'

afterAll(async () => { await releaseTesseract() })

const code = (c: string) => expect.objectContaining({ code: c })
const thrown = (f: () => void): unknown => { try { f() } catch (err) { return err } return undefined }
const LIMITS = { maxPages: 50, deadlineMs: 60_000, maxRunsPerPage: 50_000 }

/** A one-page PDF whose only content is an image XObject with the given dictionary entries (its data a few bytes). */
async function imagePdf (width: number, height: number): Promise<Uint8Array> {
  const doc = await PDFDocument.create()
  const page = doc.addPage([595, 842])
  const image = doc.context.register(doc.context.stream(new Uint8Array(64), { Type: 'XObject', Subtype: 'Image', Width: 1, Height: height, ColorSpace: 'DeviceGray', BitsPerComponent: 8, Filter: 'FlateDecode' }))
  page.node.setXObject(PDFName.of('Im0'), image)
  page.node.set(PDFName.of('Contents'), doc.context.register(doc.context.stream('q 595 0 0 842 0 0 cm /Im0 Do Q')))
  const text = Buffer.from(await doc.save({ useObjectStreams: false })).toString('latin1')
  return Buffer.from(text.replace('/Width 1', `/Width ${width}`), 'latin1')
}

async function pageImage (pdf: Uint8Array): Promise<PageImage> {
  const doc = await (await openWithPdfJs(pdf)).promise
  try {
    return await renderPageGrey(await doc.getPage(1), 200, 16e6)
  } finally {
    await doc.destroy()
  }
}

describe('tesseract.js set-up', () => {
  it('reads the Portuguese model from node_modules, never from a URL, and caches nothing', () => {
    const o = tesseractOptions()
    expect(isAbsolute(o.langPath)).toBe(true)
    expect(o.langPath).not.toMatch(/^[a-z]+:\/\//i)
    expect(existsSync(join(o.langPath, 'por.traineddata.gz'))).toBe(true)
    expect(o).toMatchObject({ gzip: true, cacheMethod: 'none' })
  })

  it('pins the WebAssembly core to the plain SIMD build, whatever the CPU and V8 offer', () => {
    const o = tesseractOptions()
    expect(CORE_FILE).toBe('tesseract-core-simd-lstm.js')
    expect(isAbsolute(o.corePath)).toBe(true)
    expect(basename(o.corePath)).toBe(CORE_FILE)
    expect(existsSync(o.corePath)).toBe(true)
    // The worker script is ours: tesseract.js's own would choose a core by what V8 supports.
    expect(basename(o.workerPath)).toBe('tesseract-worker.mjs')
    expect(existsSync(o.workerPath)).toBe(true)
  })
})

describe('which pages need OCR', () => {
  const run = (text: string): { text: string, box: { x: number, y: number, width: number, height: number } } => ({ text, box: { x: 0, y: 0, width: 10, height: 10 } })
  it('a page without text, or with a scanner\'s stamp only, or with unmapped glyphs', () => {
    expect(needsOcr([])).toBe(true)
    expect(needsOcr([run('Digitalizado com CamScanner'), run('1/1')])).toBe(true)
    expect(needsOcr([run('\u0011\u0012\u0013\u0014'.repeat(20)), run('page 1')])).toBe(true)
  })
  it('not a page with a text layer', () => {
    expect(needsOcr([run('Documento de Arrecadação de Receitas Federais'), run('CNPJ 12.345.678/0001-95')])).toBe(false)
  })
})

describe('from words to runs', () => {
  it('mends O, o, I, l read inside numbers, and leaves words alone', () => {
    expect(mendDigits('o1')).toBe('01')
    expect(mendDigits('2O.10,5O')).toBe('20.10,50')
    expect(mendDigits('1l/O9/2024')).toBe('11/09/2024')
    expect(mendDigits('Olá')).toBe('Olá')
    expect(mendDigits('IO')).toBe('IO')
    expect(mendDigits('CNPJ')).toBe('CNPJ')
    expect(mendDigits('1o')).toBe('1o')
  })
  it('mends letters read in a date or an amount only when the format then holds', () => {
    expect(mendFormats('2S/O9/2024')).toBe('25/09/2024')
    expect(mendFormats('1.2B4,S6')).toBe('1.284,56')
    expect(mendFormats('Z1.711,45')).toBe('21.711,45')
    // Not a date (the 35th), not an amount (three decimals), not a number at all.
    expect(mendFormats('3S/O9/2024')).toBe('3S/O9/2024')
    expect(mendFormats('1.2B4,S67')).toBe('1.2B4,S67')
    expect(mendFormats('SOBS')).toBe('SOBS')
    expect(mendFormats('GB/SZ')).toBe('GB/SZ')
  })
  it('mends the CNPJ label one edit away, and the slashes a form prints between words', () => {
    expect(['CNPUJ:.', 'CNP)', 'CNPI:', 'CNP]', 'GNPJ', 'CNPJ;', 'CNPJ', 'CNPJ:'].map(mendLabel)).toEqual(['CNPJ:', 'CNPJ', 'CNPJ:', 'CNPJ', 'CNPJ', 'CNPJ:', 'CNPJ', 'CNPJ:'])
    // Not a word two edits away, nor CNPq, nor one of three letters.
    expect(['CNAE', 'CNPq', 'CPF', 'CEP', 'CNP'].map(mendLabel)).toEqual(['CNAE', 'CNPq', 'CPF', 'CEP', 'CNP'])
    expect(['CNPJ/CPF', '/CPF', 'CNPJ/', 'CNPJ/CPF/NIF'].map(mendLabel)).toEqual(['CNPJ / CPF', '/ CPF', 'CNPJ /', 'CNPJ / CPF / NIF'])
    expect(['s/n', 'c/c', 'S/A', '01/2026', 'NFS-e'].map(mendLabel)).toEqual(['s/n', 'c/c', 'S/A', '01/2026', 'NFS-e'])
  })
  it('mends CNPJ\'s J and a lone O between the digit groups of a collection line', () => {
    // Words far apart (cells of a form), so that each stays a run of its own.
    let x = 0
    const word = (text: string, line: number): { text: string, confidence: number, x0: number, x1: number, top: number, bottom: number, line: number } => ({ text, confidence: 0.9, x0: (x += 100), x1: x + 10, top: 0, bottom: 1, line })
    const texts = wordsToRuns([word('CNP)', 0), word('CNP]:', 0), word('94079624276', 1), word('O', 1), word('19650080724', 1), word('O', 2), word('19650080724', 2)], 10, 1).map((r) => r.text)
    expect(texts).toEqual(['CNPJ', 'CNPJ:', '94079624276', '0', '19650080724', 'O', '19650080724'])
  })
  it('chooses a CNPJ or CPF by its check digits, in a word or across the words of a phrase', () => {
    const word = (text: string, x0: number): { text: string, confidence: number, x0: number, x1: number, top: number, bottom: number, line: number } => ({ text, confidence: 0.8, x0, x1: x0 + 40, top: 0, bottom: 10, line: 0 })
    // Split after the slash, its zeros read as Os.
    expect(wordsToRuns([word('11.222.333/', 0), word('OOO1-81', 45)], 100, 1).map((r) => r.text)).toEqual(['11.222.333/0001-81'])
    // An S read for the 5 of a check digit; a comma for a dot.
    expect(wordsToRuns([word('12,345.678/0001-9S', 0)], 100, 1).map((r) => r.text)).toEqual(['12.345.678/0001-95'])
    // Check digits that cannot be made to verify: left as read, for the engine to flag.
    expect(wordsToRuns([word('11.222.333/0001-82', 0)], 100, 1).map((r) => r.text)).toEqual(['11.222.333/0001-82'])
  })
  it('makes the words of a phrase one run, as a text layer draws a label, and keeps the cells of a form apart', () => {
    // A line 10 pixels high: words up to 10 pixels apart are one phrase.
    const word = (text: string, line: number, x0: number, confidence = 0.9): { text: string, confidence: number, x0: number, x1: number, top: number, bottom: number, line: number } => ({ text, confidence, x0, x1: x0 + 20, top: 0, bottom: 10, line })
    const runs = wordsToRuns([
      word('CNPJ', 0, 0), word('/CPF', 0, 25), word('/NIF', 0, 50), word('Telefone', 0, 100),
      word('CNPJ', 1, 0), word(':.', 1, 22, 0.4), word('61.246.583/0001-20', 1, 45),
      word('12', 2, 0), word(':', 3, 25)
    ], 100, 1)
    expect(runs.map((r) => r.text)).toEqual(['CNPJ / CPF / NIF', 'Telefone', 'CNPJ: 61.246.583/0001-20', '12', ':'])
    expect(runs[0]).toMatchObject({ confidence: 0.9, box: { x: 0, width: 70 } })
    expect(runs[2]).toMatchObject({ confidence: 0.4, box: { x: 0, width: 65 } })
  })
  it('places words in the page\'s user space, each with its line\'s band and its confidence', () => {
    // 200 dpi: 200/72 pixels a point; an A4 page is 1654 × 2339 pixels.
    const scale = 200 / 72
    const [r] = wordsToRuns([{ text: 'Total', confidence: 0.93, x0: 278, x1: 417, top: 278, bottom: 306, line: 0 }], 2339, scale)
    expect(r!.text).toBe('Total')
    expect(r!.confidence).toBe(0.93)
    expect(r!.box.x).toBeCloseTo(100.08, 1)
    expect(r!.box.width).toBeCloseTo(50.04, 1)
    expect(r!.box.y + r!.box.height).toBeCloseTo((2339 - 278) / scale, 1)
    expect(r!.box.height).toBeCloseTo(28 / scale, 1)
  })
  it('draws a poster-sized page at less than the resolution asked, within the pixel budget', () => {
    expect(renderScale(595, 842, 200, 16e6)).toBeCloseTo(200 / 72, 5)
    const s = renderScale(14_400, 14_400, 200, 16e6)
    expect((14_400 * s) ** 2).toBeLessThanOrEqual(16e6 + 1)
  })
})

describe('image bombs', () => {
  it('refuses an image declaring more pixels than a scanned page has, before pdf.js decodes it', async () => {
    const bomb = await imagePdf(40_000, 40_000)
    expect(thrown(() => refuseImageBombs(() => new ImageCensus(bomb), [], imageLimits({})))).toMatchObject({ code: 'PDF_CONTENT_TOO_LARGE', message: expect.stringMatching(/40000 × 40000 pixels/) })
    const started = performance.now()
    await expect(readPdfText(bomb, LIMITS)).rejects.toThrow(code('PDF_CONTENT_TOO_LARGE'))
    // Loading pdf.js and reading the (empty) text layer come first; decoding 1.6 GB of
    // pixels would take far longer than this, if the thread survived it.
    expect(performance.now() - started).toBeLessThan(20_000)
  })
  it('refuses an image whose size is given by a reference the file does not hold, and lets a page-sized one through', async () => {
    const image = (dict: string): Uint8Array => Buffer.from(`1 0 obj\n<< /Type /XObject /Subtype /Image ${dict} >>\nstream\nxx\nendstream\nendobj\n`, 'latin1')
    expect(thrown(() => refuseImageBombs(() => new ImageCensus(image('/Width 9 0 R /Height 2000')), [], imageLimits({})))).toMatchObject({ code: 'PDF_CONTENT_TOO_LARGE' })
    expect(() => refuseImageBombs(() => new ImageCensus(image('/Width 1654 /Height 2339 /Filter /DCTDecode')), [], imageLimits({}))).not.toThrow()
  })
})

describe('readPdfText on a scan', () => {
  const LINES = ['Documento de Arrecadação', 'CNPJ: 12.345.678/0001-95', 'Valor Total do Documento 1.234,56', 'Vencimento 20/09/2024']
  const textPdf = async (): Promise<Uint8Array> => await writeTextPdf([LINES.map((text, i) => ({ text, x: 60, y: 760 - i * 30, size: 12 }))], { seed: 1 })

  it('reads the words of an image-only page by OCR, as runs with boxes and confidences, writing nothing', async () => {
    const before = readdirSync(process.cwd())
    const scan = await scanOf(await textPdf(), { dpi: 200, skew: 1, noise: 0.001, quality: 70, seed: 2 })
    const pages = await readPdfText(scan, LIMITS)
    expect(pages).toHaveLength(1)
    expect(pages[0]).toMatchObject({ page: 1, source: 'OCR' })
    expect(pages[0]!.width).toBeCloseTo(595, 0)
    const doc = new TextDocument(pages)
    expect(doc.lines.map((l) => l.text)).toEqual(LINES)
    const cnpj = doc.find(/(\d{2}\.\d{3}\.\d{3}\/\d{4}-\d{2})/)!
    expect(cnpj.value).toBe('12.345.678/0001-95')
    expect(cnpj.confidence).toBeGreaterThan(0.6)
    expect(cnpj.confidence).toBeLessThanOrEqual(1)
    // The line sits where the PDF drew it: 30 points below the first.
    expect(doc.lines[0]!.box.y - doc.lines[1]!.box.y).toBeCloseTo(30, -1)
    expect(readdirSync(process.cwd())).toEqual(before)
  })

  it('reads the pages of a multi-page scan in order, a page drawn while the one before is read', async () => {
    const pages = [['Primeira página', 'Vencimento 20/09/2024'], ['Segunda página', 'Vencimento 21/10/2024'], ['Terceira página', 'Vencimento 22/11/2024']]
    const pdf = await writeTextPdf(pages.map((lines) => lines.map((text, i) => ({ text, x: 60, y: 760 - i * 30, size: 12 }))), { seed: 1 })
    const read = await readPdfText(await scanOf(pdf, { dpi: 200, seed: 6 }), LIMITS)
    expect(read.map((p) => [p.page, p.source])).toEqual([[1, 'OCR'], [2, 'OCR'], [3, 'OCR']])
    expect(read.map((p) => new TextDocument([p]).lines.map((l) => l.text))).toEqual(pages)
  })

  it('keeps a text layer as it is, and leaves a scan without text when OCR is off', async () => {
    const text = await readPdfText(await textPdf(), LIMITS)
    expect(text[0]!.source).toBeUndefined()
    expect(text[0]!.runs.every((r) => r.confidence === undefined)).toBe(true)
    const scan = await scanOf(await textPdf(), { dpi: 150, seed: 3 })
    expect(await readPdfText(scan, { ...LIMITS, ocr: false })).toEqual([expect.objectContaining({ runs: [] })])
  })

  it('reads each page at its own resolution when two readings share the thread\'s worker', async () => {
    // A warm-up started in the background (EXTRACT_WARM, after the worker is replaced) can
    // read while a document does: each reading must keep its own resolution.
    const pdf = await writeTextPdf([[{ text: 'CNPJ: 12.345.678/0001-95', x: 60, y: 760, size: 12 }, { text: 'Vencimento 20/09/2024', x: 60, y: 730, size: 12 }]], { seed: 1 })
    const image = await pageImage(await scanOf(pdf, { dpi: 200, seed: 2 }))
    const far = performance.now() + 60_000
    const alone = [await recognizeWords(image.pgm, 200, far), await recognizeWords(image.pgm, 600, far)]
    // The resolution matters to what Tesseract reads on this page (else this test would prove nothing).
    expect(alone[1]).not.toEqual(alone[0])
    expect(await Promise.all([recognizeWords(image.pgm, 200, far), recognizeWords(image.pgm, 600, far)])).toEqual(alone)
    expect(await Promise.all([recognizeWords(image.pgm, 600, far), recognizeWords(image.pgm, 200, far)])).toEqual([...alone].reverse())
  })

  it('abandons OCR at its deadline, and reads the next page with a fresh worker', async () => {
    const scan = await scanOf(await textPdf(), { dpi: 200, seed: 4 })
    const image = await pageImage(scan)
    await expect(recognizeWords(image.pgm, image.dpi, performance.now() + 20)).rejects.toBeInstanceOf(OcrTimeout)
    const words = await recognizeWords(image.pgm, image.dpi, performance.now() + 60_000)
    expect(words.map((w) => w.text)).toContain('12.345.678/0001-95')
    // The worker that read it runs the pinned core (tesseract-worker.mjs reports the file it loaded).
    expect(tesseractCore()).toBe(tesseractOptions().corePath)
  })
})
