/**
 * Hostile files through the real pool, whose thread a regression would keep busy (the
 * test's timeout is the hard limit): files pdf-lib cannot walk but pdf.js repairs and
 * reads (the content-size bound of core/pdf/content-size.ts never sees them, the raw bound
 * of core/pdf/raw-content-size.ts does), and scans whose images pdf.js would decode past
 * the bounds of core/extraction/ocr/image-bounds.ts (issue 32).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { deflateSync } from 'node:zlib'
import { PDFDocument, PDFName, ParseSpeeds, StandardFonts } from 'pdf-lib'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openWithPdfJs } from '../core/pdf/index.js'
import { FEW_ROWS, HIDDEN_IMAGE_BOMBS, fourLargeImagePages, fourLargeImagesPage, imagePages } from '../fixtures/pdf/image-bombs.js'
import { generateDas } from '../plugins/das/fixtures/generate.js'
import { createPool, runTask } from './pool.js'
import type { WorkerPool } from './pool.js'
import type { ExtractDocumentInput, ExtractDocumentOutput, ExtractDocumentReply } from './extract-document.js'

let dir: string
let pool: WorkerPool

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'razao-extract-hostile-'))
  pool = createPool({ maxThreads: 1 })
})

afterAll(async () => {
  await pool.destroy()
  await rm(dir, { recursive: true, force: true })
})

/** A one-page PDF drawing "Documento de teste" plus `content` (deflate, stored as given), then damaged by `damage`. */
async function damagedPdf (content: Buffer, damage: (text: string) => string): Promise<Buffer> {
  const doc = await PDFDocument.create()
  const page = doc.addPage([595, 842])
  page.drawText('Documento de teste', { x: 50, y: 700, font: await doc.embedFont(StandardFonts.Helvetica) })
  const own = page.node.get(PDFName.of('Contents'))!
  const extra = doc.context.register(doc.context.stream(content, { Filter: 'FlateDecode' }))
  page.node.set(PDFName.of('Contents'), doc.context.obj([own, extra]))
  const text = Buffer.from(await doc.save({ useObjectStreams: false })).toString('latin1')
  const damaged = damage(text)
  expect(damaged).not.toBe(text)
  return Buffer.from(damaged, 'latin1')
}

/** Damages pdf-lib does not survive and pdf.js repairs (pdf.js reads the page tree by its keys, not its /Type). */
const DAMAGES: Record<string, (text: string) => string> = {
  'a page tree without /Type': (text) => text.replace(/\/Type \/Pages/, ''),
  'a page tree without /Type, its /Length values wrong': (text) => text.replace(/\/Type \/Pages/, '').replace(/\/Length \d+/g, '/Length 3')
}

async function pdfLibWalks (bytes: Buffer): Promise<boolean> {
  try {
    const doc = await PDFDocument.load(bytes, { ignoreEncryption: true, updateMetadata: false, throwOnInvalidObject: false, parseSpeed: ParseSpeeds.Fastest })
    doc.getPages()
    return true
  } catch {
    return false
  }
}

async function pdfJsPages (bytes: Buffer): Promise<number> {
  const task = await openWithPdfJs(bytes)
  const doc = await task.promise
  try { return doc.numPages } finally { await doc.destroy() }
}

async function extract (name: string, bytes: Buffer): Promise<ExtractDocumentOutput> {
  const path = join(dir, name)
  await writeFile(path, bytes)
  return await runTask<ExtractDocumentInput, ExtractDocumentOutput>(pool, 'extract-document', { path, limits: { maxPages: 50, deadlineMs: 20_000, maxRunsPerPage: 50_000 } })
}

