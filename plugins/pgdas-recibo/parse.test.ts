import { describe, expect, it } from 'vitest'
import { extractPdf, pluginCases } from '../../fixtures/extraction/plugin-cases.js'
import { generateRecibo } from './fixtures/generate.js'
import type { ReciboOptions } from './fixtures/generate.js'
import { memo } from '../../fixtures/extraction/helpers.js'

const fixture = memo(generateRecibo)
const pdf = (o: ReciboOptions) => async () => (await fixture(o)).pdf
const truth = async (o: ReciboOptions) => (await fixture(o)).truth

const ok = { success: true, documentType: 'PGDAS_RECIBO', pages: 1, errors: [], warnings: [], engine: { family: 'SIMPLES_NACIONAL', parser: 'pgdas-recibo', parserExecuted: true, parserBlocked: false, confidenceLevel: 'HIGH', missingRules: [] } }

const cases: Array<{ name: string, options: ReciboOptions }> = [
  { name: 'original, name and CNPJ as a two-column table', options: { seed: 1 } },
  { name: 'another company and period', options: { seed: 2 } },
  { name: 'retificadora with suspended debt', options: { seed: 3, retificadora: true, suspenso: true } },
  { name: 'values under their labels, identification as label: value lines', options: { seed: 4, valuesBelow: true, inlineIdentification: true } },
  { name: 'amounts glued together (R$ 18.939,46R$ 1.136,35…)', options: { seed: 5, gluedValues: true, suspenso: true } },
  { name: 'individual entrepreneur (name starts with the CNPJ básico)', options: { seed: 6, empresarioIndividual: true } }
]

describe('pgdas-recibo: fixture → expected data', () => {
  pluginCases(cases.map((c) => ({
    name: `${c.name}: every field equals the generator's truth`,
    pdf: pdf(c.options),
    data: () => truth(c.options),
    result: ok
  })))
})

describe('pgdas-recibo: missing fields are null, never invented', () => {
  for (const field of ['razaoSocial', 'autenticacao', 'dataHoraTransmissao'] as const) {
    for (const valuesBelow of [false, true]) {
      it(`returns null for ${field} when the PDF does not print it (values ${valuesBelow ? 'below' : 'beside'} their labels)`, async () => {
        const options: ReciboOptions = { seed: 11, omit: [field], valuesBelow, inlineIdentification: valuesBelow }
        const result = await extractPdf(await pdf(options)())
        expect(result.success).toBe(true)
        expect((result.data as Record<string, unknown>)[field]).toBeNull()
        expect(result.data).toEqual(await truth(options))
        expect(result.evidence[field]).toBeUndefined()
      })
    }
  }
})

describe('pgdas-recibo: consistency checks and evidence', () => {
  it('warns and lowers confidence when the receipt number does not carry the transmission date', async () => {
    const good = await extractPdf(await pdf({ seed: 12 })())
    const bad = await extractPdf(await pdf({ seed: 12, badReceiptDate: true })())
    expect(good.engine.matchedRules).toEqual(expect.arrayContaining(['check:declarado-is-exigivel-plus-suspenso', 'check:numero-declaracao-matches', 'check:numero-recibo-matches', 'check:cnpj-valid']))
    expect(good.engine.confidence).toBe(1)
    expect(bad.engine.missingRules).toEqual(['check:numero-recibo-matches'])
    expect(bad.warnings).toEqual([expect.objectContaining({ code: 'PLUGIN_CHECK_FAILED', message: expect.stringMatching(/^numero-recibo-matches: the receipt number's date \d{5} is not the transmission date/) })])
    // (11 + 5) / (11 + 6) by the engine's rule.
    expect(bad.engine.confidence).toBe(0.9412)
    expect(bad.data).toEqual(await truth({ seed: 12, badReceiptDate: true }))
  })

  it('reads each amount from its own cell of the table row', async () => {
    const result = await extractPdf(await pdf({ seed: 3, retificadora: true, suspenso: true })())
    expect(result.evidence.totalDebitoSuspenso).toMatchObject({ page: 1, source: expect.stringMatching(/^\d{2}\/\d{4} \d{17} R\$/), box: expect.objectContaining({ x: expect.closeTo(350, 0) }) })
    expect(result.evidence.numeroRecibo?.source).toMatch(/^Número do Recibo: 01\.07\./)
  })
})
