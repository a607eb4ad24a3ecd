/**
 * Hostile PDFs end in a refusal, quickly, never a hang or a crash of the thread.
 */
import { PDFArray, PDFDict, PDFDocument, PDFName } from 'pdf-lib'
import { describe, expect, it } from 'vitest'
import { loadPkcs12 } from './certificate.js'
import { createDevChain } from './dev-chain.js'
import { signPdf } from './sign-pdf.js'
import type { SignPdfOptions } from './sign-pdf.js'

const chain = createDevChain({ password: 'x' })
const options: SignPdfOptions = {
  material: loadPkcs12(chain.pkcs12, 'x'), visualMode: 'STAMP_AND_PAGE', validatorUrl: 'https://validar.iti.gov.br/',
  timeZone: 'UTC', documentIdentifier: 'RZ-HOST-ILE0-0000-0000', signedAt: new Date()
}

describe('hostile PDFs', () => {
  it('refuses a page tree that contains itself', async () => {
    const doc = await PDFDocument.create()
    doc.addPage()
    const pagesRef = doc.catalog.get(PDFName.of('Pages'))!
    doc.context.lookup(pagesRef, PDFDict).lookup(PDFName.of('Kids'), PDFArray).push(pagesRef)
    const bytes = await doc.save({ useObjectStreams: false })
    await expect(signPdf(bytes, options)).rejects.toMatchObject({ code: 'SIGN_PDF_INVALID' })
  }, 10_000)

  it('refuses a PDF nested a hundred thousand arrays deep', async () => {
    const deep = Buffer.from(`%PDF-1.7\n1 0 obj\n${'['.repeat(100_000)}\nendobj\ntrailer\n<< /Root 1 0 R >>\nstartxref\n9\n%%EOF\n`)
    await expect(signPdf(deep, options)).rejects.toMatchObject({ code: expect.stringMatching(/^SIGN_PDF_/) })
  }, 10_000)

  it('refuses a file that is all header', async () => {
    await expect(signPdf(Buffer.from('%PDF-1.7\n%%EOF'), options)).rejects.toMatchObject({ code: 'SIGN_PDF_INVALID' })
  })
})
