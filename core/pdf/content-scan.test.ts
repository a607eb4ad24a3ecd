/**
 * The content-stream scan against pdf.js, on what real producers write: LibreOffice
 * (a spreadsheet printed to PDF), Chromium (HTML printed through playwright-core), and
 * qpdf's rewrites of both (object streams; uncompressed QDF). For every page and corner,
 * a corner the scan calls free holds no pdf.js text box, and one it calls covered holds
 * one; and the corner the signer picks is the one issue 13's rule picks on pdf.js's boxes.
 * Then the operators one by one, on hand-written content streams.
 */
import { execFile } from 'node:child_process'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { promisify } from 'node:util'
import { deflateSync } from 'node:zlib'
import { PDFDocument, PDFName, StandardFonts } from 'pdf-lib'
import type { PDFFont, PDFPage } from 'pdf-lib'
import { chromium } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { toolsAvailable } from '../../fixtures/pdf/verify.js'
import { ContentScanner } from './content-scan.js'
import type { RectState } from './content-scan.js'
import { track } from './incremental.js'
import { openPdf } from './open.js'
import { CORNERS, annotationBoxes, intersect, pageGeometry } from './page-box.js'
import type { Box } from './page-box.js'
import { layoutStamp, stampRect } from './stamp.js'
import { stampPages } from './stamp-pages.js'
import { readTextPositions } from './text-positions.js'

const run = promisify(execFile)
const tools = toolsAvailable('soffice', 'qpdf') && (process.env.CI === 'true' || await readFile('/usr/bin/chromium').then(() => true, () => false))

let dir: string
beforeAll(async () => { dir = await mkdtemp(join(tmpdir(), 'razao-scan-')) })
afterAll(async () => { await rm(dir, { recursive: true, force: true }) })

/** The production stamp's two lines, and a short one that leaves more room in each corner. */
const STAMPS = {
  long: ['Assinado digitalmente por EMPRESA DESENVOLVIMENTO RAZAO TESTE LTDA (CNPJ 11.222.333/0001-81) em 22/11/2026 03:02:03 (UTC-03:00)', 'Assinatura PAdES-B ICP-Brasil - Identificador RZ-7K3M-9XQ2-4HFA-P8DN - Página 12 de 352'],
  short: ['Assinado por EMPRESA TESTE', 'Página 1 de 9']
}

function cornerRects (font: PDFFont, page: PDFPage, texts: string[]): Box[] | undefined {
  const g = pageGeometry(page)
  const layout = layoutStamp(font, texts, g)
  return layout === undefined ? undefined : CORNERS.map((c) => stampRect(g, layout, c))
}

interface Comparison { corners: number, decided: number, disagreements: string[] }

/** Scan states beside pdf.js's boxes for every page and corner of `bytes`, for both stamp sizes. */
async function compare (bytes: Uint8Array, label: string): Promise<Comparison> {
  const opened = await openPdf(bytes)
  const font = await opened.doc.embedFont(StandardFonts.Helvetica)
  const text = await readTextPositions(bytes, { pages: undefined })
  expect(text.problem, label).toBeUndefined()
  const scanner = new ContentScanner(opened.doc.context)
  const result: Comparison = { corners: 0, decided: 0, disagreements: [] }
  for (const [i, page] of opened.doc.getPages().entries()) {
    const boxes = text.pages[i]!.map((r) => r.box)
    for (const [name, texts] of Object.entries(STAMPS)) {
      const rects = cornerRects(font, page, texts)!
      const scan = scanner.scanPage(page.node.get(PDFName.of('Contents')), page.node.Resources(), rects, { maxBytes: 4 << 20 })
      // An early stop leaves later corners free only when none can be: compare the states the scan settled.
      for (const [k, rect] of rects.entries()) {
        const covered = boxes.some((b) => intersect(b, rect) !== undefined)
        const state: RectState = scan.states[k]!
        result.corners++
        if (state !== 'unknown') result.decided++
        if ((state === 'free' && covered) || (state === 'covered' && !covered)) result.disagreements.push(`${label} page ${i + 1} ${name} ${CORNERS[k]}: scan ${state}, pdf.js ${covered ? 'covered' : 'free'}`)
      }
    }
  }
  return result
}

