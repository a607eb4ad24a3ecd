import { describe, expect, it } from 'vitest'
import { extractPdf } from '../../fixtures/extraction/plugin-cases.js'
import { pageOfLines } from '../../fixtures/extraction/helpers.js'

/** A page of lines, top to bottom, drawn shuffled. */
const page = pageOfLines

// Neighbours of documents.md §7 "Exclusion": each quotes words of the DANFSe.
const lookAlikes: Array<[string, string[], string]> = [
  ['a DANFE (NF-e goods invoice, 44-digit key)', [
    'DANFE', 'DOCUMENTO AUXILIAR DA NOTA FISCAL ELETRÔNICA', '0 - ENTRADA 1 - SAÍDA 1', 'CHAVE DE ACESSO',
    '4326 0912 3456 7800 0190 5500 1000 0012 3410 0001 2345', 'Consulta de autenticidade no portal nacional da NF-e',
    'NATUREZA DA OPERAÇÃO Venda de mercadoria', 'VALOR TOTAL DA NOTA 1.234,56', 'Referente à NFS-e nº 171 dos serviços de instalação'
  ], 'nfse-danfse:danfe-nfe'],
  ['a municipal NFS-e model (no DANFSe)', [
    'PREFEITURA MUNICIPAL DE PORTO ALEGRE', 'NOTA FISCAL DE SERVIÇOS ELETRÔNICA - NFS-e', 'Documento Auxiliar da NFS-e',
    'Número da NFS-e 2026/000123', 'Código de Verificação: X7K2-9QPA', 'PRESTADOR DE SERVIÇOS', 'CNPJ: 11.222.333/0001-81',
    'TOMADOR DO SERVIÇO', 'Valor Líquido da NFS-e R$ 1.000,00', 'VALOR TOTAL DA NFS-e R$ 1.000,00'
  ], 'nfse-danfse:municipal-nfse']
]

describe('nfse-danfse: neighbours are not mistaken for the DANFSe', () => {
  for (const [name, lines, rule] of lookAlikes) {
    it(`reports ${name} as unknown, naming the exclusion that fired`, async () => {
      const result = await extractPdf(await page(lines))
      expect(result).toMatchObject({ success: false, documentType: 'UNKNOWN', data: null, errors: [{ code: 'PLUGIN_NO_MATCH' }] })
      expect(result.engine.excludedRules).toContain(rule)
    })
  }

  it('does not take a DANFSe that merely mentions a DANFE for one', async () => {
    const result = await extractPdf(await page([
      'DANFSe v1.0', 'Documento Auxiliar da NFS-e', 'Chave de Acesso da NFS-e', '29192072218294792000110000000000017126094422711907',
      'EMITENTE DA NFS-e', 'TOMADOR DO SERVIÇO', 'INFORMAÇÕES COMPLEMENTARES', 'Serviço de montagem referente ao DANFE da NF-e 4521'
    ]))
    expect(result.documentType).toBe('NFSE_DANFSE')
    expect(result.engine.excludedRules).toEqual([])
  })

  it('recognises the type but blocks the parser when only the title lines are there', async () => {
    const result = await extractPdf(await page(['DANFSe v2.0', 'Documento Auxiliar da NFS-e']))
    expect(result).toMatchObject({
      success: false, documentType: 'NFSE_DANFSE', data: null, errors: [{ code: 'PLUGIN_BLOCKED' }],
      engine: { parserBlocked: true, parserExecuted: false, confidenceLevel: 'LOW', minimumConfidence: 0.75, matchedRules: ['danfse-version', 'documento-auxiliar'] }
    })
    // (4 + 2) / 16 by the engine's rule.
    expect(result.engine.confidence).toBe(0.375)
  })

  it('recognises the portal\'s print in text whose words ran together (pypdf\'s), and reads its version and key', async () => {
    const result = await extractPdf(await page([
      'DANFSe v1.0', 'Documento Auxiliar daNFS- e', 'Chave deAcesso daNFS- e', '51062572249226286000117000000000000123099208293469',
      'Aautenticidade desta NFS- epode serverificada', 'EMITENTE DANFS- e', 'TOMADOR DOSERVIÇO CNPJ /CPF /NIF',
      'Código deTributação Nacional', 'Simples Nacional naData deCompetência', 'Valor Líquido daNFS- e', 'NFS- eSEM VALIDADE JURÍDICA'
    ]))
    expect(result.engine.matchedRules).toEqual(expect.arrayContaining(['danfse-version', 'documento-auxiliar', 'chave-acesso', 'emitente', 'tomador']))
    expect(result.data).toMatchObject({ versaoLayout: '1.0', chaveAcesso: '51062572249226286000117000000000000123099208293469', homologacao: true })
  })
})
