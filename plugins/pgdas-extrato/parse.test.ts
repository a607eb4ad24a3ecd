import { describe, expect, it } from 'vitest'
import { extractPdf, pluginCases } from '../../fixtures/extraction/plugin-cases.js'
import { generateExtrato } from './fixtures/generate.js'
import type { ExtratoOptions } from './fixtures/generate.js'
import { memo, plainContext, runsDocument } from '../../fixtures/extraction/helpers.js'
import { labels } from './fields.js'
import { readAtividades } from './atividades.js'
import { parseExtrato } from './parse.js'

const fixture = memo(generateExtrato)
const pdf = (o: ExtratoOptions) => async () => (await fixture(o)).pdf
const truth = async (o: ExtratoOptions) => (await fixture(o)).truth
const pageCount = async (o: ExtratoOptions) => (await fixture(o)).pages

const cases: Array<{ name: string, options: ExtratoOptions }> = [
  { name: 'layout 2.2.30, one page, DAS generated', options: { seed: 1 } },
  { name: 'layout 2.2.30, another company and period', options: { seed: 2 } },
  { name: 'layout 2.2.27 (name under its label, retificadora, fator r, no DAS)', options: { seed: 3, layout: '2.2.27' } },
  { name: 'a page break at the second activity and at section 4', options: { seed: 4, twoPages: true } },
  { name: 'page breaks in layout 2.2.27', options: { seed: 5, twoPages: true, layout: '2.2.27' } },
  ...[6, 7, 8, 9, 10].map((seed) => ({ name: `layout 2.2.30, seed ${seed} (activities, markets and pages vary)`, options: { seed } })),
  ...[21, 22].map((seed) => ({ name: `layout 2.2.27, seed ${seed}`, options: { seed, layout: '2.2.27' as const } }))
]

describe('pgdas-extrato: fixture → expected data', () => {
  pluginCases(cases.map((c) => ({
    name: `${c.name}: every field equals the generator's truth`,
    pdf: pdf(c.options),
    data: () => truth(c.options),
    pages: () => pageCount(c.options),
    result: { success: true, documentType: 'PGDAS_EXTRATO', errors: [], warnings: [], engine: { family: 'SIMPLES_NACIONAL', parser: 'pgdas-extrato', parserExecuted: true, parserBlocked: false, confidenceLevel: 'HIGH' } }
  })))
})

describe('pgdas-extrato: missing fields are null, never invented', () => {
  for (const field of ['razaoSocial', 'dataAbertura', 'das', 'rbaa', 'cnpj', 'receitasAnteriores', 'folhaSalariosAnteriores', 'sublimite', 'impedidoIcmsIss'] as const) {
    it(`returns null for ${field} when the PDF does not print it`, async () => {
      const options: ExtratoOptions = { seed: 11, omit: [field] }
      const result = await extractPdf(await pdf(options)())
      expect(result.success).toBe(true)
      expect((result.data as Record<string, unknown>)[field]).toBeNull()
      expect(result.data).toEqual(await truth(options))
      expect(Object.keys(result.evidence).some((k) => k === field || k.startsWith(`${field}.`))).toBe(false)
    })
  }
})

describe('pgdas-extrato: sections 2.2, 2.3 and 3', () => {
  it('reads the twelve previous months in period order, and RBT12 is their sum', async () => {
    const options: ExtratoOptions = { seed: 1 }
    const result = await extractPdf(await pdf(options)())
    const data = result.data as any
    expect(data.receitasAnteriores).toHaveLength(12)
    expect(data.receitasAnteriores.map((m: any) => m.competencia)).toEqual([...data.receitasAnteriores.map((m: any) => m.competencia)].sort())
    expect(result.engine.matchedRules).toContain('check:rbt12-matches-receitas-anteriores')
    expect(result.evidence['receitasAnteriores.0.interno']).toMatchObject({ page: 1, source: expect.stringMatching(/^\d{2}\/\d{4} /) })
  })

  it('warns and lowers confidence when the previous months do not add up to RBT12', async () => {
    const good = await extractPdf(await pdf({ seed: 1 })())
    const bad = await extractPdf(await pdf({ seed: 1, badPreviousMonth: true })())
    expect(bad.engine.missingRules).toContain('check:rbt12-matches-receitas-anteriores')
    expect(bad.warnings).toEqual([expect.objectContaining({ code: 'PLUGIN_CHECK_FAILED', message: expect.stringMatching(/^rbt12-matches-receitas-anteriores: the twelve months before the PA \(interno\) add up to/) })])
    expect(bad.engine.confidence).toBeLessThan(good.engine.confidence)
    expect(bad.data).toEqual(await truth({ seed: 1, badPreviousMonth: true }))
  })

  it('reads the payroll of 2.3 with the fator r (2.2.27) and [] for `Nenhuma`', async () => {
    const retif = (await extractPdf(await pdf({ seed: 3, layout: '2.2.27' })())).data as any
    expect(retif.folhaSalariosAnteriores).toHaveLength(12)
    expect(retif.fatorR).toBe(0.28)
    expect(((await extractPdf(await pdf({ seed: 1 })())).data as any).folhaSalariosAnteriores).toEqual([])
  })

  it('reads each activity block: description over several lines, revenue, its own tax table, parcels, ST and monophase taxes', async () => {
    // Find seeds whose fixtures hold the ST activity and several activities.
    let checked = 0
    for (const seed of [1, 2, 6, 7, 8, 9, 10, 21, 22]) {
      const t = await truth({ seed })
      if (t.atividades === null || t.atividades.length < 2) continue
      const result = await extractPdf(await pdf({ seed })())
      expect((result.data as any).atividades).toEqual(t.atividades)
      expect(result.engine.matchedRules).toContain('check:atividades-add-up-to-total')
      expect(result.evidence['atividades.1.tributos.total']).toBeDefined()
      checked++
    }
    expect(checked).toBeGreaterThan(0)
    const st = await Promise.all([1, 2, 6, 7, 8, 9, 10, 21, 22].map(async (seed) => (await truth({ seed })).atividades!.find((a) => a.substituicaoTributaria.length > 0)))
    expect(st.some((a) => a !== undefined && a.parcelas.length === 2 && a.tributacaoMonofasica.join() === 'cofins,pis')).toBe(true)
  })

  it('gives [] activities when the extract prints `Nenhuma atividade selecionada`', async () => {
    const options: ExtratoOptions = { seed: 11, omit: ['atividades'] }
    const result = await extractPdf(await pdf(options)())
    expect(result.success).toBe(true)
    expect((result.data as any).atividades).toEqual([])
    expect(result.data).toEqual(await truth(options))
  })

  it('reads the sublimit and the ICMS/ISS impediment beside their labels (2.2.30) and under them (2.2.27)', async () => {
    for (const options of [{ seed: 2 }, { seed: 3, layout: '2.2.27' as const }]) {
      const result = await extractPdf(await pdf(options)())
      const t = await truth(options)
      expect((result.data as any).sublimite).toBe(t.sublimite)
      expect((result.data as any).impedidoIcmsIss).toBe(t.impedidoIcmsIss)
      expect(typeof t.sublimite).toBe('number')
    }
  })
})

