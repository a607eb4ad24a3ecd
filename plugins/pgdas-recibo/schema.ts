/** The shape of a PGDAS-D receipt's `data` (README.md lists the fields; docs/plugins.md, step 7). */
import { schema as s } from '../../core/plugin-api.js'
import type { DataSchema } from '../../core/plugin-api.js'
import type { PgdasRecibo } from './parse.js'

export const dataSchema: DataSchema<PgdasRecibo> = s.object({
  razaoSocial: s.text(),
  cnpj: s.digits(),
  competencia: s.period(),
  numeroDeclaracao: s.text(),
  tipoDeclaracao: s.oneOf(['ORIGINAL', 'RETIFICADORA']),
  receitaBrutaAuferida: s.money(),
  totalDebitoDeclarado: s.money(),
  totalDebitoSuspenso: s.money(),
  totalDebitoExigivel: s.money(),
  dataHoraTransmissao: s.dateTime(),
  numeroRecibo: s.text(),
  autenticacao: s.text()
})
