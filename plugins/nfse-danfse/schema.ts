/** The shape of a DANFSe's `data` (README.md lists the fields; docs/plugins.md, step 7). */
import { schema as s } from '../../core/plugin-api.js'
import type { DataSchema } from '../../core/plugin-api.js'
import type { Danfse, Parte } from './parse.js'

const parte: DataSchema<Parte> = s.object({
  documento: s.text('CNPJ (14 characters, letters allowed in 1-12), CPF (11 digits) or NIF as printed.'),
  inscricaoMunicipal: s.text(),
  nome: s.text(),
  email: s.text(),
  telefone: s.text(),
  endereco: s.text(),
  municipio: s.text(),
  uf: s.text(),
  cep: s.digits('8 digits.'),
  codigoIbge: s.digits('7 digits (v2.0 prints it).'),
  simplesNacional: s.text(),
  regimeApuracaoSn: s.text()
})

export const dataSchema: DataSchema<Danfse> = s.object({
  versaoLayout: s.oneOf(['1.0', '2.0']),
  chaveAcesso: s.text(),
  numeroNfse: s.text(),
  competencia: s.period('`YYYY-MM` (the DANFSe prints a date of the month).'),
  dataHoraEmissao: s.text(),
  numeroDps: s.text(),
  serieDps: s.text(),
  dataHoraEmissaoDps: s.text(),
  situacao: s.text(),
  finalidade: s.text(),
  prestador: s.nullable(parte),
  tomador: s.nullable(parte),
  intermediario: s.nullable(parte),
  destinatario: s.nullable(parte),
  servico: s.nullable(s.object({
    codigoTributacaoNacional: s.text(),
    codigoTributacaoMunicipal: s.text(),
    codigoNbs: s.text(),
    descricao: s.text(),
    localPrestacao: s.text(),
    paisPrestacao: s.text()
  })),
  issqn: s.nullable(s.object({
    tributacao: s.text(),
    municipioIncidencia: s.text(),
    regimeEspecial: s.text(),
    baseCalculo: s.money(),
    aliquota: s.number('Percent as printed (`2,00 %` is 2).'),
    retido: s.flag(),
    valorApurado: s.money()
  })),
  federais: s.nullable(s.object({ irrf: s.money(), cpRetida: s.money(), contribuicoesRetidas: s.money(), pis: s.money(), cofins: s.money() })),
  ibsCbs: s.nullable(s.object({
    cst: s.text(),
    cClassTrib: s.text(),
    aliquotaIbsUf: s.number(),
    aliquotaIbsMun: s.number(),
    valorIbs: s.money(),
    aliquotaCbs: s.number(),
    valorCbs: s.money(),
    total: s.money(),
    valorLiquidoComIbsCbs: s.money()
  })),
  valores: s.nullable(s.object({
    valorServico: s.money(),
    descontoCondicionado: s.money(),
    descontoIncondicionado: s.money(),
    issqnRetido: s.money('v1.0 prints it apart; v2.0 folds it into totalRetencoes (null there).'),
    totalRetencoes: s.money('v1.0: federal withholdings; v2.0: ISSQN and federal withholdings.'),
    valorLiquido: s.money()
  })),
  canhoto: s.nullable(s.object({ numeroNfse: s.text(), chaveAcesso: s.text() }, 'The v2.0 footer stub: the number and key printed again.')),
  homologacao: s.notNull(s.flag())
})
