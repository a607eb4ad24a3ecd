/**
 * What the PGDAS-D receipt (documents.md §8a) prints: the fields every such document prints (a null one is a reading that
 * failed: the engine warns and lowers confidence) or prints only sometimes, and the labels
 * that bound every value read (docs/plugins.md).
 */
import type { ExpectedFields } from '../../core/plugin-api.js'

export function fields (): ExpectedFields {
  return {
    required: ['razaoSocial', 'cnpj', 'competencia', 'numeroDeclaracao', 'receitaBrutaAuferida', 'totalDebitoDeclarado', 'dataHoraTransmissao', 'numeroRecibo'],
    optional: ['tipoDeclaracao', 'totalDebitoSuspenso', 'totalDebitoExigivel', 'autenticacao']
  }
}

export const labels = [
  'Recibo de Entrega da Apuração no PGDAS-D', 'Nome Empresarial', 'CNPJ da Matriz', 'Período de Apuração', 'Número da Apuração',
  'Receita Bruta Auferida', 'Total do Débito Declarado', 'Total do Débito com Exigibilidade Suspensa', 'Total do Débito Exigível',
  'Data e Horário da Transmissão', 'Data e Horário da Transmissão (Data e Horário de Brasília):', 'Número do Recibo', 'Autenticação'
]
