/** The shape of a DAS's `data` (README.md lists the fields; docs/plugins.md, step 7). */
import { schema as s } from '../../core/plugin-api.js'
import type { DataSchema } from '../../core/plugin-api.js'
import { guiaSchema } from '../_shared/simples-nacional/guide-schema.js'
import type { Das } from './parse.js'

export const dataSchema: DataSchema<Das> = s.merge(s.object({
  cnpj: s.digits(),
  razaoSocial: s.text(),
  subtipo: s.notNull(s.oneOf(['NORMAL', 'PARCELAMENTO'])),
  parcelamento: s.nullable(s.object({ numero: s.integer(), parcela: s.integer(), totalParcelas: s.integer() }, 'Null unless the guide is an installment.'))
}), guiaSchema)
