/** The shape of the tax-regime report's `data` (README.md lists the fields; docs/plugins.md, step 7). */
import { schema as s } from '../../core/plugin-api.js'
import type { DataSchema } from '../../core/plugin-api.js'
import type { Partilha, RelatorioSimples } from './parse.js'

const partilha: DataSchema<Partilha> = s.object({ irpj: s.money(), csll: s.money(), cofins: s.money(), pis: s.money(), inssCpp: s.money(), icms: s.money(), ipi: s.money(), iss: s.money() })

export const dataSchema: DataSchema<RelatorioSimples> = s.object({
  identificacao: s.object({ empresa: s.text(), cnpj: s.digits(), competencia: s.period(), dataEmissao: s.date(), codigoEmpresa: s.text() }),
  resumo: s.object({
    receitaBrutaMes: s.text('The RPA total as printed (`18.939,46`).'),
    receitaBrutaMesNumero: s.text('The RPA total as a numeric string (`18939.46`).'),
    rbt12: s.money(),
    rbaAtual: s.money(),
    rbaAnterior: s.money(),
    faixaEnquadramento: s.text(),
    valorSimplesRecolher: s.money(),
    valorSimplesRecolherNumero: s.text(),
    cargaTributariaTotalNumero: s.number('Derived: valor a recolher ÷ RPA × 100, 4 decimals.')
  }),
  apuracoes: s.list(s.object({
    ordem: s.notNull(s.integer()),
    anexo: s.text(),
    descricaoAnexo: s.text(),
    secao: s.text(),
    tabela: s.text(),
    tratamentoTributario: s.text(),
    receitaTributada: s.money(),
    aliquotaEfetiva: s.number(),
    valorSimples: s.money(),
    partilha: s.nullable(partilha)
  })),
  consolidacaoPorAnexo: s.list(s.object({ anexo: s.notNull(s.text()), receitaTributada: s.money(), valorSimples: s.money(), quantidadeApuracoes: s.notNull(s.integer()), aliquotaMedia: s.number() })),
  partilha: s.nullable(partilha),
  folha12m: s.money(),
  fatorR: s.number(),
  valorFixoIcms: s.money(),
  valorFixoIss: s.money(),
  outrosAcrescimos: s.money(),
  outrasDeducoes: s.money(),
  valorDiferido: s.money()
})