describe('pgdas-extrato: labels and values laid out otherwise (issue 33)', () => {
  it('gives each activity its establishment, the CNPJ printed beside its label or under it', () => {
    const activity = (y: number): Array<[string, number, number]> => [['Valor do Débito por Tributo para a Atividade (R$):', 40, y], ['Revenda de mercadorias', 40, y - 10], ['Receita Bruta Informada: R$ 1.000,00', 40, y - 20]]
    const doc = runsDocument([
      ['CNPJ Estabelecimento:', 40, 700], ['36.405.355/0001-08', 40, 690], ...activity(670),
      ['CNPJ Estabelecimento:', 40, 600], ['36.405.355/0002-99', 150, 600], ...activity(580)
    ], labels)
    expect(readAtividades(doc, plainContext()).map((a) => a.estabelecimento)).toEqual(['36405355000108', '36405355000299'])
  })

  it('takes no label for the name when the line after its label is the next label (positions lost)', () => {
    const pieces = ['1) Informações do Contribuinte', 'CNPJ Básico:', 'Data de Abertura:', '04/2023', '3.600.000,00', 'Nome Empresarial:', 'Regime de Apuração:', '36405355202311001', '33,86', '2,32', '1.950,45']
    const doc = runsDocument(pieces.map((t, i): [string, number, number] => [t, 36, 800 - 10 * i]), labels)
    expect(parseExtrato(doc, plainContext()).razaoSocial).toBeNull()
  })
})

describe('pgdas-extrato: consistency checks and evidence', () => {
  it('warns and lowers confidence when the DAS total is not principal + multa + juros', async () => {
    const good = await extractPdf(await pdf({ seed: 12 })())
    const bad = await extractPdf(await pdf({ seed: 12, badDasTotal: true })())
    expect(good.engine.matchedRules).toContain('check:das-total')
    expect(bad.engine.missingRules).toContain('check:das-total')
    expect(bad.warnings).toEqual([expect.objectContaining({ code: 'PLUGIN_CHECK_FAILED', message: expect.stringMatching(/^das-total:/) })])
    expect(bad.engine.confidence).toBeLessThan(good.engine.confidence)
  })

  it('reports, for a value, the page, the line it was read from and its box', async () => {
    const options: ExtratoOptions = { seed: 4, twoPages: true }
    const result = await extractPdf(await pdf(options)())
    const t = await truth(options)
    expect(result.evidence.competencia).toEqual({ page: 1, source: `Período de Apuração (PA): ${t.competencia!.slice(5)}/${t.competencia!.slice(0, 4)}`, box: expect.objectContaining({ x: expect.closeTo(160, 0) }) })
    expect(result.evidence['das.total']?.page).toBeGreaterThan(1)
    expect(result.evidence['totalDebitoExigivel.iss']?.box.x).toBeCloseTo(40 + 7 * 60, 0)
  })
})

describe('pgdas-extrato: text pdfminer ordered (issue 33, positions lost)', () => {
  const lines = (text: string[]) => runsDocument(text.map((t, i): [string, number, number] => [t, 36, 800 - 10 * i]), labels)

  it('pairs two labels with the two values after them, both or neither', () => {
    const ctx = plainContext()
    const data = parseExtrato(lines([
      '1) Informações do Contribuinte', 'CNPJ Básico:', 'Data de Abertura:', '36.405.355', '28/04/2010',
      '2) Informações da Apuração', 'Nome Empresarial:', 'Regime de Apuração:', '36405355202311001', 'Oficina Mecânica Irmãos Araújo Ltda', 'Competência'
    ]), ctx)
    expect(data).toMatchObject({ cnpjBasico: '36405355', dataAbertura: '2010-04-28', razaoSocial: 'Oficina Mecânica Irmãos Araújo Ltda', regimeApuracao: 'COMPETENCIA' })
    expect(ctx.conflicts).toEqual([])
    // The regime's value not printed: the name is not taken alone (a pairing that skipped a label).
    const alone = parseExtrato(lines(['CNPJ Básico:', 'Nome Empresarial:', 'Regime de Apuração:', 'Oficina Mecânica Irmãos Araújo Ltda', 'Fim']), plainContext())
    expect([alone.razaoSocial, alone.regimeApuracao]).toEqual([null, null])
  })
})
