import { PDFArray, PDFDict, PDFDocument, PDFName, PDFStream, StandardFonts } from 'pdf-lib'
import { describe, expect, it } from 'vitest'
import { makeReportlabLikePdf, makeTextPdf } from '../../fixtures/pdf/samples.js'
import { track, writeUpdate } from './incremental.js'
import { openPdf } from './open.js'
import { pageList, stampPages, stampWarnings } from './stamp-pages.js'

describe('pageList', () => {
  it('collapses runs of pages', () => {
    expect(pageList([1, 2, 3, 5, 7, 8, 10, 11, 12])).toBe('1-3, 5, 7, 8, 10-12')
  })

  it('names the first runs of a long list and counts the rest', () => {
    const odd = Array.from({ length: 176 }, (_, i) => 2 * i + 1)
    expect(pageList(odd)).toBe('1, 3, 5, 7, 9, 11, 13, 15 and 168 more')
  })
})

describe('stampWarnings', () => {
  it('says nothing when every page got a free corner', () => {
    expect(stampWarnings({ unread: [], tooSmall: [], covering: [] })).toEqual([])
  })

  it('gives one sentence per kind of problem, in the singular for one page', () => {
    expect(stampWarnings({ unread: [], tooSmall: [{ page: 4, width: 3.84, height: 3.84 }], covering: [2] })).toEqual([
      'Page 4 is too small for a legible signature stamp (3.84 x 3.84 pt) and was left without one; the signature covers it all the same.',
      'Page 2 has content in all four corners; the stamp was put where it covers the least.'
    ])
  })

  it('names the smallest of several skipped pages', () => {
    const [warning] = stampWarnings({ unread: [], tooSmall: [{ page: 1, width: 90, height: 90 }, { page: 2, width: 3.84, height: 50 }], covering: [] })
    expect(warning).toMatch(/^Pages 1, 2 \(2 pages\) are too small .*\(smallest 3\.84 x 50 pt\)/)
  })
})

describe('stampPages on a 100-page document', () => {
  it('settles every corner without pdf.js, stores the stamp\'s drawing once and grows the file by little more than the rewritten pages', async () => {
    const input = await makeTextPdf(100)
    const opened = await openPdf(input)
    const tracked = track(opened)
    const font = await opened.doc.embedFont(StandardFonts.Helvetica)
    const pages = opened.doc.getPages()
    // The page dictionaries gain /Annots, so the update rewrites each of them whole.
    const pageBytes = pages.reduce((n, p) => n + p.node.sizeInBytes(), 0)
    const lines = (i: number): string[] => [
      'Assinado digitalmente por EMPRESA DESENVOLVIMENTO RAZAO TESTE LTDA (CNPJ 11.222.333/0001-81) em 22/11/2026 03:02:03 (UTC-03:00)',
      `Assinatura PAdES-B ICP-Brasil - Identificador RZ-7K3M-9XQ2-4HFA-P8DN - Página ${i + 1} de 100`
    ]
    const outcome = await stampPages(tracked, pages, { font, linesFor: lines, nameFor: String })
    await font.embed()
    const output = writeUpdate(tracked, [])
    expect(outcome.readByPdfJs).toEqual([])
    expect([...outcome.corners.values()].every((c) => c === 'bottom-right')).toBe(true)

    const doc = await PDFDocument.load(output)
    const appearances = doc.getPages().map((p) => p.node.lookup(PDFName.of('Annots'), PDFArray).lookup(0, PDFDict).lookup(PDFName.of('AP'), PDFDict).lookup(PDFName.of('N'), PDFStream))
    const shared = new Set(appearances.map((ap) => ap.dict.lookup(PDFName.of('Resources'), PDFDict).lookup(PDFName.of('XObject'), PDFDict).get(PDFName.of('S'))))
    // One stamp size on every page (its longest line is the first, the same everywhere): one shared drawing.
    expect(shared.size).toBe(1)
    const forms = [...doc.context.enumerateIndirectObjects()].filter(([, o]) => o instanceof PDFStream && o.dict.get(PDFName.of('Subtype')) === PDFName.of('Form'))
    expect(forms).toHaveLength(100 + 1)
    // Per page beyond its rewritten dictionary: the annotation (its text in /Contents) and an appearance that draws the shared form and a page number.
    const growth = output.length - input.length
    expect(growth - pageBytes).toBeLessThan(100 * 800)
    // Before the shared drawing, and with /Contents in UTF-16, each page took about 1,900 bytes more than its dictionary.
  })
})

describe('stampPages on pages whose content is filtered twice', () => {
  it('reads reportlab\'s [/ASCII85Decode /FlateDecode] pages itself, asking pdf.js about none', async () => {
    const opened = await openPdf(makeReportlabLikePdf(3))
    const tracked = track(opened)
    const font = await opened.doc.embedFont(StandardFonts.Helvetica)
    const outcome = await stampPages(tracked, opened.doc.getPages(), { font, linesFor: () => ['Assinado digitalmente por FULANO DE TAL', 'Página 1 de 3'], nameFor: String })
    // Before issue 34 the scan gave up on a filter chain and pdf.js read each such page (about 5 ms a page).
    expect(outcome.readByPdfJs).toEqual([])
    expect(outcome.unread).toEqual([])
    // The text runs from the top to 40 points above the bottom edge, on the left: the bottom-right corner is free.
    expect([...outcome.corners.values()]).toEqual(['bottom-right', 'bottom-right', 'bottom-right'])
  })
})

describe('stampPages on a page covered in all four corners', () => {
  it('ranks the corners from the scan\'s exact extents, without pdf.js, and puts the stamp where it covers least', async () => {
    const doc = await PDFDocument.create()
    const helvetica = await doc.embedFont(StandardFonts.Helvetica)
    const page = doc.addPage([595.28, 841.89])
    // Each corner's stamp rectangle (about 437 x 20 points, 6 from the edges) meets text: a long line across
    // the top two, a word of ten capitals in the bottom right, one small letter in the bottom left.
    page.drawText('Linha de cabeçalho que atravessa quase toda a largura da página', { x: 10, y: 822, size: 12, font: helvetica })
    page.drawText('WWWWWWWWWW', { x: 470, y: 12, size: 10, font: helvetica })
    page.drawText('a', { x: 10, y: 12, size: 8, font: helvetica })
    const opened = await openPdf(await doc.save())
    const tracked = track(opened)
    const font = await opened.doc.embedFont(StandardFonts.Helvetica)
    const outcome = await stampPages(tracked, opened.doc.getPages(), {
      font, linesFor: () => ['Assinado digitalmente por EMPRESA DESENVOLVIMENTO RAZAO TESTE LTDA (CNPJ 11.222.333/0001-81) em 22/11/2026', 'Página 1 de 1'], nameFor: String
    })
    // Before, such a page went to pdf.js (on an edge-to-edge NFS-e, more than its 500 ms).
    expect(outcome.readByPdfJs).toEqual([])
    expect(outcome.covering).toEqual([1])
    expect(outcome.corners.get(1)).toBe('bottom-left')
  })
})
