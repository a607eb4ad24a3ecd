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
import { makeCornerTextPdf } from '../../fixtures/pdf/samples.js'
import type { TextPlace } from '../../fixtures/pdf/samples.js'
import { checkSignedPdf, toolsAvailable } from '../../fixtures/pdf/verify.js'
import { readTextPositions } from '../pdf/index.js'
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

/**
 * pdf.js's time limits for the tests whose pages pdf.js reads: they check where the stamps go and
 * what the warnings say, not the limits (core/pdf/text-positions.test.ts does); on a loaded
 * machine (load 20 on 2 cores) pdf.js overran the 500 ms a page and the pages were reported unread.
 */
const UNHURRIED = { pageMs: 60_000, totalMs: 120_000 }

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

const tools = toolsAvailable('pdfsig', 'openssl', 'qpdf', 'pdfinfo', 'pdftoppm', 'pdftotext')

/**
 * The corner the stamp shows in, judged on a colour render as poppler shows the page: the
 * stamp's frame and text are the only blue ink (the page's text is black).
 */
async function shownCorner (path: string, page: number): Promise<string | undefined> {
  const out = join(dir, `corner-${counter}-${page}`)
  await run('pdftoppm', ['-f', String(page), '-l', String(page), '-r', '30', '-singlefile', path, out])
  const ppm = await readFile(`${out}.ppm`)
  const header = /^P6\s+(\d+)\s+(\d+)\s+(\d+)\s/.exec(ppm.toString('latin1', 0, 64))!
  const [width, height] = [Number(header[1]), Number(header[2])]
  const px = ppm.subarray(header[0].length)
  let sx = 0; let sy = 0; let n = 0
  for (let i = 0; i < width * height; i++) {
    const [r, , b] = [px[i * 3]!, px[i * 3 + 1]!, px[i * 3 + 2]!]
    if (b - r > 50 && b < 200) { sx += i % width; sy += Math.floor(i / width); n++ }
  }
  if (n === 0) return undefined
  return `${sy / n > height / 2 ? 'bottom' : 'top'}-${sx / n > width / 2 ? 'right' : 'left'}`
}

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
    const out = await signPdf(input, options({ textBudget: UNHURRIED }))
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

