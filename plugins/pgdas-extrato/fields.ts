/**
 * What the PGDAS-D extract (documents.md §1) prints: the fields every such document prints (a null one is a reading that
 * failed: the engine warns and lowers confidence) or prints only sometimes, and the labels
 * that bound every value read (docs/plugins.md).
 */
import type { ExpectedFields } from '../../core/plugin-api.js'
import { PGDAS_LABELS } from '../_shared/simples-nacional/pgdas-fields.js'

export function fields (): ExpectedFields {
  return {
    required: ['cnpjBasico', 'cnpj', 'razaoSocial', 'competencia', 'numeroApuracao', 'rpa', 'rbt12', 'totalDebitoDeclarado'],
    optional: ['dataAbertura', 'regimeApuracao', 'tipoApuracao', 'geradoEm', 'apuradoEm', 'versaoPgdas', 'rba', 'rbaa', 'receitasAnteriores', 'fatorR', 'atividades', 'valorDas', 'das']
  }
}

export const labels = [
  ...PGDAS_LABELS, 'CNPJ Básico:', 'CNPJ Estabelecimento:', 'Data de Abertura:', 'Número:', 'Data de Vencimento:',
  'Data limite para acolhimento:', 'Impedido de recolher ICMS/ISS no DAS:', 'Totais do Estabelecimento'
]
