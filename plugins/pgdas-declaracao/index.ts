/** PGDAS-D declaration print, PGDASD-DECLARACAO (documents.md §2). Fields: README.md. */
import type { ExtractorPlugin } from '../../core/plugin-api.js'
import { checks } from './checks.js'
import { fields, labels } from './fields.js'
import { dataSchema } from './schema.js'
import { rules } from './detect.js'
import { parseDeclaracao } from './parse.js'
import type { PgdasDeclaracao } from './parse.js'

export type { PgdasDeclaracao } from './parse.js'

export const pgdasDeclaracao: ExtractorPlugin<PgdasDeclaracao> = {
  id: 'pgdas-declaracao',
  family: 'SIMPLES_NACIONAL',
  documentType: 'PGDAS_DECLARACAO',
  version: '1.0.0',
  schemaVersion: '1.0',
  status: 'active',
  minimumConfidence: 0.75,
  rules,
  fields,
  labels,
  checks,
  parse: parseDeclaracao,
  dataSchema
}
