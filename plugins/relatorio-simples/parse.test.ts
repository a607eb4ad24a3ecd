import { describe, expect, it } from 'vitest'
import { extractPdf, pluginCases } from '../../fixtures/extraction/plugin-cases.js'
import { generateRelatorio } from './fixtures/generate.js'
import type { RelatorioOptions } from './fixtures/generate.js'
import { centsToNumericString, percentOf, reportPeriod } from './parse.js'
import { memo, plainContext, runsDocument } from '../../fixtures/extraction/helpers.js'
import { labels } from './fields.js'
import { parseRelatorio } from './parse.js'

const fixture = memo(generateRelatorio)
const pdf = (o: RelatorioOptions) => async () => (await fixture(o)).pdf
const truth = async (o: RelatorioOptions) => (await fixture(o)).truth

const cases: Array<{ name: string, options: RelatorioOptions, pages?: number }> = [
  { name: 'one annex block', options: { seed: 1 } },
  { name: 'three blocks, annex III twice (a consolidation group of two)', options: { seed: 2, blocks: 3 } },
  { name: 'four blocks over two pages', options: { seed: 3, blocks: 4, twoPages: true }, pages: 2 },
  { name: 'an installation that loses accents (Emiss?o)', options: { seed: 4, blocks: 2, lostAccents: true } },
  { name: 'cash regime (RPA on the Regime de Caixa row)', options: { seed: 5, caixa: true } },
  { name: 'footer adjustments taken into the total, a block listing ISS by municipality', options: { seed: 6, blocks: 2, adjustments: true, municipios: true } }
]

describe('relatorio-simples: fixture → expected data', () => {
  pluginCases(cases.map((c) => ({
    name: `${c.name}: every field equals the generator's truth`,
    pdf: pdf(c.options),
    data: () => truth(c.options),
    pages: c.pages ?? 1,
    result: { success: true, documentType: 'RELATORIO_SIMPLES', errors: [], warnings: [], engine: { family: 'SIMPLES_NACIONAL', parser: 'relatorio-simples', parserExecuted: true, confidenceLevel: 'HIGH' } }
  })))

  it('types the spec\'s summary fields: numeric strings and a 4-decimal burden', async () => {
    const result = await extractPdf(await pdf({ seed: 2, blocks: 3 })())
    const resumo = (result.data as any).resumo
    expect(resumo.receitaBrutaMesNumero).toMatch(/^\d+\.\d{2}$/)
    expect(resumo.valorSimplesRecolherNumero).toMatch(/^\d+\.\d{2}$/)
    expect(typeof resumo.cargaTributariaTotalNumero).toBe('number')
    expect(Math.round(resumo.cargaTributariaTotalNumero * 10_000)).toBe(resumo.cargaTributariaTotalNumero * 10_000)
    const d = result.data as any
    expect(d.consolidacaoPorAnexo.find((g: any) => g.anexo === d.apuracoes[0].anexo).quantidadeApuracoes).toBeGreaterThanOrEqual(2)
  })
})

describe('relatorio-simples: the period as the report prints it', () => {
  pluginCases([{
    name: 'a report that prints its period as the month\'s first and last days reads its competência',
    pdf: async () => (await fixture({ seed: 21, periodRange: true })).pdf,
    data: async () => (await fixture({ seed: 21, periodRange: true })).truth,
    result: { documentType: 'RELATORIO_SIMPLES', engine: { confidenceLevel: 'HIGH' } }
  }])

  it('reads a month, a month name, or the first and last days of one month; a range of months is no competência', () => {
    expect(reportPeriod('03/2024')).toBe('2024-03')
    expect(reportPeriod('Março/2024 Página: 1')).toBe('2024-03')
    expect(reportPeriod('01/03/2024 a 31/03/2024')).toBe('2024-03')
    expect(reportPeriod('01/01/2024 a 31/03/2024')).toBeNull()
  })
})

