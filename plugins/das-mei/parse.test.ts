import { describe, expect, it } from 'vitest'
import { buildCollectionLine, readCollectionLine } from '../../core/plugin-api.js'
import { extractPdf, pluginCases } from '../../fixtures/extraction/plugin-cases.js'
import { generateDasMei } from './fixtures/generate.js'
import type { DasMeiOptions } from './fixtures/generate.js'
import { memo } from '../../fixtures/extraction/helpers.js'
import { writeTextPdf } from '../../fixtures/extraction/pdf-writer.js'

const fixture = memo(generateDasMei)
const pdf = (o: DasMeiOptions) => async () => (await fixture(o)).pdf
const truth = async (o: DasMeiOptions) => (await fixture(o)).truth

const cases: Array<{ name: string, options: DasMeiOptions }> = [
  { name: 'one month, commerce (INSS and ICMS rows)', options: { seed: 1, activity: 'COMERCIO' } },
  { name: 'one month, services (INSS and ISS rows)', options: { seed: 2, activity: 'SERVICOS' } },
  { name: 'one month, commerce and services (three rows)', options: { seed: 3, activity: 'MISTA' } },
  { name: 'annual file (AC): one guide per page up to December', options: { seed: 4, annual: true } },
  { name: 'one month reissued late (multa, juros, pay-until after the due date)', options: { seed: 5, late: true, activity: 'MISTA' } }
]

describe('das-mei: fixture → expected data', () => {
  pluginCases(cases.map((c) => ({
    name: `${c.name}: every field equals the generator's truth`,
    pdf: pdf(c.options),
    data: () => truth(c.options),
    result: { success: true, documentType: 'DAS_MEI', errors: [], warnings: [], engine: { family: 'SIMPLES_NACIONAL', parser: 'das-mei', parserExecuted: true, confidence: 1, confidenceLevel: 'HIGH', missingRules: [] } }
  })))

  it('reads every month of the annual file as its own guide, with its own number and line', async () => {
    const options: DasMeiOptions = { seed: 4, annual: true }
    const t = await truth(options)
    const result = await extractPdf(await pdf(options)())
    expect(result.pages).toBe(t.guias.length)
    expect(t.guias.length).toBeGreaterThan(2)
    expect(new Set(t.guias.map((g) => g.numeroDocumento)).size).toBe(t.guias.length)
    expect((result.data as any).guias.map((g: any) => g.competencia)).toEqual(t.guias.map((g) => g.competencia))
    expect(t.guias.at(-1)!.competencia).toMatch(/-12$/)
    for (const g of t.guias) expect(readCollectionLine(g.linhaDigitavel!)).toMatchObject({ valid: true, issuer: '0328', amountCents: Math.round(g.valorTotal! * 100) })
    expect(result.evidence['guias.2.numeroDocumento']?.page).toBe(3)
  })
})

it('das-mei: the late fixture has multa, juros and a later pay-until date', async () => {
  const g = (await truth({ seed: 5, late: true, activity: 'MISTA' })).guias[0]!
  expect(g.pagarAte! > g.dataVencimento!).toBe(true)
  expect(g.composicao).toHaveLength(3)
  for (const r of g.composicao) expect(r.multa).toBeGreaterThan(0)
  expect(g.totais!.juros).toBeGreaterThan(0)
})

describe('das-mei: missing fields are null, never invented', () => {
  for (const field of ['cpf', 'razaoSocial'] as const) {
    it(`returns null for ${field} when the PDF does not print it`, async () => {
      const options: DasMeiOptions = { seed: 11, omit: [field] }
      const result = await extractPdf(await pdf(options)())
      expect(result.success).toBe(true)
      expect((result.data as any)[field]).toBeNull()
      expect(result.data).toEqual(await truth(options))
      expect(result.evidence[field]).toBeUndefined()
    })
  }

  for (const field of ['tributosMei', 'dataEmissao'] as const) {
    it(`returns null for every guide's ${field} when the annual file does not print it`, async () => {
      const options: DasMeiOptions = { seed: 12, annual: true, omit: [field] }
      const result = await extractPdf(await pdf(options)())
      expect(result.success).toBe(true)
      expect((result.data as any).guias.every((g: any) => g[field] === null)).toBe(true)
      expect(result.data).toEqual(await truth(options))
    })
  }
})

describe('das-mei: consistency checks', () => {
  it('warns, naming the month, and lowers confidence when one guide of the annual file has a tampered line', async () => {
    const good = await extractPdf(await pdf({ seed: 13, annual: true })())
    const bad = await extractPdf(await pdf({ seed: 13, annual: true, tamperGuide: 1 })())
    const month = (await truth({ seed: 13, annual: true })).guias[1]!.competencia
    expect(good.engine.matchedRules).toContain('check:collection-line-digits')
    expect(bad.engine.missingRules).toEqual(expect.arrayContaining(['check:collection-line-digits', 'check:barcode-amount-equals-total']))
    expect(bad.warnings).toEqual(expect.arrayContaining([expect.objectContaining({ code: 'PLUGIN_CHECK_FAILED', message: expect.stringContaining(`collection-line-digits: guide 2 (${month})`) })]))
    expect(bad.engine.confidence).toBeLessThan(good.engine.confidence)
  })
})

