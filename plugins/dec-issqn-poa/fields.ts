/**
 * What the Porto Alegre DEC (documents.md §9) prints: the fields every such document prints (a null one is a reading that
 * failed: the engine warns and lowers confidence) or prints only sometimes, and the labels
 * that bound every value read (docs/plugins.md).
 */
import type { ExpectedFields } from '../../core/plugin-api.js'
import type { DecIssqnPoa } from './parse.js'

export function fields (data: DecIssqnPoa): ExpectedFields {
  const guide = data.guia === null ? [] : ['guia.linhaDigitavel', 'guia.vencimento', 'guia.valorPagar']
  return {
    required: ['empresa.cnpj', 'empresa.razaoSocial', 'competencia', 'financeiro.receitaServicos', 'financeiro.totalImpostoDevido', ...guide],
    optional: ['empresa.inscricaoMunicipal', 'financeiro.baseCalculo', 'financeiro.issProprio', 'financeiro.totalRecolher', 'recibo', 'guia']
  }
}

export const labels = [
  'Identificação do Declarante', 'CNPJ:', 'Inscrição Municipal:', 'Atividade:', 'Base de Cálculo Receita Bruta', 'Deduções Legais',
  'Imposto de Responsabilidade Própria Total', 'Imposto retido', 'Total do imposto devido', 'Total Geral A Recolher',
  'Guia para Pagamento de ISSQN', 'Recibo de Entrega - Declaração Mensal', 'Receita:', 'Imposto:', 'Secretaria Municipal da Fazenda',
  // The withheld-tax rows' whole labels: the words after `Imposto retido` are the label's, never a value.
  'Imposto retido por Substituição tributária', 'Imposto retido de contribuinte substituído', 'Imposto retido por Responsabilidade Solidária',
  'Imposto retido por falta de inscrição no CPOM', 'Base de cálculo'
]
