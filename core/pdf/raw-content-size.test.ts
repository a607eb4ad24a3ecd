import { deflateSync, inflateSync } from 'node:zlib'
import { PDFDocument, PDFName, StandardFonts } from 'pdf-lib'
import { describe, expect, it, vi } from 'vitest'
import { decodedLength, rawContentExcess, refuseRawContentBombs } from './raw-content-size.js'
import type * as ZlibModule from 'node:zlib'

// What each inflate was allowed to produce, recorded (each still inflates as it would).
vi.mock('node:zlib', async (importOriginal) => {
  const zlib = await importOriginal<typeof ZlibModule>()
  return { ...zlib, inflateSync: vi.fn(zlib.inflateSync) }
})

const MIB = 1 << 20
const operators = (bytes: number): Buffer => Buffer.alloc(bytes, '0 0 m 1 1 l S\n')

/** ASCII85 (ISO 32000-1 7.4.3) of `data`, ending in `~>`, as a writer would store it. */
function ascii85 (data: Buffer): string {
  let out = ''
  for (let i = 0; i < data.length; i += 4) {
    const chunk = Buffer.alloc(4)
    data.copy(chunk, 0, i, Math.min(i + 4, data.length))
    let value = chunk.readUInt32BE(0)
    const n = Math.min(4, data.length - i)
    if (value === 0 && n === 4) { out += 'z'; continue }
    const digits: string[] = []
    for (let k = 0; k < 5; k++) { digits.unshift(String.fromCharCode(33 + (value % 85))); value = Math.floor(value / 85) }
    out += digits.slice(0, n + 1).join('')
  }
  return `${out}~>`
}

/** A one-page PDF whose page draws `content` (stored as given, with `filter`), written without object streams. */
async function pageWith (content: Uint8Array | string, filter: string | string[] | undefined, extra?: (doc: PDFDocument) => void): Promise<Uint8Array> {
  const doc = await PDFDocument.create()
  const page = doc.addPage([595, 842])
  const font = await doc.embedFont(StandardFonts.Helvetica)
  page.drawText('texto', { x: 10, y: 10, font })
  const stream = doc.context.stream(content, filter === undefined ? {} : { Filter: filter })
  page.node.set(PDFName.of('Contents'), doc.context.register(stream))
  extra?.(doc)
  return await doc.save({ useObjectStreams: false })
}

describe('decodedLength', () => {
  it('inflates deflate up to its ceiling and stops there', () => {
    const bomb = deflateSync(operators(64 * MIB), { level: 9 })
    vi.mocked(inflateSync).mockClear()
    const started = performance.now()
    expect(decodedLength(bomb, ['FlateDecode'], 8 * MIB, true)).toBe(8 * MIB + 1)
    // Inflated once, with the ceiling as its limit: the 64 MB were never produced.
    expect(vi.mocked(inflateSync).mock.calls.map(([, options]) => options?.maxOutputLength)).toEqual([8 * MIB + 1])
    // A hang catcher only (11 ms at a load of 3, 27 ms at 14).
    expect(performance.now() - started).toBeLessThan(2000)
    expect(decodedLength(deflateSync(operators(1000)), ['FlateDecode'], 8 * MIB, true)).toBe(1000)
  })

  it('decodes ASCII85 and ASCIIHex before the deflate they wrap, so a wrapped bomb is measured', () => {
    const deflated = deflateSync(operators(4000))
    expect(decodedLength(Buffer.from(ascii85(deflated), 'latin1'), ['ASCII85Decode', 'FlateDecode'], 8 * MIB, true)).toBe(4000)
    expect(decodedLength(Buffer.from(`${deflated.toString('hex')}>`, 'latin1'), ['AHx', 'Fl'], 8 * MIB, true)).toBe(4000)
    const bomb = Buffer.from(ascii85(deflateSync(operators(32 * MIB), { level: 9 })), 'latin1')
    expect(decodedLength(bomb, ['ASCII85Decode', 'FlateDecode'], 8 * MIB, true)).toBe(8 * MIB + 1)
  })

  it('counts image codecs at their size, expanding filters at 20 times, and an unknown filter inside a chain as past the ceiling', () => {
    const raw = Buffer.alloc(1000)
    expect(decodedLength(raw, ['DCTDecode'], 8 * MIB, false)).toBe(1000)
    expect(decodedLength(raw, ['DCTDecode'], 8 * MIB, true)).toBe(20_000)
    expect(decodedLength(raw, ['LZWDecode'], 8 * MIB, true)).toBe(20_000)
    expect(decodedLength(raw, ['LZWDecode', 'FlateDecode'], 8 * MIB, true)).toBe(8 * MIB + 1)
  })
})

