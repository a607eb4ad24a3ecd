import { describe, expect, it } from 'vitest'
import { extractPdf, pluginCases } from '../../fixtures/extraction/plugin-cases.js'
import { generateDeclaracao } from './fixtures/generate.js'
import type { DeclaracaoOptions } from './fixtures/generate.js'
import { memo, plainContext, runsDocument } from '../../fixtures/extraction/helpers.js'
import type { TextDocument } from '../../core/plugin-api.js'
import { labels } from './fields.js'
import { parseDeclaracao } from './parse.js'
import { readReal } from '../../fixtures/extraction/real/read.js'

const fixture = memo(generateDeclaracao)
const pdf = (o: DeclaracaoOptions) => async () => (await fixture(o)).pdf
const truth = async (o: DeclaracaoOptions) => (await fixture(o)).truth

const ok = { success: true, documentType: 'PGDAS_DECLARACAO', errors: [], warnings: [], engine: { family: 'SIMPLES_NACIONAL', parser: 'pgdas-declaracao', parserExecuted: true, parserBlocked: false, confidenceLevel: 'HIGH', missingRules: [] } }

const cases: Array<{ name: string, options: DeclaracaoOptions, pages: number }> = [
  { name: 'original, one page', options: { seed: 1 }, pages: 1 },
  { name: 'original of another company and period', options: { seed: 2 }, pages: 1 },
  { name: 'retificadora with fator r and suspended ISS', options: { seed: 3, retificadora: true, suspenso: true }, pages: 1 },
  { name: 'two pages, the footer repeated on each', options: { seed: 4, twoPages: true }, pages: 2 },
  { name: 'two-page retificadora', options: { seed: 5, twoPages: true, retificadora: true }, pages: 2 },
  { name: 'summary values glued (1.800,00108,00)', options: { seed: 6, gluedResumo: true }, pages: 1 },
  { name: 'individual entrepreneur (name starts with the CNPJ básico)', options: { seed: 7, empresarioIndividual: true }, pages: 1 },
  { name: 'name and opening date on one line', options: { seed: 17, nameAndOpeningOnOneLine: true }, pages: 1 },
  { name: 'external-market revenue: 2.2.2 months and RBT12 externo', options: { seed: 13 }, pages: 1 },
  { name: 'cash regime, section 3 values under their labels', options: { seed: 9, caixa: true, receptionValuesBelow: true }, pages: 1 },
  { name: 'two pages, section 3 values under their labels, a stray space in the CNPJ', options: { seed: 10, twoPages: true, receptionValuesBelow: true, spacedCnpj: true }, pages: 2 }
]

describe('pgdas-declaracao: fixture → expected data', () => {
  pluginCases(cases.map((c) => ({
    name: `${c.name}: every field equals the generator's truth`,
    pdf: pdf(c.options),
    data: () => truth(c.options),
    pages: c.pages,
    result: ok
  })))
})

it('reads 2.2.2 beside 2.2.1, month by month, with evidence for each value', async () => {
  const result = await extractPdf(await pdf({ seed: 13 })())
  const months = (result.data as { receitasAnteriores: Array<{ externo: number | null }> }).receitasAnteriores
  expect(months).toHaveLength(12)
  expect(months.every((m) => m.externo !== null)).toBe(true)
  expect(result.engine.matchedRules).toContain('check:rbt12-matches-receitas-anteriores')
  expect(result.evidence['receitasAnteriores.11.externo']?.source).toMatch(/^\d{2}\/\d{4} [\d.,]+ \d{2}\/\d{4}/)
})

describe('pgdas-declaracao: missing fields are null, never invented', () => {
  for (const field of ['razaoSocial', 'dataAbertura', 'rbaa', 'autenticacao', 'filiais'] as const) {
    it(`returns null for ${field} when the PDF does not print it`, async () => {
      const options: DeclaracaoOptions = { seed: 11, omit: [field] }
      const result = await extractPdf(await pdf(options)())
      expect(result.success).toBe(true)
      expect((result.data as Record<string, unknown>)[field]).toBeNull()
      expect(result.data).toEqual(await truth(options))
      expect(Object.keys(result.evidence).some((k) => k === field || k.startsWith(`${field}.`))).toBe(false)
    })
  }
})

