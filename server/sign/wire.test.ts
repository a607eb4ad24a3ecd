import { describe, expect, it } from 'vitest'
import { decodedLength, parseSignRequest, signatureLevel, signedFileName } from './wire.js'

const pdf = Buffer.from('%PDF-1.7 tiny')

describe('parseSignRequest', () => {
  it('decodes plain Base64, Base64 with line breaks and a data URI to the same bytes', () => {
    const b64 = pdf.toString('base64')
    for (const pdfBase64 of [b64, b64.replace(/(.{4})/g, '$1\r\n'), `data:application/pdf;base64,${b64}`, `data:Application/PDF;name=a.pdf;base64,${b64}`]) {
      expect(parseSignRequest({ pdfBase64 }, 1024).pdf.equals(pdf)).toBe(true)
    }
  })

  it('refuses what is not Base64 or a PDF data URI as VALIDATION_ERROR on pdfBase64, and an oversized PDF as 413', () => {
    const b64 = pdf.toString('base64')
    for (const pdfBase64 of ['JVBER-_x', 'AB==CD==', 'JVBERi0xL', `data:text/plain;base64,${b64}`, `data:application/pdf,${b64}`, ' \r\n ']) {
      expect(() => parseSignRequest({ pdfBase64 }, 1024)).toThrow(expect.objectContaining({ status: 400, publicCode: 'VALIDATION_ERROR', field: 'pdfBase64' }))
    }
    expect(() => parseSignRequest({ pdfBase64: b64 }, pdf.length - 1)).toThrow(expect.objectContaining({ status: 413, publicCode: 'FILE_TOO_LARGE' }))
    expect(parseSignRequest({ pdfBase64: b64 }, pdf.length).pdf.equals(pdf)).toBe(true)
  })

  it('refuses an originalFileName that is not a string, is blank or is over 255 characters, naming the field', () => {
    const pdfBase64 = pdf.toString('base64')
    for (const originalFileName of [42, '', '   ', 'a'.repeat(256)]) {
      expect(() => parseSignRequest({ pdfBase64, originalFileName }, 1024)).toThrow(expect.objectContaining({ status: 400, publicCode: 'VALIDATION_ERROR', field: 'originalFileName' }))
    }
    expect(parseSignRequest({ pdfBase64, originalFileName: 'a'.repeat(255) }, 1024).originalFileName).toBe('a'.repeat(255))
  })

  it('knows the decoded size before decoding', () => {
    for (const n of [1, 2, 3, 4, 100]) expect(decodedLength(Buffer.alloc(n).toString('base64'))).toBe(n)
  })
})

describe('signedFileName', () => {
  it('suggests <name>_assinado.pdf, dropping folders', () => {
    expect(signedFileName('Contrato.PDF')).toBe('Contrato_assinado.pdf')
    expect(signedFileName('C:\\docs\\nota fiscal.pdf')).toBe('nota fiscal_assinado.pdf')
    expect(signedFileName('relatorio')).toBe('relatorio_assinado.pdf')
    expect(signedFileName('../')).toBe('documento_assinado.pdf')
  })
})

describe('signatureLevel', () => {
  const tsa = 'http://127.0.0.1:1/tsa'
  it('defaults to T with an authority and B without, as before the field existed', () => {
    expect(signatureLevel(undefined, { tsaUrl: tsa, policy: undefined })).toBe('T')
    expect(signatureLevel(undefined, { tsaUrl: undefined, policy: undefined })).toBe('B')
    expect(signatureLevel('LTA', { tsaUrl: tsa, policy: undefined })).toBe('LTA')
    expect(signatureLevel('B', { tsaUrl: tsa, policy: undefined })).toBe('B')
  })

  it('refuses, on the field level, what the configuration cannot give', () => {
    const refused = expect.objectContaining({ status: 400, publicCode: 'VALIDATION_ERROR', field: 'level' })
    expect(() => signatureLevel('LT', { tsaUrl: undefined, policy: undefined })).toThrow(refused)
    expect(() => signatureLevel('B', { tsaUrl: tsa, policy: { name: 'AD-RT' } })).toThrow(refused)
    expect(() => signatureLevel('T', { tsaUrl: tsa, policy: { name: 'AD-RB' } })).toThrow(refused)
    expect(signatureLevel('LT', { tsaUrl: tsa, policy: { name: 'AD-RT' } })).toBe('LT')
  })

  it('is read from the request only when it is one of B, T, LT, LTA', () => {
    const pdfBase64 = pdf.toString('base64')
    expect(parseSignRequest({ pdfBase64, level: 'LTA' }, 1024).level).toBe('LTA')
    expect(parseSignRequest({ pdfBase64 }, 1024).level).toBeUndefined()
    for (const level of ['lt', 'B-LT', 'PAdES-T', 1, true]) {
      expect(() => parseSignRequest({ pdfBase64, level }, 1024)).toThrow(expect.objectContaining({ publicCode: 'VALIDATION_ERROR', field: 'level' }))
    }
  })
})
