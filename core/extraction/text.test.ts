import { describe, expect, it } from 'vitest'
import { TextDocument } from './text.js'
import type { TextRun } from './text.js'

const run = (text: string, x: number, y: number, size = 10): TextRun => ({ text, box: { x, y, width: text.length * size * 0.5, height: size } })

// Content-stream order as the RFB prints have it: labels after values, lines interleaved.
const shuffled: TextRun[] = [
  run('99.999.999', 140, 700),
  run('Extrato do Simples Nacional', 50, 780, 14),
  run('Período de Apuração (PA):', 50, 680),
  run('CNPJ Básico:', 50, 700),
  run('07/2026', 180, 680),
  run('Valor', 50, 640),
  run('1.234,56', 50, 626)
]

describe('TextDocument', () => {
  const doc = new TextDocument([{ page: 1, width: 595, height: 842, runs: shuffled }])

  it('rebuilds visual lines from positions, whatever the order of the runs', () => {
    expect(doc.readingOrder()).toEqual(['Extrato do Simples Nacional', 'CNPJ Básico: 99.999.999', 'Período de Apuração (PA): 07/2026', 'Valor', '1.234,56'])
  })

  it('gives an accent-stripped, upper-case copy for detection', () => {
    expect(doc.normalized).toBe('EXTRATO DO SIMPLES NACIONAL CNPJ BASICO: 99.999.999 PERIODO DE APURACAO (PA): 07/2026 VALOR 1.234,56')
  })

  it('finds a value after its label on the same line, with the value\'s own box as evidence', () => {
    const hit = doc.after(/CNPJ Básico:/, /(\d{2}\.\d{3}\.\d{3})/)!
    expect(hit.value).toBe('99.999.999')
    expect(hit.page).toBe(1)
    expect(hit.source).toBe('CNPJ Básico: 99.999.999')
    expect(hit.box.x).toBe(140)
  })

  it('finds a value printed under its label when asked to look below', () => {
    expect(doc.after(/^Valor$/, /([\d.]+,\d{2})/)).toBeUndefined()
    expect(doc.after(/^Valor$/, /([\d.]+,\d{2})/, { linesBelow: 1 })?.value).toBe('1.234,56')
  })

  it('gives each capture group its own hit and box', () => {
    const hit = doc.find(/^(Período) de Apuração \(PA\): (\d{2})\/(\d{4})$/)!
    expect(hit.parts.map((p) => p?.value)).toEqual(['Período', '07', '2026'])
    expect(hit.parts[1]!.box.x).toBe(180)
    expect(hit.parts[0]!.box.x).toBe(50)
  })

  it('reads the text inside a box', () => {
    expect(doc.inBox(1, { x: 0, y: 620, width: 300, height: 30 })).toBe('Valor 1.234,56')
  })

  it('is empty when no page has text', () => {
    expect(new TextDocument([{ page: 1, width: 595, height: 842, runs: [] }]).isEmpty).toBe(true)
  })
})
