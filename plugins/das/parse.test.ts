import { describe, expect, it } from 'vitest'
import { buildCollectionLine, readCollectionLine } from '../../core/plugin-api.js'
import { extractPdf, pluginCases } from '../../fixtures/extraction/plugin-cases.js'
import { generateDas } from './fixtures/generate.js'
import type { DasOptions } from './fixtures/generate.js'
import { memo, pageOfLines } from '../../fixtures/extraction/helpers.js'
import { writeTextPdf } from '../../fixtures/extraction/pdf-writer.js'

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

describe('das: text handed over column by column (positions lost, issue 33)', () => {
  // A guide as another PDF library orders it: each piece of text a line from the margin, the
  // header's labels each above its value, the composition table one column after another.
  const line = buildCollectionLine({ segment: '5', valueId: '8', amountCents: 869_056, issuer: '0328', free: `22140${'07202213153961966'}001` })
  const blocks = line.blocks.map((b) => `${b.digits} ${b.dv}`)
  const text = (multa: string[]): string[] => [
    'Documento de Arrecadação', 'do Simples Nacional', 'CNPJ', '87.231.447/0001-50', 'Período de Apuração', 'Abril/2022', 'Observações',
    'Composição do Documento de Arrecadação', 'Código', '1001', '1007', 'Totais', 'SENDA (Versão:4.5.0)', blocks[0]!, blocks[1]!,
    'Documento de Arrecadação do Simples Nacional', 'Denominação', 'IRPJ - SIMPLES NACIONAL', '04/2022', 'ICMS - SIMPLES NACIONAL', 'RS - 04/2022',
    'Razão Social', 'COMERCIO DE FERRAGENS SAO JOAO LTDA', 'Data de Vencimento', '20/05/2022', 'Número do Documento', '07.20.22131.5396196-6',
    blocks[2]!, blocks[3]!, 'Principal', '6.248,93', '2.441,63', '8.690,56', 'Multa', ...multa, 'Pagar este documento até', '20/05/2022',
    'Valor Total do Documento', '8.690,56', '11/05/2022 08:44:05', 'AUTENTICAÇÃO MECÂNICA', 'Pague com o PIX', 'Juros', '0,00', 'Total', '6.248,93', '2.441,63', '8.690,56'
  ]

  it('reads the CNPJ, the period, the number, the collection line and the composition by order', async () => {
    const result = await extractPdf(await pageOfLines(text(['0,00', '0,00', '0,00']), 3))
    expect(result.documentType).toBe('DAS')
    expect(result.engine.parserBlocked).toBe(false)
    expect(result.data).toMatchObject({
      cnpj: '87231447000150', razaoSocial: 'COMERCIO DE FERRAGENS SAO JOAO LTDA', competencia: '2022-04', dataVencimento: '2022-05-20', pagarAte: '2022-05-20',
      numeroDocumento: '07202213153961966', valorTotal: 8690.56, linhaDigitavel: line.line.replace(/\D/g, ''), dataEmissao: '2022-05-11T08:44:05',
      composicao: [
        { codigo: '1001', denominacao: 'IRPJ - SIMPLES NACIONAL', principal: 6248.93, multa: 0, juros: null, total: 6248.93, periodo: '2022-04', uf: null },
        { codigo: '1007', denominacao: 'ICMS - SIMPLES NACIONAL', principal: 2441.63, multa: 0, juros: null, total: 2441.63, periodo: '2022-04', uf: 'RS' }
      ],
      totais: { principal: 8690.56, multa: 0, juros: 0, total: 8690.56 }
    })
    expect(result.engine.matchedRules).toEqual(expect.arrayContaining(['check:collection-line-digits', 'check:composition-adds-up']))
    // Juros prints one cell for two blank rows: a row's amount would be summed into Totais too, so
    // it is the total, and Totais adds up with it (principal + multa + juros = total).
    expect(result.warnings).toEqual([])
  })

  it('a lone cell under Multa or Juros with which Totais would not add up is not taken for the total', async () => {
    const lines = text(['0,00', '0,00', '0,00'])
    lines[lines.indexOf('Juros') + 1] = '1,00'
    const result = await extractPdf(await pageOfLines(lines, 3))
    expect((result.data as { totais: { juros: number | null } }).totais.juros).toBeNull()
    expect(result.warnings).toEqual([expect.objectContaining({ code: 'COLUMN_NOT_PLACED', field: 'composicao', message: expect.stringMatching(/"juros" prints 1 values for 2 rows/) })])
  })

  // Another library's order (the real guides of the corpus given column by column): the period
  // handed over before its label, `Código Denominação` as one piece heading the codes, the
  // denominations further down, `Razão Social` and `Data de Vencimento` one under the other.
  const shuffled = (dates: { due: string, payUntil: string }): string[] => [
    'CNPJ', '87.231.447/0001-50 COMERCIO DE FERRAGENS SAO JOAO LTDA', 'Abril/2022', 'Observações', 'Esta guia foi emitida', 'para teste.',
    'Período de Apuração', 'Composição do Documento de Arrecadação', 'Código Denominação', '1001', '1007', line.line,
    'Documento de Arrecadação do Simples Nacional', 'SENDA (Versão:4.5.0)', 'IRPJ - SIMPLES NACIONAL', '04/2022', 'ICMS - SIMPLES NACIONAL',
    'PORTO ALEGRE (RS) - 04/2022', 'Totais', 'Razão Social', 'Data de Vencimento', dates.due, 'Número do Documento', '07.20.22131.5396196-6',
    'Principal', '6.248,93', '2.441,63', '8.690,56', 'CNPJ:', 'Número:', 'Pagar até:', 'Valor:', '87.231.447/0001-50', '07.20.22131.5396196-6',
    dates.payUntil, '8.690,56', 'Pagar este documento até', dates.payUntil, 'Valor Total do Documento', '8.690,56', 'Total', '6.248,93', '2.441,63', '8.690,56'
  ]

  it('reads the period, the due date, the observations and the denominations when the order hands them over apart', async () => {
    const result = await extractPdf(await pageOfLines(shuffled({ due: '20/05/2022', payUntil: '31/05/2022' }), 3))
    expect(result.documentType).toBe('DAS')
    expect(result.data).toMatchObject({
      cnpj: '87231447000150', competencia: '2022-04', dataVencimento: '2022-05-20', pagarAte: '2022-05-31', numeroDocumento: '07202213153961966',
      observacoes: 'Esta guia foi emitida para teste.',
      composicao: [
        { codigo: '1001', denominacao: 'IRPJ - SIMPLES NACIONAL', principal: 6248.93, total: 6248.93, periodo: '2022-04', municipio: null, uf: null },
        { codigo: '1007', denominacao: 'ICMS - SIMPLES NACIONAL', principal: 2441.63, total: 2441.63, periodo: '2022-04', municipio: 'PORTO ALEGRE', uf: 'RS' }
      ]
    })
    expect(result.warnings).toEqual([])
  })

  it('a due date whose two readings by order disagree is null with a warning', async () => {
    // The date after `Data de Vencimento` is the pay-until date; the page's other date says otherwise.
    const lines = shuffled({ due: '31/05/2022', payUntil: '31/05/2022' })
    lines.splice(lines.indexOf('Principal'), 0, '20/05/2022')
    const result = await extractPdf(await pageOfLines(lines, 3))
    expect((result.data as { dataVencimento: string | null }).dataVencimento).toBeNull()
    expect(result.warnings).toEqual(expect.arrayContaining([expect.objectContaining({ field: 'dataVencimento', message: expect.stringMatching(/Data de Vencimento.*not guessed/) })]))
  })

  it('a money column printed with fewer cells than rows is null with a warning, never lined up by guess', async () => {
    const result = await extractPdf(await pageOfLines(text(['1,00', '1,00']), 3))
    const data = result.data as { composicao: Array<{ multa: number | null }>, totais: { multa: number | null } }
    expect(data.composicao.map((r) => r.multa)).toEqual([null, null])
    expect(data.totais.multa).toBeNull()
    expect(result.warnings).toEqual(expect.arrayContaining([expect.objectContaining({ code: 'COLUMN_NOT_PLACED', message: expect.stringMatching(/"multa" prints 2 values for 2 rows/) })]))
  })

  // pypdf's order: each printed line kept whole in the content stream's order, pieces of one
  // baseline glued without a space (`1001IRPJ`, `31/05/2022Observações`), a leading space kept,
  // the header's values on one line, and the totals handed over as principal, juros, multa, total.
  const glued = (totals: string): string[] => [
    'Documento de Arrecadação', 'do Simples Nacional', ' 87.231.447/0001-50 COMERCIO DE FERRAGENS SAO JOAO LTDA',
    'Período de Apuração Data de Vencimento Número do Documento', '07.20.22131.5396196-6Pagar este documento até', '31/05/2022Observações',
    'Esta guia foi emitida para teste. Valor Total do Documento', '8.690,56CNPJ Razão Social', 'Abril/2022 20/05/2022',
    'Código Principal Denominação Total Multa JurosComposição do Documento de Arrecadação',
    '1001IRPJ - SIMPLES NACIONAL 6.000,00 100,00 148,93 6.248,93', '04/2022', '1007ICMS - SIMPLES NACIONAL 2.400,00 20,00 21,63 2.441,63', 'RS - 04/2022',
    totals, 'SENDA (Versão:4.5.0) 11/05/2022 08:44:05 11 Página: /', `${line.line} AUTENTICAÇÃO MECÂNICA`,
    'Documento de Arrecadação do Simples Nacional', 'Número: 07.20.22131.5396196-6', 'Pagar até: 31/05/2022', 'Valor: 8.690,56 CNPJ:Pague com o PIX'
  ]
  const gluedPdf = async (totals: string): Promise<Uint8Array> => await writeTextPdf([glued(totals).map((text, i) => ({ text, x: 40, y: 800 - i * 14 }))], { seed: 1, inOrder: true })

  it('reads whole lines whose pieces a library glued: the header values on one line, the codes glued to their names', async () => {
    const result = await extractPdf(await gluedPdf('Totais 8.400,00 120,00 170,56 8.690,56'))
    expect(result.documentType).toBe('DAS')
    expect(result.data).toMatchObject({
      cnpj: '87231447000150', razaoSocial: 'COMERCIO DE FERRAGENS SAO JOAO LTDA', competencia: '2022-04', dataVencimento: '2022-05-20', pagarAte: '2022-05-31',
      numeroDocumento: '07202213153961966', valorTotal: 8690.56, observacoes: 'Esta guia foi emitida para teste.',
      composicao: [
        { codigo: '1001', denominacao: 'IRPJ - SIMPLES NACIONAL', principal: 6000, multa: 100, juros: 148.93, total: 6248.93, periodo: '2022-04', uf: null },
        { codigo: '1007', denominacao: 'ICMS - SIMPLES NACIONAL', principal: 2400, multa: 20, juros: 21.63, total: 2441.63, periodo: '2022-04', uf: 'RS' }
      ],
      totais: { principal: 8400, multa: 120, juros: 170.56, total: 8690.56 }
    })
    expect(result.warnings).toEqual([])
  })

  it('rows and totals whose orders swap two columns leave both columns null with a warning, never one order picked', async () => {
    const result = await extractPdf(await gluedPdf('Totais 8.400,00 170,56 120,00 8.690,56'))
    const data = result.data as { composicao: Array<{ principal: number | null, multa: number | null, juros: number | null, total: number | null }>, totais: Record<string, number | null> }
    expect(data.composicao.map((r) => [r.principal, r.multa, r.juros, r.total])).toEqual([[6000, null, null, 6248.93], [2400, null, null, 2441.63]])
    expect(data.totais).toEqual({ principal: 8400, multa: null, juros: null, total: 8690.56 })
    expect(result.warnings).toEqual(expect.arrayContaining([expect.objectContaining({ code: 'LABEL_VALUE_CONFLICT', field: 'totais.multa', message: expect.stringMatching(/swap multa and juros.*not guessed/) })]))
  })

  it('reads a header handed over label before value, each value after the next label, the stub as a column of labels, and a row of three amounts', async () => {
    // pdftotext's reading order of the real guides; the row prints a principal, one more amount and the total.
    const collection = buildCollectionLine({ segment: '5', valueId: '8', amountCents: 624_893, issuer: '0328', free: `22140${'07202213153961966'}001` })
    const text = [
      'Documento de Arrecadação', 'do Simples Nacional', 'CNPJ', 'Razão Social', '87.231.447/0001-50', 'COMERCIO DE FERRAGENS SAO JOAO LTDA',
      'Período de Apuração', 'Data de Vencimento', 'Abril/2022', 'Número do Documento', '20/05/2022', 'Pagar este documento até',
      '07.20.22131.5396196-6', 'Observações', '31/05/2022', 'Esta guia foi emitida para teste.', 'Valor Total do Documento', '6.248,93',
      'Composição do Documento de Arrecadação', '1001 IRPJ - SIMPLES NACIONAL 6.000,00 248,93 6.248,93', '04/2022', 'Totais 6.000,00 248,93 6.248,93',
      'SENDA (Versão:4.5.0) 11/05/2022 08:44:05', collection.line, 'Pague com o PIX', 'CNPJ:', 'Número:', 'Pagar até:', 'Valor:',
      '87.231.447/0001-50', '07.20.22131.5396196-6', '31/05/2022', '6.248,93'
    ]
    const result = await extractPdf(await writeTextPdf([text.map((t, i) => ({ text: t, x: 40, y: 800 - i * 14 }))], { seed: 1, inOrder: true }))
    expect(result.data).toMatchObject({
      cnpj: '87231447000150', razaoSocial: 'COMERCIO DE FERRAGENS SAO JOAO LTDA', competencia: '2022-04', dataVencimento: '2022-05-20', pagarAte: '2022-05-31',
      numeroDocumento: '07202213153961966', observacoes: 'Esta guia foi emitida para teste.',
      composicao: [{ codigo: '1001', principal: 6000, multa: null, juros: null, total: 6248.93, periodo: '2022-04' }],
      totais: { principal: 6000, multa: null, juros: null, total: 6248.93 }
    })
    expect(result.warnings).toEqual(expect.arrayContaining([expect.objectContaining({ code: 'LABEL_VALUE_CONFLICT', field: 'composicao.0.multa', message: expect.stringMatching(/multa or the juros.*not guessed/) })]))
  })
})
