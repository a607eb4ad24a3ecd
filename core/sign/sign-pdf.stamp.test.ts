/**
 * Where the stamps land, read back from signed files and judged by poppler: `pdfinfo -box`
 * gives each page's boxes and rotation as a reader computes them, and `pdftoppm` renders
 * the page as shown, so the corner and the opaque background are checked on pixels.
 */
import { execFile } from 'node:child_process'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { PDFArray, PDFDict, PDFDocument, PDFName, PDFNumber, StandardFonts, rgb } from 'pdf-lib'
import type { PDFPage } from 'pdf-lib'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestPki } from '../../fixtures/pdf/pki.js'
import type { TestPki } from '../../fixtures/pdf/pki.js'
import { checkSignedPdf, toolsAvailable } from '../../fixtures/pdf/verify.js'
import { loadPkcs12 } from './certificate.js'
import type { SigningMaterial } from './certificate.js'
import { signPdf } from './sign-pdf.js'
import type { SignPdfOptions } from './sign-pdf.js'

const run = promisify(execFile)
let dir: string
let pki: TestPki
let material: SigningMaterial

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'razao-stamp-'))
  pki = await createTestPki(dir)
  material = loadPkcs12(pki.signer.pkcs12, pki.password)
})
afterAll(async () => {
  await rm(dir, { recursive: true, force: true })
})

let counter = 0
function options (over: Partial<SignPdfOptions> = {}): SignPdfOptions {
  counter++
  return {
    material, visualMode: 'STAMP_ONLY', validatorUrl: 'https://validar.iti.gov.br/', timeZone: 'America/Sao_Paulo',
    documentIdentifier: `RZ-STMP-${String(counter).padStart(4, '0')}`, signedAt: new Date(), ...over
  }
}

type Rect = [number, number, number, number]

/** The /Rect of each page's stamp annotation (undefined for a page without one). */
async function stampRects (pdf: Uint8Array): Promise<Array<Rect | undefined>> {
  const doc = await PDFDocument.load(pdf)
  return doc.getPages().map((page) => {
    const annots = page.node.lookupMaybe(PDFName.of('Annots'), PDFArray)
    for (let i = 0; i < (annots?.size() ?? 0); i++) {
      const a = annots!.lookup(i, PDFDict)
      if (a.get(PDFName.of('Subtype'))?.toString() !== '/Stamp') continue
      return a.lookup(PDFName.of('Rect'), PDFArray).asArray().map((n) => (n as PDFNumber).asNumber()) as Rect
    }
    return undefined
  })
}

interface PopplerPage { media: Rect, crop: Rect, rotation: number }

/** Each page's MediaBox, CropBox (clipped by poppler) and rotation from `pdfinfo -box`. */
async function pdfinfoPages (path: string, count: number): Promise<PopplerPage[]> {
  const { stdout } = await run('pdfinfo', ['-box', '-f', '1', '-l', String(count), path])
  const pages: PopplerPage[] = []
  for (let n = 1; n <= count; n++) {
    const box = (name: string): Rect => new RegExp(`^Page\\s+${n} ${name}:\\s+(\\S+)\\s+(\\S+)\\s+(\\S+)\\s+(\\S+)`, 'm').exec(stdout)!.slice(1).map(Number) as Rect
    const rotation = Number(new RegExp(`^Page\\s+${n} rot:\\s+(-?\\d+)`, 'm').exec(stdout)![1])
    pages.push({ media: box('MediaBox'), crop: box('CropBox'), rotation })
  }
  return pages
}

/** Renders one page as poppler shows it (after /Rotate) to a grey-level image. */
async function render (path: string, page: number, dpi = 36): Promise<{ width: number, height: number, gray: Buffer }> {
  const out = join(dir, `render-${counter}-${page}`)
  await run('pdftoppm', ['-f', String(page), '-l', String(page), '-r', String(dpi), '-gray', '-singlefile', path, out])
  const pgm = await readFile(`${out}.pgm`)
  const header = /^P5\s+(\d+)\s+(\d+)\s+(\d+)\s/.exec(pgm.toString('latin1', 0, 64))!
  return { width: Number(header[1]), height: Number(header[2]), gray: pgm.subarray(header[0].length) }
}

