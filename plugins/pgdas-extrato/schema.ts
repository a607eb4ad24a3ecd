/** The shape of a PGDAS-D extract's `data` (README.md lists the fields; docs/plugins.md, step 7). */
import { schema as s } from '../../core/plugin-api.js'
import type { DataSchema } from '../../core/plugin-api.js'
import { debitosSchema, receitasSchema, tributosSchema } from '../_shared/simples-nacional/pgdas-schema.js'
import type { PgdasExtrato } from './parse.js'

const atividade = s.object({
  estabelecimento: s.digits('The establishment\'s CNPJ (14 characters), null when its line is not printed.'),
  descricao: s.text('The activity as printed (its lines joined).'),
  receita: s.money('`Receita Bruta Informada`.'),
  tributos: s.nullable(tributosSchema),
  parcelas: s.list(s.object({ numero: s.notNull(s.integer()), valor: s.money() }), '`Parcela N: R$ X` lines, in order.'),
  substituicaoTributaria: s.list(s.notNull(s.text()), 'Taxes named by `Substituição tributária de:` (keys of `tributos`).'),
  tributacaoMonofasica: s.list(s.notNull(s.text()), 'Taxes named by `Tributação monofásica de:`.')
})

export const dataSchema: DataSchema<PgdasExtrato> = s.merge(s.merge(s.object({
  cnpjBasico: s.digits(),
  cnpj: s.digits(),
  razaoSocial: s.text(),
  dataAbertura: s.date(),
  regimeApuracao: s.oneOf(['COMPETENCIA', 'CAIXA']),
  competencia: s.period(),
  numeroApuracao: s.text(),
  tipoApuracao: s.oneOf(['ORIGINAL', 'RETIFICADORA']),
  geradoEm: s.dateTime(),
  apuradoEm: s.dateTime(),
  versaoPgdas: s.text(),
  sublimite: s.money(),
  impedidoIcmsIss: s.flag(),
  atividades: s.nullable(s.list(atividade)),
  valorDas: s.money(),
  das: s.nullable(s.object({ numero: s.text(), vencimento: s.date(), dataLimite: s.date(), principal: s.money(), multa: s.money(), juros: s.money(), total: s.money(), pago: s.flag() }))
}), receitasSchema), debitosSchema)
