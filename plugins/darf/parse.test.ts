import { describe, expect, it } from 'vitest'
import { writeTextPdf } from '../../fixtures/extraction/pdf-writer.js'
import { extractPdf, pluginCases } from '../../fixtures/extraction/plugin-cases.js'
import { generateDarf } from './fixtures/generate.js'
import type { DarfOptions } from './fixtures/generate.js'
import { memo, pageOfLines } from '../../fixtures/extraction/helpers.js'

const fixture = memo(generateDarf)
const pdf = (o: DarfOptions) => async () => (await fixture(o)).pdf
const truth = async (o: DarfOptions) => (await fixture(o)).truth

const cases: Array<{ name: string, options: DarfOptions, pages?: number }> = [
  { name: 'SENDA, monthly rows, one page', options: { seed: 1, quarterly: false } },
  { name: 'SENDA, another company and period (late: multa and juros)', options: { seed: 7, quarterly: false, late: true } },
  { name: 'SENDA, quarterly IRPJ/CSLL (header period a date, "2º Trimestre" rows)', options: { seed: 2, quarterly: true } },
  { name: 'SENDA, two pages, header period "Diversos", Totais on page 2', options: { seed: 4, twoPages: true }, pages: 2 },
  { name: 'numbered boxes, Sicalc Web print with document number, two copies', options: { seed: 3, layout: 'CAMPOS_NUMERADOS' } },
  { name: 'numbered boxes, another seed', options: { seed: 8, layout: 'CAMPOS_NUMERADOS' } },
  { name: 'numbered boxes, old print (issuer 0064, modulo 10, dashes, no document number)', options: { seed: 5, layout: 'CAMPOS_NUMERADOS', old: true } },
  { name: 'numbered boxes, old IRPF print of a person (CPF in box 03, code 0211)', options: { seed: 6, layout: 'CAMPOS_NUMERADOS', old: true, cpf: true } }
]

describe('darf: fixture → expected data', () => {
  pluginCases(cases.map((c) => ({
    name: `${c.name}: every field equals the generator's truth`,
    pdf: pdf(c.options),
    data: () => truth(c.options),
    pages: c.pages ?? 1,
    result: { success: true, documentType: 'DARF', errors: [], warnings: [], engine: { family: 'RECEITA_FEDERAL', parser: 'darf', parserExecuted: true, parserBlocked: false, confidenceLevel: 'HIGH', confidence: 1, missingRules: [] } }
  })))

  it('reads multa and juros by column, not by count, when only some cells are printed', async () => {
    const options: DarfOptions = { seed: 7, quarterly: false, late: true }
    const t = await truth(options)
    // Three numbers on a row: principal, multa, total (the juros cell is empty).
    expect(t.tributos.some((r) => r.multa! > 0 && r.juros === null)).toBe(true)
    expect(t.tributos.some((r) => r.juros! > 0)).toBe(true)
    expect(t.pagarAte! > t.dataVencimento!).toBe(true)
    const result = await extractPdf(await pdf(options)())
    expect(result.data).toEqual(t)
    expect(result.evidence['tributos.0.multa']?.box.x).toBeCloseTo(370, 0)
  })
})

it('darf: a person\'s DARF carries the 11-digit CPF and the IRPF quota code', async () => {
  const t = await truth({ seed: 6, layout: 'CAMPOS_NUMERADOS', old: true, cpf: true })
  expect(t.cnpjCpf).toMatch(/^\d{11}$/)
  expect(t.tributos[0]!.codigoReceita).toBe('0211')
})

describe('darf: missing fields are null, never invented', () => {
  const omitted: Array<[string, DarfOptions, string]> = [
    ['SENDA', { seed: 11, quarterly: false, omit: ['razaoSocial'] }, 'razaoSocial'],
    ['SENDA', { seed: 11, quarterly: false, omit: ['numeroReciboDeclaracao'] }, 'numeroReciboDeclaracao'],
    ['SENDA', { seed: 11, quarterly: false, omit: ['dataEmissao'] }, 'dataEmissao'],
    ['SENDA', { seed: 11, quarterly: false, omit: ['linhaDigitavel'] }, 'linhaDigitavel'],
    ['numbered boxes', { seed: 12, layout: 'CAMPOS_NUMERADOS', omit: ['razaoSocial'] }, 'razaoSocial'],
    ['numbered boxes', { seed: 12, layout: 'CAMPOS_NUMERADOS', omit: ['numeroReferencia'] }, 'numeroReferencia'],
    ['numbered boxes', { seed: 12, layout: 'CAMPOS_NUMERADOS', omit: ['linhaDigitavel'] }, 'linhaDigitavel']
  ]
  for (const [layout, options, field] of omitted) {
    it(`${layout}: returns null for ${field} when the PDF does not print it`, async () => {
      const result = await extractPdf(await pdf(options)())
      expect(result.success).toBe(true)
      expect((result.data as Record<string, unknown>)[field]).toBeNull()
      expect(result.data).toEqual(await truth(options))
      expect(Object.keys(result.evidence).some((k) => k === field || k.startsWith(`${field}.`))).toBe(false)
    })
  }

  it('the same fixture without the omission prints the field', async () => {
    expect((await truth({ seed: 11, quarterly: false })).numeroReciboDeclaracao).toMatch(/^\d{14}$/)
    expect((await truth({ seed: 11, quarterly: false })).razaoSocial).not.toBeNull()
  })
})

