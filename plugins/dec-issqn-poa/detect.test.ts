import { describe, expect, it } from 'vitest'
import { extractPdf } from '../../fixtures/extraction/plugin-cases.js'
import { decIssqnPoa } from './index.js'
import { pageOfLines } from '../../fixtures/extraction/helpers.js'

const page = pageOfLines

describe('dec-issqn-poa: other cities and other Porto Alegre documents are not the DEC', () => {
  it('excludes another city\'s monthly declaration that quotes the same words', async () => {
    const file = await page(['Prefeitura Municipal de Canoas', 'Prefeitura de Porto Alegre (convênio)', 'Declaração Mensal - ISSQN Jul/2026', 'Identificação do Declarante', 'Total Geral A Recolher 120,00'])
    const result = await extractPdf(file, [decIssqnPoa])
    expect(result).toMatchObject({ success: false, documentType: 'UNKNOWN', data: null })
    expect(result.engine.excludedRules).toContain('dec-issqn-poa:other-city')
    expect((await extractPdf(file)).documentType).not.toBe('DEC_ISSQN_POA')
  })

  it('does not take another city\'s ISSQN guide', async () => {
    const result = await extractPdf(await page(['Prefeitura Municipal de Caxias do Sul', 'Guia de ISSQN', 'GUIA PARA PAGAMENTO DE ISSQN', 'Competência 07/2026', 'Valor 120,00']))
    expect(result.documentType).toBe('UNKNOWN')
  })

  it('does not take a Porto Alegre guide of another tax (no monthly declaration)', async () => {
    const result = await extractPdf(await page(['Prefeitura de Porto Alegre', 'Secretaria Municipal da Fazenda', 'Guia de IPTU 2026', 'Total Geral A Recolher 450,00']))
    expect(result.documentType).toBe('UNKNOWN')
  })

  it('blocks the parser when only the two markers are printed', async () => {
    const result = await extractPdf(await page(['Prefeitura de Porto Alegre', 'Declaração Mensal - ISSQN Jul/2026']))
    expect(result).toMatchObject({ documentType: 'DEC_ISSQN_POA', data: null, engine: { parserBlocked: true, parserExecuted: false, matchedRules: ['poa-declaracao-mensal'] } })
    // 5 / (5 + 6 + 0.5) by the engine's rule.
    expect(result.engine.confidence).toBe(0.4348)
  })
})
