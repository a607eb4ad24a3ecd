import { describe, expect, it } from 'vitest'
import { collectionLineOf } from '../../core/extraction/index.js'
import { extractPdf } from '../../fixtures/extraction/plugin-cases.js'
import { generateDarf } from './fixtures/generate.js'
import { pageOfLines } from '../../fixtures/extraction/helpers.js'

/** A page of lines, top to bottom, drawn shuffled. */
const page = pageOfLines

const composition = ['Composição do Documento de Arrecadação', 'Código Denominação Principal Multa Juros Total', '0561 IRRF - RENDIMENTO DO TRABALHO 1.000,00 1.000,00', 'Totais 1.000,00 1.000,00']

// Look-alikes of documents.md §6 "Exclusion" and §10: each quotes the DARF's words (most would pass its strong rules).
const lookAlikes: Array<[string, string[], string]> = [
  ['a DAS (Simples Nacional in the title)', ['Documento de Arrecadação do Simples Nacional', 'Receitas Federais e demais tributos do Simples Nacional', 'Período de Apuração Data de Vencimento Número do Documento', 'Valor Total do Documento 1.136,35', ...composition], 'das-title'],
  ['the RFB payment receipt', ['Comprovante de Arrecadação', 'Comprovamos que consta nos sistemas da Receita Federal do Brasil o registro de arrecadação', 'Documento de Arrecadação de Receitas Federais', 'Data de Arrecadação 20/07/2026 Banco 001 Agência 1234', 'Valor Total 1.000,00', ...composition], 'payment-receipt'],
  ['a bank payment receipt of a DARF', ['COMPROVANTE DE PAGAMENTO DARF', 'Documento de Arrecadação de Receitas Federais', 'Código da Receita 0561', 'Período de Apuração 30/06/2026', 'Valor Total R$ 1.000,00'], 'payment-receipt'],
  ['a GPS', ['MINISTÉRIO DA PREVIDÊNCIA SOCIAL', 'GUIA DA PREVIDÊNCIA SOCIAL - GPS', 'Documento de Arrecadação de Receitas Federais e Previdenciárias', 'Código da Receita 2100', 'VALOR TOTAL 1.000,00'], 'gps'],
  ['the DCTFWeb declaration report', ['Relatório da Declaração Completa - DCTFWeb', 'Período de Apuração: 06/2026', 'Documento de Arrecadação de Receitas Federais emitido para os débitos', 'Código da Receita 1082-01 Valor 1.000,00', 'Valor Total 1.000,00'], 'dctfweb-report']
]

describe('darf: neighbours are not mistaken for a DARF', () => {
  for (const [name, lines, rule] of lookAlikes) {
    it(`does not read ${name} as a DARF, naming the exclusion that fired`, async () => {
      const result = await extractPdf(await page(lines))
      expect(result.documentType).not.toBe('DARF')
      expect(result.data === null || !('tributos' in result.data)).toBe(true)
      expect(result.engine.excludedRules).toContain(`darf:${rule}`)
    })
  }

  it('does not take the word DARF and a total for a DARF', async () => {
    const result = await extractPdf(await page(['Planilha de controle de DARF pagos', 'Data de Vencimento 20/07/2026', 'Valor Total 1.000,00']))
    expect(result.documentType).toBe('UNKNOWN')
  })

  it('still reads a DARF of social-security contributions (codes 1082/1099) as a DARF', async () => {
    const { pdf, truth } = await generateDarf({ seed: 1, quarterly: false })
    expect(truth.tributos.map((t) => t.codigoReceita)).toContain('1099')
    const result = await extractPdf(pdf)
    expect(result.documentType).toBe('DARF')
    expect(result.engine.excludedRules.filter((r) => r.startsWith('darf:'))).toEqual([])
  })

  it('recognises the type but blocks the parser when only the strong cues are there', async () => {
    const result = await extractPdf(await page(['Documento de Arrecadação', 'de Receitas Federais', 'Composição do Documento de Arrecadação']))
    expect(result).toMatchObject({
      success: false, documentType: 'DARF', data: null, errors: [{ code: 'PLUGIN_BLOCKED' }],
      engine: { parserBlocked: true, parserExecuted: false, confidenceLevel: 'LOW', minimumConfidence: 0.75, matchedRules: ['title', 'composition-or-revenue-box'] }
    })
    // (4 + 3) / 13 by the engine's rule.
    expect(result.engine.confidence).toBe(0.5385)
  })

  it('counts the barcode issuer: 0385 and 0064 hold, the DAS issuer 0328 does not', async () => {
    const lines = ['Documento de Arrecadação de Receitas Federais', 'Período de Apuração Data de Vencimento', 'Valor Total do Documento 1.000,00', ...composition, 'SENDA (Versão:2.6.3) Página: 1/1 03/08/2026 10:00:00']
    const withIssuer = async (issuer: string) => extractPdf(await page([...lines, collectionLineOf(`858000000100000${issuer}2620207202620312345670001`)]))
    expect((await withIssuer('0385')).engine.matchedRules).toContain('barcode-issuer')
    expect((await withIssuer('0064')).engine.matchedRules).toContain('barcode-issuer')
    const das = await withIssuer('0328')
    expect(das.engine.missingRules).toContain('barcode-issuer')
    expect(das.warnings.filter((w) => w.code === 'PLUGIN_CHECK_FAILED')).toEqual([expect.objectContaining({ message: expect.stringMatching(/^collection-line:.*issuer 0328/) })])
  })
})
