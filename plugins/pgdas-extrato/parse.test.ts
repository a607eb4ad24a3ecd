import { describe, expect, it } from 'vitest'
import { extractPdf, pluginCases } from '../../fixtures/extraction/plugin-cases.js'
import { generateExtrato } from './fixtures/generate.js'
import type { ExtratoOptions } from './fixtures/generate.js'

const cache = new Map<string, ReturnType<typeof generateExtrato>>()
const fixture = (o: ExtratoOptions) => {
  const key = JSON.stringify(o)
  if (!cache.has(key)) cache.set(key, generateExtrato(o))
  return cache.get(key)!
}
const pdf = (o: ExtratoOptions) => async () => (await fixture(o)).pdf
const truth = async (o: ExtratoOptions) => (await fixture(o)).truth

const cases: Array<{ name: string, options: ExtratoOptions }> = [
  { name: 'layout 2.2.30, one page, DAS generated', options: { seed: 1 } },
  { name: 'layout 2.2.30, another company and period', options: { seed: 2 } },
  { name: 'layout 2.2.27 (name under its label, retificadora, fator r, no DAS)', options: { seed: 3, layout: '2.2.27' } },
  { name: 'two pages: section 4 and the DAS on page 2', options: { seed: 4, twoPages: true } },
  { name: 'two pages of layout 2.2.27', options: { seed: 5, twoPages: true, layout: '2.2.27' } }
]

describe('pgdas-extrato: fixture → expected data', () => {
  pluginCases(cases.map((c) => ({
    name: `${c.name}: every field equals the generator's truth`,
    pdf: pdf(c.options),
    data: () => truth(c.options),
    pages: c.options.twoPages === true ? 2 : 1,
    result: { success: true, documentType: 'PGDAS_EXTRATO', errors: [], warnings: [], engine: { family: 'SIMPLES_NACIONAL', parser: 'pgdas-extrato', parserExecuted: true, parserBlocked: false, confidenceLevel: 'HIGH' } }
  })))
})

describe('pgdas-extrato: missing fields are null, never invented', () => {
  for (const field of ['razaoSocial', 'dataAbertura', 'das', 'rbaa', 'cnpj'] as const) {
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
    expect(result.evidence['das.total']?.page).toBe(2)
    expect(result.evidence['totalDebitoExigivel.iss']?.box.x).toBeCloseTo(40 + 7 * 60, 0)
  })
})