describe('darf: consistency checks', () => {
  for (const layout of ['SENDA', 'CAMPOS_NUMERADOS'] as const) {
    it(`${layout}: a tampered collection line lowers confidence with a warning`, async () => {
      const good = await extractPdf(await pdf({ seed: 21, layout })())
      const options: DarfOptions = { seed: 21, layout, tamperLine: true }
      const bad = await extractPdf(await pdf(options)())
      expect(good.engine.matchedRules).toContain('check:collection-line')
      expect(bad.engine.missingRules).toEqual(['check:collection-line'])
      expect(bad.warnings).toEqual([expect.objectContaining({ code: 'PLUGIN_CHECK_FAILED', message: expect.stringMatching(/^collection-line:.*check digits/) })])
      expect(bad.engine.confidence).toBeLessThan(good.engine.confidence)
      // The line is still reported as printed, so a person can see the bad digit.
      expect(bad.data).toEqual(await truth(options))
    })
  }

  it('numbered boxes: two copies that disagree lower confidence and name the field', async () => {
    const options: DarfOptions = { seed: 22, layout: 'CAMPOS_NUMERADOS', copiesDisagree: true }
    const good = await extractPdf(await pdf({ seed: 22, layout: 'CAMPOS_NUMERADOS' })())
    const bad = await extractPdf(await pdf(options)())
    expect(good.engine.matchedRules).toContain('check:copies-agree')
    expect(bad.engine.missingRules).toContain('check:copies-agree')
    expect(bad.warnings).toEqual(expect.arrayContaining([
      expect.objectContaining({ code: 'DARF_COPIES_DIFFER', field: 'valorTotal' }),
      expect.objectContaining({ code: 'PLUGIN_CHECK_FAILED', message: expect.stringMatching(/^copies-agree:.*valorTotal/) })
    ]))
    expect(bad.engine.confidence).toBeLessThan(good.engine.confidence)
    // The first copy's value is returned, and it is the one the barcode holds.
    expect(bad.data).toEqual(await truth(options))
    expect(bad.engine.matchedRules).toContain('check:barcode-amount')
  })

  it('SENDA: a row whose total is not principal + multa + juros fails the row and Totais checks', async () => {
    // Late: the second row prints all four amounts, so its sum is checked (a blank cell could also be an unplaced amount).
    const bad = await extractPdf(await pdf({ seed: 23, quarterly: false, late: true, badRow: true })())
    expect(bad.success).toBe(true)
    expect(bad.engine.missingRules).toEqual(expect.arrayContaining(['check:rows-add-up', 'check:totais-add-up']))
    expect(bad.engine.matchedRules).toContain('check:barcode-amount')
    expect(bad.engine.confidence).toBeLessThan(1)
  })

  it('SENDA: a stub whose Valor differs from the header fails stub-agrees only', async () => {
    const options: DarfOptions = { seed: 25, quarterly: false, badStub: true }
    const bad = await extractPdf(await pdf(options)())
    expect(bad.engine.missingRules).toEqual(['check:stub-agrees'])
    expect(bad.warnings).toEqual([expect.objectContaining({ code: 'PLUGIN_CHECK_FAILED', message: 'stub-agrees: the stub differs from the header in amount' })])
    expect(bad.data).toEqual(await truth(options))
  })

  it('SENDA: the printed document number is the one inside the barcode', async () => {
    const o: DarfOptions = { seed: 24, quarterly: false }
    const t = await truth(o)
    expect(t.codigoBarras!.slice(24, 41)).toBe(t.numeroDocumento)
    const result = await extractPdf(await pdf(o)())
    expect(result.engine.matchedRules).toEqual(expect.arrayContaining(['check:document-number-in-barcode', 'check:barcode-amount', 'check:total-matches-totais', 'check:stub-agrees']))
  })
})

