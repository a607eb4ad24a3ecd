/**
 * What a DARF prints (documents.md §6): the fields each layout always prints (a null one
 * is a reading that failed: the engine warns and lowers confidence) or prints only
 * sometimes, and the labels that bound every value read (docs/plugins.md).
 */
import type { ExpectedFields } from '../../core/plugin-api.js'
import type { Darf } from './parse.js'

const BOTH = ['cnpjCpf', 'razaoSocial', 'periodoApuracao', 'dataVencimento', 'valorTotal', 'tributos', 'tributos.0.codigoReceita']

export function fields (data: Darf): ExpectedFields {
  return data.layout === 'SENDA'
    ? { required: [...BOTH, 'pagarAte', 'numeroDocumento', 'linhaDigitavel', 'codigoBarras'], optional: ['numeroReciboDeclaracao', 'totais', 'origem', 'dataEmissao', 'canhoto'] }
    // Old numbered-box prints have no document number, no collection line, no reference.
    : { required: BOTH, optional: ['numeroReferencia', 'pagarAte', 'numeroDocumento', 'linhaDigitavel', 'codigoBarras', 'origem', 'dataEmissao'] }
}

export const labels = [
  'Documento de Arrecadação de Receitas Federais', 'Composição do Documento de Arrecadação',
  'Período de Apuração', 'Data de Vencimento', 'Número do Documento', 'Pagar este documento até',
  'Valor Total do Documento', 'Razão Social', 'Observações', 'Autenticação Mecânica', 'Nº Recibo Declaração',
  'Nome / Razão Social', 'Nome / Telefone', 'Número do CPF ou CNPJ', 'Código da Receita', 'Número de Referência',
  'Valor do Principal', 'Valor da Multa', 'Valor dos Juros', 'Valor Total', 'Autenticação Bancária',
  'Ministério da Fazenda', 'Secretaria da Receita Federal', 'Data limite para acolhimento'
]
