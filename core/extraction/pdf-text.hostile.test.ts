/**
 * Hostile PDFs: each is refused with a code within its bound, never read for ever.
 * Run with a hard timeout so a regression shows as a failure, not a hung suite.
 */
import { execFile } from 'node:child_process'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { deflateSync } from 'node:zlib'
import { PDFDocument, PDFName, StandardFonts } from 'pdf-lib'
import { beforeEach, describe, expect, it, vi } from 'vitest'
import { openWithPdfJs, pageRunBatches } from '../pdf/index.js'
import { readPdfText } from './pdf-text.js'
import type * as PdfModule from '../pdf/index.js'

// When pdf.js opens a file and reads a page's text, recorded (both still do what they do).
vi.mock('../pdf/index.js', async (importOriginal) => {
  const pdf = await importOriginal<typeof PdfModule>()
  return { ...pdf, openWithPdfJs: vi.fn(pdf.openWithPdfJs), pageRunBatches: vi.fn(pdf.pageRunBatches) }
})
beforeEach(() => { vi.clearAllMocks() })

const code = (c: string) => expect.objectContaining({ code: c })

async function pagesPdf (count: number, linesPerPage: number): Promise<Uint8Array> {
  const doc = await PDFDocument.create()
  const font = await doc.embedFont(StandardFonts.Helvetica)
  for (let p = 0; p < count; p++) {
    const page = doc.addPage([595, 842])
    for (let i = 0; i < linesPerPage; i++) page.drawText(`line ${i} of page ${p}`, { x: 10 + (i % 5) * 100, y: 10 + (i % 160) * 5, size: 4, font })
  }
  return await doc.save()
}