describe('relatorio-simples: derived values from integer cents', () => {
  it('formats cents as the numeric string', () => {
    expect(centsToNumericString(1_893_946)).toBe('18939.46')
    expect(centsToNumericString(5)).toBe('0.05')
    expect(centsToNumericString(-4025)).toBe('-40.25')
  })
  it('computes a percentage with 4 decimals, half up, null on a zero base', () => {
    expect(percentOf(113_635, 1_893_946)).toBe(5.9999)
    expect(percentOf(113_637, 1_893_946)).toBe(6)
    expect(percentOf(1, 3)).toBe(33.3333)
    expect(percentOf(2, 3)).toBe(66.6667)
    expect(percentOf(10, 0)).toBeNull()
    // Large amounts stay exact (BigInt).
    expect(percentOf(99_999_999_999, 999_999_999_999)).toBe(10)
  })
})

describe('relatorio-simples: missing fields are null, never invented', () => {
  it('without the RPA rows the receipt and the burden are null', async () => {
    const options: RelatorioOptions = { seed: 11, blocks: 2, omit: ['rpa'] }
    const result = await extractPdf(await pdf(options)())
    const d = result.data as any
    expect(d.resumo).toMatchObject({ receitaBrutaMes: null, receitaBrutaMesNumero: null, cargaTributariaTotalNumero: null })
    expect(d.resumo.valorSimplesRecolher).not.toBeNull()
    expect(result.data).toEqual(await truth(options))
  })
  it('without the total to recolher the burden is null and the sum check is skipped', async () => {
    const options: RelatorioOptions = { seed: 12, omit: ['valorSimplesRecolher'] }
    const result = await extractPdf(await pdf(options)())
    expect((result.data as any).resumo).toMatchObject({ valorSimplesRecolher: null, valorSimplesRecolherNumero: null, cargaTributariaTotalNumero: null })
    expect(result.engine.matchedRules).not.toContain('check:blocks-add-up-to-total')
    expect(result.engine.missingRules).not.toContain('check:blocks-add-up-to-total')
    expect(result.data).toEqual(await truth(options))
  })
  for (const field of ['folha12m', 'cnpj', 'partilha'] as const) {
    it(`returns null for ${field} when the PDF does not print it`, async () => {
      const options: RelatorioOptions = { seed: 13, blocks: 2, omit: [field] }
      const result = await extractPdf(await pdf(options)())
      expect(result.success).toBe(true)
      expect(result.data).toEqual(await truth(options))
      const d = result.data as any
      if (field === 'cnpj') expect(d.identificacao.cnpj).toBeNull()
      else if (field === 'partilha') { expect(d.partilha).toBeNull(); expect(d.apuracoes.every((a: any) => a.partilha === null)).toBe(true) }
      else expect(d[field]).toBeNull()
    })
  }
})

describe('relatorio-simples: consistency checks and evidence', () => {
  it('warns and lowers confidence when the blocks do not add up to the total to recolher', async () => {
    const good = await extractPdf(await pdf({ seed: 14, blocks: 2 })())
    const bad = await extractPdf(await pdf({ seed: 14, blocks: 2, badTotal: true })())
    expect(good.engine.matchedRules).toContain('check:blocks-add-up-to-total')
    expect(bad.engine.missingRules).toContain('check:blocks-add-up-to-total')
    expect(bad.warnings).toEqual([expect.objectContaining({ code: 'PLUGIN_CHECK_FAILED', message: expect.stringMatching(/^blocks-add-up-to-total:/) })])
    expect(bad.engine.confidence).toBeLessThan(good.engine.confidence)
  })
  it('passes the sum check when the footer adjustments are part of the total', async () => {
    const result = await extractPdf(await pdf({ seed: 6, blocks: 2, adjustments: true, municipios: true })())
    expect(result.engine.matchedRules).toEqual(expect.arrayContaining(['check:blocks-add-up-to-total', 'check:partilha-adds-up']))
    expect((result.data as any).outrasDeducoes).toBeGreaterThan(0)
  })

  it('cites the page of a block read on page 2', async () => {
    const result = await extractPdf(await pdf({ seed: 3, blocks: 4, twoPages: true })())
    expect(result.evidence['apuracoes.0.valorSimples']?.page).toBe(1)
    expect(result.evidence['apuracoes.3.valorSimples']?.page).toBe(2)
  })
})

