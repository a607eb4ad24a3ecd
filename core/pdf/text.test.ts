import { PDFDocument, StandardFonts } from 'pdf-lib'
import { describe, expect, it } from 'vitest'
import { encodedText, fitText, printable, shownAdvance, textWidth, wrapText } from './text.js'

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

describe('textWidth, shownAdvance and encodedText', () => {
  // Kerning pairs (AV, To, Yo, "P." and more), accents, digits, and the stamp's own lines.
  const samples = [line, 'AVATAR To Yo Wa P. L\'', 'Página 12 de 101 - Identificador RZ-7K3M-9XQ2-4HFA-P8DN', 'Ação, Ç ê õ ü ´', '', 'V']

  it('equal pdf-lib\'s own measures and encoding, for a font of another document too', async () => {
    const other = await PDFDocument.create()
    for (const f of [font, await other.embedFont(StandardFonts.Helvetica), await other.embedFont(StandardFonts.HelveticaBold)]) {
      for (const text of samples) {
        for (const size of [1, 4, 6.5, 10.5]) {
          expect(textWidth(f, text, size), text).toBe(f.widthOfTextAtSize(text, size))
          let advance = 0
          for (const ch of text) advance += f.widthOfTextAtSize(ch, size)
          expect(shownAdvance(f, text, size), text).toBe(advance)
        }
        expect(encodedText(f, text)).toBe(f.encodeText(text).toString())
      }
    }
    // The kerning really is counted: AV is narrower than A and V apart.
    expect(textWidth(font, 'AV', 10)).toBeLessThan(textWidth(font, 'A', 10) + textWidth(font, 'V', 10))
  })

  it('refuses what the font cannot encode, as pdf-lib does', () => {
    expect(() => textWidth(font, '日本', 10)).toThrow()
  })
})
