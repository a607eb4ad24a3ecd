import { PDFDocument, StandardFonts } from 'pdf-lib'
import { describe, expect, it } from 'vitest'
import { openWithPdfJs } from './pdfjs.js'

async function helveticaPdf (): Promise<Uint8Array> {
  const doc = await PDFDocument.create()
  const page = doc.addPage([595, 842])
  page.drawText('Receita bruta acumulada: R$ 1.234,56', { x: 40, y: 700, size: 10, font: await doc.embedFont(StandardFonts.Helvetica) })
  page.drawText('Período de apuração', { x: 40, y: 680, size: 12, font: await doc.embedFont(StandardFonts.HelveticaBold) })
  return await doc.save()
}

async function textItems (bytes: Uint8Array, standardFontData: boolean): Promise<{ items: Array<{ str: string, width: number, transform: number[] }>, ascents: number[] }> {
  const task = await openWithPdfJs(bytes, { standardFontData })
  const doc = await task.promise
  try {
    const content = await (await doc.getPage(1)).getTextContent()
    const items = (content.items as Array<{ str: string, width: number, transform: number[] }>).map(({ str, width, transform }) => ({ str, width, transform }))
    return { items, ascents: Object.values(content.styles).map((s) => s.ascent) }
  } finally {
    await doc.destroy()
  }
}

describe('openWithPdfJs', () => {
  it('reads the same text, advance widths and positions of a non-embedded standard font without its outline file', async () => {
    const bytes = await helveticaPdf()
    const without = await textItems(bytes, false)
    const withData = await textItems(bytes, true)
    expect(without.items.map((i) => i.str).join('|')).toContain('Receita bruta acumulada: R$ 1.234,56')
    expect(without.items).toEqual(withData.items)
    // What differs is the ascent: Helvetica's own metric without the file, the substitute outline's with it.
    expect(without.ascents.every((a) => Math.abs(a - 0.718) < 0.001)).toBe(true)
    expect(withData.ascents.every((a) => a > 0.85)).toBe(true)
  })
})
