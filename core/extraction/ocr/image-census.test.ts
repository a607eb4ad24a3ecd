import { deflateSync } from 'node:zlib'
import { createCanvas } from '@napi-rs/canvas'
import { PDFDocument } from 'pdf-lib'
import { OPS } from 'pdfjs-dist/legacy/build/pdf.mjs'
import { describe, expect, it } from 'vitest'
import { HIDDEN_IMAGE_BOMBS, FEW_ROWS, fourLargeImagePages, imagePages, jpegDeclaring, rawPdf, stream } from '../../../fixtures/pdf/image-bombs.js'
import { decodeChain, Lexer, Name, openWithPdfJs, Ref } from '../../pdf/index.js'
import { ImageCensus } from './image-census.js'
import { refuseImageBombs } from './image-bounds.js'
import { jbig2Size, jpegFrameSize } from './image-sizes.js'
import { imageLimits } from './index.js'

const GREY = '/Type /XObject /Subtype /Image /ColorSpace /DeviceGray /BitsPerComponent 8'
const LIMITS = imageLimits({})
const thrown = (f: () => void): unknown => { try { f() } catch (err) { return err } return undefined }
const pixelsOf = (bytes: Uint8Array, pageObject = 3): number => new ImageCensus(bytes).page(pageObject).pixels

/** The images pdf.js's operator list paints on page 1, by the sizes it gives them. */
async function pdfJsImages (bytes: Uint8Array, maxImagePixels?: number): Promise<Array<{ width: number, height: number }>> {
  const doc = await (await openWithPdfJs(bytes, maxImagePixels === undefined ? {} : { maxImagePixels })).promise
  try {
    const list = await (await doc.getPage(1)).getOperatorList()
    const out: Array<{ width: number, height: number }> = []
    list.fnArray.forEach((fn, i) => {
      const args = list.argsArray[i] as unknown[]
      if (fn === OPS.paintImageXObject) out.push({ width: args[1] as number, height: args[2] as number })
      if (fn === OPS.paintInlineImageXObject || fn === OPS.paintImageMaskXObject) out.push(args[0] as { width: number, height: number })
    })
    return out
  } finally {
    await doc.destroy()
  }
}

describe('the object reader, as pdf.js reads', () => {
  it('keeps the last value of a key given twice, decodes #xx in names, reads pdf.js\'s number forms and references', () => {
    const dict = new Lexer(Buffer.from('<< /Width 100 /Wid#74h 12000 /H --5 /Length 7 0 R /A [1 2 << /B +.5 >>] >>')).object() as Map<string, unknown>
    expect(dict.get('Width')).toBe(12_000)
    expect(dict.get('H')).toBe(-5)
    expect(dict.get('Length')).toEqual(new Ref(7, 0))
    expect((dict.get('A') as unknown[])[2]).toEqual(new Map([['B', 0.5]]))
    expect(new Lexer(Buffer.from('/F#6c')).token()).toEqual(new Name('Fl'))
  })

  it('decodes the filters content streams use: LZW (the example of ISO 32000-1 7.4.4.2), run-length, Flate', () => {
    expect([...decodeChain(Buffer.from('800B6050220C0C8501', 'hex'), ['LZWDecode'], 100)!]).toEqual([45, 45, 45, 45, 45, 65, 45, 45, 45, 66])
    expect(Buffer.from(decodeChain(Buffer.from([2, 65, 66, 67, 253, 68, 128]), ['RL'], 100)!).toString()).toBe('ABCDDDD')
    expect(decodeChain(deflateSync(Buffer.alloc(1000)), ['Fl'], 999)).toBeUndefined()
    expect(decodeChain(Buffer.from('x'), ['CCITTFaxDecode'], 100)).toBeUndefined()
  })
})

