import { describe, expect, it } from 'vitest'
import { extractPdf } from '../../fixtures/extraction/plugin-cases.js'
import { generateDas } from '../das/fixtures/generate.js'
import { generateDasMei } from './fixtures/generate.js'
import { dasMei } from './index.js'
import { pageOfLines } from '../../fixtures/extraction/helpers.js'

/** A page of lines, top to bottom, drawn shuffled. */
const page = pageOfLines

const MEI_LINES = ['Documento de Arrecadação do Simples Nacional', 'CPF: 123.456.789-09', 'PGMEI(Versao:3.8.8)', '0151 INSS - SIMPLES NACIONAL - MEI 75,90 75,90']

// documents.md §5 Exclusion, §4 and §10: each quotes the DAS-MEI's words.
const lookAlikes: Array<[string, string[], string]> = [
  ['a DAS with an ordinary composition row', ['Documento de Arrecadação do Simples Nacional', 'PGMEI(Versao:3.8.8)', 'Valor Total do Documento', '1001 IRPJ - SIMPLES NACIONAL 10,00 10,00'], 'das-mei:ordinary-das-codes'],
  ['the RFB payment receipt of a DAS-MEI', ['Comprovante de Arrecadação', 'Comprovamos que consta nos sistemas da Receita Federal do Brasil registro de arrecadação', ...MEI_LINES, 'Data de Arrecadação 20/07/2025 Banco 001 Agência 1234'], 'das-mei:payment-receipt'],
  ['a DARF', ['Documento de Arrecadação de Receitas Federais', 'Composição do Documento de Arrecadação', 'CPF: 123.456.789-09', '0151 INSS - SIMPLES NACIONAL - MEI 75,90 75,90'], 'das-mei:darf'],
  ['the PGDAS-D extract', ['Extrato do Simples Nacional', ...MEI_LINES], 'das-mei:pgdas-extrato'],
  ['a domestic employer eSocial DAE', ['Documento de Arrecadação do eSocial', ...MEI_LINES], 'das-mei:esocial-dae'],
  // Given column by column (positions lost): the codes under their heading, the MEI denominations apart, as the mei-rows rule reads them.
  ['the RFB payment receipt of a DAS-MEI, column by column', ['Comprovante de Arrecadação', 'Documento de Arrecadação do Simples Nacional', 'Código Denominação', '0151', '0083', 'INSS - SIMPLES NACIONAL - MEI', 'ICMS - SIMPLES NACIONAL - MEI', 'Valor Total do Documento', '75,90'], 'das-mei:payment-receipt'],
  ['the PGDAS-D extract, column by column', ['Extrato do Simples Nacional', 'Documento de Arrecadação do Simples Nacional', 'Código', '0151', '0083', 'INSS - SIMPLES NACIONAL - MEI', 'ICMS - SIMPLES NACIONAL - MEI'], 'das-mei:pgdas-extrato']
]

describe('das-mei: neighbours are not mistaken for a DAS-MEI', () => {
  for (const [name, lines, rule] of lookAlikes) {
    it(`does not report ${name} as a DAS-MEI, naming the exclusion that fired`, async () => {
      const pdf = await page(lines)
      expect((await extractPdf(pdf)).documentType).not.toBe('DAS_MEI')
      // Alone, the plugin names its exclusion (the engine lists them only when no plugin wins).
      const alone = await extractPdf(pdf, [dasMei])
      expect(alone).toMatchObject({ documentType: 'UNKNOWN', data: null })
      expect(alone.engine.excludedRules).toContain(rule)
    })
  }

  it('tells a generated DAS and a generated DAS-MEI apart, both ways', async () => {
    const das = await extractPdf((await generateDas({ seed: 21 })).pdf)
    const parcsn = await extractPdf((await generateDas({ seed: 22, kind: 'PARCSN' })).pdf)
    const mei = await extractPdf((await generateDasMei({ seed: 21 })).pdf)
    expect(das.documentType).toBe('DAS')
    expect(parcsn.documentType).toBe('DAS')
    expect(mei.documentType).toBe('DAS_MEI')
    expect((await extractPdf((await generateDas({ seed: 21 })).pdf, [dasMei])).engine.excludedRules).toContain('das-mei:ordinary-das-codes')
  })

  it('does not take an ordinary DAS given column by column for a DAS-MEI (its codes are 10xx)', async () => {
    const lines = ['Documento de Arrecadação', 'do Simples Nacional', 'Código Denominação', '1001', '1007', 'IRPJ - SIMPLES NACIONAL', '04/2022', 'ICMS - SIMPLES NACIONAL', 'RS - 04/2022', 'Valor Total do Documento', '8.690,56']
    expect((await extractPdf(await page(lines), [dasMei])).documentType).toBe('UNKNOWN')
  })

  it('recognises the type but blocks the parser when only the title and PGMEI are there', async () => {
    const result = await extractPdf(await page(['Documento de Arrecadação do Simples Nacional', 'PGMEI(Versao:3.8.8)']))
    expect(result).toMatchObject({
      success: false, documentType: 'DAS_MEI', data: null, errors: [{ code: 'PLUGIN_BLOCKED' }],
      engine: { parserBlocked: true, parserExecuted: false, confidenceLevel: 'LOW', matchedRules: ['title-and-pgmei'] }
    })
    // 5 / 16 by the engine's rule (strong 5 + 4, weak 2 + 1 × 5).
    expect(result.engine.confidence).toBe(0.3125)
  })
})
