/**
 * Our incremental writer on its own: the original bytes stay a prefix, the new section
 * chains to the old one with /Prev and has the same kind, qpdf (an independent reader)
 * finds no error, and existing page content is left exactly as it was.
 */
import { execFile } from 'node:child_process'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { PDFDict, PDFDocument, PDFHexString, PDFName, PDFString } from 'pdf-lib'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { makeFormPdf, makePdf, withObjectStreams } from '../../fixtures/pdf/samples.js'
import { toolsAvailable } from '../../fixtures/pdf/verify.js'
import { findStartXref, openPdf } from './open.js'
import { appendAnnotation, track, writeUpdate } from './incremental.js'
import { addSignatureField } from './signature-field.js'

const run = promisify(execFile)
let dir: string
beforeAll(async () => { dir = await mkdtemp(join(tmpdir(), 'razao-incr-')) })
afterAll(async () => { await rm(dir, { recursive: true, force: true }) })

async function qpdfCheck (bytes: Uint8Array, name: string): Promise<string> {
  const path = join(dir, `${name}.pdf`)
  await writeFile(path, bytes)
  const { stdout } = await run('qpdf', ['--check', path])
  return stdout
}

/** A minimal update: one new annotation on page 1 plus a signature field (placeholder unsigned). */
async function update (input: Uint8Array): Promise<Buffer> {
  const opened = await openPdf(input)
  const tracked = track(opened)
  const page = opened.doc.getPages()[0]!
  const { context } = opened.doc
  appendAnnotation(tracked, page.node, context.register(context.obj({ Type: 'Annot', Subtype: 'Text', Rect: [10, 10, 30, 30], Contents: 'nota' })))
  const sig = addSignatureField(tracked, { page, contentsBytes: 64, pdfDate: 'D:20260101000000Z' })
  return writeUpdate(tracked, [sig])
}