describe('rawContentExcess', () => {
  it('passes an ordinary document (fonts, content) and names the object of a bomb', async () => {
    expect(rawContentExcess(await pageWith(deflateSync(Buffer.from('BT /F1 12 Tf (a) Tj ET')), 'FlateDecode'), 8 * MIB, 64 * MIB)).toBeUndefined()
    const bomb = await pageWith(deflateSync(operators(64 * MIB), { level: 9 }), 'FlateDecode')
    const text = Buffer.from(bomb).toString('latin1')
    const object = Number(/\/Contents (\d+) 0 R/.exec(text)![1])
    expect(rawContentExcess(bomb, 8 * MIB, 64 * MIB)).toEqual({ object, pageContent: true })
  })

  it('does not trust /Length: the data runs to endstream, as pdf.js reads a stream whose length is wrong', async () => {
    const bomb = Buffer.from(await pageWith(deflateSync(operators(64 * MIB), { level: 9 }), 'FlateDecode')).toString('latin1')
    const lied = bomb.replace(/\/Length \d+/g, '/Length 10')
    expect(rawContentExcess(Buffer.from(lied, 'latin1'), 8 * MIB, 64 * MIB)).toEqual({ object: expect.any(Number), pageContent: true })
  })

  it('leaves images out, unless a page names one as its content', async () => {
    const pixels = deflateSync(Buffer.alloc(32 * MIB))
    let imageRef = ''
    const withImage = await pageWith('q Q', undefined, (doc) => {
      const ref = doc.context.register(doc.context.stream(pixels, { Type: 'XObject', Subtype: 'Image', Width: 4096, Height: 8192, ColorSpace: 'DeviceGray', BitsPerComponent: 8, Filter: 'FlateDecode' }))
      imageRef = ref.toString()
      doc.getPage(0).node.newXObject('Im', ref)
    })
    expect(rawContentExcess(withImage, 8 * MIB, 64 * MIB)).toBeUndefined()
    // The same stream, typed as an image, drawn as the page's content: pdf.js would decode it.
    const asContent = Buffer.from(withImage).toString('latin1').replace(/\/Contents \d+ 0 R/, `/Contents [ ${imageRef} ]`)
    expect(rawContentExcess(Buffer.from(asContent, 'latin1'), 8 * MIB, 64 * MIB)).toEqual({ object: Number(imageRef.split(' ')[0]), pageContent: true })
  })

  it('reads /Contents from object streams to find an image named as content there', async () => {
    const doc = await PDFDocument.create()
    const page = doc.addPage([595, 842])
    const image = doc.context.register(doc.context.stream(deflateSync(Buffer.alloc(32 * MIB)), { Type: 'XObject', Subtype: 'Image', Width: 4096, Height: 8192, ColorSpace: 'DeviceGray', BitsPerComponent: 8, Filter: 'FlateDecode' }))
    page.node.set(PDFName.of('Contents'), image)
    // With object streams the page dictionary (and its /Contents) is compressed.
    const bytes = await doc.save({ useObjectStreams: true })
    expect(Buffer.from(bytes).toString('latin1')).not.toMatch(/\/Contents/)
    expect(rawContentExcess(bytes, 8 * MIB, 64 * MIB)).toEqual({ object: image.objectNumber, pageContent: true })
  })

  it('stops at the total of all streams', async () => {
    const doc = await PDFDocument.create()
    for (let i = 0; i < 3; i++) doc.addPage([595, 842]).node.set(PDFName.of('Contents'), doc.context.register(doc.context.stream(deflateSync(operators(3 * MIB)), { Filter: 'FlateDecode' })))
    const bytes = await doc.save({ useObjectStreams: false })
    expect(rawContentExcess(bytes, 8 * MIB, 8 * MIB)).toEqual({ totalBytes: expect.any(Number) })
    expect(rawContentExcess(bytes, 8 * MIB, 16 * MIB)).toBeUndefined()
  })

  it('throws PDF_CONTENT_TOO_LARGE with the object and the cap, and a human message', async () => {
    const bomb = await pageWith(deflateSync(operators(64 * MIB), { level: 9 }), 'FlateDecode')
    expect(() => { refuseRawContentBombs(bomb) }).toThrow(expect.objectContaining({
      code: 'PDF_CONTENT_TOO_LARGE',
      message: expect.stringMatching(/^Object \d+ \(a page's content\) of the PDF would inflate past 8\.0 MiB/),
      details: { object: expect.any(Number), maxPageContentBytes: 8 * MIB }
    }))
  })
})
