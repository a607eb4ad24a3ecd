import { describe, expect, it } from 'vitest'
import { readCollectionLine } from '../../core/plugin-api.js'
import { extractPdf, pluginCases } from '../../fixtures/extraction/plugin-cases.js'
import { generateDas } from './fixtures/generate.js'
import type { DasOptions } from './fixtures/generate.js'
import { memo } from '../../fixtures/extraction/helpers.js'

const fixture = memo(generateDas)
const pdf = (o: DasOptions) => async () => (await fixture(o)).pdf
const truth = async (o: DasOptions) => (await fixture(o)).truth

const cases: Array<{ name: string, options: DasOptions, pages?: number }> = [
  { name: 'PGDAS-D guide paid on time (empty multa and juros cells)', options: { seed: 1 } },
  { name: 'PGDAS-D guide of another company and period', options: { seed: 2 } },
  { name: 'PGDAS-D guide reissued late (multa, juros, pay-until after the due date)', options: { seed: 3, late: true } },
  { name: 'PGDAS-D guide over two pages (table continued, Totais and barcode on page 2)', options: { seed: 4, twoPages: true }, pages: 2 },
  { name: 'installment plan "DAS de PARCSN" (period Diversos, original periods per row)', options: { seed: 5, kind: 'PARCSN' } },
  { name: 'installment plan over two pages', options: { seed: 6, kind: 'PARCSN', twoPages: true }, pages: 2 },
  { name: 'late guide with right-aligned amounts (columns told apart by position)', options: { seed: 7, late: true, rightAligned: true } },
  { name: 'on-time guide with right-aligned amounts and empty multa and juros cells', options: { seed: 8, rightAligned: true } }
]

describe('das: fixture → expected data', () => {
  pluginCases(cases.map((c) => ({
    name: `${c.name}: every field equals the generator's truth`,
    pdf: pdf(c.options),
    data: () => truth(c.options),
    pages: c.pages ?? 1,
    result: { success: true, documentType: 'DAS', errors: [], warnings: [], engine: { family: 'SIMPLES_NACIONAL', parser: 'das', parserExecuted: true, confidence: 1, confidenceLevel: 'HIGH', missingRules: [] } }
  })))

  it('builds fixtures whose collection line verifies and carries the total, the issuer and the number', async () => {
    for (const c of cases) {
      const t = await truth(c.options)
      const read = readCollectionLine(t.linhaDigitavel!)
      expect(read).toMatchObject({ valid: true, issuer: '0328', barcode: t.codigoBarras })
      expect(read!.amountCents).toBe(Math.round(t.valorTotal! * 100))
      expect(t.codigoBarras!.slice(24, 41)).toBe(t.numeroDocumento)
    }
  })

  it('reads the installment subtype and plan', async () => {
    const t = await truth({ seed: 5, kind: 'PARCSN' })
    const result = await extractPdf(await pdf({ seed: 5, kind: 'PARCSN' })())
    expect(result.data).toMatchObject({ subtipo: 'PARCELAMENTO', competencia: 'DIVERSOS', parcelamento: t.parcelamento })
    expect(t.parcelamento!.parcela).toBeGreaterThan(0)
  })
})

describe('das: missing fields are null, never invented', () => {
  for (const field of ['razaoSocial', 'valorTotal', 'dataEmissao'] as const) {
    it(`returns null for ${field} when the PDF does not print it`, async () => {
      const options: DasOptions = { seed: 11, omit: [field] }
      const result = await extractPdf(await pdf(options)())
      expect(result.success).toBe(true)
      expect((result.data as Record<string, unknown>)[field]).toBeNull()
      expect(result.data).toEqual(await truth(options))
      expect(result.evidence[field]).toBeUndefined()
    })
  }

  it('reads the total from the stub when the header does not print it', async () => {
    const options: DasOptions = { seed: 11, omit: ['valorTotalHeader'] }
    const result = await extractPdf(await pdf(options)())
    expect(result.data).toEqual(await truth(options))
    expect((result.data as any).valorTotal).not.toBeNull()
    expect(result.evidence.valorTotal?.source).toMatch(/^CNPJ: .* Valor: /)
  })

  it('skips the checks that need the missing total instead of failing them', async () => {
    const result = await extractPdf(await pdf({ seed: 11, omit: ['valorTotal'] })())
    expect(result.warnings).toEqual([expect.objectContaining({ code: 'FIELD_NOT_FOUND', field: 'valorTotal' })])
    expect(result.engine.matchedRules).not.toContain('check:barcode-amount-equals-total')
    expect(result.engine.missingRules).not.toContain('check:barcode-amount-equals-total')
  })
})

