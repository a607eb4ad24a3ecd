import { describe, expect, it } from 'vitest'
import { extractPdf } from '../../fixtures/extraction/plugin-cases.js'
import { relatorioSimples } from './index.js'
import { pageOfLines } from '../../fixtures/extraction/helpers.js'

const page = pageOfLines

/** The report's own words, which official documents may also print. */
const reportWords = ['Receita Tributada Total: 1.000,00 Alíquota: 6,0000% Simples Nacional Total: 60,00', 'Simples Nacional a recolher: 60,00', 'Anexo: Anexo III - Prestação de Serviços', 'Partilha: IRPJ CSLL']

// Official titles of documents.md §1, §2, §4, §5 (and the PGDAS-D receipt, §8a).
const lookAlikes: Array<[string, string[], string]> = [
  ['the PGDAS-D extract', ['Extrato do Simples Nacional', ...reportWords], 'relatorio-simples:pgdas-extrato-title'],
  ['the PGDAS-D declaration', ['Programa Gerador do Documento de Arrecadação do Simples Nacional - Declaratório', ...reportWords], 'relatorio-simples:pgdas-declaracao-title'],
  ['a DAS', ['Documento de Arrecadação do Simples Nacional', ...reportWords, 'Valor Total do Documento 60,00'], 'relatorio-simples:das-title'],
  ['a DAS-MEI', ['PGMEI(Versao:1.2.3)', 'SIMPLES NACIONAL - MEI', ...reportWords], 'relatorio-simples:das-mei'],
  ['the PGDAS-D receipt', ['RECIBO DE ENTREGA DA APURAÇÃO NO PGDAS-D', ...reportWords], 'relatorio-simples:pgdas-receipt']
]

describe('relatorio-simples: official documents are not mistaken for the report', () => {
  for (const [name, lines, rule] of lookAlikes) {
    it(`does not read ${name} as the report, naming the exclusion`, async () => {
      const file = await page(lines)
      // With the whole registry another plugin may win (the extract is PGDAS_EXTRATO) ...
      expect((await extractPdf(file)).documentType).not.toBe('RELATORIO_SIMPLES')
      // ... so the exclusion is shown with this plugin alone, where it must leave the file unknown.
      const alone = await extractPdf(file, [relatorioSimples])
      expect(alone).toMatchObject({ success: false, documentType: 'UNKNOWN', data: null })
      expect(alone.engine.excludedRules).toContain(rule)
    })
  }

  it('blocks the parser when only the two strong cues are printed', async () => {
    const result = await extractPdf(await page(['Receita Tributada Total: 1.000,00', 'Simples Nacional a recolher: 60,00']))
    expect(result).toMatchObject({ documentType: 'RELATORIO_SIMPLES', data: null, engine: { parserBlocked: true, parserExecuted: false, matchedRules: ['a-recolher', 'receita-tributada'] } })
    // (3 + 3) / 16 by the engine's rule.
    expect(result.engine.confidence).toBe(0.375)
  })

  it('does not refuse a report whose note merely mentions the DAS', async () => {
    const file = await page(['SIMPLES NACIONAL', ...reportWords, 'Faixa de Enquadramento: 0,00 a 180.000,00', 'Total de Receitas Brutas', 'Seção: Serviços', 'Tabela: Tabela 1', 'Empresa: 0001 - X Ltda Emissão: 05/08/2026 Página: 0001', 'Período: 07/2026', 'Receita Bruta do período de Apuração (RPA)', 'Sistema licenciado para Escritório', 'Pague pelo Documento de Arrecadação do Simples Nacional até o dia 20'])
    const result = await extractPdf(file, [relatorioSimples])
    expect(result.engine.excludedRules).toEqual([])
    expect(result.documentType).toBe('RELATORIO_SIMPLES')
  })

  it('does not take a letter that only mentions the Simples Nacional', async () => {
    const result = await extractPdf(await page(['Declaramos para os devidos fins que a empresa é optante pelo SIMPLES NACIONAL', 'Período: 07/2026']))
    expect(result.documentType).toBe('UNKNOWN')
  })
})
