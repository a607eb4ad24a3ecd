import { describe, expect, it } from 'vitest'
import { extractDocument } from './engine.js'
import { TextDocument } from './text.js'
import type { TextRun } from './text.js'
import type { ExtractorPlugin } from './types.js'

const run = (text: string, x: number, y: number, size = 10): TextRun => ({ text, box: { x, y, width: text.length * size * 0.5, height: size } })
const page = (runs: TextRun[], labels: string[] = []): TextDocument => new TextDocument([{ page: 1, width: 595, height: 842, runs }]).withLabels(labels)
const DATE = /(\d{2}\/\d{4})/
const MONEY = /^\s*(\d{1,3}(?:\.\d{3})*,\d{2})/

describe('labelValue: the value of a label, by position', () => {
  it('reads the value after the label on its baseline', () => {
    expect(page([run('Período:', 50, 700), run('08/2026', 100, 700)]).labelValue(/Período:/, DATE)?.value).toBe('08/2026')
  })

  it('reads the value under the label, in its column, in a row of labels with positions', () => {
    const doc = page([run('CNPJ', 50, 700), run('Razão Social', 200, 700), run('12.345.678/0001-95', 50, 688), run('PADARIA PÃO QUENTE LTDA', 200, 688)], ['Razão Social'])
    expect(doc.labelValue('CNPJ', /(\S+)/)?.value).toBe('12.345.678/0001-95')
    const name = doc.labelValue('Razão Social', /(\S.*)/)!
    expect(name.value).toBe('PADARIA PÃO QUENTE LTDA')
    expect(name.box.x).toBe(200)
  })

  it('does not take the next field (`Label: value`) under a label for its value', () => {
    const doc = page([run('Substituição tributária de:', 50, 700), run('ICMS', 190, 700), run('Tributação monofásica de: COFINS', 50, 688)])
    const hit = doc.labelValue(/Substituição tributária de:/, /^\s*(\S.*)$/)!
    expect(hit.value).toBe('ICMS')
    expect(hit.conflict).toBeUndefined()
  })

  it('reads a label wrapped over two lines with its value on the first line', () => {
    const doc = page([run('Receita bruta acumulada nos doze meses anteriores', 40, 700), run('1.000,00', 300, 700), run('ao PA (RBT12)', 40, 689)])
    expect(doc.labelValue(/Receita bruta acumulada nos doze meses anteriores\s+ao PA \(RBT12\)/, MONEY)?.value).toBe('1.000,00')
  })

  it('reads a label wrapped over three lines with its value on the last line', () => {
    const doc = page([run('Data e horário', 40, 700), run('da transmissão da', 40, 689), run('Declaração:', 40, 678), run('08/2026', 100, 678)])
    const hit = doc.labelValue(/Data e horário\s+da transmissão da\s+Declaração:/, DATE)!
    expect(hit.value).toBe('08/2026')
    expect(hit.box.y).toBe(678)
  })

  it('pairs a row of labels and a row of values by order when positions are lost (one run each)', () => {
    const doc = page([run('CPF Responsável: Código de Acesso: Período:', 40, 700), run('529.982.247-25 AB12CD 08/2026', 40, 689)])
    expect(doc.labelValue(/Período:/, /^(\d{2}\/\d{4})$/)?.value).toBe('08/2026')
    expect(doc.labelValue(/Código de Acesso:/, /^(\S+)$/)?.value).toBe('AB12CD')
  })

  it('pairs a column of labels serialized before its column of values', () => {
    const doc = page([run('CNPJ:', 40, 700), run('Período:', 40, 689), run('12.345.678/0001-95', 40, 678), run('08/2026', 40, 667)], ['CNPJ:', 'Período:'])
    expect(doc.labelValue(/Período:/, DATE)?.value).toBe('08/2026')
    expect(doc.labelValue(/CNPJ:/, /(\S+)/)?.value).toBe('12.345.678/0001-95')
  })

  it('gives a conflict, not a guess, when the value after the label and the one under it differ', () => {
    const doc = page([run('Valor:', 50, 700), run('1.000,00', 90, 700), run('2.000,00', 50, 688)])
    const hit = doc.labelValue(/Valor:/, MONEY)!
    expect(hit.value).toBe('')
    expect(hit.conflict).toMatch(/"1\.000,00" after it on its line and "2\.000,00" under it/)
    // The same value twice is no conflict.
    expect(page([run('Valor:', 50, 700), run('1.000,00', 90, 700), run('1.000,00', 50, 688)]).labelValue(/Valor:/, MONEY)?.value).toBe('1.000,00')
  })

  it('the engine turns a conflict into null and a LABEL_VALUE_CONFLICT warning on the field', () => {
    const toy: ExtractorPlugin<{ valor: string | null }> = {
      id: 'toy', family: 'TOY', documentType: 'TOY', version: '1', schemaVersion: '1', status: 'active', minimumConfidence: 0,
      rules: [{ name: 'title', kind: 'strong', weight: 1, test: /RECIBO/ }],
      fields: () => ({ required: ['valor'] }),
      labels: ['Valor:'],
      parse: (doc, ctx) => ({ valor: ctx.take('valor', doc.labelValue(/Valor:/, MONEY), (t) => t) })
    }
    const doc = new TextDocument([{ page: 1, width: 595, height: 842, runs: [run('RECIBO', 50, 760), run('Valor:', 50, 700), run('1.000,00', 90, 700), run('2.000,00', 50, 688)] }])
    const result = extractDocument(doc, [toy])
    expect(result.data).toEqual({ valor: null })
    expect(result.warnings).toContainEqual(expect.objectContaining({ code: 'LABEL_VALUE_CONFLICT', field: 'valor' }))
    expect(result.engine.confidenceLevel).not.toBe('HIGH')
    expect(result.evidence.valor).toBeUndefined()
  })
})