describe('image sizes as the decoders allocate them', () => {
  it('reads a JPEG\'s frame header, and a DNL marker\'s line count', () => {
    const canvas = createCanvas(40, 30)
    canvas.getContext('2d').fillRect(0, 0, 40, 30)
    expect(jpegFrameSize(Buffer.from(canvas.encodeSync('jpeg', 80)))).toEqual({ width: 40, height: 30 })
    expect(jpegFrameSize(jpegDeclaring(12_000, 9_000))).toEqual({ width: 12_000, height: 9_000 })
    const withDnl = Buffer.concat([jpegDeclaring(500, 0), Buffer.from([0xff, 0xdc, 0x00, 0x04, 0xea, 0x60])])
    expect(jpegFrameSize(withDnl)).toEqual({ width: 500, height: 60_000 })
    expect(jpegFrameSize(Buffer.from('not a jpeg'))).toBeUndefined()
  })

  it('reads a JBIG2 stream\'s page and region sizes (ITU T.88, embedded organisation)', () => {
    const segment = (number: number, type: number, data: Buffer): Buffer => {
      const header = Buffer.alloc(11)
      header.writeUInt32BE(number, 0)
      header[4] = type
      header[5] = 0 // no referred-to segments
      header[6] = 1 // page 1
      header.writeUInt32BE(data.length, 7)
      return Buffer.concat([header, data])
    }
    const info = (width: number, height: number): Buffer => { const b = Buffer.alloc(19); b.writeUInt32BE(width, 0); b.writeUInt32BE(height, 4); return b }
    expect(jbig2Size(Buffer.concat([segment(0, 48, info(2480, 3508)), segment(1, 38, info(30_000, 100))]))).toEqual({ width: 30_000, height: 3508 })
  })
})

