import { describe, expect, it } from 'vitest'
import { extractPdf, pluginCases } from '../../fixtures/extraction/plugin-cases.js'
import { generateDec } from './fixtures/generate.js'
import type { DecOptions } from './fixtures/generate.js'
import { memo } from '../../fixtures/extraction/helpers.js'
import { writeTextPdf } from '../../fixtures/extraction/pdf-writer.js'

const fixture = memo(generateDec)
const pdf = (o: DecOptions) => async () => (await fixture(o)).pdf
const truth = async (o: DecOptions) => (await fixture(o)).truth

const cases: Array<{ name: string, options: DecOptions, pages: number }> = [
  { name: 'declaration, guide and receipt', options: { seed: 1 }, pages: 3 },
  { name: 'two activities, another company', options: { seed: 2, activities: 2 }, pages: 3 },
  { name: 'nothing due: no guide, zero totals', options: { seed: 3, noGuide: true }, pages: 2 },
  { name: 'declaration over two pages, three activities, guide and receipt', options: { seed: 4, twoPageDeclaration: true, activities: 3 }, pages: 4 }
]

describe('dec-issqn-poa: fixture → expected data', () => {
  pluginCases(cases.map((c) => ({
    name: `${c.name}: every field equals the generator's truth`,
    pdf: pdf(c.options),
    data: () => truth(c.options),
    pages: c.pages,
    result: { success: true, documentType: 'DEC_ISSQN_POA', errors: [], warnings: [], engine: { family: 'MUNICIPAL', parser: 'dec-issqn-poa', parserExecuted: true, confidenceLevel: 'HIGH' } }
  })))

  it('classifies the pages and reads the receipt time with the −03:00 offset', async () => {
    const result = await extractPdf(await pdf({ seed: 4, twoPageDeclaration: true, activities: 3 })())
    const d = result.data as any
    expect(d.paginas).toEqual({ declaracao: [1, 2], guia: [3], recibo: [4] })
    expect(d.recibo.recebidoEm).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}-03:00$/)
    expect(d.guia.linhaDigitavel).toMatch(/^816\d{45}$/)
    expect(result.engine.matchedRules).toEqual(expect.arrayContaining(['check:guide-matches-declaration', 'check:barcode-check-digits', 'check:barcode-amount']))
  })

  it('cites each value on the page of its part', async () => {
    const result = await extractPdf(await pdf({ seed: 4, twoPageDeclaration: true, activities: 3 })())
    expect(result.evidence['empresa.inscricaoMunicipal']?.page).toBe(1)
    expect(result.evidence['financeiro.totalRecolher']?.page).toBe(2)
    expect(result.evidence['guia.linhaDigitavel']?.page).toBe(3)
    expect(result.evidence['recibo.recebidoEm']).toMatchObject({ page: 4, source: expect.stringMatching(/^DECLARAÇÃO RECEBIDA EM \d{2}\/\d{2}\/\d{4} às /) })
  })

  it('keeps a negative withheld amount negative', async () => {
    for (const seed of [1, 2, 4, 5, 6, 7, 8]) {
      const t = await truth({ seed })
      if ((t.financeiro.issRetidoSubstituicao ?? 0) < 0) {
        const result = await extractPdf(await pdf({ seed })())
        expect((result.data as any).financeiro.issRetidoSubstituicao).toBe(t.financeiro.issRetidoSubstituicao)
        return
      }
    }
    throw new Error('no seed among those tried prints a negative withheld amount')
  })
})

describe('dec-issqn-poa: missing fields are null, never invented', () => {
  for (const field of ['razaoSocial', 'cnpj', 'issCpom', 'recibo', 'autenticacao'] as const) {
    it(`returns null for ${field} when the PDF does not print it`, async () => {
      const options: DecOptions = { seed: 11, omit: [field] }
      const result = await extractPdf(await pdf(options)())
      expect(result.success).toBe(true)
      expect(result.data).toEqual(await truth(options))
      const d = result.data as any
      const value = field === 'issCpom' ? d.financeiro.issCpom : field === 'recibo' ? d.recibo : field === 'autenticacao' ? d.recibo.autenticacao : d.empresa[field]
      expect(value).toBeNull()
    })
  }
})

describe('dec-issqn-poa: consistency checks', () => {
  it('warns and lowers confidence when the guide\'s tax differs from the declaration\'s total', async () => {
    const good = await extractPdf(await pdf({ seed: 12 })())
    const bad = await extractPdf(await pdf({ seed: 12, guideMismatch: true })())
    expect(good.engine.matchedRules).toContain('check:guide-matches-declaration')
    expect(bad.engine.missingRules).toContain('check:guide-matches-declaration')
    expect(bad.warnings).toEqual([expect.objectContaining({ code: 'PLUGIN_CHECK_FAILED', message: expect.stringMatching(/^guide-matches-declaration:/) })])
    expect(bad.engine.confidence).toBeLessThan(good.engine.confidence)
  })

  it('fails the barcode check when a digit of the line is changed', async () => {
    const good = await extractPdf(await pdf({ seed: 13 })())
    const bad = await extractPdf(await pdf({ seed: 13, badBarcode: true })())
    expect(good.engine.matchedRules).toContain('check:barcode-check-digits')
    expect(bad.engine.missingRules).toContain('check:barcode-check-digits')
    expect(bad.warnings).toEqual([expect.objectContaining({ code: 'PLUGIN_CHECK_FAILED', message: expect.stringMatching(/^barcode-check-digits:.*block 3/) })])
    expect(bad.engine.confidence).toBeLessThan(good.engine.confidence)
  })
})

