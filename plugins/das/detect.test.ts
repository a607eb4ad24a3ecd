import { describe, expect, it } from 'vitest'
import { extractPdf } from '../../fixtures/extraction/plugin-cases.js'
import { generateExtrato } from '../pgdas-extrato/fixtures/generate.js'
import { das } from './index.js'
import { pageOfLines } from '../../fixtures/extraction/helpers.js'

/** A page of lines, top to bottom, drawn shuffled. */
const page = pageOfLines

// A verifying line with issuer 0328 (amount 100,00), shared by the look-alikes so only their words differ.
const LINE = '85800000001 5 00000328253 4 34079925322 5 60702421630 0'

// documents.md §4 Exclusion and §10: each quotes the DAS's words.
const lookAlikes: Array<[string, string[], string]> = [
  ['a DAS-MEI', ['Documento de Arrecadação do Simples Nacional', 'Valor Total do Documento', 'CPF: 123.456.789-09', 'PGMEI(Versao:3.8.8)', '0151 INSS - SIMPLES NACIONAL - MEI 75,90 75,90', LINE], 'das:mei'],
  ['the RFB payment receipt', ['Comprovante de Arrecadação', 'Comprovamos que consta nos sistemas da Receita Federal do Brasil registro de arrecadação', 'Documento de Arrecadação do Simples Nacional', 'Composição do Documento de Arrecadação', 'Data de Arrecadação 20/07/2025 Banco 001 Agência 1234', 'Valor Total do Documento 1.000,00'], 'das:payment-receipt'],
  ['a bank payment receipt', ['COMPROVANTE DE PAGAMENTO DO SIMPLES NACIONAL', 'Documento de Arrecadação do Simples Nacional', 'Valor Total do Documento 100,00', LINE], 'das:payment-receipt'],
  ['a DARF', ['Documento de Arrecadação de Receitas Federais', 'Composição do Documento de Arrecadação', 'Pagar este documento até 20/07/2025', 'Valor Total do Documento 100,00', '85810000001 0 00000385253 4 34079325322 5 60702421630 0'], 'das:darf'],
  ['the PGDAS-D extract', ['Extrato do Simples Nacional', 'Período de Apuração (PA): 06/2025', '6) Informações sobre DAS Gerado na apuração: 1', 'Documento de Arrecadação do Simples Nacional', 'Valor Total do Documento 100,00'], 'das:pgdas-extrato'],
  ['the PGDAS-D declaration', ['Programa Gerador do Documento de Arrecadação do Simples Nacional - Declaratório', 'Nº da Declaração: 23277116202607001', 'Valor Total do Documento'], 'das:pgdas-declaration'],
  // Given column by column (positions lost): the codes as a column, the denominations apart, as the DAS's own column rule reads them.
  ['the RFB payment receipt, column by column', ['Comprovante de Arrecadação', 'Documento de Arrecadação do Simples Nacional', 'Composição do Documento de Arrecadação', 'Código', '1001', '1002', '1007', 'Denominação', 'IRPJ - SIMPLES NACIONAL', 'CSLL - SIMPLES NACIONAL', 'ICMS - SIMPLES NACIONAL', 'Valor Total do Documento', '100,00', LINE], 'das:payment-receipt'],
  ['the PGDAS-D extract, column by column', ['Extrato do Simples Nacional', 'Documento de Arrecadação do Simples Nacional', 'Número do Documento', '07.20.22131.5396196-6', 'Código', '1001', '1002', 'IRPJ - SIMPLES NACIONAL', 'CSLL - SIMPLES NACIONAL', 'Valor Total do Documento', '100,00'], 'das:pgdas-extrato'],
  ['a domestic employer eSocial DAE', ['eSocial', 'Documento de Arrecadação do eSocial', 'Documento de Arrecadação do Simples Nacional', 'Valor Total do Documento 100,00', LINE], 'das:esocial-dae']
]

describe('das: neighbours are not mistaken for a DAS', () => {
  for (const [name, lines, rule] of lookAlikes) {
    it(`does not report ${name} as a DAS, naming the exclusion that fired`, async () => {
      const pdf = await page(lines)
      expect((await extractPdf(pdf)).documentType).not.toBe('DAS')
      // Alone, the DAS plugin names its exclusion (the engine lists them only when no plugin wins).
      const alone = await extractPdf(pdf, [das])
      expect(alone).toMatchObject({ documentType: 'UNKNOWN', data: null })
      expect(alone.engine.excludedRules).toContain(rule)
    })
  }

  it('leaves a generated PGDAS-D extract with its DAS section to the extract plugin', async () => {
    const pdf = (await generateExtrato({ seed: 1 })).pdf
    expect((await extractPdf(pdf)).documentType).toBe('PGDAS_EXTRATO')
    expect((await extractPdf(pdf, [das])).engine.excludedRules).toContain('das:pgdas-extrato')
  })

  it('does not take a PGDAS-D receipt given column by column for a DAS (its receipt number has the shape of a DAS number)', async () => {
    const lines = ['RECIBO DE ENTREGA DA APURAÇÃO NO PGDAS-D', 'Declaração Original', 'Período de Apuração', '01/2018', 'Número da Apuração', '00000000201801001',
      'Optante pelo Simples Nacional', 'Sim', 'Número do Recibo', '01.07.22090.9999999-3', 'IRPJ - SIMPLES NACIONAL', '1001', '1002', 'Autenticação', '00238.00151.09854.90401']
    const result = await extractPdf(await page(lines))
    expect(result.documentType).not.toBe('DAS')
    expect((await extractPdf(await page(lines), [das])).documentType).toBe('UNKNOWN')
  })

  it('does not take a document that only mentions the Simples Nacional for a DAS', async () => {
    const result = await extractPdf(await page(['Guia do Simples Nacional', 'Valor Total do Documento 100,00', 'Pagar este documento até 20/07/2025']))
    expect(result.documentType).toBe('UNKNOWN')
  })

  it('does not take the title alone for a DAS', async () => {
    const result = await extractPdf(await page(['Documento de Arrecadação do Simples Nacional', 'Instruções de preenchimento']))
    expect(result.documentType).toBe('UNKNOWN')
  })

  it('recognises the type but blocks the parser when only the title and one label are there', async () => {
    const result = await extractPdf(await page(['Documento de Arrecadação do Simples Nacional', 'Valor Total do Documento']))
    expect(result).toMatchObject({
      success: false, documentType: 'DAS', data: null, errors: [{ code: 'PLUGIN_BLOCKED' }],
      engine: { parserBlocked: true, parserExecuted: false, confidenceLevel: 'LOW', matchedRules: ['title-and-label'] }
    })
    // 5 / 14 by the engine's rule.
    expect(result.engine.confidence).toBe(0.3571)
  })
})
