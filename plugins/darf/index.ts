/** DARF, "Documento de Arrecadação de Receitas Federais", both layouts (documents.md §6). Fields: README.md. */
import type { ExtractorPlugin } from '../../core/plugin-api.js'
import { checks } from './checks.js'
import { fields, labels } from './fields.js'
import { dataSchema } from './schema.js'
import { rules } from './detect.js'
import { parseDarf } from './parse.js'
import type { Darf } from './parse.js'

export type { Darf, DarfCanhoto, DarfTotais, DarfTributo, DarfVias } from './parse.js'

export const darf: ExtractorPlugin<Darf> = {
  id: 'darf',
  // The RFB's collection guide for federal revenues (IRPJ, CSLL, PIS, COFINS, IRRF, DCTFWeb contributions): not Simples Nacional.
  family: 'RECEITA_FEDERAL',
  documentType: 'DARF',
  version: '1.0.0',
  schemaVersion: '1.0',
  status: 'active',
  minimumConfidence: 0.75,
  rules,
  fields,
  labels,
  checks,
  parse: parseDarf,
  dataSchema
}
