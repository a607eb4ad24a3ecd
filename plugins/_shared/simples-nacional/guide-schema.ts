/** The shape of what every SENDA Simples Nacional guide prints (guide.ts), for the DAS and DAS-MEI schemas. */
import { schema as s } from '../../../core/plugin-api.js'
import type { DataSchema } from '../../../core/plugin-api.js'
import type { Guia, LinhaComposicao, Totais } from './guide.js'

export const totaisSchema: DataSchema<Totais> = s.object({ principal: s.money(), multa: s.money(), juros: s.money(), total: s.money() })

export const linhaComposicaoSchema: DataSchema<LinhaComposicao> = s.object({
  codigo: s.text('The revenue code.'),
  denominacao: s.text(),
  principal: s.money(),
  multa: s.money('Null when the cell is printed empty.'),
  juros: s.money('Null when the cell is printed empty.'),
  total: s.money(),
  periodo: s.period('From the row\'s second line.'),
  municipio: s.text(),
  uf: s.text()
})

/** The fields of a guide, to merge into a document's own. */
export const guiaSchema: DataSchema<Guia> = s.object({
  competencia: s.text('`YYYY-MM`, or `DIVERSOS` (installment plans).'),
  dataVencimento: s.date(),
  pagarAte: s.date(),
  numeroDocumento: s.digits('17 digits.'),
  numeroDocumentoFormatado: s.text('As printed, `NN.NN.YYDDD.NNNNNNN-D`.'),
  valorTotal: s.money(),
  observacoes: s.text(),
  composicao: s.list(linhaComposicaoSchema),
  totais: s.nullable(totaisSchema),
  linhaDigitavel: s.digits('48 digits.'),
  codigoBarras: s.digits('44 digits.'),
  dataEmissao: s.dateTime(),
  versaoSenda: s.text()
})