describe.skipIf(!toolsAvailable('qpdf'))('writeUpdate', () => {
  it('appends a classic xref section after the untouched original, chained with /Prev', async () => {
    const input = await makePdf([{}, {}])
    const out = await update(input)
    expect(out.subarray(0, input.length).equals(Buffer.from(input))).toBe(true)
    const tail = out.subarray(input.length).toString('latin1')
    expect(tail).toMatch(/^xref\n/m)
    expect(tail).toContain(`/Prev ${findStartXref(input)}`)
    expect(findStartXref(out)).toBe(out.lastIndexOf('\nxref\n') + 1)
    expect(await qpdfCheck(out, 'classic')).toMatch(/No syntax or stream encoding errors/)
  })

  it('answers a cross-reference stream with a cross-reference stream (object streams in the original)', async () => {
    const input = await withObjectStreams(dir, await makePdf([{}, {}]), 'xs-src')
    const out = await update(input)
    const tail = out.subarray(input.length).toString('latin1')
    expect(tail).toContain('/Type /XRef')
    expect(tail).not.toMatch(/^xref$/m)
    expect(tail).toContain(`/Prev ${findStartXref(input)}`)
    expect(await qpdfCheck(out, 'xref-stream')).toMatch(/No syntax or stream encoding errors/)
    const doc = await PDFDocument.load(out)
    expect(doc.getForm().getFields().map((f) => f.getName())).toEqual(['Assinatura1'])
  })

  it('leaves every existing page\'s /Contents and /Resources exactly as they were', async () => {
    const input = await makeFormPdf()
    const before = await PDFDocument.load(input)
    const after = await PDFDocument.load(await update(input))
    before.getPages().forEach((page, i) => {
      const again = after.getPages()[i]!
      for (const key of ['Contents', 'Resources', 'MediaBox', 'Rotate']) {
        expect(again.node.get(PDFName.of(key))?.toString()).toBe(page.node.get(PDFName.of(key))?.toString())
      }
    })
    expect(after.getForm().getFields().map((f) => f.getName())).toEqual(['cliente.nome', 'cliente.aceite', 'Assinatura1'])
  })

  it('writes only what changed: the page, the catalog or form, and the new objects', async () => {
    const input = await makePdf([{}, {}, {}])
    const out = await update(input)
    const tail = out.subarray(input.length).toString('latin1')
    const written = [...tail.matchAll(/^(\d+) 0 obj$/gm)].map((m) => Number(m[1]))
    const doc = await PDFDocument.load(input)
    const untouchedPages = doc.getPages().slice(1).map((p) => p.ref.objectNumber)
    for (const n of untouchedPages) expect(written).not.toContain(n)
    expect(written).toContain(doc.getPages()[0]!.ref.objectNumber)
  })

  it('numbers new objects past the trailer /Size, so no freed number is reused', async () => {
    const input = Buffer.from(await makePdf([{}]))
    const size = Number(/\/Size (\d+)/.exec(input.toString('latin1'))![1])
    const bumped = Buffer.from(input.toString('latin1').replace(/\/Size \d+/, `/Size ${size + 50}`), 'latin1')
    const tail = (await update(bumped)).subarray(bumped.length).toString('latin1')
    const newNumbers = [...tail.matchAll(/^(\d+) 0 obj$/gm)].map((m) => Number(m[1])).filter((n) => n >= size)
    expect(newNumbers.length).toBeGreaterThan(0)
    expect(Math.min(...newNumbers)).toBeGreaterThanOrEqual(size + 50)
  })

  it('keeps the first /ID element, renews the second, and sets /SigFlags 3 on an existing form without losing its entries', async () => {
    const permanent = '00112233445566778899AABBCCDDEEFF'
    // pdf-lib writes no /ID; one goes into the trailer, which lies after every offset the file names.
    const input = Buffer.from(Buffer.from(await makeFormPdf()).toString('latin1').replace(/trailer\n<<\n/, `trailer\n<< /ID [<${permanent}> <${permanent}>]\n`), 'latin1')
    const before = await PDFDocument.load(input)
    const formBefore = before.catalog.lookup(PDFName.of('AcroForm'), PDFDict)
    const out = await update(input)
    const newId = /\/ID \[\s*<([0-9A-F]+)>\s*<([0-9A-F]+)>\s*\]/i.exec(out.subarray(input.length).toString('latin1'))
    expect(newId?.[1]).toBe(permanent)
    expect(newId?.[2]).toMatch(/^[0-9A-F]{32}$/)
    expect(newId?.[2]).not.toBe(permanent)
    const after = await PDFDocument.load(out)
    const form = after.catalog.lookup(PDFName.of('AcroForm'), PDFDict)
    expect(form.get(PDFName.of('SigFlags'))?.toString()).toBe('3')
    for (const key of formBefore.keys()) {
      if (key.asString() !== '/Fields' && key.asString() !== '/SigFlags') expect(form.get(key)?.toString()).toBe(formBefore.get(key)?.toString())
    }
    expect(await qpdfCheck(out, 'form-update')).toMatch(/No syntax or stream encoding errors/)
  })

  it('writes a changed page dictionary with the bytes pdf-lib would write for it', async () => {
    const opened = await openPdf(await makeFormPdf())
    const tracked = track(opened)
    const page = opened.doc.getPages()[0]!
    const { context } = opened.doc
    // Every kind of value a dictionary holds: names, numbers, strings, hex strings, booleans, null, references, nesting.
    page.node.set(PDFName.of('Razao'), context.obj({ N: 'Nome', R: [1, -2.5, 0.125, page.ref], S: PDFString.of('(a) b\\c'), H: PDFHexString.fromText('Ação'), B: true, Z: null }))
    const out = writeUpdate(tracked, [])
    const expected = Buffer.alloc(page.node.sizeInBytes())
    page.node.copyBytesInto(expected, 0)
    const update = out.subarray(opened.bytes.length)
    const header = Buffer.from(`${page.ref.objectNumber} ${page.ref.generationNumber} obj\n`, 'latin1')
    const at = update.indexOf(header)
    expect(at).toBeGreaterThanOrEqual(0)
    expect(update.subarray(at + header.length, at + header.length + expected.length).equals(expected)).toBe(true)
    expect(await qpdfCheck(out, 'page-bytes')).toMatch(/No syntax or stream encoding errors/)
  })
})
