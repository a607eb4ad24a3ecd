import { describe, expect, it } from 'vitest'
import { extractPdf } from '../../fixtures/extraction/plugin-cases.js'
import { pageOfLines } from '../../fixtures/extraction/helpers.js'

/** A page of lines, top to bottom, drawn shuffled. */
const page = pageOfLines

// Look-alikes of documents.md §1 "Exclusion" and §10: each quotes words of the extract.
const lookAlikes: Array<[string, string[], string]> = [
  ['the PGDAS-D receipt', ['RECIBO DE ENTREGA DA APURAÇÃO NO PGDAS-D', 'Apuração Original', 'CNPJ Básico: 23.277.116', 'Período de Apuração (PA): 06/2026', 'Extrato do Simples Nacional disponível no portal', 'Número do Recibo: 01.07.26215.0279398-4'], 'pgdas-extrato:receipt-title'],
  ['the PGDAS-D declaration', ['Programa Gerador do Documento de Arrecadação do Simples Nacional - Declaratório', 'Nº da Declaração: 23277116202607001', 'Informações da Apuração', 'Extrato do Simples Nacional'], 'pgdas-extrato:declaration-header'],
  ['a DAS guide', ['Documento de Arrecadação do Simples Nacional', 'Extrato do Simples Nacional', 'Período de Apuração (PA): 06/2026', 'Valor Total do Documento 1.136,35'], 'pgdas-extrato:das-title-first'],
  ['a payment receipt', ['Comprovante de Arrecadação', 'Extrato do Simples Nacional', 'Informações da Apuração', 'Data de Arrecadação 20/07/2026'], 'pgdas-extrato:payment-receipt'],
  ['a MAED fine notification', ['NOTIFICAÇÃO DE LANÇAMENTO', 'MULTA POR ATRASO NA ENTREGA', 'Extrato do Simples Nacional', 'Período de Apuração (PA): 06/2026'], 'pgdas-extrato:maed-notification'],
  ['a billing declaration', ['Declaramos para os devidos fins que a empresa', 'teve como faturamento no período (Extrato do Simples Nacional)', 'Período de Apuração (PA): 06/2026'], 'pgdas-extrato:billing-declaration']
]

describe('pgdas-extrato: neighbours are not mistaken for the extract', () => {
  for (const [name, lines, rule] of lookAlikes) {
    it(`reports ${name} as unknown, naming the exclusion that fired`, async () => {
      const result = await extractPdf(await page(lines))
      expect(result).toMatchObject({ success: false, documentType: 'UNKNOWN', data: null, errors: [{ code: 'PLUGIN_NO_MATCH' }] })
      expect(result.engine.excludedRules).toContain(rule)
    })
  }

  it('does not take "Simples Nacional" alone for the extract', async () => {
    const result = await extractPdf(await page(['Relatório do Simples Nacional', 'Gerado em 03/08/2026 10:00:00', 'Total Geral da Empresa', '(RBT12) 1,00 0,00 1,00']))
    expect(result.documentType).toBe('UNKNOWN')
  })

  it('recognises the type but blocks the parser when only the strong cues are there', async () => {
    const result = await extractPdf(await page(['Extrato do Simples Nacional', 'Período de Apuração (PA): 06/2026']))
    expect(result).toMatchObject({
      success: false, documentType: 'PGDAS_EXTRATO', data: null, errors: [{ code: 'PLUGIN_BLOCKED' }],
      engine: { parserBlocked: true, parserExecuted: false, confidenceLevel: 'LOW', minimumConfidence: 0.75, matchedRules: ['title', 'apuracao-label'] }
    })
    // (4 + 3) / 15 by the engine's rule.
    expect(result.engine.confidence).toBe(0.4667)
  })
})