/** The corners the signer picks (scan, then pdf.js) beside issue 13's rule on pdf.js's boxes alone. */
async function pickedCorners (bytes: Uint8Array): Promise<{ picked: string[], byPdfJs: string[], readByPdfJs: number }> {
  const opened = await openPdf(bytes)
  const font = await opened.doc.embedFont(StandardFonts.Helvetica)
  const pages = opened.doc.getPages()
  const text = await readTextPositions(bytes)
  const byPdfJs = pages.map((page, i) => {
    const rects = cornerRects(font, page, STAMPS.long)!
    const obstacles = [...text.pages[i]!.map((r) => r.box), ...annotationBoxes(page)]
    const areas = rects.map((r) => obstacles.reduce((a, o) => { const x = intersect(r, o); return a + (x === undefined ? 0 : x.width * x.height) }, 0))
    const free = areas.findIndex((a) => a === 0)
    return CORNERS[free >= 0 ? free : areas.indexOf(Math.min(...areas))]!
  })
  const outcome = await stampPages(track(opened), pages, { font, linesFor: () => STAMPS.long, nameFor: String })
  return { picked: pages.map((_, i) => outcome.corners.get(i + 1)!), byPdfJs, readByPdfJs: outcome.readByPdfJs.length }
}

async function libreOfficePdf (): Promise<Uint8Array> {
  // A ledger of 160 rows: about four pages, with LibreOffice's header (sheet name) and footer (page number).
  const rows = ['Data;Conta;Histórico;Débito;Crédito']
  for (let i = 1; i <= 160; i++) rows.push(`${String(1 + (i % 28)).padStart(2, '0')}/11/2026;1.1.${i % 9}.0${i % 7};Lançamento contábil de teste número ${i}, conferido;${(i * 137.31).toFixed(2)};${(i * 41.07).toFixed(2)}`)
  const csv = join(dir, 'ledger.csv')
  await writeFile(csv, rows.join('\n'), 'utf8')
  const profile = pathToFileURL(join(dir, 'lo-profile')).href
  await run('soffice', [`-env:UserInstallation=${profile}`, '--headless', '--norestore', '--infilter=CSV:59,34,76,1', '--convert-to', 'pdf', '--outdir', dir, csv], { timeout: 120_000 })
  return await readFile(join(dir, 'ledger.pdf'))
}

/** Pages of HTML with text in chosen corners (a few points from the edges), rotated text, small and large type. */
const HTML = `<!doctype html><html><head><meta charset="utf-8"><style>
  @page { size: A4; margin: 0 }
  body { margin: 0; font-family: sans-serif }
  .page { position: relative; width: 210mm; height: 297mm; page-break-after: always; overflow: hidden }
  .c { position: absolute; font-size: 9pt; white-space: nowrap }
  .body { position: absolute; left: 25mm; top: 30mm; width: 160mm; font-size: 11pt; line-height: 1.4 }
</style></head><body>
${[
  [],
  ['right: 4pt; bottom: 4pt'],
  ['right: 4pt; bottom: 4pt', 'left: 4pt; bottom: 4pt'],
  ['right: 4pt; bottom: 4pt', 'left: 4pt; bottom: 4pt', 'right: 4pt; top: 4pt'],
  ['left: 300pt; bottom: 2pt'],
  ['right: 4pt; bottom: 4pt; transform: rotate(90deg); transform-origin: right bottom']
].map((corners, p) => `<div class="page"><div class="body">${`<p>Página ${p + 1}: relatório de conferência contábil, débito e crédito lançados e conferidos no período.</p>`.repeat(12)}</div>` +
  corners.map((style) => `<div class="c" style="${style}">Texto no canto, página ${p + 1}</div>`).join('') + '</div>').join('\n')}
</body></html>`

async function chromiumPdf (): Promise<Uint8Array> {
  const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'] })
  try {
    const page = await browser.newPage()
    await page.setContent(HTML)
    return await page.pdf({ format: 'A4', printBackground: true, preferCSSPageSize: true })
  } finally {
    await browser.close()
  }
}

async function qpdfVariant (input: Uint8Array, name: string, args: string[]): Promise<Uint8Array> {
  const inPath = join(dir, `${name}-in.pdf`)
  const outPath = join(dir, `${name}.pdf`)
  await writeFile(inPath, input)
  await run('qpdf', [...args, inPath, outPath]).catch((err: { code?: number }) => { if (err.code !== 3) throw err })
  return await readFile(outPath)
}

