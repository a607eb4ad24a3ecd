/** PGDAS-D "Extrato do Simples Nacional" (documents.md §1). Fields: README.md. */
import type { ExtractorPlugin } from '../../core/plugin-api.js'
import { checks } from './checks.js'
import { fields, labels } from './fields.js'
import { dataSchema } from './schema.js'
import { rules } from './detect.js'
import { parseExtrato } from './parse.js'
import type { PgdasExtrato } from './parse.js'

export type { PgdasExtrato } from './parse.js'

export const pgdasExtrato: ExtractorPlugin<PgdasExtrato> = {
  id: 'pgdas-extrato',
  family: 'SIMPLES_NACIONAL',
  documentType: 'PGDAS_EXTRATO',
  version: '1.1.0',
  // 1.1: receitasAnteriores, folhaSalariosAnteriores, sublimite, impedidoIcmsIss, atividades.
  schemaVersion: '1.1',
  status: 'active',
  minimumConfidence: 0.75,
  rules,
  fields,
  labels,
  checks,
  parse: parseExtrato,
  dataSchema
}
