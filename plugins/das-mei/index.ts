/** DAS-MEI, the PGMEI guide, one month or an annual file (documents.md §5). Fields: README.md. */
import type { ExtractorPlugin } from '../../core/plugin-api.js'
import { checks } from './checks.js'
import { fields, labels } from './fields.js'
import { dataSchema } from './schema.js'
import { rules } from './detect.js'
import { parseDasMei } from './parse.js'
import type { DasMei } from './parse.js'

export type { DasMei } from './parse.js'

export const dasMei: ExtractorPlugin<DasMei> = {
  id: 'das-mei',
  family: 'SIMPLES_NACIONAL',
  documentType: 'DAS_MEI',
  version: '1.0.0',
  schemaVersion: '1.0',
  status: 'active',
  minimumConfidence: 0.75,
  rules,
  fields,
  labels,
  checks,
  parse: parseDasMei,
  dataSchema
}