describe('das: consistency checks and evidence', () => {
  it('warns and lowers confidence when the collection line has been tampered with', async () => {
    const good = await extractPdf(await pdf({ seed: 12 })())
    const bad = await extractPdf(await pdf({ seed: 12, tamperLine: true })())
    expect(good.engine.matchedRules).toContain('check:collection-line-digits')
    expect(bad.engine.missingRules).toEqual(expect.arrayContaining(['check:collection-line-digits', 'check:barcode-amount-equals-total']))
    expect(bad.warnings).toEqual(expect.arrayContaining([expect.objectContaining({ code: 'PLUGIN_CHECK_FAILED', message: expect.stringMatching(/^collection-line-digits: .*block 1/) })]))
    expect(bad.engine.confidence).toBeLessThan(good.engine.confidence)
    // The fields are still what the page prints.
    expect((bad.data as any).valorTotal).toBe((good.data as any).valorTotal)
  })

  const forged: Array<[NonNullable<DasOptions['forge']>, string, RegExp]> = [
    ['amount', 'barcode-amount-equals-total', /^barcode-amount-equals-total: the barcode carries /],
    ['number', 'barcode-number-equals-printed', /^barcode-number-equals-printed: the barcode carries document number /],
    ['date', 'barcode-date-matches', /^barcode-date-matches: the barcode's date 21001 /],
    ['totais', 'composition-adds-up', /^composition-adds-up: the composition's total adds up to /]
  ]
  for (const [forge, check, message] of forged) {
    it(`fails only ${check} when the ${forge} disagrees with the page (check digits still verify)`, async () => {
      const good = await extractPdf(await pdf({ seed: 14 })())
      const bad = await extractPdf(await pdf({ seed: 14, forge })())
      expect(bad.engine.matchedRules).toContain('check:collection-line-digits')
      expect(bad.engine.missingRules).toEqual([`check:${check}`])
      expect(bad.warnings).toEqual([{ code: 'PLUGIN_CHECK_FAILED', message: expect.stringMatching(message) }])
      expect(bad.engine.confidence).toBeLessThan(good.engine.confidence)
      expect(bad.data).toEqual(await truth({ seed: 14, forge }))
    })
  }

  it('warns when the stub\'s value differs from the guide\'s, keeping the guide\'s', async () => {
    const result = await extractPdf(await pdf({ seed: 15, stubMismatch: true })())
    const t = await truth({ seed: 15, stubMismatch: true })
    expect(result.data).toEqual(t)
    expect(result.warnings).toEqual([{ code: 'GUIDE_STUB_MISMATCH', field: 'valorTotal', message: `the stub prints valorTotal ${t.valorTotal! + 1}, the guide ${t.valorTotal}` }])
  })

  it('right-aligned fixtures end every amount of a column at the same x', async () => {
    const result = await extractPdf(await pdf({ seed: 7, late: true, rightAligned: true })())
    const right = (k: string): number => { const b = result.evidence[k]!.box; return b.x + b.width }
    for (const k of ['composicao.0.total', 'composicao.3.total', 'totais.total']) expect(right(k)).toBeCloseTo(540, 0)
    expect(right('composicao.0.multa')).toBeCloseTo(405, 0)
    expect(result.evidence['composicao.0.multa']!.box.x).not.toBeCloseTo(result.evidence['composicao.1.multa']!.box.x, 0)
  })

  it('reports, for a value, the page, the line it was read from and its box', async () => {
    const options: DasOptions = { seed: 4, twoPages: true }
    const result = await extractPdf(await pdf(options)())
    const t = await truth(options)
    expect(result.evidence.numeroDocumento).toEqual({ page: 1, source: expect.stringContaining(t.numeroDocumentoFormatado!), box: expect.objectContaining({ x: expect.closeTo(260, 0) }) })
    expect(result.evidence['totais.total']?.page).toBe(2)
    expect(result.evidence['composicao.5.periodo']?.page).toBe(2)
  })
})
