/**
 * Hostile PDFs end in a refusal (or, where the file is merely odd, a signature), quickly:
 * never a hang, and never a crash that the service would answer as INTERNAL_ERROR. Each
 * runs in a thread of its own that is terminated at a hard deadline.
 */
import { deflateSync } from 'node:zlib'
import { PDFArray, PDFDict, PDFDocument, PDFFont, PDFName } from 'pdf-lib'
import { describe, expect, it, vi } from 'vitest'
import { signIsolated } from '../../fixtures/pdf/isolated.js'
import type { IsolatedOutcome } from '../../fixtures/pdf/isolated.js'
import { rawPdf } from '../../fixtures/pdf/samples.js'
import { loadPkcs12 } from './certificate.js'
import { createDevChain } from './dev-chain.js'
import { signPdf } from './sign-pdf.js'
import type { VisualMode } from './sign-pdf.js'

const chain = createDevChain({ password: 'x' })
/**
 * The hard deadline of each isolated signature: a hang catcher. The slowest file here
 * (twenty thousand objects without a table) signs in 1 s at a load of 3, 2.2 s at 13.
 */
const LIMIT_MS = 30_000
/** Each test's own timeout: beyond the thread's deadline, so that a hang shows as `timeout`. */
const TEST_MS = 2 * LIMIT_MS

async function sign (pdf: Uint8Array, visualMode: VisualMode = 'STAMP_AND_PAGE'): Promise<IsolatedOutcome> {
  return await signIsolated(pdf, chain.pkcs12, 'x', visualMode, LIMIT_MS)
}

const catalog = '<< /Type /Catalog /Pages 2 0 R >>'
const pages = (kids: string, count = 1): string => `<< /Type /Pages /Kids [${kids}] /Count ${count} >>`