describe('the image census of a page', () => {
  it('refuses every way of hiding an image\'s size from a raw reader, naming the size pdf.js would decode', () => {
    for (const [what, make] of HIDDEN_IMAGE_BOMBS) {
      const bytes = make()
      expect(thrown(() => refuseImageBombs(() => new ImageCensus(bytes), [{ number: 1, object: 3 }], LIMITS)), what).toMatchObject({
        code: 'PDF_CONTENT_TOO_LARGE',
        message: expect.stringMatching(/declares 12000 × 12000 pixels, past the 70 million/)
      })
    }
  })

  it('counts the images the content names, not every image of a resource dictionary the pages share', () => {
    // Three images in one /Resources shared by three pages (as FPDF writes them); each page draws one.
    const images = [1000, 2000, 3000].map((side) => stream(`${GREY} /Width ${side} /Height ${side}`, FEW_ROWS))
    const page = (n: number): string => `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Resources 6 0 R /Contents ${11 + n} 0 R >>`
    const bytes = rawPdf([
      '<< /Type /Catalog /Pages 2 0 R >>', '<< /Type /Pages /Kids [3 0 R 4 0 R 5 0 R] /Count 3 >>', page(0), page(1), page(2),
      '<< /XObject << /A 7 0 R /B 8 0 R /C 9 0 R >> >>', ...images, '',
      stream('', Buffer.from('q 595 0 0 842 0 0 cm /A Do Q')), stream('', Buffer.from('q 595 0 0 842 0 0 cm /B Do /B Do Q')), stream('', Buffer.from('/C Do'))
    ])
    const census = new ImageCensus(bytes)
    expect([3, 4, 5].map((p) => census.page(p).pixels)).toEqual([1e6, 4e6, 9e6])
    expect(census.page(3).wholeFile).toBe(false)
  })

  it('follows forms, tiling patterns, soft-mask groups, Type3 glyphs and annotation appearances to their images, and reads inline images', () => {
    const image = (side: number): Buffer => stream(`${GREY} /Width ${side} /Height ${side}`, FEW_ROWS)
    const bytes = rawPdf([
      '<< /Type /Catalog /Pages 2 0 R >>',
      '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
      '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Contents 4 0 R /Annots [<< /Subtype /Stamp /Rect [0 0 10 10] /AP << /N 15 0 R >> >>]' +
        ' /Resources << /XObject << /Fm0 5 0 R >> /Pattern << /P0 7 0 R >> /ExtGState << /G0 << /SMask << /S /Luminosity /G 9 0 R >> >> >> /Font << /T3 << /Subtype /Type3 /CharProcs << /a 11 0 R >> /Resources << /XObject << /Gl 12 0 R >> >> >> >> >> >>',
      stream('', Buffer.from(`/Fm0 Do /Pattern cs /P0 scn 0 0 9 9 re f /G0 gs BT /T3 1 Tf (a) Tj ET BI /W 300 /H 100 /CS /G /BPC 8 ID ${'x'.repeat(300 * 100)}\nEI`)),
      stream('/Type /XObject /Subtype /Form /BBox [0 0 1 1] /Resources << /XObject << /Deep 13 0 R >> >>', Buffer.from('/Deep Do')),
      image(100),
      stream('/PatternType 1 /PaintType 1 /TilingType 1 /BBox [0 0 1 1] /XStep 1 /YStep 1 /Resources << /XObject << /Pi 8 0 R >> >>', Buffer.from('/Pi Do')),
      image(200),
      stream('/Type /XObject /Subtype /Form /BBox [0 0 1 1] /Group << /S /Transparency >> /Resources << /XObject << /Gi 10 0 R >> >>', Buffer.from('/Gi Do')),
      image(300),
      stream('', Buffer.from('0 0 d0 /Gl Do')),
      image(400),
      stream('/Type /XObject /Subtype /Form /BBox [0 0 1 1] /Resources << /XObject << /Deeper 6 0 R >> >>', Buffer.from('/Deeper Do')),
      image(999),
      stream('/Type /XObject /Subtype /Form /BBox [0 0 1 1] /Resources << /XObject << /An 17 0 R >> >>', Buffer.from('/An Do')),
      '',
      image(500)
    ])
    const drawn = new ImageCensus(bytes).page(3)
    expect(drawn.wholeFile).toBe(false)
    // Form→form→image 100; pattern 200; soft-mask group 300; glyph 400; annotation 500; inline 300 × 100. Image 999 is named by nothing.
    expect(drawn.pixels).toBe(100 ** 2 + 200 ** 2 + 300 ** 2 + 400 ** 2 + 500 ** 2 + 300 * 100)
  })

  it('counts a soft mask and a JPEG frame at the sizes they declare', () => {
    const bytes = rawPdf([
      '<< /Type /Catalog /Pages 2 0 R >>', '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
      '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Resources << /XObject << /A 4 0 R /B 6 0 R >> >> /Contents 7 0 R >>',
      stream(`${GREY} /Width 100 /Height 100 /SMask 5 0 R`, FEW_ROWS),
      stream('/Width 200 /Height 200', FEW_ROWS),
      stream('/Type /XObject /Subtype /Image /Width 64 /Height 64 /ColorSpace /DeviceRGB /BitsPerComponent 8 /Filter /DCTDecode', jpegDeclaring(300, 100)),
      stream('', Buffer.from('/A Do /B Do'))
    ])
    expect(pixelsOf(bytes)).toBe(100 * 100 + 200 * 200 + 300 * 100)
    // An inline JPEG (/F /DCT) at its frame's size too.
    const inline = new ImageCensus(Buffer.alloc(0)).inlineImages(Buffer.concat([Buffer.from('q BI /W 64 /H 64 /CS /RGB /BPC 8 /F /DCT ID '), jpegDeclaring(400, 300), Buffer.from('\nEI Q')]))
    expect(inline).toEqual([{ kind: 'inline image', width: 400, height: 300 }])
  })

  it('counts every image of the file for a page whose content it cannot decode', () => {
    const bytes = rawPdf([
      '<< /Type /Catalog /Pages 2 0 R >>', '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
      '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Resources << /XObject << /A 4 0 R >> >> /Contents 6 0 R >>',
      stream(`${GREY} /Width 100 /Height 100`, FEW_ROWS),
      stream(`${GREY} /Width 1000 /Height 1000`, FEW_ROWS),
      stream('/Filter /DCTDecode', Buffer.from([0xff, 0xd8, 0xff, 0xd9]))
    ])
    const drawn = new ImageCensus(bytes).page(3)
    expect(drawn).toMatchObject({ wholeFile: true, pixels: 100 * 100 + 1000 * 1000 })
  })

  it('counts at least what pdf.js decodes, on pages pdf-lib writes (JPEG, PNG with alpha, an embedded page, an inline image)', async () => {
    const doc = await PDFDocument.create()
    const page = doc.addPage([595, 842])
    const picture = createCanvas(320, 200)
    const context = picture.getContext('2d')
    context.fillStyle = 'rgba(200, 30, 30, 0.5)'
    context.fillRect(0, 0, 320, 200)
    page.drawImage(await doc.embedJpg(picture.encodeSync('jpeg', 80)), { x: 0, y: 0, width: 100, height: 60 })
    page.drawImage(await doc.embedPng(picture.encodeSync('png')), { x: 0, y: 100, width: 100, height: 60 })
    const inner = await PDFDocument.create()
    inner.addPage([200, 200]).drawImage(await inner.embedJpg(createCanvas(90, 70).encodeSync('jpeg', 80)), { x: 0, y: 0, width: 90, height: 70 })
    page.drawPage(await doc.embedPage((await doc.copyPages(inner, [0]))[0]!), { x: 300, y: 300 })
    page.node.addContentStream(doc.context.register(doc.context.stream(deflateSync(Buffer.from(`q 10 0 0 10 0 0 cm BI /W 20 /H 10 /CS /G /BPC 8 ID ${'y'.repeat(200)}\nEI Q`)), { Filter: 'FlateDecode' })))
    const bytes = await doc.save({ useObjectStreams: true })
    const painted = await pdfJsImages(bytes)
    expect(painted.length).toBe(4)
    const census = new ImageCensus(bytes)
    const opened = await (await openWithPdfJs(bytes)).promise
    const pageObject = (await opened.getPage(1)).ref!.num
    await opened.destroy()
    const counted = census.page(pageObject)
    expect(counted.wholeFile).toBe(false)
    // The PNG's alpha is a soft mask pdf.js decodes too, at the image's size.
    expect(counted.pixels).toBe(painted.reduce((n, i) => n + i.width * i.height, 0) + 320 * 200)
  })
})