describe.skipIf(!tools)('stamp placement by the page\'s text', () => {
  const cases: Array<[string, { text: TextPlace[], rotate?: number }, string]> = [
    ['an empty page', { text: [] }, 'bottom-right'],
    ['text in the bottom-right corner', { text: ['bottom-right'] }, 'bottom-left'],
    ['text in both bottom corners', { text: ['bottom-right', 'bottom-left'] }, 'top-right'],
    ['text in three corners', { text: ['bottom-right', 'bottom-left', 'top-right'] }, 'top-left'],
    // /Rotate 90 shows the user space's top right at the bottom right.
    ['/Rotate 90 with text shown at the bottom right', { text: ['top-right'], rotate: 90 }, 'bottom-left'],
    // /Rotate 180 shows the user space's top left at the bottom right, its top right at the bottom left.
    ['/Rotate 180 with text shown in both bottom corners', { text: ['top-left', 'top-right'], rotate: 180 }, 'top-right'],
    // /Rotate 270 shows the user space's bottom left at the bottom right.
    ['/Rotate 270 with text shown at the bottom right', { text: ['bottom-left'], rotate: 270 }, 'bottom-left']
  ]

  it('puts each stamp in the first free corner (bottom right, bottom left, top right, top left) as the reader sees the page', async () => {
    const input = await makeCornerTextPdf(cases.map(([, spec]) => spec))
    const out = await signPdf(input, options({ textBudget: UNHURRIED }))
    const path = join(dir, 'placement.pdf')
    await writeFile(path, out.pdf)
    await checkSignedPdf(dir, out.pdf, pki.rootPemPath, 'placement')
    expect(out.warnings, out.warnings.join()).toEqual([])
    for (const [i, [name, , corner]] of cases.entries()) {
      expect(await shownCorner(path, i + 1), name).toBe(corner)
    }
    // The page content is untouched: poppler and pdf.js read the same text from the signed file.
    const inPath = join(dir, 'placement-in.pdf')
    await writeFile(inPath, input)
    const text = async (p: string): Promise<string> => (await run('pdftotext', ['-enc', 'UTF-8', p, '-'])).stdout
    const before = await text(inPath)
    expect(before).toContain('Canto bottom-right, linha 5')
    // pdftotext also prints the stamps' appearance text; every original line is still there.
    const after = await text(path)
    for (const line of before.split('\n').map((l) => l.replace(/\f/g, '').trim()).filter((l) => l !== '')) expect(after).toContain(line)
    expect(after).toContain('Assinado digitalmente por')
    const runs = async (bytes: Uint8Array): Promise<string[]> => (await readTextPositions(bytes)).pages.flatMap((p) => (p ?? []).map((r) => r.text))
    expect(await runs(out.pdf)).toEqual(await runs(input))
  })

  it('reads the text of what is signed: an owner-password AES-256 file behind leading bytes still gets its stamp in a free corner', async () => {
    const plainPath = join(dir, 'corner-plain.pdf')
    const lockedPath = join(dir, 'corner-locked.pdf')
    await writeFile(plainPath, await makeCornerTextPdf([{ text: ['bottom-right'] }]))
    await run('qpdf', ['--encrypt', '', 'dono', '256', '--', plainPath, lockedPath])
    const input = Buffer.concat([Buffer.from('X-Gateway: relayed\r\n\r\n'), await readFile(lockedPath)])
    const out = await signPdf(input, options({ textBudget: UNHURRIED }))
    expect(out.warnings).toEqual([expect.stringMatching(/bytes before the PDF header/)])
    const path = join(dir, 'corner-signed.pdf')
    await writeFile(path, out.pdf)
    await checkSignedPdf(dir, out.pdf, pki.rootPemPath, 'corner-locked')
    expect(await shownCorner(path, 1)).toBe('bottom-left')
  })

  it('with text in every corner, takes the corner covering least and says so', async () => {
    const out = await signPdf(await makeCornerTextPdf([{ text: ['everywhere'] }, { text: [] }]), options({ textBudget: UNHURRIED }))
    expect(out.warnings).toEqual(['Page 1 has content in all four corners; the stamp was put where it covers the least.'])
    const rects = await stampRects(out.pdf)
    expect(rects[0]).toBeDefined()
  })

  it('keeps clear of an existing annotation, and a second signature\'s stamp of the first one\'s', async () => {
    const doc = await PDFDocument.load(await makeCornerTextPdf([{ text: [] }]))
    const page = doc.getPage(0)
    const link = doc.context.register(doc.context.obj({ Type: 'Annot', Subtype: 'Link', Rect: [20, 10, 80, 30], Border: [0, 0, 0] }))
    page.node.set(PDFName.of('Annots'), doc.context.obj([link]))
    const first = await signPdf(await doc.save({ useObjectStreams: false }), options())
    const second = await signPdf(first.pdf, options())
    const path = join(dir, 'twice.pdf')
    await writeFile(path, second.pdf)
    await checkSignedPdf(dir, second.pdf, pki.rootPemPath, 'twice')
    expect(await allStampRects(second.pdf)).toHaveLength(2)
    const rects = await allStampRects(second.pdf)
    // First stamp bottom right; the link holds the bottom left; the second stamp goes to the top right.
    expect(rects[0]![0]).toBeGreaterThan(100)
    expect(rects[0]![1]).toBeLessThan(100)
    expect(rects[1]![1]).toBeGreaterThan(700)
    expect(rects[1]![2]).toBeGreaterThan(500)
  })
})

/** Every stamp /Rect on page 1, in /Annots order. */
async function allStampRects (pdf: Uint8Array): Promise<Rect[]> {
  const doc = await PDFDocument.load(pdf)
  const annots = doc.getPage(0).node.lookup(PDFName.of('Annots'), PDFArray)
  const out: Rect[] = []
  for (let i = 0; i < annots.size(); i++) {
    const a = annots.lookup(i, PDFDict)
    if (a.get(PDFName.of('Subtype'))?.toString() === '/Stamp') out.push(a.lookup(PDFName.of('Rect'), PDFArray).asArray().map((n) => (n as PDFNumber).asNumber()) as Rect)
  }
  return out
}