describe('darf: evidence', () => {
  it('two pages: rows and Totais of page 2 are cited on page 2, the header on page 1', async () => {
    const options: DarfOptions = { seed: 4, twoPages: true }
    const result = await extractPdf(await pdf(options)())
    const t = await truth(options)
    expect(t.tributos).toHaveLength(10)
    expect(result.evidence.numeroDocumento?.page).toBe(1)
    expect(result.evidence['tributos.0.total']?.page).toBe(1)
    expect(result.evidence['tributos.9.total']?.page).toBe(2)
    expect(result.evidence['totais.total']).toEqual({ page: 2, source: expect.stringMatching(/^Totais /), box: expect.objectContaining({ x: expect.closeTo(490, 0) }) })
  })

  it('numbered boxes: values are cited from the first copy', async () => {
    const result = await extractPdf(await pdf({ seed: 3, layout: 'CAMPOS_NUMERADOS' })())
    expect(result.evidence.valorTotal).toEqual({ page: 1, source: expect.stringMatching(/10 VALOR TOTAL/), box: expect.objectContaining({ x: expect.closeTo(490, 0) }) })
    expect(result.evidence.valorTotal!.box.y).toBeGreaterThan(421)
  })
})

describe('darf: printed variants of documents.md §6a', () => {
  it('reads a person\'s IRPF quota DARF: CPF header, date period, "PA 01/01/2026 3a. Quota" row, a header drawn as one run', async () => {
    const lines = [
      'Documento de Arrecadação de Receitas Federais', 'CPF Nome', '123.456.789-09 MARIA DA SILVA',
      'Período de Apuração Data de Vencimento Número do Documento Pagar este documento até',
      '31/12/2025 30/06/2026 07.93.26150.1234567-1 30/06/2026', 'Observações Valor Total do Documento', 'web v5.2.2 1.234,56',
      'Composição do Documento de Arrecadação', 'Código Denominação Principal Multa Juros Total',
      '0211 IRPF - QUOTA 1.200,00 34,56 1.234,56', '01 IRPF - Quota do Exercício', 'PA 01/01/2026 3a. Quota Vencimento 30/06/2026',
      'Totais 1.200,00 34,56 1.234,56', 'SENDA (Versão:2.6.3) Página: 1/1 30/05/2026 09:10:11'
    ]
    const result = await extractPdf(await writeTextPdf([lines.map((text, i) => ({ text, x: 40, y: 800 - i * 14 }))], { seed: 3 }))
    expect(result.documentType).toBe('DARF')
    // The sums that need the unknown cells are skipped, not failed; Totais still equals the document's total.
    expect(result.engine.missingRules).not.toContain('check:rows-add-up')
    expect(result.engine.matchedRules).toContain('check:total-matches-totais')
    expect(result.data).toMatchObject({
      layout: 'SENDA', cnpjCpf: '12345678909', razaoSocial: 'MARIA DA SILVA', periodoApuracao: '2025-12-31', numeroDocumento: '07932615012345671',
      valorTotal: 1234.56, linhaDigitavel: null, dataEmissao: '2026-05-30T09:10:11',
      // Three numbers and no usable column header: principal and total are sure, the middle one may be multa or juros, so neither is guessed.
      tributos: [{ codigoReceita: '0211', codigoVariacao: '01', descricao: 'IRPF - Quota do Exercício', periodoApuracao: '2026-01-01', vencimento: '2026-06-30', principal: 1200, multa: null, juros: null, total: 1234.56 }],
      totais: { principal: 1200, multa: null, juros: null, total: 1234.56 }
    })
  })
})

describe('darf: printed variants of documents.md §6b', () => {
  it('reads the variation printed in box 04 (2089-01); left-column text sharing the name line stays in the name (a known limit)', async () => {
    const lines = [
      'MINISTÉRIO DA FAZENDA 02 PERÍODO DE APURAÇÃO 31/03/2024', 'SECRETARIA DA RECEITA FEDERAL DO BRASIL 03 NÚMERO DO CPF OU CNPJ 11.222.333/0001-81',
      'Documento de Arrecadação de Receitas Federais 04 CÓDIGO DA RECEITA 2089-01', 'DARF 05 NÚMERO DE REFERÊNCIA',
      '01 NOME / TELEFONE 06 DATA DE VENCIMENTO 30/04/2024', 'EMPRESA EXEMPLO LTDA 2-4 07 VALOR DO PRINCIPAL 64,32',
      '08 VALOR DA MULTA', '09 VALOR DOS JUROS E / OU ENCARGOS DL - 1.025/69', '10 VALOR TOTAL 64,32'
    ]
    const result = await extractPdf(await writeTextPdf([lines.map((text, i) => ({ text, x: 40, y: 800 - i * 14 }))], { seed: 9 }))
    expect(result.documentType).toBe('DARF')
    expect(result.data).toMatchObject({
      layout: 'CAMPOS_NUMERADOS', cnpjCpf: '11222333000181', razaoSocial: 'EMPRESA EXEMPLO LTDA 2-4', periodoApuracao: '2024-03-31', numeroReferencia: null, valorTotal: 64.32,
      tributos: [{ codigoReceita: '2089', codigoVariacao: '01', principal: 64.32, multa: null, juros: null, total: 64.32 }],
      linhaDigitavel: null, vias: { quantidade: 1, divergencias: [] }
    })
    expect(result.engine.matchedRules).toContain('check:rows-add-up')
  })
})