/** Bounding box (image pixels, y down) of the pixels darker than `below`. */
function inkBox (img: { width: number, height: number, gray: Buffer }, below = 160): { left: number, top: number, right: number, bottom: number } | undefined {
  let left = Infinity; let top = Infinity; let right = -1; let bottom = -1
  for (let y = 0; y < img.height; y++) {
    for (let x = 0; x < img.width; x++) {
      if (img.gray[y * img.width + x]! >= below) continue
      left = Math.min(left, x); right = Math.max(right, x); top = Math.min(top, y); bottom = Math.max(bottom, y)
    }
  }
  return right < 0 ? undefined : { left, top, right, bottom }
}

const tools = toolsAvailable('pdfsig', 'openssl', 'qpdf', 'pdfinfo', 'pdftoppm')

function setRotate (page: PDFPage, value: number): void {
  page.node.set(PDFName.of('Rotate'), PDFNumber.of(value))
}

describe.skipIf(!tools)('stamp geometry', () => {
  it('keeps every stamp inside the visible box: offset and stray CropBoxes, every /Rotate, UserUnit; skips pages too small, with a warning', async () => {
    const doc = await PDFDocument.create()
    const font = await doc.embedFont(StandardFonts.Helvetica)
    // The page tree says 90: pages that set nothing inherit it.
    doc.catalog.lookup(PDFName.of('Pages'), PDFDict).set(PDFName.of('Rotate'), PDFNumber.of(90))
    const specs: Array<{ size: [number, number], crop?: [number, number, number, number], rotate?: number, userUnit?: number, expectStamp: boolean }> = [
      { size: [3.84, 3.84], rotate: 0, expectStamp: false }, // ImageMagick's 3.84 pt pages
      { size: [595.28, 841.89], crop: [100, 150, 300, 400], rotate: 0, expectStamp: true },
      { size: [400, 300], crop: [-50, -80, 300, 300], rotate: 0, expectStamp: true },
      { size: [400, 300], crop: [1000, 1000, 300, 300], rotate: 0, expectStamp: true }, // misses the MediaBox
      { size: [595.28, 841.89], rotate: 90, expectStamp: true },
      { size: [595.28, 841.89], rotate: 180, expectStamp: true },
      { size: [595.28, 841.89], rotate: 270, expectStamp: true },
      { size: [595.28, 841.89], rotate: -90, expectStamp: true },
      { size: [595.28, 841.89], rotate: 450, expectStamp: true },
      { size: [595.28, 841.89], rotate: 45, expectStamp: true },
      { size: [841.89, 595.28], crop: [20, 30, 500, 400], expectStamp: true }, // inherits 90
      { size: [297.64, 420.94], rotate: 0, userUnit: 2, expectStamp: true }, // A5 in units of 2 pt: A3 as printed
      { size: [600, 600], rotate: 0, userUnit: 0.15, expectStamp: false }, // 90 pt as printed
      { size: [90, 90], rotate: 0, expectStamp: false },
      { size: [1200, 20], rotate: 0, expectStamp: false }, // a strip too low for a stamp
      { size: [1200, 40], rotate: 0, expectStamp: true }
    ]
    for (const [i, s] of specs.entries()) {
      const page = doc.addPage(s.size)
      if (s.crop !== undefined) page.setCropBox(...s.crop)
      if (s.rotate !== undefined) setRotate(page, s.rotate)
      if (s.userUnit !== undefined) page.node.set(PDFName.of('UserUnit'), PDFNumber.of(s.userUnit))
      if (s.size[0] > 50 && s.size[1] > 50) page.drawText(`Página ${i + 1}`, { x: s.size[0] / 3, y: s.size[1] / 2, size: 12, font })
    }
    const input = await doc.save({ useObjectStreams: false })
    const out = await signPdf(input, options())
    const path = join(dir, 'geometry.pdf')
    await writeFile(path, out.pdf)
    await checkSignedPdf(dir, out.pdf, pki.rootPemPath, 'geometry')

    const rects = await stampRects(out.pdf)
    const poppler = await pdfinfoPages(path, specs.length)
    expect(rects.map((r) => r !== undefined)).toEqual(specs.map((s) => s.expectStamp))
    for (const [i, rect] of rects.entries()) {
      if (rect === undefined) continue
      const { media, crop } = poppler[i]!
      // Poppler's CropBox is already clipped to the MediaBox; where the two do not meet it is
      // empty and pdf.js shows the MediaBox, so that is the box the stamp must stay in.
      const visible = crop[2] > crop[0] && crop[3] > crop[1] ? crop : media
      const [x1, y1, x2, y2] = rect
      expect(x1, `page ${i + 1}`).toBeGreaterThanOrEqual(visible[0])
      expect(y1, `page ${i + 1}`).toBeGreaterThanOrEqual(visible[1])
      expect(x2, `page ${i + 1}`).toBeLessThanOrEqual(visible[2])
      expect(y2, `page ${i + 1}`).toBeLessThanOrEqual(visible[3])
      expect(x2 - x1).toBeGreaterThan(0)
      expect(y2 - y1).toBeGreaterThan(0)
    }
    // UserUnit 2: the same stamp as on an A4 page (/Rotate 180, so its length is along x) in half as many units.
    const a4 = rects[5]!
    const a3 = rects[11]!
    expect((a3[2] - a3[0]) * 2).toBeCloseTo(a4[2] - a4[0], 1)
    expect(out.warnings).toEqual([expect.stringMatching(/^Pages 1, 13-15 \(4 pages\) are too small for a legible signature stamp \(smallest 3\.84 x 3\.84 pt\)/)])
  })

  it('puts the stamp on the bottom right of the page as the reader sees it, for every /Rotate', async () => {
    const doc = await PDFDocument.create()
    const rotations = [0, 90, 180, 270, -90]
    for (const r of rotations) setRotate(doc.addPage([595.28, 841.89]), r)
    const out = await signPdf(await doc.save({ useObjectStreams: false }), options())
    const path = join(dir, 'rotations.pdf')
    await writeFile(path, out.pdf)
    for (const [i, r] of rotations.entries()) {
      const img = await render(path, i + 1)
      // A blank page: the only ink is the stamp's frame and text.
      const ink = inkBox(img)!
      expect(ink, `rotate ${r}`).toBeDefined()
      // Against the right edge (a stamp on A4 is long, so its left end is near the middle) and the bottom.
      expect(img.width - ink.right, `rotate ${r}`).toBeLessThan(ink.left / 4)
      expect(ink.top, `rotate ${r}`).toBeGreaterThan(img.height * 0.9)
      // Reads left to right: wider than tall once shown.
      expect(ink.right - ink.left).toBeGreaterThan(3 * (ink.bottom - ink.top))
    }
  })

  it('paints an opaque background: the stamp stays light over a black page', async () => {
    const doc = await PDFDocument.create()
    const page = doc.addPage([595.28, 841.89])
    page.drawRectangle({ x: 0, y: 0, width: 595.28, height: 841.89, color: rgb(0, 0, 0) })
    const out = await signPdf(await doc.save({ useObjectStreams: false }), options())
    const path = join(dir, 'dark.pdf')
    await writeFile(path, out.pdf)
    const [rect] = await stampRects(out.pdf)
    const dpi = 72
    const img = await render(path, 1, dpi)
    // The stamp's rectangle in image pixels (y down), shrunk by 2 px to stay off the frame.
    const [x1, y1, x2, y2] = rect!
    let light = 0; let total = 0
    for (let y = Math.ceil(841.89 - y2) + 2; y < Math.floor(841.89 - y1) - 2; y++) {
      for (let x = Math.ceil(x1) + 2; x < Math.floor(x2) - 2; x++) {
        total++
        if (img.gray[y * img.width + x]! > 200) light++
      }
    }
    expect(total).toBeGreaterThan(500)
    // Mostly background; the rest is the dark-blue text.
    expect(light / total).toBeGreaterThan(0.6)
    // Outside the stamp the page is still black.
    expect(img.gray[10 * img.width + 10]).toBeLessThan(30)
  })
})