describe('hostile files pdf-lib cannot walk', () => {
  for (const [label, damage] of Object.entries(DAMAGES)) {
    it(`refuses a deflate bomb in ${label}, quickly, before pdf.js reads it`, async () => {
      // 64 MiB of drawing operators in about 64 KB: pdf.js took 20 s and 630 MB on 200 MB of them.
      const bomb = await damagedPdf(deflateSync(Buffer.alloc(64 << 20, '0 0 m 1 1 l S\n'), { level: 9 }), damage)
      expect(bomb.byteLength).toBeLessThan(400_000)
      expect(await pdfLibWalks(bomb)).toBe(false)
      expect(await pdfJsPages(bomb)).toBe(1)
      const started = performance.now()
      await expect(extract('bomb.pdf', bomb)).rejects.toThrow(expect.objectContaining({
        code: 'PDF_CONTENT_TOO_LARGE',
        message: expect.stringMatching(/^Object \d+ \(a page's content\) of the PDF would inflate past 8\.0 MiB/)
      }))
      // That message is the raw bound's, which the task applies before pdf.js opens the
      // file. The time is a hang catcher only: 0.45 s at a load of 3 and 1.7 s at 13 with
      // the thread's start, 13-30 ms without.
      expect(performance.now() - started).toBeLessThan(20_000)
    }, 60_000)

    it(`still reads the text of ${label} when its content is ordinary`, async () => {
      const ordinary = await damagedPdf(deflateSync(Buffer.from('0 0 m 100 100 l S\n')), damage)
      expect(await pdfLibWalks(ordinary)).toBe(false)
      const result = await extract('ordinary.pdf', ordinary)
      // Not one of our document types: a result, read to the end, not a refusal.
      expect(result).toMatchObject({ success: false, pages: 1 })
    }, 60_000)
  }
})

/** The task as the service's first turn runs it: OCR deferred, the scan's images measured. */
async function firstTurn (name: string, bytes: Uint8Array): Promise<ExtractDocumentReply> {
  const path = join(dir, name)
  await writeFile(path, bytes)
  return await runTask<ExtractDocumentInput, ExtractDocumentReply>(pool, 'extract-document', { path, limits: { maxPages: 50, deadlineMs: 20_000, maxRunsPerPage: 50_000, ocr: {}, deferOcr: true } })
}

describe('images a scanned page would decode past its bounds (issue 32)', () => {
  // Each of these decoded a 144-million-pixel image when read (0.9-1.6 GB and 6-13 s a
  // file, measured before the fix), and is refused now before pdf.js draws the page:
  // 13-91 ms. The thread serves the next document.
  it.each(HIDDEN_IMAGE_BOMBS)('refuses %s, naming the size pdf.js would decode', async (_what, make) => {
    await expect(extract('hidden.pdf', make())).rejects.toMatchObject({
      code: 'PDF_CONTENT_TOO_LARGE',
      message: expect.stringMatching(/declares 12000 × 12000 pixels, past the 70 million pixels a scanned page is read at/)
    })
  }, 60_000)

  it('refuses them on the text-layer turn, before the scan takes an OCR turn', async () => {
    for (const [what, make] of HIDDEN_IMAGE_BOMBS) {
      await expect(firstTurn('hidden.pdf', make()), what).rejects.toMatchObject({ code: 'PDF_CONTENT_TOO_LARGE' })
    }
  }, 60_000)

  it('refuses a 244-KB page of four 8000 × 8000 images, each under the one-image bound, by the page\'s bound', async () => {
    // Before: always ran to the 25-s hard limit, 3.3-3.7 GB with two at once.
    const page = fourLargeImagesPage()
    expect(page.byteLength).toBeLessThan(260_000)
    await expect(extract('four.pdf', page)).rejects.toMatchObject({
      code: 'PDF_CONTENT_TOO_LARGE',
      message: expect.stringMatching(/^Page 1 of the PDF draws images of 256\.0 million pixels together, past the 70\.0 million/),
      details: { page: 1, maxPageImagePixels: 70_000_000 }
    })
  }, 60_000)

  it('refuses four pages of one 8000 × 8000 image each by the document\'s bound, before drawing any', async () => {
    await expect(extract('four-pages.pdf', fourLargeImagePages())).rejects.toMatchObject({
      code: 'PDF_CONTENT_TOO_LARGE',
      message: expect.stringMatching(/256\.0 million pixels together, past the 200\.0 million one document is read at/)
    })
  }, 60_000)

  it('tells the service which pages of a scan within bounds want OCR, and still reads a text-layer document whole', async () => {
    const scan = imagePages([[{ dict: '/Type /XObject /Subtype /Image /ColorSpace /DeviceGray /BitsPerComponent 8 /Filter /FlateDecode /Width 1654 /Height 2339', data: FEW_ROWS }]])
    expect(await firstTurn('scan.pdf', scan)).toEqual({ ocrWanted: [1] })
    expect(await firstTurn('das.pdf', (await generateDas({ seed: 4 })).pdf)).toMatchObject({ success: true, documentType: 'DAS' })
  }, 60_000)
})
