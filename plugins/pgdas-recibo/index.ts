/** PGDAS-D "Recibo de Entrega da Apuração", PGDASD-RECIBO (documents.md §8a). Fields: README.md. */
import type { ExtractorPlugin } from '../../core/plugin-api.js'
import { checks } from './checks.js'
import { fields, labels } from './fields.js'
import { dataSchema } from './schema.js'
import { rules } from './detect.js'
import { parseRecibo } from './parse.js'
import type { PgdasRecibo } from './parse.js'

export type { PgdasRecibo } from './parse.js'

export const pgdasRecibo: ExtractorPlugin<PgdasRecibo> = {
  id: 'pgdas-recibo',
  family: 'SIMPLES_NACIONAL',
  documentType: 'PGDAS_RECIBO',
  version: '1.0.0',
  schemaVersion: '1.0',
  status: 'active',
  minimumConfidence: 0.75,
  rules,
  fields,
  labels,
  checks,
  parse: parseRecibo,
  dataSchema
}
