/** The shape of a DARF's `data` (README.md lists the fields; docs/plugins.md, step 7). */
import { schema as s } from '../../core/plugin-api.js'
import type { DataSchema } from '../../core/plugin-api.js'
import type { Darf } from './parse.js'

const amounts = { principal: s.money(), multa: s.money(), juros: s.money(), total: s.money() }

export const dataSchema: DataSchema<Darf> = s.object({
  layout: s.notNull(s.oneOf(['SENDA', 'CAMPOS_NUMERADOS'])),
  cnpjCpf: s.digits('CNPJ (14 characters) or CPF (11 digits), without punctuation.'),
  razaoSocial: s.text(),
  periodoApuracao: s.text('A date `YYYY-MM-DD`, a month `YYYY-MM`, or `DIVERSOS`, as printed.'),
  dataVencimento: s.date(),
  pagarAte: s.date(),
  numeroDocumento: s.digits(),
  numeroReferencia: s.text(),
  numeroReciboDeclaracao: s.text(),
  valorTotal: s.money(),
  tributos: s.list(s.object({
    codigoReceita: s.text(),
    codigoVariacao: s.text(),
    denominacao: s.text(),
    descricao: s.text(),
    periodoApuracao: s.text('A date `YYYY-MM-DD` or a month `YYYY-MM`.'),
    vencimento: s.date(),
    ...amounts
  })),
  totais: s.nullable(s.object(amounts)),
  linhaDigitavel: s.digits('48 digits.'),
  codigoBarras: s.digits('44 digits.'),
  origem: s.oneOf(['SENDA', 'SICALC_WEB', 'IRPF']),
  dataEmissao: s.dateTime(),
  canhoto: s.nullable(s.object({ cnpjCpf: s.digits(), numeroDocumento: s.digits(), pagarAte: s.date(), valor: s.money() }, 'The tear-off stub of a SENDA DARF.')),
  vias: s.nullable(s.object({ quantidade: s.notNull(s.integer()), divergencias: s.list(s.notNull(s.text())) }, 'The copies of a numbered-box DARF and the fields on which they differ.'))
})
