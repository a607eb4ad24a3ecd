import { describe, expect, it } from 'vitest'
import { writePasswordPdf, writeScanLikePdf, writeTextPdf } from '../../fixtures/extraction/pdf-writer.js'
import { readPdfText } from './pdf-text.js'
import { TextDocument } from './text.js'

const code = (c: string) => expect.objectContaining({ code: c })

describe('readPdfText', () => {
  it('reads runs with positions, and lines come out in visual order whatever the drawing order', async () => {
    const items = [
      { text: 'Extrato do Simples Nacional', x: 200, y: 800, size: 12 },
      { text: 'CNPJ Básico:', x: 40, y: 760 },
      { text: '23.277.116', x: 100, y: 760 },
      { text: 'Período de Apuração (PA):', x: 40, y: 745 },
      { text: '07/2026', x: 150, y: 745 }
    ]
    const shuffledPdf = await writeTextPdf([items], { seed: 3 })
    const pages = await readPdfText(shuffledPdf)
    expect(pages).toHaveLength(1)
    // The content stream is not in visual order ...
    expect(pages[0]!.runs.map((r) => r.text)).not.toEqual(items.map((i) => i.text))
    // ... the rebuilt lines are.
    expect(new TextDocument(pages).readingOrder()).toEqual(['Extrato do Simples Nacional', 'CNPJ Básico: 23.277.116', 'Período de Apuração (PA): 07/2026'])
    const run = pages[0]!.runs.find((r) => r.text === '23.277.116')!
    expect(run.box.x).toBeCloseTo(100, 1)
    expect(run.box.y).toBeLessThan(760)
    expect(run.box.y + run.box.height).toBeGreaterThan(760)
  })

  it('gives a scan-like PDF pages without runs (the engine reports it; nothing is guessed)', async () => {
    const pages = await readPdfText(await writeScanLikePdf())
    expect(pages).toEqual([expect.objectContaining({ page: 1, runs: [] })])
  })

  it('refuses a non-PDF by its bytes, whatever it is called', async () => {
    await expect(readPdfText(new TextEncoder().encode('PK\u0003\u0004 a zip named .pdf'))).rejects.toThrow(code('PDF_NOT_PDF'))
    await expect(readPdfText(new Uint8Array(0))).rejects.toThrow(code('PDF_NOT_PDF'))
  })

  it('refuses a password-protected PDF as encrypted', async () => {
    await expect(readPdfText(await writePasswordPdf())).rejects.toThrow(code('PDF_ENCRYPTED'))
  })

  it('refuses a truncated or garbled PDF as corrupt', async () => {
    await expect(readPdfText(new TextEncoder().encode('%PDF-1.7\n1 0 obj << /Type /Catalog'))).rejects.toThrow(code('PDF_CORRUPT'))
    const good = await writeTextPdf([[{ text: 'hello', x: 40, y: 700 }]], { seed: 1 })
    const garbled = new Uint8Array(good.length)
    garbled.set(good.subarray(0, 16))
    garbled.fill(0x20, 16)
    await expect(readPdfText(garbled)).rejects.toThrow(code('PDF_CORRUPT'))
  })
})
