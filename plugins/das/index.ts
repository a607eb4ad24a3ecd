/** DAS of the Simples Nacional, including installment plans (documents.md §4). Fields: README.md. */
import type { ExtractorPlugin } from '../../core/plugin-api.js'
import { checks } from './checks.js'
import { fields, labels } from './fields.js'
import { dataSchema } from './schema.js'
import { rules } from './detect.js'
import { parseDas } from './parse.js'
import type { Das } from './parse.js'

export type { Das } from './parse.js'

export const das: ExtractorPlugin<Das> = {
  id: 'das',
  family: 'SIMPLES_NACIONAL',
  documentType: 'DAS',
  version: '1.0.0',
  schemaVersion: '1.0',
  status: 'active',
  minimumConfidence: 0.75,
  rules,
  fields,
  labels,
  checks,
  parse: parseDas,
  dataSchema
}
