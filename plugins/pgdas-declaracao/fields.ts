/**
 * What the PGDAS-D declaration (documents.md §2) prints: the fields every such document prints (a null one is a reading that
 * failed: the engine warns and lowers confidence) or prints only sometimes, and the labels
 * that bound every value read (docs/plugins.md).
 */
import type { ExpectedFields } from '../../core/plugin-api.js'
import { PGDAS_LABELS } from '../_shared/simples-nacional/pgdas-fields.js'

export function fields (): ExpectedFields {
  return {
    required: ['numeroDeclaracao', 'cnpj', 'cnpjBasico', 'razaoSocial', 'competencia', 'rpa', 'rbt12', 'totalDebitoDeclarado'],
    optional: ['tipoDeclaracao', 'dataAbertura', 'regimeApuracao', 'periodoInicio', 'periodoFim', 'filiais', 'receitaBrutaAuferida', 'valorTotalDebitoDeclarado', 'dataTransmissao', 'numeroRecibo', 'autenticacao', 'rba', 'rbaa', 'receitasAnteriores', 'fatorR']
  }
}

export const labels = [
  ...PGDAS_LABELS, 'Nº da Declaração:', 'CNPJ Matriz:', 'Data de abertura no CNPJ:', 'Data e horário da transmissão da Declaração:',
  'Data e Horário da Transmissão', 'Número do Recibo:', 'Autenticação:', 'CNPJ das filiais presentes nesta declaração'
]
