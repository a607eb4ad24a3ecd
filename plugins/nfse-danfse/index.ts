/** NFS-e national DANFSe, layouts v1.0 and v2.0 (documents.md §7). Fields: README.md. */
import type { ExtractorPlugin } from '../../core/plugin-api.js'
import { checks } from './checks.js'
import { cellLabels, fields, labels } from './fields.js'
import { dataSchema } from './schema.js'
import { rules } from './detect.js'
import { parseDanfse } from './parse.js'
import type { Danfse } from './parse.js'

export type { Danfse } from './parse.js'

export const nfseDanfse: ExtractorPlugin<Danfse> = {
  id: 'nfse-danfse',
  family: 'NFSE',
  documentType: 'NFSE_DANFSE',
  version: '1.0.0',
  schemaVersion: '1.0',
  status: 'active',
  minimumConfidence: 0.75,
  rules,
  fields,
  labels,
  cellLabels,
  checks,
  parse: parseDanfse,
  dataSchema
}
