/** The shape of a DAS-MEI's `data` (README.md lists the fields; docs/plugins.md, step 7). */
import { schema as s } from '../../core/plugin-api.js'
import type { DataSchema } from '../../core/plugin-api.js'
import { guiaSchema } from '../_shared/simples-nacional/guide-schema.js'
import type { DasMei } from './parse.js'

export const dataSchema: DataSchema<DasMei> = s.object({
  cnpj: s.digits(),
  razaoSocial: s.text('For a MEI, the owner\'s name followed by the CPF digits.'),
  cpf: s.digits('The owner\'s CPF, 11 digits.'),
  versaoPgmei: s.text(),
  guias: s.list(s.merge(guiaSchema, s.object({ tributosMei: s.nullable(s.object({ inss: s.money(), icms: s.money(), iss: s.money() })) })), 'One guide per month, in page order.')
})
