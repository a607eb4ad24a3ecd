/** The shape of the PGDAS-D tables the extract and the declaration print alike (pgdas-tables.ts). */
import { schema as s } from '../../../core/plugin-api.js'
import type { DataSchema } from '../../../core/plugin-api.js'
import type { PgdasDebitos, PgdasReceitas, Triple, Tributos } from './pgdas-tables.js'

const triple: DataSchema<Triple> = s.object({ interno: s.money(), externo: s.money(), total: s.money() })

export const tributosSchema: DataSchema<Tributos> = s.object({
  irpj: s.money(), csll: s.money(), cofins: s.money(), pis: s.money(), inssCpp: s.money(), icms: s.money(), ipi: s.money(), iss: s.money(), total: s.money()
})

export const receitasSchema: DataSchema<PgdasReceitas> = s.object({
  rpa: s.nullable(triple),
  rbt12: s.nullable(triple),
  rbt12p: s.nullable(triple),
  rba: s.nullable(triple),
  rbaa: s.nullable(triple),
  limiteReceitaProporcionalizado: s.money(),
  receitasAnteriores: s.nullable(s.list(s.object({ competencia: s.notNull(s.period()), interno: s.money(), externo: s.money() }))),
  folhaSalariosAnteriores: s.nullable(s.list(s.object({ competencia: s.notNull(s.period()), valor: s.money() }))),
  fatorR: s.number()
})

export const debitosSchema: DataSchema<PgdasDebitos> = s.object({
  totalDebitoDeclarado: s.nullable(tributosSchema),
  totalDebitoSuspenso: s.nullable(tributosSchema),
  totalDebitoExigivel: s.nullable(tributosSchema)
})
