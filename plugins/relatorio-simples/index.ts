/** Accounting-software "Relatório do Simples" (documents.md §3), the spec's tax-regime report. Fields: README.md. */
import type { ExtractorPlugin } from '../../core/plugin-api.js'
import { checks } from './checks.js'
import { fields, labels } from './fields.js'
import { dataSchema } from './schema.js'
import { rules } from './detect.js'
import { parseRelatorio } from './parse.js'
import type { RelatorioSimples } from './parse.js'

export type { RelatorioSimples } from './parse.js'

export const relatorioSimples: ExtractorPlugin<RelatorioSimples> = {
  id: 'relatorio-simples',
  family: 'SIMPLES_NACIONAL',
  documentType: 'RELATORIO_SIMPLES',
  version: '1.0.0',
  schemaVersion: '1.0',
  status: 'active',
  minimumConfidence: 0.75,
  rules,
  fields,
  labels,
  checks,
  parse: parseRelatorio,
  dataSchema
}
