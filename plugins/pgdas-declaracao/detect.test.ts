import { describe, expect, it } from 'vitest'
import { extractPdf } from '../../fixtures/extraction/plugin-cases.js'
import { pgdasDeclaracao } from './index.js'
import { pageOfLines } from '../../fixtures/extraction/helpers.js'

/** A page of lines, top to bottom, drawn shuffled. */
const page = pageOfLines

const HEADER = 'Programa Gerador do Documento de Arrecadação do Simples Nacional - Declaratório'

describe('pgdas-declaracao: neighbours are not mistaken for the declaration', () => {
  it('refuses the MAED fine notification, which quotes the header and the period', async () => {
    const result = await extractPdf(await page(['NOTIFICAÇÃO DE LANÇAMENTO', HEADER, 'MULTA POR ATRASO NA ENTREGA DA DECLARAÇÃO', 'Período de Apuração: 01/07/2026 a 31/07/2026', 'Nº da Declaração: 23277116202607001', 'CNPJ Matriz: 23.277.116/0001-78']))
    expect(result).toMatchObject({ success: false, documentType: 'UNKNOWN', data: null, errors: [{ code: 'PLUGIN_NO_MATCH' }] })
    expect(result.engine.excludedRules).toContain('pgdas-declaracao:maed-notification')
  })

  it('leaves to the extract a file whose line starts with the extract\'s title', async () => {
    const pdf = await page(['Extrato do Simples Nacional', HEADER, 'Período de Apuração (PA): 06/2026', 'Informações da Apuração 23277116202606001', 'Total Geral da Empresa'])
    const won = await extractPdf(pdf)
    expect(won.documentType).toBe('PGDAS_EXTRATO')
    // The winner's report names the neighbours' exclusions that fired: ours among them.
    expect(won.engine.excludedRules).toContain('pgdas-declaracao:extract-title')
    const alone = await extractPdf(pdf, [pgdasDeclaracao])
    expect(alone).toMatchObject({ documentType: 'UNKNOWN', engine: { excludedRules: ['pgdas-declaracao:extract-title'] } })
  })

  it('is not fooled by the extract\'s title inside a sentence of a declaration', async () => {
    const result = await extractPdf(await page([HEADER, 'Declaração Original Período de Apuração: 01/07/2026 a 31/07/2026', 'CNPJ Matriz: 23.277.116/0001-78', 'Nº da Declaração: 23277116202607001', '2.6) Resumo da Declaração', '2.8) Total Geral da Empresa', 'Veja também o Extrato do Simples Nacional no portal']))
    expect(result.documentType).toBe('PGDAS_DECLARACAO')
    expect(result.engine.excludedRules.filter((r) => r.startsWith('pgdas-declaracao:'))).toEqual([])
    // Why the extract lost: its exclusion for the declaration's header.
    expect(result.engine.excludedRules).toContain('pgdas-extrato:declaration-header')
  })

  it('does not take a DAS guide that names the Simples Nacional and a period for the declaration', async () => {
    const result = await extractPdf(await page(['Documento de Arrecadação do Simples Nacional', 'CNPJ Razão Social', 'Período de Apuração Data de Vencimento Número do Documento', 'Julho/2026 20/08/2026 07.20.26215.0279398-4', 'Valor Total do Documento 1.136,35']))
    expect(result.documentType).not.toBe('PGDAS_DECLARACAO')
  })

  it('recognises the type but blocks the parser when only the header is there', async () => {
    const result = await extractPdf(await page([HEADER, 'Nome empresarial: Padaria Pão Quente Ltda']))
    expect(result).toMatchObject({
      success: false, documentType: 'PGDAS_DECLARACAO', data: null, errors: [{ code: 'PLUGIN_BLOCKED' }],
      engine: { parserBlocked: true, parserExecuted: false, confidenceLevel: 'LOW', minimumConfidence: 0.75, matchedRules: ['header'] }
    })
    // 4 / 13 by the engine's rule.
    expect(result.engine.confidence).toBe(0.3077)
  })
})
