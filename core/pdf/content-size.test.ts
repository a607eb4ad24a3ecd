import { deflateSync, inflateSync } from 'node:zlib'
import { PDFDocument, PDFName } from 'pdf-lib'
import { describe, expect, it, vi } from 'vitest'
import { pagesWithinContentLimit } from './content-size.js'
import type * as ZlibModule from 'node:zlib'

// What each inflate was allowed to produce, recorded (each still inflates as it would).
vi.mock('node:zlib', async (importOriginal) => {
  const zlib = await importOriginal<typeof ZlibModule>()
  return { ...zlib, inflateSync: vi.fn(zlib.inflateSync) }
})

/** Three pages: plain text, a deflate bomb (64 MB of operators in about 64 KB), text inside a form drawn twice. */
async function sample (): Promise<PDFDocument> {
  const doc = await PDFDocument.create()
  const plain = doc.addPage([200, 200])
  plain.drawText('texto', { x: 10, y: 10 })
  const bomb = doc.addPage([200, 200])
  const ops = Buffer.alloc(64 << 20, '0 0 m 1 1 l S\n')
  bomb.node.set(PDFName.of('Contents'), doc.context.register(doc.context.flateStream(ops)))
  const formed = doc.addPage([200, 200])
  const form = doc.context.register(doc.context.stream(deflateSync(Buffer.alloc(300_000, 'q Q ')), { Type: 'XObject', Subtype: 'Form', BBox: [0, 0, 10, 10], Filter: 'FlateDecode' }))
  const name = formed.node.newXObject('Fm', form)
  formed.node.set(PDFName.of('Contents'), doc.context.register(doc.context.stream(`/${name.asString().slice(1)} Do /${name.asString().slice(1)} Do`)))
  return doc
}

describe('pagesWithinContentLimit', () => {
  it('leaves out a page whose content inflates past the limit, without inflating all of it', async () => {
    const doc = await sample()
    vi.mocked(inflateSync).mockClear()
    const started = performance.now()
    expect(pagesWithinContentLimit(doc, 4 << 20, 32 << 20).map((p) => p.page)).toEqual([1, 3])
    // Every stream was inflated with the page's limit as a ceiling, the bomb's 64 MB never whole.
    const ceilings = vi.mocked(inflateSync).mock.calls.map(([, options]) => options?.maxOutputLength ?? Number.POSITIVE_INFINITY)
    expect(ceilings.length).toBeGreaterThan(0)
    expect(Math.max(...ceilings)).toBeLessThanOrEqual((4 << 20) + 1)
    // A hang catcher only (12 ms at a load of 3, 16 ms at 12).
    expect(performance.now() - started).toBeLessThan(2000)
  })

  it('gives the decoded size, 0 for a page that draws nothing', async () => {
    const doc = await sample()
    doc.addPage([100, 100])
    const sizes = pagesWithinContentLimit(doc, 4 << 20, 32 << 20)
    // The form's 300,000 bytes once (it is drawn twice), plus the page's own two operators.
    expect(sizes[1]!.bytes).toBeGreaterThan(300_000)
    expect(sizes[1]!.bytes).toBeLessThan(300_100)
    expect(sizes[2]).toEqual({ page: 4, bytes: 0 })
  })

  it('counts the forms a page draws (each once), and stops at the total', async () => {
    const doc = await sample()
    expect(pagesWithinContentLimit(doc, 250_000, 32 << 20).map((p) => p.page)).toEqual([1])
    expect(pagesWithinContentLimit(doc, 4 << 20, 1000).map((p) => p.page)).toEqual([1])
  })
})