describe('relatorio-simples: a row of labels over a row of values (issue 33)', () => {
  it('reads the period from the row of values, by column, and by order when the positions are lost', () => {
    const positioned = runsDocument([
      ['CPF Responsável:', 40, 700], ['Código de Acesso:', 200, 700], ['Período:', 380, 700],
      ['529.982.247-25', 40, 689], ['AB12CD34', 200, 689], ['08/2026', 380, 689]
    ], labels)
    const lost = runsDocument([['CPF Responsável: Código de Acesso: Período:', 40, 700], ['529.982.247-25 AB12CD34 08/2026', 40, 689]], labels)
    // Positions lost and a period of several words: cut at the wide gaps, or at the words a joiner (`a`) binds.
    const range = runsDocument([['CPF Responsável: Código de Acesso: Período:', 40, 700], ['529.982.247-25 AB12CD34 01/08/2026 a 31/08/2026', 40, 689]], labels)
    const gaps = runsDocument([['CPF Responsável:   Código de Acesso:   Período:', 40, 700], ['529.982.247-25   AB12CD34   01/08/2026 a 31/08/2026', 40, 689]], labels)
    // A library that joins both rows on one line: the labels, then their values in the same order.
    const joined = runsDocument([['CPF Responsável: Código de Acesso: Período: 529.982.247-25 AB12CD34 01/08/2026 a 31/08/2026', 40, 700]], labels)
    for (const doc of [positioned, lost, range, gaps, joined]) {
      const ctx = plainContext()
      expect(parseRelatorio(doc, ctx).identificacao.competencia).toBe('2026-08')
      expect(ctx.conflicts).toEqual([])
    }
  })

  it('does not guess a period the order cannot place: a value missing, or two cuts of the row that disagree', () => {
    const missing = runsDocument([['CPF Responsável: Código de Acesso: Período:', 40, 700], ['529.982.247-25 08/2026', 40, 689]], labels)
    const missingJoined = runsDocument([['CPF Responsável: Código de Acesso: Período: 529.982.247-25 08/2026', 40, 700]], labels)
    for (const doc of [missing, missingJoined]) expect(parseRelatorio(doc, plainContext()).identificacao.competencia).toBeNull()
    // The wide gaps give `08/2026`, the joiner `e` gives `07/2026 e 08/2026`: a conflict, null.
    const cuts = runsDocument([['CPF Responsável: Código de Acesso: Período:', 40, 700], ['529.982.247-25 AB   07/2026 e   08/2026', 40, 689]], labels)
    const ctx = plainContext()
    expect(parseRelatorio(cuts, ctx).identificacao.competencia).toBeNull()
    expect(ctx.conflicts).toEqual(['identificacao.competencia'])
  })
})

