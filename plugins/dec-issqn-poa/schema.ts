/** The shape of a DEC's `data` (README.md lists the fields; docs/plugins.md, step 7). */
import { schema as s } from '../../core/plugin-api.js'
import type { DataSchema } from '../../core/plugin-api.js'
import type { DecIssqnPoa } from './parse.js'

const pages = s.list(s.notNull(s.integer()))

export const dataSchema: DataSchema<DecIssqnPoa> = s.object({
  municipio: s.object({ ibge: s.constant('4314902'), nome: s.constant('Porto Alegre'), uf: s.constant('RS') }),
  empresa: s.object({ cnpj: s.digits(), razaoSocial: s.text(), inscricaoMunicipal: s.text() }),
  competencia: s.nullable(s.object({ ano: s.notNull(s.integer()), mes: s.notNull(s.integer()), referencia: s.notNull(s.period()) })),
  financeiro: s.object({
    receitaServicos: s.money(),
    deducoes: s.money(),
    baseCalculo: s.money(),
    aliquota: s.alwaysNull('Not printed by the DEC: always null.'),
    issProprio: s.money(),
    issRetidoSubstituicao: s.money(),
    issRetidoTerceiros: s.money(),
    issResponsabilidadeSolidaria: s.money(),
    issCpom: s.money(),
    totalImpostoDevido: s.money(),
    totalRecolher: s.money()
  }),
  recibo: s.nullable(s.object({ situacao: s.constant('ENTREGUE'), recebidoEm: s.dateTime(), autenticacao: s.text() })),
  guia: s.nullable(s.object({
    codigoArrecadacao: s.text(),
    vencimento: s.date(),
    geradaEm: s.dateTime(),
    linhaDigitavel: s.digits(),
    valorImposto: s.money(),
    valorPagar: s.money(),
    receita: s.text()
  })),
  paginas: s.object({ declaracao: pages, guia: pages, recibo: pages }, '1-based page numbers of each part.')
})