describe('das-mei: text whose positions are lost (issue 33)', () => {
  // pdfminer.six's order of the real PGMEI guide: each column under its header, then `Totais`
  // and the totals row, one cell a line, after the last column.
  const collection = buildCollectionLine({ segment: '5', valueId: '8', amountCents: 7_779, issuer: '0328', free: `19050${'07201905012345678'}001` })
  const text = (totals: string[]): string[] => [
    'Documento de Arrecadação', 'do Simples Nacional', 'CNPJ', 'Razão Social', '12.345.678/0001-95', 'MARIA DA SILVA 00000000000',
    'Período de Apuração', 'Janeiro/2019', 'Data de Vencimento', '20/02/2019', 'Número do Documento', '07.20.19050.1234567-8',
    'Observações', 'Tributos (R$): INSS 49,90 ICMS 1,00 ISS 5,00', 'PGMEI(Versao:3.8.0)', 'Composição do Documento de Arrecadação', 'Código', 'Denominação',
    '0151', 'INSS - SIMPLES NACIONAL - MEI', '01/2019', '0083', 'ICMS - SIMPLES NACIONAL - MEI', 'PB - 01/2019', '0125', 'ISS - SIMPLES NACIONAL - MEI', 'SUME (PB) - 01/2019',
    'Pagar este documento até', '31/08/2022', 'Valor Total do Documento', '77,79',
    'Principal', '49,90', '1,00', '5,00', 'Multa', '9,98', '0,20', '1,00', 'Juros', '9,56', '0,19', '0,96', 'Total', '69,44', '1,39', '6,96',
    'Totais', ...totals, 'SENDA (Versão:5.1.1)', '08/08/2022 14:24:50', collection.line
  ]
  const read = async (totals: string[]): Promise<{ totais: Record<string, number | null> | null }> => {
    const result = await extractPdf(await writeTextPdf([text(totals).map((t, i) => ({ text: t, x: 40, y: 800 - i * 9 }))], { seed: 1, inOrder: true }))
    return (result.data as { guias: Array<{ totais: Record<string, number | null> | null }> }).guias[0]!
  }

  it('takes the totals row handed over after the last column when each cell is one column\'s sum, whatever its order', async () => {
    expect((await read(['55,90', '11,18', '10,71', '77,79'])).totais).toEqual({ principal: 55.9, multa: 11.18, juros: 10.71, total: 77.79 })
    expect((await read(['55,90', '10,71', '11,18', '77,79'])).totais).toEqual({ principal: 55.9, multa: 11.18, juros: 10.71, total: 77.79 })
  })

  it('takes no totals row whose cells are not the columns\' sums', async () => {
    expect((await read(['55,90', '11,18', '10,70', '77,79'])).totais).toBeNull()
  })

  it('gives no observations read without the owner\'s `CPF:` line that the page prints elsewhere (a part of the box is not its text)', async () => {
    const observations = async (lines: string[]): Promise<{ observacoes: string | null, warned: boolean }> => {
      const result = await extractPdf(await writeTextPdf([lines.map((t, i) => ({ text: t, x: 40, y: 800 - i * 9 }))], { seed: 1, inOrder: true }))
      const warned = result.warnings.some((w) => w.code === 'LABEL_VALUE_CONFLICT' && w.field === 'guias.0.observacoes')
      return { observacoes: (result.data as { guias: Array<{ observacoes: string | null }> }).guias[0]!.observacoes, warned }
    }
    const lines = text(['55,90', '11,18', '10,71', '77,79'])
    const inPlace = [...lines]
    inPlace.splice(inPlace.indexOf('Observações') + 1, 0, 'CPF: 123.456.789-09')
    expect(await observations(inPlace)).toEqual({ observacoes: 'CPF: 123.456.789-09 Tributos (R$): INSS 49,90 ICMS 1,00 ISS 5,00 PGMEI(Versao:3.8.0)', warned: false })
    // pypdf's order of the anonymised print: the CPF drawn last, glued to other digits.
    expect(await observations([...lines, '00000000000 0CPF: 123.456.789-0912.345.678/0001-95 MARIA'])).toEqual({ observacoes: null, warned: true })
  })

  it('places a multa column printed one cell short (a blank row) where each row\'s amounts add up, and not otherwise', async () => {
    const page = (multa: string[]): string[] => {
      const lines = text(['55,90', '11,18', '10,71', '77,79'])
      // The ICMS row's multa printed blank: its total is its principal and juros.
      lines.splice(lines.indexOf('Multa') + 1, 3, ...multa)
      lines.splice(lines.indexOf('Total') + 2, 1, '1,19')
      lines.splice(lines.indexOf('Totais') + 1, 4, '55,90', '10,98', '10,71', '77,59')
      return lines
    }
    const pdf = async (lines: string[]): Promise<Uint8Array> => await writeTextPdf([lines.map((t, i) => ({ text: t, x: 40, y: 800 - i * 9 }))], { seed: 1, inOrder: true })
    const rows = async (lines: string[]): Promise<Array<number | null>> =>
      ((await extractPdf(await pdf(lines))).data as { guias: Array<{ composicao: Array<{ multa: number | null }> }> }).guias[0]!.composicao.map((r) => r.multa)
    expect(await rows(page(['9,98', '1,00']))).toEqual([9.98, null, 1])
    // The cells do not match the rows' differences: which row is blank is not known, nothing is placed.
    expect(await rows(page(['9,98', '1,01']))).toEqual([null, null, null])
  })
})
