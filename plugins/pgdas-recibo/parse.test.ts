import { describe, expect, it } from 'vitest'
import { extractPdf, pluginCases } from '../../fixtures/extraction/plugin-cases.js'
import { generateRecibo } from './fixtures/generate.js'
import type { ReciboOptions } from './fixtures/generate.js'
import { memo, plainContext, runsDocument } from '../../fixtures/extraction/helpers.js'
import { labels } from './fields.js'
import { parseRecibo } from './parse.js'

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

describe('pgdas-recibo: text another library ordered column by column (issue 33, positions lost)', () => {
  // pdftotext's order of the RFB's print: the two identification labels, then their values;
  // the table's wrapped headers with its cells among them, column after column.
  const page = (cells: string[]) => runsDocument([
    'RECIBO DE ENTREGA DA APURAÇÃO NO PGDAS-D', 'Nome Empresarial', 'CNPJ da Matriz', 'MERCADO TRÊS IRMÃOS LTDA', '23.277.116/0001-78',
    'Período de', 'Apuração', 'Número da', 'Apuração', 'Receita Bruta', 'Auferida', cells[0]!, cells[1]!, cells[2]!,
    'Total do', 'Débito', 'Declarado', 'Total do', 'Débito com', 'Exigibilidade', 'Suspensa', 'Total do', 'Débito', 'Exigível', cells[3]!, cells[4]!, cells[5]!,
    '3. Informações da Recepção da Apuração no PGDAS-D'
  ].map((t, i): [string, number, number] => [t, 36, 800 - 10 * i]), labels)

  it('pairs the identification by order and reads the row\'s values in order', () => {
    const ctx = plainContext()
    const data = parseRecibo(page(['06/2026', '23277116202606001', 'R$ 18.939,46', 'R$ 1.136,35', 'R$ 100,00', 'R$ 1.036,35']), ctx)
    expect(data).toMatchObject({ razaoSocial: 'MERCADO TRÊS IRMÃOS LTDA', cnpj: '23277116000178', competencia: '2026-06', numeroDeclaracao: '23277116202606001' })
    expect([data.receitaBrutaAuferida, data.totalDebitoDeclarado, data.totalDebitoSuspenso, data.totalDebitoExigivel]).toEqual([18939.46, 1136.35, 100, 1036.35])
    expect(ctx.conflicts).toEqual([])
  })

  it('trusts no order whose declared debt is not the suspended plus the payable one', () => {
    const data = parseRecibo(page(['06/2026', '23277116202606001', 'R$ 18.939,46', 'R$ 100,00', 'R$ 1.136,35', 'R$ 1.036,35']), plainContext())
    expect([data.totalDebitoDeclarado, data.totalDebitoSuspenso, data.totalDebitoExigivel]).toEqual([null, null, null])
  })
})
