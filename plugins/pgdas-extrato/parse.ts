/**
 * Parser of the PGDAS-D extract (documents.md §1 "Fields"). Every value is read through
 * the text API, so each has evidence; a field whose label or value is missing is null.
 */
import { MONEY_PATTERN, cnpjChars, competence, isoDate, isoDateTime, moneyNumber, onlyDigits } from '../../core/plugin-api.js'
import type { Hit, ParseContext, TextDocument } from '../../core/plugin-api.js'

export interface Triple { interno: number | null, externo: number | null, total: number | null }
export interface Tributos { irpj: number | null, csll: number | null, cofins: number | null, pis: number | null, inssCpp: number | null, icms: number | null, ipi: number | null, iss: number | null, total: number | null }
export interface Das { numero: string | null, vencimento: string | null, dataLimite: string | null, principal: number | null, multa: number | null, juros: number | null, total: number | null, pago: boolean | null }

export interface PgdasExtrato {
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
  rpa: Triple | null
  rbt12: Triple | null
  rbt12p: Triple | null
  rba: Triple | null
  rbaa: Triple | null
  limiteReceitaProporcionalizado: number | null
  fatorR: number | null
  totalDebitoDeclarado: Tributos | null
  totalDebitoSuspenso: Tributos | null
  totalDebitoExigivel: Tributos | null
  valorDas: number | null
  das: Das | null
}

const M = `(${MONEY_PATTERN})`
const TAX_KEYS = ['irpj', 'csll', 'cofins', 'pis', 'inssCpp', 'icms', 'ipi', 'iss', 'total'] as const
const NINE = new RegExp(`^${Array(9).fill(M).join(' ')}$`)
const DATE = /(\d{2}\/\d{2}\/\d{4})/
const DATE_TIME = /(\d{2}\/\d{2}\/\d{4} \d{2}:\d{2}:\d{2})/

/** A row of three money columns (interno, externo, total) starting with `label`; null when the row or its values are absent. */
function triple (doc: TextDocument, ctx: ParseContext, field: string, label: string): Triple | null {
  const hit = doc.find(new RegExp(`^${label}\\s+${M}\\s+${M}\\s+${M}$`))
  if (hit === undefined) return null
  return {
    interno: ctx.take(`${field}.interno`, hit.parts[0], moneyNumber),
    externo: ctx.take(`${field}.externo`, hit.parts[1], moneyNumber),
    total: ctx.take(`${field}.total`, hit.parts[2], moneyNumber)
  }
}

/** One of the three 9-column tables of section 4, found by its title (header row between). */
function tributos (doc: TextDocument, ctx: ParseContext, field: string, title: RegExp): Tributos | null {
  const hit = doc.after(title, NINE, { linesBelow: 2 })
  if (hit === undefined) return null
  return Object.fromEntries(TAX_KEYS.map((k, i) => [k, ctx.take(`${field}.${k}`, hit.parts[i], moneyNumber)])) as unknown as Tributos
}

function das (doc: TextDocument, ctx: ParseContext): Das | null {
  const section = doc.find(/^6\) Informações sobre DAS Gerado/)
  if (section === undefined) return null
  const from = { page: section.page }
  const amounts = doc.find(new RegExp(`^Principal ${M} Multa ${M}? ?Juros ${M}? ?Total ${M}$`), from)
  const money = (name: string, hit: Hit | undefined): number | null => ctx.take(`das.${name}`, hit, moneyNumber)
  const unpaid = doc.find(/Não foi reconhecido pagamento/i)
  if (unpaid !== undefined) ctx.cite('das.pago', unpaid)
  return {
    numero: ctx.take('das.numero', doc.after(/^Número:/, /^\s*(\d{17})\b/, from), (t) => t),
    vencimento: ctx.take('das.vencimento', doc.after(/Data de Vencimento:/, DATE, from), isoDate),
    dataLimite: ctx.take('das.dataLimite', doc.after(/Data limite para acolhimento:/, DATE, from), isoDate),
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
  const exigivel = tributos(doc, ctx, 'totalDebitoExigivel', /^Total do Débito Exigível \(R\$\)/)
  const fator = doc.after(/^Fator r =/, /^\s*(Não se aplica|\d+,\d+)/)
  const fatorR = fator === undefined || /não/i.test(fator.value) ? null : ctx.take('fatorR', fator, (t) => Number(t.replace(',', '.')))
  const razao = doc.after(/Nome Empresarial:/, /^\s*(\S.*)$/, { linesBelow: 1 })
  return {
    cnpjBasico: ctx.take('cnpjBasico', doc.after(/CNPJ Básico:/, /(\d{2}\.\d{3}\.\d{3})/), onlyDigits),
    cnpj: ctx.take('cnpj', doc.after(/CNPJ Estabelecimento:/, /([0-9A-Z]{2}\.[0-9A-Z]{3}\.[0-9A-Z]{3}\/[0-9A-Z]{4}-\d{2})/), cnpjChars),
    // The name ends where the next label of its line starts (documents.md §1: "stop before Data de Abertura").
    razaoSocial: ctx.take('razaoSocial', razao, (t) => text(t.split(/\s+(?:Data de Abertura|Regime de Apuração):/)[0]!)),
    dataAbertura: ctx.take('dataAbertura', doc.after(/Data de Abertura:/, DATE), isoDate),
    regimeApuracao: ctx.take('regimeApuracao', doc.after(/Regime de Apuração:/, /^\s*(Competência|Caixa)/), (t) => t.startsWith('C') && t.length > 5 ? 'COMPETENCIA' as const : 'CAIXA' as const),
    competencia: ctx.take('competencia', doc.after(/Período de Apuração \(PA\):/, /(\d{2}\/\d{4})/), competence),
    numeroApuracao: ctx.take('numeroApuracao', doc.after(/Informações da Apuração/, /\b(\d{17})\b/), (t) => t),
    tipoApuracao: ctx.take('tipoApuracao', doc.find(/^Apuração (Original|Retificadora)\b/), (t) => t === 'Original' ? 'ORIGINAL' as const : 'RETIFICADORA' as const),
    geradoEm: ctx.take('geradoEm', doc.after(/Gerado em/, DATE_TIME), isoDateTime),
    apuradoEm: ctx.take('apuradoEm', doc.after(/Apurado em/, DATE_TIME), isoDateTime),
    versaoPgdas: ctx.take('versaoPgdas', doc.after(/PGDAS-D 2018 Versão/, /(\d+\.\d+\.\d+)/), (t) => t),
    rpa: triple(doc, ctx, 'rpa', String.raw`Receita Bruta do PA \(RPA\) - (?:Competência|Caixa)`),
    rbt12: triple(doc, ctx, 'rbt12', String.raw`\(RBT12\)`),
    rbt12p: triple(doc, ctx, 'rbt12p', String.raw`\(RBT12p\)`),
    rba: triple(doc, ctx, 'rba', String.raw`\(RBA\)`),
    rbaa: triple(doc, ctx, 'rbaa', String.raw`\(RBAA\)`),
    limiteReceitaProporcionalizado: ctx.take('limiteReceitaProporcionalizado', doc.after(/^Limite de receita bruta proporcionalizado/, new RegExp(M)), moneyNumber),
    fatorR,
    totalDebitoDeclarado: tributos(doc, ctx, 'totalDebitoDeclarado', /^Total do Débito Declarado/),
    totalDebitoSuspenso: tributos(doc, ctx, 'totalDebitoSuspenso', /^Total do Débito com Exigibilidade Suspensa/),
    totalDebitoExigivel: exigivel,
    valorDas: exigivel?.total ?? null,
    das: das(doc, ctx)
  }
}
