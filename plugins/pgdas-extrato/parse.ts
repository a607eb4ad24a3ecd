/**
 * Parser of the PGDAS-D extract (documents.md §1 "Fields"). Every value is read through
 * the text API, so each has evidence; a field whose label or value is missing is null.
 */
import { MONEY_PATTERN, cnpjChars, competence, isoDate, isoDateTime, moneyNumber, onlyDigits } from '../../core/plugin-api.js'
import type { Hit, ParseContext, TextDocument } from '../../core/plugin-api.js'
import { readDebitos, readReceitas } from '../_shared/simples-nacional/pgdas-tables.js'
import type { PgdasDebitos, PgdasReceitas } from '../_shared/simples-nacional/pgdas-tables.js'
import { readAtividades } from './atividades.js'
import type { Atividade } from './atividades.js'

export type { FolhaAnterior, ReceitaAnterior, Triple, Tributos } from '../_shared/simples-nacional/pgdas-tables.js'
export type { Atividade, Parcela } from './atividades.js'
export interface Das { numero: string | null, vencimento: string | null, dataLimite: string | null, principal: number | null, multa: number | null, juros: number | null, total: number | null, pago: boolean | null }

/** The extract: its own fields, then section 2 and the section 4 tables as the family reads them. */
export interface PgdasExtrato extends PgdasReceitas, PgdasDebitos {
  cnpjBasico: string | null
  cnpj: string | null
  razaoSocial: string | null
  dataAbertura: string | null
  regimeApuracao: 'COMPETENCIA' | 'CAIXA' | null
  competencia: string | null
  numeroApuracao: string | null
  tipoApuracao: 'ORIGINAL' | 'RETIFICADORA' | null
  geradoEm: string | null
  apuradoEm: string | null
  versaoPgdas: string | null
  sublimite: number | null
  impedidoIcmsIss: boolean | null
  atividades: Atividade[] | null
  valorDas: number | null
  das: Das | null
}

const M = `(${MONEY_PATTERN})`
const DATE = /(\d{2}\/\d{2}\/\d{4})/
const DATE_TIME = /(\d{2}\/\d{2}\/\d{4} \d{2}:\d{2}:\d{2})/
/** Section 3's title: sublimite and impedimento are read inside it. */
const SECTION_3 = /^3\) Informações dos Estabelecimentos/

function das (doc: TextDocument, ctx: ParseContext): Das | null {
  const section = doc.find(/^6\) Informações sobre DAS Gerado/)
  if (section === undefined) return null
  const from = { page: section.page }
  const amounts = doc.find(new RegExp(`^Principal ${M} Multa ${M}? ?Juros ${M}? ?Total ${M}$`), from)
  const money = (name: string, hit: Hit | undefined): number | null => ctx.take(`das.${name}`, hit, moneyNumber)
  const unpaid = doc.find(/Não foi reconhecido pagamento/i)
  if (unpaid !== undefined) ctx.cite('das.pago', unpaid)
  return {
    numero: ctx.take('das.numero', doc.labelValue(/^Número:/, /^\s*(\d{17})\b/, from), (t) => t),
    vencimento: ctx.take('das.vencimento', doc.labelValue(/Data de Vencimento:/, DATE, from), isoDate),
    dataLimite: ctx.take('das.dataLimite', doc.labelValue(/Data limite para acolhimento:/, DATE, from), isoDate),
    principal: money('principal', amounts?.parts[0]),
    multa: money('multa', amounts?.parts[1]),
    juros: money('juros', amounts?.parts[2]),
    total: money('total', amounts?.parts[3]),
    // Only the sentence says "not paid"; its absence proves nothing (documents.md §1).
    pago: unpaid === undefined ? null : false
  }
}

