/** The shape of a PGDAS-D declaration's `data` (README.md lists the fields; docs/plugins.md, step 7). */
import { schema as s } from '../../core/plugin-api.js'
import type { DataSchema } from '../../core/plugin-api.js'
import { debitosSchema, receitasSchema } from '../_shared/simples-nacional/pgdas-schema.js'
import type { PgdasDeclaracao } from './parse.js'

export const dataSchema: DataSchema<PgdasDeclaracao> = s.merge(s.merge(s.object({
  numeroDeclaracao: s.text(),
  tipoDeclaracao: s.oneOf(['ORIGINAL', 'RETIFICADORA']),
  cnpj: s.digits(),
  cnpjBasico: s.digits(),
  razaoSocial: s.text(),
  dataAbertura: s.date(),
  regimeApuracao: s.oneOf(['COMPETENCIA', 'CAIXA']),
  periodoInicio: s.date(),
  periodoFim: s.date(),
  competencia: s.period(),
  filiais: s.nullable(s.list(s.notNull(s.digits()))),
  receitaBrutaAuferida: s.money(),
  valorTotalDebitoDeclarado: s.money(),
  dataTransmissao: s.dateTime(),
  numeroRecibo: s.text(),
  autenticacao: s.text()
}), receitasSchema), debitosSchema)