describe('hostile PDFs', () => {
  it('refuses more pages than the cap before reading any', async () => {
    const pdf = await pagesPdf(60, 1)
    const started = performance.now()
    await expect(readPdfText(pdf, { maxPages: 50, deadlineMs: 20_000, maxRunsPerPage: 1000 })).rejects.toThrow(code('PDF_TOO_MANY_PAGES'))
    expect(pageRunBatches).not.toHaveBeenCalled()
    // A hang catcher only (0.17 s at a load of 3, 0.2 s at 13).
    expect(performance.now() - started).toBeLessThan(10_000)
  }, 30_000)

  it('abandons a document past its deadline', async () => {
    const pdf = await pagesPdf(30, 400)
    const started = performance.now()
    await expect(readPdfText(pdf, { maxPages: 50, deadlineMs: 50, maxRunsPerPage: 100_000 })).rejects.toThrow(code('PDF_TIMEOUT'))
    // Abandoned: pages were left unread (the measuring before pdf.js opens the file may
    // spend the whole deadline on a loaded machine, and then none is read).
    expect(vi.mocked(pageRunBatches).mock.calls.length).toBeLessThan(30)
    // A hang catcher only (0.54 s at a load of 3, 1.1 s at 13).
    expect(performance.now() - started).toBeLessThan(20_000)
  }, 60_000)

  it('refuses a page with more text runs than any tax document holds', async () => {
    await expect(readPdfText(await pagesPdf(1, 3000), { maxPages: 50, deadlineMs: 20_000, maxRunsPerPage: 2000 })).rejects.toThrow(code('PDF_CORRUPT'))
  }, 30_000)

  it('does not follow a page tree that loops back on itself', async () => {
    const doc = await PDFDocument.create()
    doc.addPage([595, 842])
    const bytes = Buffer.from(await doc.save({ useObjectStreams: false })).toString('latin1')
    // The page's /Parent is the tree; make the tree's /Kids point at the tree itself.
    const tree = /(\d+) 0 obj\s*<<\s*\/Type \/Pages/.exec(bytes)!
    const looped = bytes.replace(/\/Kids \[ \d+ 0 R \]/, (m) => m.replace(/\d+ 0 R/, `${tree[1]} 0 R`))
    expect(looped).not.toBe(bytes)
    const started = performance.now()
    await expect(readPdfText(new Uint8Array(Buffer.from(looped, 'latin1')), { maxPages: 50, deadlineMs: 5_000, maxRunsPerPage: 1000 })).rejects.toThrow(expect.objectContaining({ code: expect.stringMatching(/^PDF_(CORRUPT|TIMEOUT)$/) }))
    // A hang catcher only (15-17 ms at a load of 3 as of 13).
    expect(performance.now() - started).toBeLessThan(10_000)
  }, 30_000)

  it('refuses a deflate bomb page before pdf.js reads it, quickly, naming the page', async () => {
    // 64 MiB of drawing operators in about 100 KB of deflate on page 2 of 2.
    const operators = Buffer.alloc(64 << 20, '0 0 m 1 1 l S\n')
    const pdf = await pagesWithContent([deflateSync(Buffer.from('BT ET\n')), deflateSync(operators, { level: 9 })])
    expect(pdf.byteLength).toBeLessThan(400_000)
    const started = performance.now()
    await expect(readPdfText(pdf, { maxPages: 50, deadlineMs: 20_000, maxRunsPerPage: 50_000 })).rejects.toThrow(expect.objectContaining({
      code: 'PDF_CONTENT_TOO_LARGE',
      message: expect.stringMatching(/page 2 would inflate past 8\.0 MiB/),
      details: { page: 2, maxPageContentBytes: 8 << 20 }
    }))
    expect(openWithPdfJs).not.toHaveBeenCalled()
    // A hang catcher only (11 ms at a load of 3, 32 ms at 13).
    expect(performance.now() - started).toBeLessThan(3_000)
  }, 30_000)

  it('measures an owner-password (AES-256) file\'s decrypted content: its bomb is refused as well', async () => {
    // Encrypted, the bomb's stream does not inflate as stored; pdf.js, opening the file with the
    // empty user password, would decrypt and inflate all of it.
    const dir = await mkdtemp(join(tmpdir(), 'razao-bomb-'))
    try {
      const plain = join(dir, 'plain.pdf')
      const locked = join(dir, 'locked.pdf')
      await writeFile(plain, await pagesWithContent([deflateSync(Buffer.alloc(64 << 20, '0 0 m 1 1 l S\n'), { level: 9 })]))
      await promisify(execFile)('qpdf', ['--encrypt', '', 'dono', '256', '--', plain, locked])
      await expect(readPdfText(await readFile(locked), { maxPages: 50, deadlineMs: 20_000, maxRunsPerPage: 50_000 })).rejects.toThrow(code('PDF_CONTENT_TOO_LARGE'))
      // The same protection on an ordinary document: measured, then read.
      await writeFile(plain, await pagesPdf(2, 30))
      await promisify(execFile)('qpdf', ['--encrypt', '', 'dono', '256', '--', plain, locked])
      const pages = await readPdfText(await readFile(locked), { maxPages: 50, deadlineMs: 20_000, maxRunsPerPage: 50_000 })
      expect(pages.map((p) => p.runs.length > 0)).toEqual([true, true])
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  }, 60_000)

  it('refuses a bomb hidden in form XObjects nested deeper than it measures', async () => {
    const doc = await PDFDocument.create()
    const page = doc.addPage([595, 842])
    // Ten forms, each drawing the next; the last one is 64 MiB of operators.
    let inner = doc.context.register(doc.context.stream(deflateSync(Buffer.alloc(64 << 20, '0 0 m 1 1 l S\n'), { level: 9 }), { Type: 'XObject', Subtype: 'Form', BBox: [0, 0, 10, 10], Filter: 'FlateDecode' }))
    for (let i = 0; i < 10; i++) {
      inner = doc.context.register(doc.context.stream('/F0 Do', { Type: 'XObject', Subtype: 'Form', BBox: [0, 0, 10, 10], Resources: { XObject: { F0: inner } } }))
    }
    page.node.set(PDFName.of('Resources'), doc.context.obj({ XObject: { F0: inner } }))
    page.node.set(PDFName.of('Contents'), doc.context.register(doc.context.stream('/F0 Do')))
    await expect(readPdfText(await doc.save(), { maxPages: 50, deadlineMs: 20_000, maxRunsPerPage: 50_000 })).rejects.toThrow(code('PDF_CONTENT_TOO_LARGE'))
  }, 60_000)

  it('refuses pages whose content together passes the total cap', async () => {
    const page = deflateSync(Buffer.alloc(3 << 20, '0 0 m 1 1 l S\n'))
    const pdf = await pagesWithContent([page, page, page])
    await expect(readPdfText(pdf, { maxPages: 50, deadlineMs: 20_000, maxRunsPerPage: 50_000, maxTotalContentBytes: 8 << 20 })).rejects.toThrow(code('PDF_CONTENT_TOO_LARGE'))
    // Within the caps the same file is read (it draws no text).
    const pages = await readPdfText(pdf, { maxPages: 50, deadlineMs: 20_000, maxRunsPerPage: 50_000, maxTotalContentBytes: 16 << 20 })
    expect(pages.map((p) => p.runs.length)).toEqual([0, 0, 0])
  }, 60_000)
})

/** Pages whose content streams are the given deflate data, stored as they are. */
async function pagesWithContent (streams: Uint8Array[]): Promise<Uint8Array> {
  const doc = await PDFDocument.create()
  for (const data of streams) {
    const page = doc.addPage([595, 842])
    const stream = doc.context.stream(data, { Filter: 'FlateDecode' })
    page.node.set(PDFName.of('Contents'), doc.context.register(stream))
  }
  return await doc.save()
}