describe.skipIf(!tools)('the scan agrees with pdf.js on real producers\' PDFs', () => {
  const producers: Array<[string, () => Promise<Uint8Array>]> = [['LibreOffice', libreOfficePdf], ['Chromium', chromiumPdf]]
  const variants: Array<[string, string[]]> = [['as written', []], ['qpdf object streams', ['--object-streams=generate']], ['qpdf uncompressed (QDF)', ['--qdf', '--object-streams=disable']]]

  for (const [producer, make] of producers) {
    it(`${producer}: every corner the scan settles, pdf.js settles the same way, and the signer picks pdf.js's corner`, async () => {
      const original = await make()
      for (const [variant, args] of variants) {
        const bytes = args.length === 0 ? original : await qpdfVariant(original, `${producer}-${variant.replace(/\W+/g, '-')}`, args)
        const label = `${producer}, ${variant}`
        const result = await compare(bytes, label)
        expect(result.disagreements, label).toEqual([])
        // The scan has to do its job: most corners settled without pdf.js.
        expect(result.decided / result.corners, label).toBeGreaterThan(0.6)
        const corners = await pickedCorners(bytes)
        expect(corners.picked, label).toEqual(corners.byPdfJs)
      }
    }, 180_000)
  }

  it('Chromium: text in the corners is seen as pdf.js sees it (fonts with /W widths settle exactly)', async () => {
    const corners = await pickedCorners(await chromiumPdf())
    // The last page's turned text is left to the comparison with pdf.js.
    expect(corners.picked.slice(0, 5)).toEqual(['bottom-right', 'bottom-left', 'top-right', 'top-left', 'top-right'])
    expect(corners.picked).toEqual(corners.byPdfJs)
  }, 120_000)
})

