import { describe, expect, it } from 'vitest'
import { readCollectionLine } from '../../core/plugin-api.js'
import { extractPdf, pluginCases } from '../../fixtures/extraction/plugin-cases.js'
import { generateDasMei } from './fixtures/generate.js'
import type { DasMeiOptions } from './fixtures/generate.js'
import { memo } from '../../fixtures/extraction/helpers.js'

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
