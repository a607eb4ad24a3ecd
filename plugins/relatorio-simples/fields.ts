/**
 * What the accounting software "Relatório do Simples" (documents.md §3) prints: the fields every such document prints (a null one is a reading that
 * failed: the engine warns and lowers confidence) or prints only sometimes, and the labels
 * that bound every value read (docs/plugins.md).
 */
import type { ExpectedFields } from '../../core/plugin-api.js'

export function fields (): ExpectedFields {
  return {
    required: ['identificacao.empresa', 'identificacao.cnpj', 'identificacao.competencia', 'resumo.receitaBrutaMes', 'resumo.valorSimplesRecolher', 'apuracoes'],
    optional: ['identificacao.dataEmissao', 'identificacao.codigoEmpresa', 'resumo.rbt12', 'resumo.rbaAtual', 'resumo.rbaAnterior', 'resumo.faixaEnquadramento', 'folha12m', 'fatorR']
  }
}

export const labels = [
  'Empresa:', 'Emissão:', 'CNPJ:', 'Período:', 'Página:', 'Regime de Competência', 'Regime de Caixa',
  'Receita Bruta do período de Apuração', 'Receita bruta acumulada', 'Faixa de Enquadramento:', 'Simples Nacional a recolher:',
  'Anexo:', 'Seção:', 'Tabela:', 'Receita Tributada Total:', 'Alíquota:', 'Simples Nacional Total:', 'Partilha:',
  'Valor da Folha nos últimos 12 meses:', 'Fator r:', 'Valor Fixo ICMS:', 'Valor Fixo ISS:', 'Outros Acréscimos:',
  'Outras Deduções:', 'Valor Diferido:', 'CPF Responsável:', 'Código de Acesso:'
]