describe('darf: numbered boxes with the values low in their boxes (old prints, issue 33)', () => {
  // An old print (2014): each box's number and label at its top left, the value right-aligned at
  // its bottom right, on a line of its own; boxes 05 and 08 blank.
  const boxes: Array<[string, string | null]> = [
    ['02 PERÍODO DE APURAÇÃO', '31/03/2014'], ['03 NÚMERO DO CPF OU CNPJ', '11.222.333/0001-81'], ['04 CÓDIGO DA RECEITA', '2089'],
    ['05 NÚMERO DE REFERÊNCIA', null], ['06 DATA DE VENCIMENTO', '30/04/2014'], ['07 VALOR DO PRINCIPAL', '1.234,56'], ['08 VALOR DA MULTA', null],
    ['09 VALOR DOS JUROS E / OU ENCARGOS DL - 1.025/69', '12,34'], ['10 VALOR TOTAL', '1.246,90']
  ]
  const items = [
    { text: 'MINISTÉRIO DA FAZENDA', x: 40, y: 800 }, { text: 'SECRETARIA DA RECEITA FEDERAL', x: 40, y: 788 },
    { text: 'Documento de Arrecadação de Receitas Federais', x: 40, y: 760 }, { text: 'DARF', x: 40, y: 740 },
    { text: '01 NOME / TELEFONE', x: 40, y: 700 }, { text: 'EMPRESA EXEMPLO LTDA', x: 40, y: 688 },
    ...boxes.flatMap(([label, value], i) => [
      { text: label, x: 300, y: 800 - i * 26 },
      ...(value === null ? [] : [{ text: value, x: 555 - value.length * 5, y: 800 - i * 26 - 12 }])
    ])
  ]

  it('reads each value from its own box, the blank boxes null', async () => {
    const result = await extractPdf(await writeTextPdf([items], { seed: 4 }))
    expect(result.documentType).toBe('DARF')
    expect(result.data).toMatchObject({
      layout: 'CAMPOS_NUMERADOS', cnpjCpf: '11222333000181', periodoApuracao: '2014-03-31', dataVencimento: '2014-04-30', numeroReferencia: null, valorTotal: 1246.9,
      tributos: [{ codigoReceita: '2089', periodoApuracao: '2014-03-31', vencimento: '2014-04-30', principal: 1234.56, multa: null, juros: 12.34, total: 1246.9 }]
    })
    expect(result.engine.matchedRules).toContain('check:rows-add-up')
    expect(result.evidence.codigoReceita?.box.x).toBeCloseTo(535, 0)
  })
})