describe('hostile PDFs', () => {
  it('refuses thousands of streams without endstream before pdf-lib reads to the end of the file for each', async () => {
    // 4,000 of them in 110 KB took pdf-lib 3 s; 25,000 in 700 KB ran into the service's deadline.
    const bodies = [catalog, pages('3 0 R'), '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] >>',
      ...Array.from({ length: 4000 }, () => '<< >>stream\nx')]
    expect(await sign(rawPdf(bodies))).toMatchObject({ outcome: 'refused', code: 'SIGN_PDF_INVALID', message: expect.stringMatching(/4000 of its streams have no endstream/) })
    // endstream words placed before the streams do not hide them.
    const hidden = Buffer.concat([Buffer.from('%PDF-1.7\n%' + ' endstream'.repeat(4000) + '\n'), rawPdf(bodies).subarray('%PDF-1.7\n'.length)])
    expect(await sign(hidden)).toMatchObject({ outcome: 'refused', code: 'SIGN_PDF_INVALID', message: expect.stringMatching(/streams have no endstream/) })
  }, TEST_MS)

  it('signs a file with a stream missing its endstream, and text that mentions streams', async () => {
    const content = 'BT /F1 12 Tf 10 10 Td (a stream of data >> stream endstream mainstream) Tj ET'
    const bodies = [catalog, pages('3 0 R'), '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] /Contents 4 0 R >>',
      `<< /Length ${content.length} >>\nstream\n${content}\nendstream`, '<< >>stream\nno end']
    expect(await sign(rawPdf(bodies), 'NONE')).toMatchObject({ outcome: 'signed' })
  }, TEST_MS)

  it('refuses a page tree that contains itself', async () => {
    const doc = await PDFDocument.create()
    doc.addPage()
    const pagesRef = doc.catalog.get(PDFName.of('Pages'))!
    doc.context.lookup(pagesRef, PDFDict).lookup(PDFName.of('Kids'), PDFArray).push(pagesRef)
    expect(await sign(await doc.save({ useObjectStreams: false }))).toMatchObject({ outcome: 'refused', code: 'SIGN_PDF_INVALID' })
  }, TEST_MS)

  it('refuses a page whose /Parent chain loops when the stamp looks up inherited attributes', async () => {
    const pdf = rawPdf([catalog, pages('3 0 R'), '<< /Type /Page /Parent 3 0 R /MediaBox [0 0 200 200] >>'])
    expect(await sign(pdf)).toMatchObject({ outcome: 'refused', code: 'SIGN_PDF_INVALID', message: expect.stringMatching(/loop/) })
  }, TEST_MS)

  it.each([
    ['no MediaBox anywhere', '<< /Type /Page /Parent 2 0 R >>'],
    ['a MediaBox holding a string', '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 (a) 100] >>']
  ])('refuses a page with %s as SIGN_PDF_INVALID when a stamp must be placed', async (_name, page) => {
    expect(await sign(rawPdf([catalog, pages('3 0 R'), page]), 'STAMP_ONLY')).toMatchObject({ outcome: 'refused', code: 'SIGN_PDF_INVALID', message: expect.stringMatching(/damaged/) })
  }, TEST_MS)

  it('refuses a trailer claiming four billion objects', async () => {
    const pdf = rawPdf([catalog, pages('3 0 R'), '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] >>'], { size: 4_000_000_000 })
    expect(await sign(pdf, 'NONE')).toMatchObject({ outcome: 'refused', code: 'SIGN_PDF_INVALID', message: expect.stringMatching(/8388607/) })
  }, TEST_MS)

  it('refuses a PDF nested a hundred thousand arrays deep', async () => {
    const deep = Buffer.from(`%PDF-1.7\n1 0 obj\n${'['.repeat(100_000)}\nendobj\ntrailer\n<< /Root 1 0 R >>\nstartxref\n9\n%%EOF\n`)
    expect(await sign(deep)).toMatchObject({ outcome: 'refused', code: expect.stringMatching(/^SIGN_PDF_/) })
  }, TEST_MS)

  it('survives an object stream that claims a hundred million objects', async () => {
    const packed = '4 0 (x)'
    const pdf = rawPdf([catalog, pages('3 0 R'), '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] >>',
      `<< /Type /ObjStm /N 100000000 /First 4 /Length ${packed.length} >>\nstream\n${packed}\nendstream`])
    expect((await sign(pdf)).outcome).toMatch(/^(signed|refused)$/)
  }, TEST_MS)

  it('stamps three thousand tiny pages without measuring each page\'s text again (no per-character re-measuring)', async () => {
    const tinyPages = (count: number): Buffer => rawPdf([catalog, pages(Array.from({ length: count }, (_, i) => `${i + 3} 0 R`).join(' '), count),
      ...Array.from({ length: count }, () => '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 150 150] >>')])
    const out = await sign(tinyPages(3000), 'STAMP_ONLY')
    expect(out).toMatchObject({ outcome: 'signed' })
    // A hang catcher only (0.84 s at a load of 3, 2 s at 13).
    expect(out.ms).toBeLessThan(20_000)
    // The behaviour itself, in this thread (a file known to sign): pdf-lib measures each
    // character and pair once, so a thousand pages cost fewer measurements than pages.
    // Measured every time, it took about thirty a page.
    const measured = vi.spyOn(PDFFont.prototype, 'widthOfTextAtSize')
    try {
      await signPdf(tinyPages(1000), { material: loadPkcs12(chain.pkcs12, 'x'), visualMode: 'STAMP_ONLY', validatorUrl: 'https://validar.iti.gov.br/',
        timeZone: 'UTC', documentIdentifier: 'RZ-HOST-ILE0-0000-0000', signedAt: new Date() })
      expect(measured.mock.calls.length).toBeLessThan(1000)
    } finally {
      measured.mockRestore()
    }
  }, TEST_MS)

  it('signs a page whose content is a decompression bomb quickly: its text is not read, the stamp takes the default corner', async () => {
    // 200 MB of drawing operators in about 400 KB: pdf.js took 20 s and 630 MB to walk through it.
    const ops = deflateSync(Buffer.alloc(200 << 20, '0 0 m 1 1 l S\n'))
    const pdf = rawPdf([catalog, pages('3 0 R'), '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Contents 4 0 R >>',
      `<< /Length ${ops.length} /Filter /FlateDecode >>\nstream\n${ops.toString('latin1')}\nendstream`])
    const out = await sign(pdf, 'STAMP_ONLY')
    expect(out).toMatchObject({ outcome: 'signed' })
    // A hang catcher (65 ms at a load of 3, 94 ms at 13; reading its text took 20 s).
    expect(out.ms).toBeLessThan(5000)
  }, TEST_MS)

  it('rebuilds a twenty-thousand-object file that lost its cross-reference table in a few seconds', async () => {
    const count = 20_000
    const kids = Array.from({ length: count }, (_, i) => `${i + 3} 0 R`).join(' ')
    const leaves = Array.from({ length: count }, () => '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 90 90] >>')
    const text = rawPdf([catalog, pages(kids, count), ...leaves]).toString('latin1')
    const noTable = text.slice(0, text.lastIndexOf('xref\n')) + 'startxref\n0\n%%EOF\n'
    const out = await sign(Buffer.from(noTable, 'latin1'), 'NONE')
    expect(out).toMatchObject({ outcome: 'signed' })
    // A hang catcher only (0.97 s at a load of 3, 2.2 s at 13).
    expect(out.ms).toBeLessThan(25_000)
  }, TEST_MS)

  it('rebuilds a damaged file whose one page is object 8,000,000 without writing eight million table rows', async () => {
    const text = `%PDF-1.7\n1 0 obj\n${catalog}\nendobj\n2 0 obj\n${pages('8000000 0 R')}\nendobj\n` +
      '8000000 0 obj\n<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] >>\nendobj\ntrailer\n<< /Root 1 0 R >>\nstartxref\n0\n%%EOF\n'
    const out = await sign(Buffer.from(text, 'latin1'), 'NONE')
    expect(out).toMatchObject({ outcome: 'signed' })
    if (out.outcome === 'signed') expect(out.bytes).toBeLessThan(64 * 1024)
  }, TEST_MS)

  it('follows a /Prev chain that loops back on itself once, then signs', async () => {
    const text = rawPdf([catalog, pages('3 0 R'), '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] >>']).toString('latin1')
    const xref = /startxref\n(\d+)/.exec(text)![1]!
    expect(await sign(Buffer.from(text.replace('/Root 1 0 R', `/Root 1 0 R /Prev ${xref}`), 'latin1'), 'NONE')).toMatchObject({ outcome: 'signed' })
  }, TEST_MS)

  it.each([
    ['an RC4 key of 4096 bits', '<< /Filter /Standard /V 2 /R 3 /Length 4096 /O <00> /U <00> /P -4 >>', /key length/],
    ['a crypt filter it does not define', '<< /Filter /Standard /V 4 /R 4 /StmF /Nada /StrF /Nada /O <00> /U <00> /P -4 >>', /crypt filter/],
    ['an /R 6 /U of three bytes', '<< /Filter /Standard /V 5 /R 6 /CF << /StdCF << /CFM /AESV3 >> >> /StmF /StdCF /StrF /StdCF /O <00> /U <000000> /UE <00> /P -4 >>', /needs a password/],
    ['an unknown algorithm', '<< /Filter /Standard /V 9 /R 2 /O <00> /U <00> /P -4 >>', /algorithm/]
  ])('refuses an encryption dictionary with %s, with a reason', async (_label, encrypt, reason) => {
    const text = rawPdf([catalog, pages('3 0 R'), '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] >>', encrypt]).toString('latin1')
    const pdf = Buffer.from(text.replace('/Root 1 0 R', '/Root 1 0 R /Encrypt 4 0 R /ID [<00112233445566778899AABBCCDDEEFF> <00112233445566778899AABBCCDDEEFF>]'), 'latin1')
    expect(await sign(pdf, 'NONE')).toMatchObject({ outcome: 'refused', code: 'SIGN_PDF_UNSUPPORTED', message: expect.stringMatching(reason) })
  }, TEST_MS)

  it('refuses a file that is all header', async () => {
    expect(await sign(Buffer.from('%PDF-1.7\n%%EOF'))).toMatchObject({ outcome: 'refused', code: 'SIGN_PDF_INVALID' })
  }, TEST_MS)
})