describe('relatorio-simples: a block laid out otherwise (issue 33)', () => {
  const expected = { anexo: 'III', secao: 'Serviços sem fator r', tabela: 'Tabela 1 - Sem retenção de ISS', receitaTributada: 1000, aliquotaEfetiva: 6, valorSimples: 60, partilha: { irpj: 40, csll: null, cofins: null, pis: null, inssCpp: null, icms: null, ipi: null, iss: 20 } }
  it('reads each value under its label, the totals in a row of values and the company in a row under its row of labels', () => {
    const doc = runsDocument([
      ['Empresa:', 40, 800], ['Emissão:', 400, 800], ['0381 - Padaria Pão Quente Ltda', 40, 789], ['08/09/2026', 400, 789],
      ['Regime de Competência', 40, 770], ['1.000,00', 40, 759], ['0,00', 130, 759], ['1.000,00', 220, 759],
      ['Anexo:', 40, 740], ['Anexo III - Prestação de Serviços', 40, 729], ['Seção:', 40, 718], ['Serviços sem fator r', 40, 707],
      ['Tabela:', 40, 696], ['Tabela 1 - Sem retenção de ISS', 40, 685],
      ['Receita Tributada Total:', 40, 674], ['Alíquota:', 240, 674], ['Simples Nacional Total:', 350, 674], ['1.000,00', 40, 663], ['6,0000%', 240, 663], ['60,00', 350, 663],
      ['Partilha:', 40, 652], ['IRPJ', 40, 641], ['ISS', 110, 641], ['Valor:', 40, 630], ['40,00', 130, 630], ['20,00', 200, 630]
    ], labels)
    const ctx = plainContext()
    const data = parseRelatorio(doc, ctx)
    expect(data.identificacao).toMatchObject({ empresa: 'Padaria Pão Quente Ltda', codigoEmpresa: '0381', dataEmissao: '2026-09-08' })
    expect(data.resumo.receitaBrutaMes).toBe('1.000,00')
    expect(data.apuracoes).toEqual([expect.objectContaining(expected)])
    expect(ctx.conflicts).toEqual([])
  })

  it('reads a column of labels printed before its column of values, across the block\'s start', () => {
    const doc = runsDocument([
      ['Fator r:', 40, 760], ['Anexo:', 40, 749], ['Seção:', 40, 738], ['Tabela:', 40, 727],
      ['0,3002', 40, 716], ['Anexo III - Prestação de Serviços', 40, 705], ['Serviços sem fator r', 40, 694], ['Tabela 1 - Sem retenção de ISS', 40, 683],
      ['Receita Tributada Total: 1.000,00 Alíquota: 6,0000% Simples Nacional Total: 60,00', 40, 665],
      ['Partilha:', 40, 654], ['IRPJ', 130, 654], ['ISS', 200, 654], ['Valor:', 40, 643], ['40,00', 130, 643], ['20,00', 200, 643]
    ], labels)
    const ctx = plainContext()
    const data = parseRelatorio(doc, ctx)
    expect(data.fatorR).toBe(0.3002)
    // The receipts row's name printed after the table's title on its line, positions lost.
    const title = runsDocument([['Receita Bruta do período de Apuração (RPA) - Regime de Competência 10.238,00 0,00 10.238,00', 40, 700]], labels)
    expect(parseRelatorio(title, plainContext()).resumo.receitaBrutaMes).toBe('10.238,00')
    expect(data.apuracoes).toEqual([expect.objectContaining(expected)])
    expect(ctx.conflicts).toEqual([])
  })
})

