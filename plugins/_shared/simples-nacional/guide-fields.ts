/**
 * The fields and labels of the SENDA guide every DAS prints (documents.md §4, §5), for the
 * `fields` and `labels` of the das and das-mei plugins (docs/plugins.md).
 */

/** The guide's fields, as paths under `prefix` (`guias.0.` for a DAS-MEI page). */
export function guideFields (prefix = ''): { required: string[], optional: string[] } {
  return {
    required: ['competencia', 'dataVencimento', 'pagarAte', 'numeroDocumento', 'valorTotal', 'composicao', 'linhaDigitavel', 'codigoBarras'].map((f) => prefix + f),
    optional: ['observacoes', 'totais', 'dataEmissao', 'versaoSenda'].map((f) => prefix + f)
  }
}

/**
 * The guide's printed labels, the tear-off stub's (`CNPJ:`, `Número:`, `Pagar até:`, `Valor:`)
 * included. Not the title, nor the stub's `Pague com o PIX` caption: a bare line above a
 * column of labels, each would count as one more label of the column and shift its values.
 */
export const GUIDE_LABELS = [
  'Composição do Documento de Arrecadação',
  'Período de Apuração', 'Data de Vencimento', 'Número do Documento', 'Pagar este documento até',
  'Valor Total do Documento', 'CNPJ', 'Razão Social', 'Observações', 'Autenticação Mecânica',
  'Número:', 'Pagar até:', 'Valor:'
]