describe('the bounds of a page and of a document', () => {
  it('refuses a page whose images together pass the page bound, naming the page', () => {
    const bytes = imagePages([[], Array.from({ length: 4 }, () => ({ dict: `${GREY} /Filter /FlateDecode /Width 8000 /Height 8000`, data: FEW_ROWS }))])
    const pages = [{ number: 1, object: 3 }, { number: 2, object: 5 }]
    expect(thrown(() => refuseImageBombs(() => new ImageCensus(bytes), pages, LIMITS))).toMatchObject({
      code: 'PDF_CONTENT_TOO_LARGE',
      message: expect.stringMatching(/^Page 2 of the PDF draws images of 256\.0 million pixels together, past the 70\.0 million/),
      details: { page: 2 }
    })
  })

  it('refuses pages each within their bound whose images pass the document\'s together', () => {
    const bytes = fourLargeImagePages()
    const pages = [3, 6, 9, 12].map((object, i) => ({ number: i + 1, object }))
    expect(refuseImageBombs(() => new ImageCensus(bytes), pages.slice(0, 3), LIMITS)).toEqual(new Map([[1, 64e6], [2, 64e6], [3, 64e6]]))
    expect(thrown(() => refuseImageBombs(() => new ImageCensus(bytes), pages, LIMITS))).toMatchObject({
      code: 'PDF_CONTENT_TOO_LARGE',
      message: expect.stringMatching(/256\.0 million pixels together, past the 200\.0 million one document is read at; send fewer pages/)
    })
  })

  it('refuses an image whose size is a reference to an object the file does not hold', () => {
    const bytes = imagePages([[{ dict: `${GREY} /Width 99 0 R /Height 100`, data: FEW_ROWS }]])
    expect(thrown(() => refuseImageBombs(() => new ImageCensus(bytes), [], LIMITS))).toMatchObject({ code: 'PDF_CONTENT_TOO_LARGE', message: expect.stringMatching(/an unreadable size/) })
  })
})

describe('pdf.js\'s own bound (maxImagePixels)', () => {
  it('leaves out of the page, undecoded, an image its dictionary declares past the bound, as pdf.js reads the dictionary', async () => {
    const bytes = imagePages([[{ dict: `${GREY} /Filter /FlateDecode /Width 10 /Height 10 /Width 3000 /Height 3000`, data: FEW_ROWS }, { dict: `${GREY} /Filter /FlateDecode /Width 50 /Height 40`, data: FEW_ROWS }]])
    expect(await pdfJsImages(bytes)).toEqual([{ width: 3000, height: 3000 }, { width: 50, height: 40 }])
    expect(await pdfJsImages(bytes, 1_000_000)).toEqual([{ width: 50, height: 40 }])
  })
})
