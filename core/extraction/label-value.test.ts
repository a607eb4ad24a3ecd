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

  it('takes a cell label (a common word printed as a cell of its own) for a label under an empty cell, and cuts no value at it', () => {
    const runs = [run('E-mail', 200, 700), run('Telefone', 200, 688), run('(31) 3333-4444', 200, 676), run('Obs:', 50, 650), run('Ligar no telefone da portaria', 100, 650)]
    const doc = new TextDocument([{ page: 1, width: 595, height: 842, runs }]).withLabels(['E-mail', 'Obs:'], ['Telefone'])
    expect(doc.labelValue('E-mail', /(\S.*)/)).toBeUndefined()
    expect(doc.under('E-mail')).toBeUndefined()
    expect(doc.under('Telefone')?.value).toBe('(31) 3333-4444')
    expect(doc.labelValue('Obs:', /(\S.*)/)?.value).toBe('Ligar no telefone da portaria')
    // Without it, the next row's label is taken for the empty cell's value.
    expect(page(runs, ['E-mail', 'Obs:']).under('E-mail')?.value).toBe('Telefone')
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

  it('pairs a row of labels with a row of values of several runs each, by the label column each run starts in', () => {
    const labels = ['Regime de Competência', 'Regime de Caixa']
    const ROW = /^\s*\S+\s+\S+\s+(\S+)\s*$/
    const doc = page([run('Regime de Competência', 40, 700), run('Regime de Caixa', 272, 700),
      run('137.338,59', 40, 689), run('5,00', 130, 689), run('137.343,59', 220, 689), run('0,00', 272, 689), run('0,00', 362, 689), run('0,00', 452, 689)], labels)
    expect(doc.labelValue('Regime de Competência', ROW)?.value).toBe('137.343,59')
    expect(doc.labelValue('Regime de Caixa', ROW)?.value).toBe('0,00')
    // A value left of the first label's column belongs to no label: no pairing.
    const apart = page([run('Regime de Competência', 100, 700), run('Regime de Caixa', 272, 700),
      run('9,00', 40, 689), run('137.338,59', 100, 689), run('0,00', 160, 689), run('137.338,59', 220, 689), run('0,00', 272, 689), run('0,00', 362, 689), run('0,00', 452, 689)], labels)
    expect(apart.labelValue('Regime de Competência', ROW)).toBeUndefined()
  })

  it('pairs a column of labels serialized before its column of values', () => {
    const doc = page([run('CNPJ:', 40, 700), run('Período:', 40, 689), run('12.345.678/0001-95', 40, 678), run('08/2026', 40, 667)], ['CNPJ:', 'Período:'])
    expect(doc.labelValue(/Período:/, DATE)?.value).toBe('08/2026')
    expect(doc.labelValue(/CNPJ:/, /(\S+)/)?.value).toBe('12.345.678/0001-95')
  })

  it('pairs a serialized column only when its values are as many as its labels', () => {
    const labels = ['Outros Acréscimos:', 'Simples Nacional a recolher:']
    // Under the last label is the column's first value, not the last label's.
    const doc = page([run('Outros Acréscimos:', 40, 700), run('Simples Nacional a recolher:', 40, 690), run('0,00', 40, 680), run('11.963,02', 40, 670)], labels)
    expect(doc.labelValue(/^Simples Nacional a recolher:/, MONEY)?.value).toBe('11.963,02')
    expect(doc.labelValue(/^Outros Acréscimos:/, MONEY)?.value).toBe('0,00')
    // A third value line right under the two: the order no longer says which value is whose.
    const more = page([run('Outros Acréscimos:', 40, 700), run('Simples Nacional a recolher:', 40, 690), run('0,00', 40, 680), run('11.963,02', 40, 670), run('5,00', 40, 660)], labels)
    expect(more.labelValue(/^Simples Nacional a recolher:/, MONEY)).toBeUndefined()
    expect(more.labelValue(/^Outros Acréscimos:/, MONEY)).toBeUndefined()
  })

  it('joins back a listed label wrapped in its column, for the queries and for the detection copy', () => {
    const labels = ['Número do Recibo:', 'Data de Abertura:']
    for (const runs of [
      [run('Número do', 40, 700), run('01.07.22193.8690808-9', 110, 700), run('Data de', 300, 700), run('Abertura:', 300, 689), run('18/01/2012', 350, 689), run('Recibo:', 40, 689)],
      [run('Número do', 40, 700), run('Data de', 300, 700), run('18/01/2012', 350, 700), run('Recibo:', 40, 689), run('01.07.22193.8690808-9', 80, 689), run('Abertura:', 300, 689)]
    ]) {
      const doc = page(runs, labels)
      expect(doc.labelValue(/^Número do Recibo:/, /^\s*(\S+)/)?.value).toBe('01.07.22193.8690808-9')
      expect(doc.labelValue(/Data de Abertura:/, /^\s*(\S+)/)?.value).toBe('18/01/2012')
      expect(doc.normalized).toContain('NUMERO DO RECIBO: 01.07.22193.8690808-9')
    }
    // Words of a label that are not aligned (another column's text) are not a wrap.
    const apart = page([run('Número do', 40, 700), run('Recibo:', 200, 689), run('01.07.22193.8690808-9', 240, 689)], labels)
    expect(apart.lines.map((l) => l.text)).toEqual(['Número do', 'Recibo: 01.07.22193.8690808-9'])
  })

  it('finds a label anchored at a line start where it starts a cell mid-line', () => {
    const doc = page([run('Data de transmissão:', 40, 700), run('Número do Recibo:', 215, 700), run('12/07/2022', 40, 689), run('01.07.22193.8690808-9', 215, 689)])
    expect(doc.labelValue(/^Número do Recibo:/, /^\s*(\d{2}\.\d{2}\.\d{5}\.\d{7}-\d)/)?.value).toBe('01.07.22193.8690808-9')
    // Not inside a cell's text.
    expect(page([run('Consulte o Número do Recibo: 01.07.22193.8690808-9', 40, 700)]).labelValue(/^Número do Recibo:/, /(\S+)/)).toBeUndefined()
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
