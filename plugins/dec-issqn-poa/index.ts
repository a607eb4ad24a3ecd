/** Porto Alegre's "DEC", the monthly ISSQN declaration with its guide and receipt (documents.md §9). Fields: README.md. */
import type { ExtractorPlugin } from '../../core/plugin-api.js'
import { checks } from './checks.js'
import { fields, labels } from './fields.js'
import { dataSchema } from './schema.js'
import { rules } from './detect.js'
import { parseDec } from './parse.js'
import type { DecIssqnPoa } from './parse.js'

export type { DecIssqnPoa } from './parse.js'

export const decIssqnPoa: ExtractorPlugin<DecIssqnPoa> = {
  id: 'dec-issqn-poa',
  family: 'MUNICIPAL',
  documentType: 'DEC_ISSQN_POA',
  version: '1.0.0',
  schemaVersion: '1.0',
  status: 'active',
  minimumConfidence: 0.75,
  rules,
  fields,
  labels,
  checks,
  parse: parseDec,
  dataSchema
}