describe('darf: SENDA print given column by column (positions lost, issue 33)', () => {
  // Another library's order: the CNPJ and the name one piece under `CNPJ`, the period handed over
  // before its label, `Código Denominação` one piece over the codes, each row's lines further
  // down, the footer's date-time apart from `SENDA (Versão…)`.
  const lines = (period: string): string[] => [
    'CNPJ', '11.222.333/0001-81 EMPRESA EXEMPLO LTDA', period, 'Período de Apuração', 'Observações', 'Composição do Documento de Arrecadação', 'Código Denominação',
    '1213', 'Documento de Arrecadação de Receitas Federais', 'SENDA (Versão:5.1.7)', 'CONTRIBUIÇÃO TERCEIROS - SENAR', '06 CP TERCEIROS - SENAR - AQUIS PROD RUR PF POR PJ',
    'PA:08/2023 Vencimento:20/09/2023', 'Razão Social', 'Data de Vencimento', '20/09/2023', 'Número do Documento', '07.16.23251.7633954-5', 'Principal', '1.285,00',
    'Pagar este documento até', '29/09/2023', 'Valor Total do Documento', '1.285,00', '08/09/2023 15:22:13', 'Total', '1.285,00'
  ]

  it('reads the identity, the period, the row\'s own lines and the footer by order', async () => {
    const result = await extractPdf(await pageOfLines(lines('Agosto/2023'), 10))
    expect(result.documentType).toBe('DARF')
    expect(result.data).toMatchObject({
      layout: 'SENDA', cnpjCpf: '11222333000181', razaoSocial: 'EMPRESA EXEMPLO LTDA', periodoApuracao: '2023-08', dataVencimento: '2023-09-20', pagarAte: '2023-09-29',
      dataEmissao: '2023-09-08T15:22:13',
      tributos: [{ codigoReceita: '1213', codigoVariacao: '06', denominacao: 'CONTRIBUIÇÃO TERCEIROS - SENAR', descricao: 'CP TERCEIROS - SENAR - AQUIS PROD RUR PF POR PJ', periodoApuracao: '2023-08', vencimento: '2023-09-20', principal: 1285, total: 1285 }]
    })
  })

  it('reads the header and the stub whose values come one label late (pdftotext\'s order of a row of labels over a row of values)', async () => {
    const result = await extractPdf(await pageOfLines([
      'Documento de Arrecadação de Receitas Federais', 'CNPJ', 'Razão Social', '11.222.333/0001-81', 'EMPRESA EXEMPLO LTDA', 'Período de Apuração', 'Data de Vencimento', '31/08/2023',
      'Número do Documento', '20/09/2023', 'Pagar este documento até', '07.16.23251.7633954-5', 'Observações', '29/09/2023', 'Valor Total do Documento', '1.285,00',
      'Composição do Documento de Arrecadação', 'Código Denominação', 'Principal', '1213', '1.285,00', '1.285,00', 'CONTRIBUIÇÃO TERCEIROS - SENAR', 'Multa', 'Juros', 'Total',
      '06 CP TERCEIROS - SENAR - AQUIS PROD RUR PF POR PJ', 'PA:08/2023 Vencimento:20/09/2023', 'Totais',
      'Documento de Arrecadação de Receitas Federais', 'Pague com o PIX', 'CNPJ:', 'Número:', 'Pagar até:', 'Valor:', '11.222.333/0001-81',
      '07.16.23251.7633954-5', '29/09/2023', '1.285,00'
    ], 10))
    expect(result.data).toMatchObject({
      cnpjCpf: '11222333000181', razaoSocial: 'EMPRESA EXEMPLO LTDA', periodoApuracao: '2023-08-31', dataVencimento: '2023-09-20', numeroDocumento: '07162325176339545', pagarAte: '2023-09-29',
      canhoto: { cnpjCpf: '11222333000181', numeroDocumento: '07162325176339545', pagarAte: '2023-09-29', valor: 1285 }
    })
    // `Total` printed between the row's name and its description is no name.
    expect((result.data as { tributos: Array<{ denominacao: string | null }> }).tributos[0]?.denominacao).not.toBe('Total')
  })

  it('a number reference in a row\'s description loses the space a library put after its slash (9.711/ 98)', async () => {
    const result = await extractPdf(await pageOfLines([
      'Documento de Arrecadação de Receitas Federais', '11.222.333/0001-81 EMPRESA EXEMPLO LTDA', 'Período de Apuração Data de Vencimento Número do Documento',
      'Valor Total do Documento', '1.258,40', 'Composição do Documento de Arrecadação',
      '1162 CONTRIBUIÇÃO SUJEITA RETENÇÃO PREVIDENCIÁRIA 1.000,00 200,00 58,40 1.258,40', '01 CP PATRONAL - RETENÇÃO LEI 9.711/ 98', 'PA 01/2022 Vencimento 18/02/2022'
    ], 10))
    expect(result.data).toMatchObject({ tributos: [{ descricao: 'CP PATRONAL - RETENÇÃO LEI 9.711/98' }] })
  })

  it('a totals row whose cells came apart, read without its header, gives no amount rather than a juros as the total', async () => {
    const result = await extractPdf(await pageOfLines([
      'Documento de Arrecadação de Receitas Federais', '11.222.333/0001-81 EMPRESA EXEMPLO LTDA', 'Período de Apuração Data de Vencimento Número do Documento',
      'Valor Total do Documento', '1.258,40', 'Código Principal', 'Denominação Total', 'Multa Juros', 'Composição do Documento de Arrecadação',
      '1162 CONTRIBUIÇÃO SUJEITA RETENÇÃO PREVIDENCIÁRIA 1.000,00 200,00 58,40 1.258,40', '01 CP PATRONAL - RETENÇÃO LEI 9.711/98', 'PA 01/2022 Vencimento 18/02/2022',
      'Totais 1.000,00 58,40', '200,00 1.258,40'
    ], 10))
    expect(result.data).toMatchObject({ tributos: [{ principal: 1000, multa: 200, juros: 58.4, total: 1258.4 }], totais: { principal: null, multa: null, juros: null, total: null } })
    expect(result.warnings).toEqual(expect.arrayContaining([expect.objectContaining({ code: 'COLUMN_NOT_PLACED', field: 'totais' })]))
  })

  it('a money column lined up by order whose cells do not add up to its printed sum (a juros among the totals) is not placed', async () => {
    const result = await extractPdf(await pageOfLines([
      'Documento de Arrecadação de Receitas Federais', 'CNPJ', 'Razão Social', '11.222.333/0001-81', 'EMPRESA EXEMPLO LTDA', 'Período de Apuração', 'Data de Vencimento', '06/2025', '20/07/2025',
      'Valor Total do Documento', '335,00', 'Composição do Documento de Arrecadação', 'Código', 'Denominação', 'Principal', 'Multa',
      '8109', '02', 'PIS - FATURAMENTO', '100,00', 'PIS - Faturamento', 'PA:06/2025', 'Vencimento:20/07/2025', '10,00',
      '1162', '01', 'RETENÇÃO', '200,00', 'CP PATRONAL', 'PA:06/2025', 'Vencimento:20/07/2025', '20,00', '30,00', '335,00', 'Totais', '300,00',
      'Juros', 'Total', '110,00', '5,00', '225,00'
    ], 3))
    expect(result.data).toMatchObject({ tributos: [{ codigoReceita: '8109', total: null }, { codigoReceita: '1162', total: null }] })
    expect(result.warnings).toEqual(expect.arrayContaining([expect.objectContaining({ code: 'COLUMN_NOT_PLACED', message: expect.stringMatching(/"total".*115\.00.*225,00/) })]))
  })

  it('a page printing more codes than the rows its columns were lined up with: the codes are the rows, the next page\'s codes stay on it', async () => {
    const page = (lines: string[]) => lines.map((text, i) => ({ text, x: 40, y: 800 - i * 14 }))
    const row = (code: string, name: string, amount: string): string[] => [code, '01', name, amount, `${name} - DESCRIÇÃO`, 'PA:06/2025', 'Vencimento:20/07/2025', amount]
    const result = await extractPdf(await writeTextPdf([page([
      'Documento de Arrecadação de Receitas Federais', 'CNPJ', 'Razão Social', '11.222.333/0001-81', 'EMPRESA EXEMPLO LTDA', 'Período de Apuração', 'Data de Vencimento', 'Diversos', '20/07/2025',
      'Valor Total do Documento', '600,00', 'Composição do Documento de Arrecadação', 'Código', 'Denominação', 'Principal',
      // pdftotext: the first row whole under the headers, then the other headers, then the other rows.
      '1099', '01', 'CP PATRONAL', 'CP PATRONAL - DESCRIÇÃO', 'PA:06/2025', '100,00', 'Multa', 'Juros', 'Total', '100,00', 'Vencimento:20/07/2025',
      ...row('0561', 'IRRF', '200,00'), 'SENDA (Versão:2.6.3) Página: 1/2'
    ]), page(['Documento de Arrecadação de Receitas Federais', 'Composição do Documento de Arrecadação', 'Código', 'Denominação', ...row('8109', 'PIS', '300,00'), 'SENDA (Versão:2.6.3) Página: 2/2'])], { seed: 1 }))
    const rows = (result.data as { tributos: Array<{ codigoReceita: string | null, principal: number | null }> }).tributos
    expect(rows.map((r) => r.codigoReceita)).toEqual(['1099', '0561', '8109'])
    expect(rows.slice(0, 2).map((r) => r.principal)).toEqual([null, null])
    expect(result.warnings).toEqual(expect.arrayContaining([expect.objectContaining({ code: 'COLUMN_NOT_PLACED', message: expect.stringMatching(/page 1: 2 codes are printed/) })]))
  })

  it('a period that could be either of two lines is null, never guessed', async () => {
    const both = lines('Agosto/2023')
    both.splice(both.indexOf('Observações') + 1, 0, 'Julho/2023')
    const result = await extractPdf(await pageOfLines(both, 10))
    expect((result.data as { periodoApuracao: string | null }).periodoApuracao).toBeNull()
  })
})

