import { describe, expect, it } from 'vitest'
import { writeTextPdf } from '../../fixtures/extraction/pdf-writer.js'
import { extractPdf } from '../../fixtures/extraction/plugin-cases.js'
import { pgdasRecibo } from './index.js'

const lines = (texts: string[]) => texts.map((text, i) => ({ text, x: 40, y: 800 - i * 14 }))
/** Pages of lines, top to bottom, drawn shuffled. */
const pdfOf = (...pages: string[][]) => writeTextPdf(pages.map(lines), { seed: 3 })

const RECEIPT = ['RECIBO DE ENTREGA DA APURAÇÃO NO PGDAS-D', 'Declaração Original', 'Nome Empresarial: Mercado Três Irmãos Ltda', 'CNPJ da Matriz: 23.277.116/0001-78',
  'Período de Apuração Número da Apuração Receita Bruta Auferida Total do Débito Declarado Total do Débito com Exigibilidade Suspensa Total do Débito Exigível',
  '06/2026 23277116202606001 R$ 18.939,46 R$ 1.136,35 R$ 0,00 R$ 1.136,35', 'Data e Horário da Transmissão (Data e Horário de Brasília): 03/08/2026 10:15:22',
  'Número do Recibo: 01.07.26215.0279398-4', 'Autenticação: 12345.67890.12345.67890']
const DECLARATION = ['Programa Gerador do Documento de Arrecadação do Simples Nacional - Declaratório', 'Declaração Original Período de Apuração: 01/06/2026 a 30/06/2026',
  'CNPJ Matriz: 23.277.116/0001-78', 'Regime de Apuração: Competência Nº da Declaração: 23277116202606001', '2.6) Resumo da Declaração', '2.8) Total Geral da Empresa',
  '3. Informações da Recepção da Declaração', 'Data e horário da transmissão da Declaração: 03/08/2026 10:15:22', 'Número do Recibo: 01.07.26215.0279398-4', 'Autenticação: 12345.67890.12345.67890']

describe('pgdas-recibo: detection and neighbours', () => {
  it('recognises the receipt written line by line', async () => {
    const result = await extractPdf(await pdfOf(RECEIPT))
    expect(result).toMatchObject({ success: true, documentType: 'PGDAS_RECIBO', engine: { confidence: 1, missingRules: [] } })
    expect(result.data).toMatchObject({ numeroDeclaracao: '23277116202606001', totalDebitoExigivel: 1136.35, dataHoraTransmissao: '2026-08-03T10:15:22' })
  })

  it('recognises the receipt in pypdf\'s text of it: the title\'s last word and the receipt number split by a space', async () => {
    const split = RECEIPT.map((l) => l.replace('PGDAS-D', 'PGDAS -D').replace('26215.0279398-4', '26215. 0279398-4'))
    const result = await extractPdf(await pdfOf(split))
    expect(result).toMatchObject({ success: true, documentType: 'PGDAS_RECIBO', data: { numeroRecibo: '01.07.26215.0279398-4' } })
  })

  it('leaves a combined declaration+receipt file to the declaration, naming the receipt page', async () => {
    const pdf = await pdfOf(DECLARATION, RECEIPT)
    const result = await extractPdf(pdf)
    expect(result).toMatchObject({ documentType: 'PGDAS_DECLARACAO', warnings: expect.arrayContaining([{ code: 'PGDAS_COMBINED_RECEIPT', message: expect.stringMatching(/^Page 2 is the PGDAS-D receipt/) }]) })
    const alone = await extractPdf(pdf, [pgdasRecibo])
    expect(alone).toMatchObject({ documentType: 'UNKNOWN', engine: { excludedRules: ['pgdas-recibo:declaration-header'] } })
  })

  it('does not take the declaration\'s own section 3 (same labels, no title) for a receipt', async () => {
    const result = await extractPdf(await pdfOf(DECLARATION))
    expect(result.documentType).toBe('PGDAS_DECLARACAO')
    expect((await extractPdf(await pdfOf(DECLARATION), [pgdasRecibo])).documentType).toBe('UNKNOWN')
  })

  it('refuses the MAED fine notification', async () => {
    const result = await extractPdf(await pdfOf(['NOTIFICAÇÃO DE LANÇAMENTO', 'MULTA POR ATRASO NA ENTREGA DA DECLARAÇÃO', ...RECEIPT]))
    expect(result).toMatchObject({ success: false, documentType: 'UNKNOWN', errors: [{ code: 'PLUGIN_NO_MATCH' }] })
    expect(result.engine.excludedRules).toContain('pgdas-recibo:maed-notification')
  })

  it('refuses a file whose line starts with the extract\'s title', async () => {
    const result = await extractPdf(await pdfOf([...RECEIPT, 'Extrato do Simples Nacional disponível no portal']), [pgdasRecibo])
    expect(result).toMatchObject({ documentType: 'UNKNOWN', engine: { excludedRules: ['pgdas-recibo:extract-title'] } })
  })

  it('recognises the type but blocks the parser when only the title is there', async () => {
    const result = await extractPdf(await pdfOf(['RECIBO DE ENTREGA DA APURAÇÃO NO PGDAS-D', 'Mercado Três Irmãos Ltda']))
    expect(result).toMatchObject({
      success: false, documentType: 'PGDAS_RECIBO', data: null, errors: [{ code: 'PLUGIN_BLOCKED' }],
      engine: { parserBlocked: true, parserExecuted: false, confidenceLevel: 'LOW', matchedRules: ['title'] }
    })
    // 4 / 11 by the engine's rule.
    expect(result.engine.confidence).toBe(0.3636)
  })
})