describe('dec-issqn-poa: text handed over column by column (positions lost, issue 33)', () => {
  // Another library's order: each piece a line from the margin, the labels of a block first and
  // their values further down; the registration after the block, the name before the CNPJ.
  const declaration = ['Prefeitura de Porto Alegre', 'Secretaria Municipal da Fazenda', 'Identificação do Declarante', 'Inscrição Municipal:', 'Clínica Bem Estar Ltda',
    'CNPJ: 31.602.134/0001-06', 'Atividade:', 'Imposto de Responsabilidade Própria Total', 'Total do imposto devido', 'Total Geral A Recolher',
    '01.07 - Suporte técnico em informática', '583873-3-7', 'Declaração Mensal - ISSQN Jul/2024', '120,00', '120,00', '120,00']
  const receipt = ['Prefeitura de Porto Alegre', 'Secretaria Municipal da Fazenda', 'Inscrição Municipal:', 'Clínica Bem Estar Ltda', 'CNPJ: 31.602.134/0001-06',
    'DECLARAÇÃO RECEBIDA EM 05/08/2024 às 14:57:29', 'RECIBO DE ENTREGA - DECLARAÇÃO MENSAL', 'Declaração Mensal - ISSQN Jul/2024']
  const guide = ['Prefeitura de Porto Alegre', 'Secretaria Municipal da Fazenda', 'DOSEQ', 'ISSQN-e', 'Receita:', 'IMPOSTO: R$ 120,00',
    'NÃO RECEBER ESTA GUIA APÓS 12/08/2024', '328380097657077', '09/08/2024 08:39', 'ISSQN Próprio', 'GUIA PARA PAGAMENTO DE ISSQN', 'Declaração Mensal Jul/2024', 'Até', '12/08/2024', 'R$ 120,00']
  const pdfOf = async (pages: string[][]): Promise<Uint8Array> => await writeTextPdf(pages.map((lines) => lines.map((text, i) => ({ text, x: 40, y: 800 - i * 14 }))), { seed: 3 })

  it('reads the registration, the name and the guide\'s values by their shapes and order', async () => {
    const result = await extractPdf(await pdfOf([declaration, guide, receipt]))
    expect(result.documentType).toBe('DEC_ISSQN_POA')
    expect(result.data).toMatchObject({
      empresa: { cnpj: '31602134000106', razaoSocial: 'Clínica Bem Estar Ltda', inscricaoMunicipal: '583873-3-7' },
      guia: { codigoArrecadacao: '328380097657077', vencimento: '2024-08-12', geradaEm: '2024-08-09T08:39:00-03:00', valorPagar: 120, receita: 'ISSQN Próprio' }
    })
  })

  it('activities\' headings among the labels, their amounts after them; the due date before the notice repeating it', async () => {
    // pdfminer's order: each activity's heading and row labels, the totals' labels, then every amount in that order.
    const activity = (code: string): string[] => ['Atividade:', code, 'Base de Cálculo Receita Bruta', 'Deduções Legais', 'Base de cálculo']
    const page = ['Prefeitura de Porto Alegre', 'Secretaria Municipal da Fazenda', 'Declaração Mensal - ISSQN Jul/2024', 'Identificação do Declarante', 'Inscrição Municipal:', '583873-3-7',
      'Clínica Bem Estar Ltda', 'CNPJ:', '31.602.134/0001-06', ...activity('04.03 - Clínicas e consultórios'), ...activity('07.10 - Limpeza e conservação'),
      'Imposto de Responsabilidade Própria Total', 'Imposto retido por Substituição tributária', 'Imposto retido de contribuinte substituído', 'Imposto retido por Responsabilidade Solidária',
      'Imposto retido por falta de inscrição no CPOM', 'Total do imposto devido', 'Total Geral A Recolher',
      '1.000,00', '100,00', '900,00', '2.000,00', '0,00', '2.000,00', '120,00', '0,00', '5,00', '0,00', '0,00', '125,00', '125,00']
    const guideBeforeNotice = ['Prefeitura de Porto Alegre', 'Secretaria Municipal da Fazenda', 'DOSEQ', '328380097657077', 'ISSQN-e', '09/08/2024 08:39', 'Receita:', 'ISSQN Próprio',
      'IMPOSTO:', 'R$ 125,00', 'GUIA PARA PAGAMENTO DE ISSQN', 'Até', '12/08/2024', 'NÃO RECEBER ESTA GUIA APÓS 12/08/2024', 'Declaração Mensal Jul/2024', 'R$ 125,00']
    const result = await extractPdf(await pdfOf([page, guideBeforeNotice, receipt]))
    expect(result.data).toMatchObject({
      empresa: { cnpj: '31602134000106', razaoSocial: 'Clínica Bem Estar Ltda', inscricaoMunicipal: '583873-3-7' },
      financeiro: { receitaServicos: 3000, deducoes: 100, baseCalculo: 2900, issProprio: 120, issRetidoSubstituicao: 0, issRetidoTerceiros: 5, issResponsabilidadeSolidaria: 0, issCpom: 0, totalImpostoDevido: 125, totalRecolher: 125 },
      guia: { vencimento: '2024-08-12', valorImposto: 125 }
    })
  })

  it('two registrations on the declaration page: neither is guessed', async () => {
    const result = await extractPdf(await pdfOf([[...declaration, '999999-9-9'], guide, receipt]))
    expect((result.data as { empresa: { inscricaoMunicipal: string | null } }).empresa.inscricaoMunicipal).toBeNull()
    expect(result.warnings).toEqual(expect.arrayContaining([expect.objectContaining({ field: 'empresa.inscricaoMunicipal', message: expect.stringMatching(/not guessed/) })]))
  })
})