describe('pgdas-declaracao: consistency checks, evidence, combined file', () => {
  it('warns and lowers confidence when the receipt number does not carry the transmission date', async () => {
    const good = await extractPdf(await pdf({ seed: 12 })())
    const bad = await extractPdf(await pdf({ seed: 12, badReceiptDate: true })())
    expect(good.engine.matchedRules).toContain('check:numero-recibo-matches')
    expect(bad.engine.missingRules).toEqual(['check:numero-recibo-matches'])
    expect(bad.warnings).toEqual([expect.objectContaining({ code: 'PLUGIN_CHECK_FAILED', message: expect.stringMatching(/^numero-recibo-matches: the receipt number's date \d{5} is not the transmission date/) })])
    expect(bad.engine.confidence).toBeLessThan(good.engine.confidence)
    // The data is still the document's, not corrected.
    expect(bad.data).toEqual(await truth({ seed: 12, badReceiptDate: true }))
  })

  it('warns when the eight taxes do not add up to the printed total, and only that check fails', async () => {
    const options: DeclaracaoOptions = { seed: 13, badTaxTotal: true }
    const result = await extractPdf(await pdf(options)())
    expect(result.engine.missingRules).toEqual(['check:taxes-add-up-to-total'])
    expect(result.warnings).toEqual([{ code: 'PLUGIN_CHECK_FAILED', message: expect.stringMatching(/^taxes-add-up-to-total: the eight taxes of the declared debt add up to [\d.]+, its total is [\d.]+$/) }])
    // (13 + 9) / (13 + 11) by the engine's rule (the footer check passes too): lower than a clean file's 1.
    expect(result.engine.confidence).toBe(0.9167)
    expect(result.data).toEqual(await truth(options))
  })

  it('fails the number check for a retificadora numbered 001, or a number of another period', async () => {
    const retif = await extractPdf(await pdf({ seed: 14, retificadora: true, sequence: 1 })())
    expect(retif.engine.missingRules).toEqual(['check:numero-declaracao-matches'])
    expect(retif.warnings[0]?.message).toMatch(/^numero-declaracao-matches: sequence 001 in the declaration number but the declaration is retificadora$/)
    const original = await extractPdf(await pdf({ seed: 14, sequence: 2 })())
    expect(original.engine.missingRules).toEqual(['check:numero-declaracao-matches'])
  })

  it('fails the footer check, warning and lowering confidence, when a page footer prints other numbers than the body', async () => {
    const options: DeclaracaoOptions = { seed: 15, twoPages: true, badFooter: true }
    const good = await extractPdf(await pdf({ ...options, badFooter: false })())
    const result = await extractPdf(await pdf(options)())
    expect(good.engine.matchedRules).toContain('check:footers-match-body')
    expect(result.engine.missingRules).toContain('check:footers-match-body')
    expect(result.warnings).toEqual([{ code: 'PLUGIN_CHECK_FAILED', message: 'footers-match-body: the footer of page 2 prints numbers that differ from the declaration\'s body' }])
    expect(result.engine.confidence).toBeLessThan(good.engine.confidence)
    expect(result.data).toEqual(await truth(options))
  })

  it('passes every check on a good file, the number and debt checks among them', async () => {
    const result = await extractPdf(await pdf({ seed: 3, retificadora: true, suspenso: true })())
    expect(result.engine.matchedRules).toEqual(expect.arrayContaining(['check:taxes-add-up-to-total', 'check:declarado-is-exigivel-plus-suspenso', 'check:resumo-matches-total', 'check:rbt12-matches-receitas-anteriores', 'check:numero-declaracao-matches', 'check:numero-recibo-matches', 'check:cnpj-valid']))
    expect(result.engine.confidence).toBe(1)
  })

  it('reads section 3, not the footer, and the 2.8 tables from page 2 of a two-page file', async () => {
    const result = await extractPdf(await pdf({ seed: 4, twoPages: true })())
    expect(result.evidence.numeroRecibo?.source).toMatch(/^Número do Recibo:/)
    expect(result.evidence.numeroRecibo?.page).toBe(2)
    expect(result.evidence.numeroDeclaracao).toMatchObject({ page: 1, source: expect.stringMatching(/^Regime de Apuração/) })
    expect(result.evidence['totalDebitoExigivel.iss']).toMatchObject({ page: 2, box: expect.objectContaining({ x: expect.closeTo(40 + 7 * 60, 0) }) })
  })

  it('reports a combined declaration+receipt file as the declaration, with a warning naming the receipt page', async () => {
    const options: DeclaracaoOptions = { seed: 8, twoPages: true, withReceipt: true }
    const result = await extractPdf(await pdf(options)())
    expect(result).toMatchObject({ success: true, documentType: 'PGDAS_DECLARACAO', pages: 3, errors: [] })
    expect(result.warnings).toEqual([{ code: 'PGDAS_COMBINED_RECEIPT', message: expect.stringMatching(/^Page 3 is the PGDAS-D receipt/) }])
    expect(result.engine.excludedRules.filter((r) => r.startsWith('pgdas-declaracao:'))).toEqual([])
    expect(result.engine.excludedRules).toContain('pgdas-recibo:declaration-header')
    expect(result.data).toEqual(await truth(options))
  })

  it('reads the same data when the receipt page comes first', async () => {
    const options: DeclaracaoOptions = { seed: 16, withReceipt: true, receiptFirst: true }
    const result = await extractPdf(await pdf(options)())
    expect(result).toMatchObject({ success: true, documentType: 'PGDAS_DECLARACAO', pages: 2, errors: [], engine: { missingRules: [] } })
    expect(result.warnings).toEqual([{ code: 'PGDAS_COMBINED_RECEIPT', message: expect.stringMatching(/^Page 1 is the PGDAS-D receipt/) }])
    expect(result.data).toEqual(await truth(options))
    // Read from the declaration's own pages, not from the receipt's identical labels.
    for (const field of ['tipoDeclaracao', 'numeroRecibo', 'autenticacao', 'dataTransmissao']) expect(result.evidence[field]?.page).toBe(2)
  })
})

describe('pgdas-declaracao: the RFB\'s own print (real/pgdas-declaracao/serpro-declaracao)', () => {
  // Its 2.1 rows print the values beside the label's first line, over a bare `ao PA (RBT12)`,
  // and its 2.6 values sit under the page footer, four lines below their headers.
  it('reads every field a person reads on it, RBT12, RBA, RBAA and the 2.6 summary among them', async () => {
    const { result, comparison: c } = await readReal('pgdas-declaracao/serpro-declaracao')
    expect({ missing: c.missing, wrong: c.wrong }).toEqual({ missing: [], wrong: [] })
    expect(result.data).toMatchObject({ rbt12: { interno: 12000, externo: 0, total: 12000 }, rbaa: { total: 12000 }, receitaBrutaAuferida: 20000, valorTotalDebitoDeclarado: 800 })
    expect(result.engine.confidenceLevel).toBe('HIGH')
  }, 120_000)
})

describe('pgdas-declaracao: labels wrapped over two or three lines (issue 33: the portal\'s 2026 prints)', () => {
  // The amounts sit on the label's first line, over the label's end and its tag; the footer's
  // transmission label takes three lines with its value on the last, the receipt number's two with its value on the first.
  const doc = runsDocument([
    ['Receita bruta acumulada nos doze meses', 51, 700], ['120.000,00', 335, 700], ['0,00', 442, 700], ['120.000,00', 500, 700],
    ['anteriores ao PA (RBT12)', 51, 690],
    ['Receita bruta acumulada no ano-calendário', 51, 670], ['20.000,00', 335, 670], ['0,00', 442, 670], ['20.000,00', 500, 670],
    ['corrente (RBA)', 51, 660],
    ['Receita bruta acumulada no ano-calendário', 51, 640], ['98.000,00', 335, 640], ['1.000,00', 442, 640], ['99.000,00', 500, 640],
    ['anterior (RBAA)', 51, 630],
    ['Data e horário da', 51, 200], ['transmissão da', 51, 190], ['Declaração:', 51, 180], ['12/07/2022 14:16:51', 110, 180],
    ['Número do', 51, 160], ['12.34.56789.1234567-8', 110, 160], ['Recibo:', 51, 150]
  ], labels)

  it('reads RBT12, RBA and RBAA from the label\'s first line, and the footer\'s transmission and receipt number', () => {
    const ctx = plainContext()
    const data = parseDeclaracao(doc, ctx)
    expect(data.rbt12).toEqual({ interno: 120000, externo: 0, total: 120000 })
    expect(data.rba).toEqual({ interno: 20000, externo: 0, total: 20000 })
    expect(data.rbaa).toEqual({ interno: 98000, externo: 1000, total: 99000 })
    expect(data.dataTransmissao).toBe('2022-07-12T14:16:51')
    expect(data.numeroRecibo).toBe('12.34.56789.1234567-8')
    expect(ctx.conflicts).toEqual([])
  })

  it('gives no value when the first and the last line of a wrapped label each print one', () => {
    const ctx = plainContext()
    const both = runsDocument([['Número do', 300, 200], ['12.34.56789.1234567-8', 350, 200], ['Recibo:', 300, 190], ['98.76.54321.7654321-0', 340, 190]], labels)
    expect(parseDeclaracao(both, ctx).numeroRecibo).toBeNull()
    expect(ctx.conflicts).toEqual(['numeroRecibo'])
  })
})

describe('pgdas-declaracao: values under their labels (issue 33)', () => {
  it('reads the 2.1 amounts on a line of their own under the label, between its lines or under its tag', () => {
    const ctx = plainContext()
    const doc = runsDocument([
      // Under the wording, the tag on the line after the amounts.
      ['Receita bruta acumulada no ano-calendário corrente', 51, 700], ['20.000,00', 51, 690], ['0,00', 158, 690], ['20.000,00', 216, 690], ['(RBA)', 51, 680],
      // Under the bare tag that ends the wrapped label.
      ['Receita bruta acumulada no ano-calendário anterior', 51, 660], ['(RBAA)', 51, 650], ['98.000,00', 51, 640], ['1.000,00', 158, 640], ['99.000,00', 216, 640],
      // RBT12p prints no amounts: the next row's are not its own.
      ['Receita bruta acumulada nos doze meses anteriores ao PA proporcionalizada', 51, 620], ['(RBT12p)', 51, 610],
      ['Receita bruta acumulada nos doze meses anteriores ao PA', 51, 600], ['(RBT12)', 51, 590], ['120.000,00', 51, 580], ['0,00', 158, 580], ['120.000,00', 216, 580]
    ], labels)
    const data = parseDeclaracao(doc, ctx)
    expect(data.rba).toEqual({ interno: 20000, externo: 0, total: 20000 })
    expect(data.rbaa).toEqual({ interno: 98000, externo: 1000, total: 99000 })
    expect(data.rbt12).toEqual({ interno: 120000, externo: 0, total: 120000 })
    expect(data.rbt12p).toBeNull()
    expect(ctx.conflicts).toEqual([])
  })

  it('reads the 2.6 summary however many footer lines sit between its headers and its values, and guesses not between two lines of values', () => {
    const header: Array<[string, number, number]> = [['2.6) Resumo da Declaração', 51, 600], ['Receita Bruta Auferida (regime competência)', 58, 580], ['Valor Total do Débito Declarado (R$)', 324, 580]]
    const footer = Array.from({ length: 8 }, (_, i): [string, number, number] => [`Autenticação: linha ${i + 1}`, 50, 568 - 11 * i])
    const ctx = plainContext()
    const one = parseDeclaracao(runsDocument([...header, ...footer, ['20.000,00', 149, 470], ['800,00', 405, 470], ['2.7) Informações da Declaração por Estabelecimento', 51, 440]], labels), ctx)
    expect([one.receitaBrutaAuferida, one.valorTotalDebitoDeclarado]).toEqual([20000, 800])
    const two = parseDeclaracao(runsDocument([...header, ...footer, ['20.000,00', 149, 470], ['800,00', 405, 470], ['30.000,00', 149, 458], ['900,00', 405, 458], ['2.7) Informações', 51, 440]], labels), ctx)
    expect([two.receitaBrutaAuferida, two.valorTotalDebitoDeclarado]).toEqual([null, null])
    expect(ctx.conflicts).toEqual(['receitaBrutaAuferida', 'valorTotalDebitoDeclarado'])
  })
})

describe('pgdas-declaracao: the 2.8 tables handed over column by column (issue 33, positions lost)', () => {
  // Each piece of text a line from the margin: the tables' titles, then each header with its
  // one cell, table after table, column after column; 2.1's `Total` column holds several cells.
  const titles = ['Total do Débito Declarado (exigível + suspenso) (R$)', 'Total do Débito com Exigibilidade Suspensa (R$)', 'Total do Débito Exigível (R$)']
  const printed = (icms: string[]): TextDocument => {
    const text = [
      'Total', '357.099,18', '364.711,60',
      ...titles.flatMap((t, k) => [t, 'IRPJ', ['3.422,44', '0,00', '3.422,44'][k]!]),
      ...['CSLL', 'COFINS', 'PIS/Pasep', 'INSS/CPP', 'IPI', 'ISS'].flatMap((h) => [h, '1,00', h, '0,00', h, '1,00']),
      ...icms.flatMap((c) => ['ICMS', c]),
      'Total', '25.113,89', 'Total', '0,00', 'Total', '25.113,89'
    ]
    return runsDocument(text.map((t, i): [string, number, number] => [t, 36, 800 - 10 * i]), labels)
  }

  it('gives the k-th table the k-th one-cell occurrence of each header', () => {
    const doc = printed(['2.194,99', '0,00', '2.194,99'])
    const data = parseDeclaracao(doc, plainContext())
    expect(doc.positionless).toBe(true)
    expect(data.totalDebitoDeclarado).toEqual({ irpj: 3422.44, csll: 1, cofins: 1, pis: 1, inssCpp: 1, icms: 2194.99, ipi: 1, iss: 1, total: 25113.89 })
    expect(data.totalDebitoSuspenso).toMatchObject({ irpj: 0, csll: 0, icms: 0, total: 0 })
    expect(data.totalDebitoExigivel).toMatchObject({ irpj: 3422.44, icms: 2194.99, total: 25113.89 })
  })

  it('pairs nothing when a header is not printed once per table (a table the titles do not account for)', () => {
    const data = parseDeclaracao(printed(['2.194,99', '0,00']), plainContext())
    expect([data.totalDebitoDeclarado, data.totalDebitoSuspenso, data.totalDebitoExigivel]).toEqual([null, null, null])
  })
})

describe('pgdas-declaracao: text another library made of the print (issue 33, each line from the margin)', () => {
  // pypdf's and pdftotext -raw's order: a row per line, its cells' places lost, lines close together.
  const lines = (text: string[]): TextDocument => runsDocument(text.map((t, i): [string, number, number] => [t, 36, 800 - 10 * i]), labels)
  const taxes = '44,00 28,00 101,92 22,08 332,00 272,00 0,00 0,00 800,00'

  it('reads the numbers a library splits with a space, the row of values under its row of headers, and gives a blank RBT12p no other row\'s values', () => {
    const ctx = plainContext()
    const data = parseDeclaracao(lines([
      'Receita Bruta do PA (RPA) - Competência 20.000,00 0,00 20.000,00',
      'Receita bruta acumulada nos doze meses anteriores',
      'ao PA proporcionalizada (RBT12p)',
      'Regime de Apuração: Competência Nº da Declaração:',
      '00000000201801001',
      '2.8) Total Geral da Empresa',
      'Total do Débito Declarado (exigível + suspenso) (R$)',
      'IRPJ CSLL COFINS PIS/Pasep INSS/CPP ICMS IPI ISS Total',
      taxes,
      '3. Informações da Recepção da Declaração',
      'Número do Recibo: 01.07.22090. 9999999-3'
    ]), ctx)
    expect(data.rpa).toEqual({ interno: 20000, externo: 0, total: 20000 })
    expect(data.rbt12p).toBeNull()
    expect(data.numeroDeclaracao).toBe('00000000201801001')
    expect(data.numeroRecibo).toBe('01.07.22090.9999999-3')
    expect(data.totalDebitoDeclarado).toEqual({ irpj: 44, csll: 28, cofins: 101.92, pis: 22.08, inssCpp: 332, icms: 272, ipi: 0, iss: 0, total: 800 })
    expect(ctx.conflicts).toEqual([])
  })

  it('reads pdftotext\'s order: the identification\'s labels then values, each 2.1 row\'s cells one a line after its tag, 2.2\'s pairs split across lines, a table\'s headers then cells one a line, the 2.6 amounts under the footer', () => {
    const ctx = plainContext()
    const data = parseDeclaracao(lines([
      'CNPJ Matriz:', 'Nome empresarial:', '00.000.000/0000-00', 'PXVX UCXFFQMB PXBQ DVNW',
      'Receita Bruta do PA (RPA) - Competência', '20.000,00', '0,00', '20.000,00',
      'Receita bruta acumulada nos doze meses anteriores', 'ao PA (RBT12)', '12.000,00', '1,00', '12.001,00',
      // A blank row followed by the limit's amounts: internal plus external is not a total.
      'Receita bruta acumulada nos doze meses anteriores', 'ao PA proporcionalizada (RBT12p)', '4.800.000,00', '4.800.000,00', 'Limite de receita bruta proporcionalizado',
      '2.2) Receitas Brutas Anteriores (R$)', '2.2.1) Mercado Interno', '11/2017', '10.000,00 12/2017', '1.000,00',
      '2.3) Folha de Salários Anteriores (R$)', 'Nenhuma',
      '2.6) Resumo da Declaração', 'Receita Bruta Auferida (regime competência)', 'Valor Total do Débito Declarado (R$)', 'Número da Declaração: 00000000201801001', '3', '20.000,00', '800,00',
      '2.8) Total Geral da Empresa', 'Total do Débito Declarado (exigível + suspenso) (R$)', 'IRPJ', 'CSLL', 'COFINS', 'PIS/Pasep', 'INSS/CPP', 'ICMS', 'IPI', 'ISS', 'Total', ...taxes.split(' ')
    ]), ctx)
    expect(data).toMatchObject({ cnpj: '00000000000000', razaoSocial: 'PXVX UCXFFQMB PXBQ DVNW', receitaBrutaAuferida: 20000, valorTotalDebitoDeclarado: 800, rbt12p: null })
    expect(data.rpa).toEqual({ interno: 20000, externo: 0, total: 20000 })
    expect(data.rbt12).toEqual({ interno: 12000, externo: 1, total: 12001 })
    expect(data.receitasAnteriores).toEqual([{ competencia: '2017-11', interno: 10000, externo: null }, { competencia: '2017-12', interno: 1000, externo: null }])
    expect(data.totalDebitoDeclarado).toMatchObject({ irpj: 44, pis: 22.08, total: 800 })
    expect(ctx.conflicts).toEqual([])
  })

  it('takes no pairs by order when the months are not consecutive (pdfminer\'s column-by-column order)', () => {
    const data = parseDeclaracao(lines(['2.2) Receitas Brutas Anteriores (R$)', '2.2.1) Mercado Interno', '01/2017', '05/2017', '10.000,00 02/2017', '1.000,00 06/2017', '2,00', '3,00', '2.3) Folha de Salários Anteriores (R$)']), plainContext())
    expect(data.receitasAnteriores).toEqual([])
  })

  it('reads the company\'s tables of 2.8, not an establishment\'s totals printed under the same titles in 2.7', () => {
    const headers = 'IRPJ CSLL COFINS PIS/Pasep INSS/CPP ICMS IPI ISS Total'
    const data = parseDeclaracao(lines([
      'Totais do Estabelecimento', 'Total do Débito Declarado (exigível + suspenso)', headers, '1,00 0,00 0,00 0,00 0,00 0,00 0,00 0,00 1,00',
      '2.8) Total Geral da Empresa', 'Total do Débito Declarado (exigível + suspenso) (R$)', headers, taxes
    ]), plainContext())
    expect(data.totalDebitoDeclarado).toMatchObject({ irpj: 44, total: 800 })
    // 2.8's table unreadable: one establishment's totals are the company's, two establishments' are not.
    const establishment = (cnpj: string): string[] => [`CNPJ Estabelecimento: ${cnpj}`, 'Totais do Estabelecimento', 'Total do Débito Declarado (exigível + suspenso)', headers, '1,00 0,00 0,00 0,00 0,00 0,00 0,00 0,00 1,00']
    const broken = ['2.8) Total Geral da Empresa', 'Total do Débito Declarado (exigível + suspenso) (R$)', 'IRPJ CSLL COFINS', '44,00 28,00']
    expect(parseDeclaracao(lines([...establishment('00.000.000/0001-91'), ...broken]), plainContext()).totalDebitoDeclarado).toMatchObject({ irpj: 1, total: 1 })
    expect(parseDeclaracao(lines([...establishment('00.000.000/0001-91'), ...establishment('00.000.000/0002-72'), ...broken]), plainContext()).totalDebitoDeclarado).toBeNull()
  })

  it('trusts no row by order whose eight taxes do not add up to its total, nor one with a cell missing', () => {
    for (const row of ['44,00 28,00 101,92 22,08 332,00 272,00 0,00 0,00 900,00', '44,00 28,00 101,92 22,08 332,00 272,00 0,00 800,00']) {
      const data = parseDeclaracao(lines(['Total do Débito Declarado (exigível + suspenso) (R$)', 'IRPJ CSLL COFINS PIS/Pasep INSS/CPP ICMS IPI ISS Total', row]), plainContext())
      expect(data.totalDebitoDeclarado).toBeNull()
    }
  })
})