describe('relatorio-simples: text another library ordered, positions lost (issue 33)', () => {
  /** Each piece a line from the one margin, in the library's order. */
  const ordered = (texts: string[]) => runsDocument(texts.map((t, i): [string, number, number] => [t, 40, 820 - i * 6]), labels)
  const head = ['Empresa:', '0381 - Padaria Pão Quente Ltda', 'CNPJ:', '47.060.923/0001-00', 'Período:', '03/2026', 'Receita Bruta do período de Apuração (RPA)', 'Mercado Interno', 'Mercado Externo', 'Total',
    'Regime de Competência', 'Regime de Caixa', 'Total de Receitas Brutas']
  const rows = ['Receita bruta acumulada nos 12 meses anteriores (RBT12)', 'Receita bruta acumulada no ano-calendário corrente (RBA)', 'Receita bruta acumulada no ano-calendário anterior (RBA)',
    'Valor da Folha nos últimos 12 meses:', '98.841,83']
  const block = ['Anexo:', 'Anexo III - Prestação de Serviços', 'Seção:', 'Serviços sem fator r', 'Tabela:', 'Tabela 1 - Sem retenção de ISS', 'Receita Tributada Total:', '1.000,00', 'Alíquota:', '6,0000%']
  const column = (name: string, value: string): string[] => [name, 'Tributado', '1.000,00', '4,0000', value]
  const receipts = { receitaBrutaMes: '1.000,00', rbt12: 12000, rbaAtual: 3000, rbaAnterior: 11000.5 }

  it('pdfminer\'s order: the receipts table column by column, the partilha one tax\'s column after another', () => {
    const doc = ordered([...head, ...rows,
      // Mercado Interno, Mercado Externo, Total: each column's five rows in turn.
      '1.000,00', '0,00', '11.000,00', '3.000,00', '11.000,00', '0,00', '0,00', '1.000,00', '0,00', '0,50', '1.000,00', '0,00', '12.000,00', '3.000,00', '11.000,50',
      ...block, 'Simples Nacional Total:', '60,00', 'Partilha:', 'Situação:', 'Base de Cálculo:', 'Alíquota:', 'Valor:', ...column('IRPJ', '40,00'), ...column('ISS', '20,00')])
    const ctx = plainContext()
    const data = parseRelatorio(doc, ctx)
    expect(data.resumo).toMatchObject(receipts)
    expect(data.apuracoes).toEqual([expect.objectContaining({ valorSimples: 60, partilha: { irpj: 40, csll: null, cofins: null, pis: null, inssCpp: null, icms: null, ipi: null, iss: 20 } })])
    expect(ctx.conflicts).toEqual([])
  })

  it('pdftotext\'s order: the table in slabs of rows and of columns, the block\'s total after a slab of the partilha', () => {
    const doc = ordered([...head, ...rows, 'Mercado Interno', '1.000,00', '0,00', 'Mercado Externo', '0,00', '0,00', 'Total', '1.000,00', '0,00',
      '11.000,00', '1.000,00', '12.000,00', '3.000,00', '11.000,00', '0,00', '0,50', '3.000,00', '11.000,50',
      ...block, 'Partilha:', 'IRPJ', 'Situação:', 'Tributado', 'Base de Cálculo:', '1.000,00', 'Alíquota:', '4,0000', 'Valor:', '40,00', 'Simples Nacional Total:', ...column('ISS', '20,00'), '60,00'])
    const data = parseRelatorio(doc, plainContext())
    expect(data.resumo).toMatchObject(receipts)
    expect(data.apuracoes).toEqual([expect.objectContaining({ valorSimples: 60, partilha: expect.objectContaining({ irpj: 40, iss: 20 }) })])
  })

  it('pdftotext\'s order: the footer\'s amounts after its labels, the last block\'s total and a slab of its partilha among them, taken when the report adds up', () => {
    const footer = (recolher: string): string[] => [...block, 'Partilha:', 'IRPJ', 'Situação:', 'Tributado', 'Base de Cálculo:', '1.000,00', 'Alíquota:', '4,0000', 'Valor:', '40,00',
      'Simples Nacional Total:', 'Outros Acréscimos:', 'Outras Deduções:', 'Valor Diferido:', 'Valor Fixo ICMS:', 'Valor Fixo ISS:', 'Simples Nacional a recolher:',
      'Sistema licenciado para Contabilidade Razão & Associados', 'Página: 0002', '60,00', ...column('ISS', '20,00'), '5,00', '0,00', '0,00', '0,00', '0,00', recolher]
    const data = parseRelatorio(ordered(footer('65,00')), plainContext())
    expect(data).toMatchObject({ outrosAcrescimos: 5, outrasDeducoes: 0, valorDiferido: 0, valorFixoIcms: 0, valorFixoIss: 0, resumo: { valorSimplesRecolher: 65 } })
    expect(data.apuracoes).toEqual([expect.objectContaining({ valorSimples: 60, partilha: expect.objectContaining({ irpj: 40, iss: 20 }) })])
    // 60,00 + 5,00 is not 66,00: which amount is whose is not known, none is taken.
    const reports: string[] = []
    const wrong = parseRelatorio(ordered(footer('66,00')), { ...plainContext(), report: (d: { code: string }) => { reports.push(d.code) } })
    expect(wrong).toMatchObject({ outrosAcrescimos: null, resumo: { valorSimplesRecolher: null } })
    expect(wrong.apuracoes[0]!.valorSimples).toBeNull()
    expect(reports).toEqual(['FOOTER_UNREADABLE'])
  })

  it('pdfminer\'s order of the header: its row of labels one a line, then their values one a line', () => {
    const header = (period: string): string[] => ['Empresa:', '0381 - Padaria Pão Quente Ltda', 'CNPJ:', '47.060.923/0001-00', 'CPF Responsável:', 'Código de Acesso:', 'Período:', 'Início das atividades:',
      '622.253.080-04', '0707159', period, '01/02/2015', 'SIMPLES NACIONAL']
    expect(parseRelatorio(ordered(header('05/2020')), plainContext()).identificacao.competencia).toBe('2020-05')
    expect(parseRelatorio(ordered(header('01/08/2026 a 31/08/2026')), plainContext()).identificacao.competencia).toBe('2026-08')
    // The value under `Período:` missing, the row's others shaped otherwise: no period.
    expect(parseRelatorio(ordered(header('Tributado')), plainContext()).identificacao.competencia).toBeNull()
  })

  it('a column by column order that puts values far from their labels: the annexes, tables and range by their own shapes, one per block', () => {
    const labelsFirst = ['Faixa de Enquadramento:', 'Anexo:', 'Seção:', 'Tabela:', 'Anexo:', 'Seção:', 'Tabela:', 'Sistema licenciado para Contabilidade Razão & Associados']
    const values = ['Anexo III - Prestação de Serviços', 'Serviços sem fator r', 'Tabela 1 - Sem retenção de ISS', '1.000,00', 'Anexo I - Comércio', '720.000,01 a 1.800.000,00', 'Revenda de mercadorias', 'Tabela 2 - Com retenção de ISS']
    const data = parseRelatorio(ordered([...labelsFirst, ...values]), plainContext())
    expect(data.resumo.faixaEnquadramento).toBe('720.000,01 a 1.800.000,00')
    expect(data.apuracoes.map((a) => [a.anexo, a.descricaoAnexo, a.tabela])).toEqual([['III', 'Prestação de Serviços', 'Tabela 1 - Sem retenção de ISS'], ['I', 'Comércio', 'Tabela 2 - Com retenção de ISS']])
    // One annex for two blocks: which block it belongs to is not known.
    const one = parseRelatorio(ordered([...labelsFirst, ...values.filter((v) => v !== 'Anexo I - Comércio')]), plainContext())
    expect(one.apuracoes.map((a) => a.anexo)).toEqual([null, null])
  })

  it('guesses nothing the order leaves open: a partilha that does not add up, a table two cuts read differently', () => {
    const reports: string[] = []
    const ctx = { ...plainContext(), report: (d: { code: string }) => { reports.push(d.code) } }
    const partilha = parseRelatorio(ordered([...block, 'Simples Nacional Total:', '60,00', 'Partilha:', 'Situação:', 'Base de Cálculo:', 'Alíquota:', 'Valor:', ...column('IRPJ', '40,00'), ...column('ISS', '21,00')]), ctx)
    expect(partilha.apuracoes[0]!.partilha).toBeNull()
    expect(reports).toEqual(['PARTILHA_UNREADABLE'])
    // Cut row by row the RBT12 row totals 0,00; cut column by column it totals 1,00: neither is taken.
    const tableCtx = plainContext()
    const table = parseRelatorio(ordered(['Receita Bruta do período de Apuração (RPA)', 'Regime de Competência', 'Regime de Caixa', '(RBT12)', 'corrente (RBA)', 'anterior (RBA)',
      '0,00', '1,00', '1,00', '0,00', '0,00', '0,00', '0,00', '0,00', '0,00', '1,00', '0,00', '1,00', '1,00', '0,00', '1,00']), tableCtx)
    expect(table.resumo.rbt12).toBeNull()
    expect(tableCtx.conflicts).toContain('resumo.rbt12')
    // Row by row, `Total de Receitas Brutas` printing amounts too: six rows' cells for five rows, none cut.
    const sixRows = parseRelatorio(ordered(['Receita Bruta do período de Apuração (RPA)', 'Regime de Competência', 'Regime de Caixa', 'Total de Receitas Brutas', '(RBT12)', 'corrente (RBA)', 'anterior (RBA)',
      '1,00', '0,00', '1,00', '0,00', '0,00', '0,00', '1,00', '0,00', '1,00', '12,00', '0,00', '12,00', '3,00', '0,00', '3,00', '11,00', '0,00', '11,00', 'Receita Tributada Total:', '1,00']), plainContext())
    expect(sixRows.resumo).toMatchObject({ receitaBrutaMes: null, rbt12: null, rbaAtual: null, rbaAnterior: null })
  })
})