export function parseExtrato (doc: TextDocument, ctx: ParseContext): PgdasExtrato {
  const text = (s: string): string | null => s.trim() === '' ? null : s.trim()
  // Each activity and each establishment's totals print a tax table with the same headers (section 3): counted when the tables are read by order.
  const debitos = readDebitos(doc, ctx, [/^Receita Bruta Informada:/, /^Totais do Estabelecimento/])
  // Section 3 up to section 4; its first establishment (the matriz) gives sublimite and impedimento.
  const estabelecimentos = doc.section(SECTION_3, /^4\) Total Geral da Empresa/)
  const razao = doc.labelValue(/Nome Empresarial:/, /^\s*(\S.*)$/, { linesBelow: 1 })
  // Positions lost (pdfminer's order): a pair of labels, then their two values; both or neither.
  const pairOf = (fields: Parameters<TextDocument['orderedValues']>[0]): Record<string, Hit | undefined> => {
    const found = doc.positionless ? doc.orderedValues(fields)?.[0] : undefined
    return found !== undefined && fields.every((f) => found[f.name] !== undefined) ? found : {}
  }
  const opening = pairOf([{ name: 'cnpjBasico', label: 'CNPJ Básico:', value: /^\s*(\d{2}\.\d{3}\.\d{3})\s*$/ }, { name: 'dataAbertura', label: 'Data de Abertura:', value: /^\s*(\d{2}\/\d{2}\/\d{4})\s*$/ }])
  const naming = pairOf([
    // A name: no label, no number alone, not the regime's word.
    { name: 'razaoSocial', label: 'Nome Empresarial:', value: /^\s*(?!.*:|[\d.,/\s]+$|(?:Competência|Caixa)\s*$)(\S.*?)\s*$/ },
    { name: 'regimeApuracao', label: 'Regime de Apuração:', value: /^\s*(Competência|Caixa)\s*$/ }
  ])
  return {
    cnpjBasico: ctx.take('cnpjBasico', doc.labelValue(/CNPJ Básico:/, /(\d{2}\.\d{3}\.\d{3})/) ?? opening.cnpjBasico, onlyDigits),
    cnpj: ctx.take('cnpj', doc.labelValue(/CNPJ Estabelecimento:/, /([0-9A-Z]{2}\.[0-9A-Z]{3}\.[0-9A-Z]{3}\/[0-9A-Z]{4}-\d{2})/), cnpjChars),
    // The name ends where the next label of its line starts (documents.md §1: "stop before Data de Abertura");
    // a line that starts with one (positions lost: the label's next line is another label) holds no name.
    razaoSocial: ctx.take('razaoSocial', (razao !== undefined && /^\s*(?:Data de Abertura|Regime de Apuração):/.test(razao.value) ? undefined : razao) ?? naming.razaoSocial, (t) => text(t.split(/(?:^|\s+)(?:Data de Abertura|Regime de Apuração):/)[0]!)),
    dataAbertura: ctx.take('dataAbertura', doc.labelValue(/Data de Abertura:/, DATE) ?? opening.dataAbertura, isoDate),
    regimeApuracao: ctx.take('regimeApuracao', doc.labelValue(/Regime de Apuração:/, /^\s*(Competência|Caixa)/) ?? naming.regimeApuracao, (t) => t.startsWith('C') && t.length > 5 ? 'COMPETENCIA' as const : 'CAIXA' as const),
    competencia: ctx.take('competencia', doc.labelValue(/Período de Apuração \(PA\):/, /(\d{2}\/\d{4})/), competence),
    numeroApuracao: ctx.take('numeroApuracao', doc.labelValue(/Informações da Apuração/, /\b(\d{17})\b/), (t) => t),
    tipoApuracao: ctx.take('tipoApuracao', doc.find(/^Apuração (Original|Retificadora)\b/), (t) => t === 'Original' ? 'ORIGINAL' as const : 'RETIFICADORA' as const),
    geradoEm: ctx.take('geradoEm', doc.labelValue(/Gerado em/, DATE_TIME), isoDateTime),
    apuradoEm: ctx.take('apuradoEm', doc.labelValue(/Apurado em/, DATE_TIME), isoDateTime),
    versaoPgdas: ctx.take('versaoPgdas', doc.labelValue(/PGDAS-D 2018 Versão/, /(\d+\.\d+\.\d+)/), (t) => t),
    ...readReceitas(doc, ctx),
    // Beside the label, or (2.2.27) in its column on the line below.
    sublimite: ctx.take('sublimite', estabelecimentos.labelValue(/Sublimite de Receita Anual \(R\$\):/, new RegExp(`^\\s*${M}`)) ?? estabelecimentos.under('Sublimite de Receita Anual (R$):'), moneyNumber),
    impedidoIcmsIss: ctx.take('impedidoIcmsIss', estabelecimentos.labelValue(/Impedido de recolher ICMS\/ISS no DAS:/, /^\s*(Sim|Não)\b/) ?? estabelecimentos.under('Impedido de recolher ICMS/ISS no DAS:'), (t) => t === 'Sim' ? true : t === 'Não' ? false : null),
    atividades: estabelecimentos.isEmpty ? null : readAtividades(estabelecimentos, ctx),
    ...debitos,
    valorDas: debitos.totalDebitoExigivel?.total ?? null,
    das: das(doc, ctx)
  }
}