describe('content-scan operators', () => {
  /** A one-page PDF whose content is `content`, with F1 a simple font whose every code is 500/1000 em wide. */
  async function page (content: string, extra: (doc: PDFDocument) => Record<string, unknown> = () => ({})): Promise<{ doc: PDFDocument, page: PDFPage }> {
    const doc = await PDFDocument.create()
    const p = doc.addPage([600, 800])
    const font = doc.context.obj({ Type: 'Font', Subtype: 'Type1', BaseFont: 'Courier', FirstChar: 32, LastChar: 126, Widths: Array.from({ length: 95 }, () => 500) })
    p.node.set(PDFName.of('Resources'), doc.context.obj({ Font: { F1: font }, ...extra(doc) }))
    p.node.set(PDFName.of('Contents'), doc.context.register(doc.context.flateStream(content)))
    return { doc, page: p }
  }
  /** Four 100 x 20 rectangles: bottom left, bottom right, top left, top right of a 600 x 800 page. */
  const rects: Box[] = [{ x: 0, y: 0, width: 100, height: 20 }, { x: 500, y: 0, width: 100, height: 20 }, { x: 0, y: 780, width: 100, height: 20 }, { x: 500, y: 780, width: 100, height: 20 }]
  const states = async (content: string, extra?: (doc: PDFDocument) => Record<string, unknown>): Promise<string> => {
    const { doc, page: p } = await page(content, extra)
    const scan = new ContentScanner(doc.context).scanPage(p.node.get(PDFName.of('Contents')), p.node.Resources(), rects, { maxBytes: 1 << 20 })
    return scan.gaveUp ?? scan.states.join(' ')
  }

  it('places Tj by Td, Tm and cm, and knows when text is away from every rectangle', async () => {
    expect(await states('BT /F1 10 Tf 250 400 Td (middle of the page) Tj ET')).toBe('free free free free')
    expect(await states('BT /F1 10 Tf 10 5 Td (corner) Tj ET')).toBe('covered free free free')
    // 30 codes at 5 pt each: 150 pt from x = 420 reach into the bottom-right rectangle.
    expect(await states('BT /F1 10 Tf 1 0 0 1 420 5 Tm (a line thirty characters long.) Tj ET')).toBe('free covered free free')
    expect(await states('q 1 0 0 1 500 780 cm BT /F1 10 Tf 10 5 Td (top right) Tj ET Q BT /F1 10 Tf 250 400 Td (x) Tj ET')).toBe('free free free covered')
  })

  it('follows T*, TL, TD, the quote operators, TJ adjustments, Tc, Tw and Tz', async () => {
    expect(await states('BT /F1 10 Tf 14 TL 10 810 Td T* T* (two lines down) Tj ET')).toBe('free free covered free')
    expect(await states('BT /F1 10 Tf 10 110 Td 0 -50 TD (first) Tj T* (below) Tj ET')).toBe('covered free free free')
    expect(await states('BT /F1 10 Tf 10 110 Td 0 -50 TD (first) Tj ET')).toBe('free free free free')
    expect(await states('BT /F1 10 Tf 20 TL 10 25 Td (up here) \' ET')).toBe('covered free free free')
    // A TJ that moves 80 em (800 pt at 10 pt) to the right before its second string.
    expect(await states('BT /F1 10 Tf 10 5 Td [(a) -80000 (b)] TJ ET')).toBe('covered free free free')
    expect(await states('BT /F1 10 Tf 150 5 Td [(a) -40000 (b)] TJ ET')).toBe('free covered free free')
    // Horizontal scaling 1000%: 10 codes at 50 pt each reach from x = 120 past 500.
    expect(await states('BT /F1 10 Tf 1000 Tz 120 5 Td (ten chars.) Tj ET')).toBe('free covered free free')
    expect(await states('BT /F1 10 Tf 40 Tc 120 5 Td (ten chars.) Tj ET')).toBe('free covered free free')
  })

  it('restores the graphics state on Q, and reads the text of a form XObject with its own matrix', async () => {
    expect(await states('q 1 0 0 1 0 780 cm Q BT /F1 10 Tf 10 5 Td (bottom) Tj ET')).toBe('covered free free free')
    const form = (doc: PDFDocument): Record<string, unknown> => ({
      XObject: { Fm: doc.context.register(doc.context.stream('BT /F1 10 Tf 0 0 Td (in a form) Tj ET', { Type: 'XObject', Subtype: 'Form', BBox: [0, 0, 600, 800], Matrix: [1, 0, 0, 1, 510, 785] })) }
    })
    expect(await states('q /Fm Do Q', form)).toBe('free free free covered')
  })

  it('skips blank runs as pdf.js does, and says unknown where the widths are not given', async () => {
    expect(await states('BT /F1 10 Tf 10 5 Td (     ) Tj ET')).toBe('free free free free')
    const helvetica = (doc: PDFDocument): Record<string, unknown> => ({ Font: { F2: doc.context.obj({ Type: 'Font', Subtype: 'Type1', BaseFont: 'Helvetica' }) } })
    expect(await states('BT /F2 10 Tf 10 5 Td (no widths) Tj ET', helvetica)).toBe('unknown free free free')
    expect(await states('BT /F2 10 Tf 250 400 Td (no widths, far away) Tj ET', helvetica)).toBe('free free free free')
  })

  it('measures a standard font left without /Widths in WinAnsiEncoding by its own metrics, as reportlab writes Helvetica', async () => {
    const helvetica = (encoding?: string) => (doc: PDFDocument): Record<string, unknown> => ({ Font: { F2: doc.context.obj({ Type: 'Font', Subtype: 'Type1', BaseFont: 'Helvetica', ...(encoding === undefined ? {} : { Encoding: encoding }) }) } })
    // Helvetica's widths: these 20 codes are 91.2 pt at 10 pt, ending at x = 471, short of the bottom-right rectangle (x >= 500).
    const line = 'BT /F2 10 Tf 380 5 Td (abcdefghijabcdefghij) Tj ET'
    expect(await states(line, helvetica('WinAnsiEncoding'))).toBe('free free free free')
    // The 1.1 em a code bound (220 pt) would reach past x = 500.
    expect(await states(line, helvetica())).toBe('free unknown free free')
    expect(await states('BT /F2 10 Tf 420 5 Td (abcdefghijabcdefghij) Tj ET', helvetica('WinAnsiEncoding'))).toBe('free covered free free')
  })

  it('gives up on what it does not read: inline images, Type3 fonts, a stream past the limit', async () => {
    expect(await states('BI /W 1 /H 1 /BPC 8 /CS /G ID \x00 EI')).toBe('unsupported')
    const type3 = (doc: PDFDocument): Record<string, unknown> => ({ Font: { T3: doc.context.obj({ Type: 'Font', Subtype: 'Type3', FontMatrix: [0.001, 0, 0, 0.001, 0, 0] }) } })
    expect(await states('BT /T3 10 Tf 250 400 Td (a) Tj ET', type3)).toBe('unsupported')
    const { doc, page: p } = await page('x')
    const bomb = doc.context.register(doc.context.stream(deflateSync(Buffer.alloc(2 << 20, '0 0 m 1 1 l S\n')), { Filter: 'FlateDecode' }))
    p.node.set(PDFName.of('Contents'), bomb)
    expect(new ContentScanner(doc.context).scanPage(bomb, p.node.Resources(), rects, { maxBytes: 1 << 20 }).gaveUp).toBe('too-large')
  })
})