describe('darf: numbered boxes given as text (positions lost, issue 33)', () => {
  // An old print (2014) as a text extractor hands it over: the left column, then every box
  // label, then the values of the boxes that are filled, one piece a line from the margin.
  const head = [
    'MINISTÉRIO DA FAZENDA', 'SECRETARIA DA RECEITA FEDERAL DO BRASIL', 'Documento de Arrecadação de Receitas Federais', 'DARF',
    '01 NOME / TELEFONE', 'EMPRESA EXEMPLO LTDA', '(51) 3333-4444',
    '02 PERÍODO DE APURAÇÃO', '03 NÚMERO DO CPF OU CNPJ', '04 CÓDIGO DA RECEITA', '05 NÚMERO DE REFERÊNCIA', '06 DATA DE VENCIMENTO',
    '07 VALOR DO PRINCIPAL', '08 VALOR DA MULTA', '09 VALOR DOS JUROS E / OU ENCARGOS DL - 1.025/69', '10 VALOR TOTAL',
    '11 AUTENTICAÇÃO BANCÁRIA (Somente nas 1a. e 2a. vias)'
  ]

  it('pairs the values with the boxes by order, the blank reference, multa and juros taking none', async () => {
    const lines = [...head, '31/03/2014', '11.222.333/0001-81', '2089', '30/04/2014', '1.234,56', '1.234,56', '1a. via']
    const result = await extractPdf(await pageOfLines(lines, 4))
    expect(result.documentType).toBe('DARF')
    expect(result.engine.parserBlocked).toBe(false)
    expect(result.data).toMatchObject({
      layout: 'CAMPOS_NUMERADOS', cnpjCpf: '11222333000181', razaoSocial: 'EMPRESA EXEMPLO LTDA', periodoApuracao: '2014-03-31', dataVencimento: '2014-04-30',
      numeroReferencia: null, valorTotal: 1234.56,
      tributos: [{ codigoReceita: '2089', periodoApuracao: '2014-03-31', vencimento: '2014-04-30', principal: 1234.56, multa: null, juros: null, total: 1234.56 }]
    })
    expect(result.warnings).toEqual([])
    expect(result.evidence.codigoReceita?.source).toBe('2089')
  })

  it('a box\'s value on the line after its label when the label stands alone; never after a label that follows another', async () => {
    // pdftotext's order of a Sicalc print: most labels each followed by their value, `04` and
    // `10` by other text, box 06's label right after `Data limite para acolhimento:`.
    const lines = [
      'MINISTÉRIO DA FAZENDA', '02 PERÍODO DE APURAÇÃO', '31/12/2017', '03 NÚMERO DO CPF OU CNPJ', '11.222.333/0001-81', 'Documento de Arrecadação de Receitas Federais',
      '04 CÓDIGO DA RECEITA', 'DARF', '0190', '05 NÚMERO DE REFERÊNCIA', '01 NOME / RAZÃO SOCIAL', 'EMPRESA EXEMPLO LTDA', 'Data limite para acolhimento:',
      '06 DATA DE VENCIMENTO', '31/01/2018', '07 VALOR DO PRINCIPAL', '1.000,00', '08 VALOR DA MULTA', '200,00', '09 VALOR DOS JUROS E / OU', '258,30', '31/08/2022',
      'Observações:', '10 VALOR TOTAL', 'Sicalc Contribuinte - 7107 - SP', '1.458,30'
    ]
    const result = await extractPdf(await pageOfLines(lines, 6))
    expect(result.data).toMatchObject({
      periodoApuracao: '2017-12-31', cnpjCpf: '11222333000181', dataVencimento: null, pagarAte: null,
      tributos: [{ codigoReceita: null, principal: 1000, multa: 200, juros: 258.3 }]
    })
  })

  it('box labels in another order than their values (pdfminer): the values in the boxes\' numbered order, only when they add up', async () => {
    const lines = (total: string): string[] => [
      'MINISTÉRIO DA FAZENDA', '02 PERÍODO DE APURAÇÃO', 'SECRETARIA DA RECEITA FEDERAL DO BRASIL', '03 NÚMERO DO CPF OU CNPJ', 'Documento de Arrecadação de Receitas Federais',
      '04 CÓDIGO DA RECEITA', 'DARF', '01 NOME / RAZÃO SOCIAL', '05 NÚMERO DE REFERÊNCIA', '06 DATA DE VENCIMENTO', 'EMPRESA EXEMPLO LTDA', '07 VALOR DO PRINCIPAL',
      '10 VALOR TOTAL', '11 AUTENTICAÇÃO BANCÁRIA (Somente nas 1a. e 2a. vias)', '08 VALOR DA MULTA', '09 VALOR DOS JUROS E / OU ENCARGOS DL - 1.025/69',
      '31/01/2024', '11.222.333/0001-81', '5856', '29001546', '20/02/2024', '2.051,10', '410,22', '89,63', total, '1a. via'
    ]
    const result = await extractPdf(await pageOfLines(lines('2.550,95'), 7))
    expect(result.data).toMatchObject({
      periodoApuracao: '2024-01-31', cnpjCpf: '11222333000181', numeroReferencia: '29001546', dataVencimento: '2024-02-20', valorTotal: 2550.95,
      tributos: [{ codigoReceita: '5856', principal: 2051.1, multa: 410.22, juros: 89.63, total: 2550.95 }]
    })
    // A total that is not principal + multa + juros: the order is not trusted, no box is read by it.
    const off = await extractPdf(await pageOfLines(lines('2.550,96'), 7))
    expect(off.data).toMatchObject({ periodoApuracao: null, dataVencimento: null, valorTotal: null })
  })

  it('reads the title broken in two pieces handed over apart (not blocked for want of its title)', async () => {
    const apart = ['Federais', 'DARF', ...head.filter((l) => l !== 'Documento de Arrecadação de Receitas Federais' && l !== 'DARF'), 'Documento de Arrecadação de Receitas']
    const result = await extractPdf(await pageOfLines([...apart, '31/03/2014', '11.222.333/0001-81', '2089', '30/04/2014', '1.234,56', '1.234,56'], 8))
    expect(result.engine).toMatchObject({ parserBlocked: false, matchedRules: expect.arrayContaining(['title']) })
    expect(result.data).toMatchObject({ cnpjCpf: '11222333000181', dataVencimento: '2014-04-30', tributos: [{ codigoReceita: '2089' }] })
  })

  it('two copies: each copy\'s values are paired with its own labels', async () => {
    const values = ['31/03/2014', '11.222.333/0001-81', '2089', '30/04/2014', '1.234,56', '246,91', '1.481,47']
    const labels = head.slice(7)
    const lines = [...head.slice(0, 7), ...head.slice(0, 7), ...labels, ...labels, ...values, ...values]
    const result = await extractPdf(await pageOfLines(lines, 5))
    expect(result.data).toMatchObject({ tributos: [{ codigoReceita: '2089' }], vias: { quantidade: 2, divergencias: [] } })
  })

  it('two copies, the second\'s total handed over after its copy: not read there, so the copies do not differ in it', async () => {
    // pdftotext's order of an old print: each label and its value, the second copy's total at the end.
    const copy = (total: string[]): string[] => ['MINISTÉRIO DA FAZENDA', '02 PERÍODO DE APURAÇÃO', '30/11/2014', '03 NÚMERO DO CPF OU CNPJ', '11.222.333/0001-81',
      'Documento de Arrecadação de Receitas Federais', '04 CÓDIGO DA RECEITA', '2372', 'DARF', '05 NÚMERO DE REFERÊNCIA', '01 NOME / TELEFONE', '06 DATA DE VENCIMENTO', '20/12/2014',
      'EMPRESA EXEMPLO LTDA', '07 VALOR DO PRINCIPAL', '8.534,63', '08 VALOR DA MULTA', '09 VALOR DOS JUROS E / OU ENCARGOS DL - 1.025/69', '10 VALOR TOTAL', ...total,
      '11 AUTENTICAÇÃO BANCÁRIA (Somente nas 1a. e 2a. vias)']
    const result = await extractPdf(await pageOfLines([...copy(['8.534,63']), '1a. via', ...copy([]), '2a. via', '8.534,63'], 3))
    expect(result.data).toMatchObject({ valorTotal: 8534.63, vias: { quantidade: 2, divergencias: [] } })
    expect(result.warnings).toEqual(expect.arrayContaining([expect.objectContaining({ code: 'DARF_COPY_UNREAD', field: 'valorTotal' })]))
    expect(result.warnings.map((w) => w.code)).not.toContain('DARF_COPIES_DIFFER')
  })

  it('three amounts for the four money boxes: principal and total are sure, multa and juros are null with a warning, never guessed', async () => {
    const lines = [...head, '31/03/2014', '11.222.333/0001-81', '2089', '30/04/2014', '1.234,56', '246,91', '1.481,47']
    const result = await extractPdf(await pageOfLines(lines, 6))
    expect(result.data).toMatchObject({ tributos: [{ codigoReceita: '2089', principal: 1234.56, multa: null, juros: null, total: 1481.47 }] })
    expect(result.warnings).toEqual(expect.arrayContaining([
      expect.objectContaining({ code: 'LABEL_VALUE_CONFLICT', field: 'multa', message: expect.stringMatching(/"08 VALOR DA MULTA".*"246,91" or nothing/) }),
      expect.objectContaining({ code: 'LABEL_VALUE_CONFLICT', field: 'juros' })
    ]))
  })

  it('a filled box without its value (the code left out): the order no longer tells code from reference, and neither is guessed', async () => {
    const lines = [...head, '31/03/2014', '11.222.333/0001-81', '30/04/2014', '1.234,56', '1.234,56']
    const result = await extractPdf(await pageOfLines(lines, 7))
    expect(result.data).toMatchObject({ tributos: [] })
    const good = await extractPdf(await pageOfLines([...head, '31/03/2014', '11.222.333/0001-81', '2089', '30/04/2014', '1.234,56', '1.234,56'], 7))
    expect(result.engine.confidence).toBeLessThan(good.engine.confidence)
  })
})
