import { PDFDocument, StandardFonts } from 'pdf-lib'
import { describe, expect, it } from 'vitest'
import { fitText, printable, wrapText } from './text.js'

const doc = await PDFDocument.create()
const font = await doc.embedFont(StandardFonts.Helvetica)
const line = 'Assinado digitalmente por EMPRESA DESENVOLVIMENTO RAZAO TESTE LTDA (CNPJ 11.222.333/0001-81) em 22/11/2026 03:02:03'

describe('fitText', () => {
  it('returns text that fits unchanged', () => {
    expect(fitText(font, 'curto', 6, 500)).toBe('curto')
  })

  it.each([20, 55, 130, 300])('cuts to the longest prefix that fits %i pt with its ellipsis', (maxWidth) => {
    // The oracle: the slow way, one character at a time from the end.
    let n = line.length
    while (n > 1 && font.widthOfTextAtSize(`${line.slice(0, n)}...`, 6) > maxWidth) n--
    const cut = fitText(font, line, 6, maxWidth)
    expect(cut).toBe(`${line.slice(0, n).trimEnd()}...`)
    expect(font.widthOfTextAtSize(cut, 6)).toBeLessThanOrEqual(maxWidth)
  })
})

describe('printable and wrapText', () => {
  it('replaces what WinAnsi cannot encode and keeps Portuguese letters', () => {
    expect(printable(font, 'Ação 日本\nfim')).toBe('Ação ?? fim')
  })

  it('wraps at spaces within the width', () => {
    for (const l of wrapText(font, line, 10, 150)) expect(font.widthOfTextAtSize(l, 10)).toBeLessThanOrEqual(150)
  })
})
