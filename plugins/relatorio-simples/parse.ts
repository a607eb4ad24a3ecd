/**
 * Parser of the accounting-software "Relatório do Simples" (documents.md §3 "Fields").
 * Printed values are read through the text API (each with evidence); the burden and the
 * per-annex consolidation are derived from them in integer cents and are null whenever an
 * input is missing. Labels are matched with `.` for accented letters, because some
 * installations print `Emiss?o`.
 */
import { CNPJ_PATTERN, MONEY_PATTERN, cnpjChars, competence, isoDate, moneyCents, moneyNumber, centsToMoney, percentNumber, textValue } from '../../core/plugin-api.js'
import type { Hit, ParseContext, TextDocument, TextRegion } from '../../core/plugin-api.js'

export type Tributo = 'irpj' | 'csll' | 'cofins' | 'pis' | 'inssCpp' | 'icms' | 'ipi' | 'iss'
export type Partilha = Record<Tributo, number | null>

export interface Identificacao { empresa: string | null, cnpj: string | null, competencia: string | null, dataEmissao: string | null, codigoEmpresa: string | null }

export interface Resumo {
  /** The RPA total as printed (`18.939,46`). */
  receitaBrutaMes: string | null
  /** The RPA total as a numeric string (`18939.46`). */
  receitaBrutaMesNumero: string | null
  rbt12: number | null
  rbaAtual: number | null
  rbaAnterior: number | null
  faixaEnquadramento: string | null
  valorSimplesRecolher: number | null
  valorSimplesRecolherNumero: string | null
  /** Derived: valor a recolher ÷ RPA × 100, 4 decimals. */
  cargaTributariaTotalNumero: number | null
}

export interface Apuracao {
  ordem: number
  anexo: string | null
  descricaoAnexo: string | null
  secao: string | null
  tabela: string | null
  tratamentoTributario: string | null
  receitaTributada: number | null
  aliquotaEfetiva: number | null
  valorSimples: number | null
  partilha: Partilha | null
}

/** Derived by grouping `apuracoes` by annex. */
export interface ConsolidacaoAnexo { anexo: string, receitaTributada: number | null, valorSimples: number | null, quantidadeApuracoes: number, aliquotaMedia: number | null }

export interface RelatorioSimples {
  identificacao: Identificacao
  resumo: Resumo
  apuracoes: Apuracao[]
  consolidacaoPorAnexo: ConsolidacaoAnexo[]
  /** Derived: each tax summed over the blocks that print it; null for a tax no block prints. */
  partilha: Partilha | null
  folha12m: number | null
  fatorR: number | null
  valorFixoIcms: number | null
  valorFixoIss: number | null
  outrosAcrescimos: number | null
  outrasDeducoes: number | null
  valorDiferido: number | null
}

const M = `(${MONEY_PATTERN})`
const MONEY_G = new RegExp(MONEY_PATTERN, 'g')
const DATE = /(\d{2}\/\d{2}\/\d{4})/
/** A label with its accented letters (and `?`, their lost form) as `.`. */
const label = (text: string): string => text.replace(/[^\x20-\x7e]/g, '.').replace(/[()]/g, '\\$&')
const re = (source: string): RegExp => new RegExp(source)

/** Integer cents → the numeric string of the spec (`18939.46`, `-40.25`). */
export function centsToNumericString (cents: number): string {
  const sign = cents < 0 ? '-' : ''
  const abs = Math.abs(cents)
  return `${sign}${Math.floor(abs / 100)}.${String(abs % 100).padStart(2, '0')}`
}

/** `part ÷ whole × 100` with 4 decimals, rounded half up, from integer cents (BigInt: no float error); null when whole is 0. */
export function percentOf (partCents: number, wholeCents: number): number | null {
  if (wholeCents === 0) return null
  const num = BigInt(partCents) * 2_000_000n
  const den = BigInt(wholeCents) * 2n
  const neg = (num < 0n) !== (den < 0n)
  const a = num < 0n ? -num : num
  const b = den < 0n ? -den : den
  const q = (a + b / 2n) / b
  return Number(neg ? -q : q) / 10_000
}


/** What a period looks like (reportPeriod reads it): a month, a month's name, or a range of days; what follows is ignored. */
const PERIOD = /^\s*(\d{2}\/\d{4}(?!\d)|\d{2}\/\d{2}\/\d{4}\s*(?:a|até|-)\s*\d{2}\/\d{2}\/\d{4}|[A-Za-zÀ-ú]+\s*\/\s*\d{4}(?!\d)).*$/

/**
 * The report's period as a competence: `03/2024`, `Março/2024`, or the month's first and last
 * days (`01/03/2024 a 31/03/2024`, as some systems print it); a range over several months is
 * no competence (null). Whatever follows the period on its line is ignored.
 */
export function reportPeriod (text: string): string | null {
  const range = /^\d{2}\/(\d{2})\/(\d{4})\s*(?:a|até|-)\s*\d{2}\/(\d{2})\/(\d{4})\b/i.exec(text)
  if (range !== null) return range[1] === range[3] && range[2] === range[4] ? competence(`${range[1]!}/${range[2]!}`) : null
  const single = /^(\d{2}\/\d{4}|[A-Za-zÀ-ú]+\s*\/\s*\d{4})(?!\d)/.exec(text.trim())
  return single === null ? null : competence(single[1]!)
}

/** Tax names of the `Partilha:` row → keys (documents.md §3: the order varies by annex). */
const TAX_NAMES: Array<[RegExp, Tributo]> = [
  [/^IRPJ$/i, 'irpj'], [/^CSLL$/i, 'csll'], [/^COFINS$/i, 'cofins'], [/^PIS(?:\/PASEP)?$/i, 'pis'],
  [/^(?:INSS\/)?CPP$|^INSS$/i, 'inssCpp'], [/^ICMS$/i, 'icms'], [/^IPI$/i, 'ipi'], [/^ISS(?:QN)?$/i, 'iss']
]
const TAX_KEYS: Tributo[] = ['irpj', 'csll', 'cofins', 'pis', 'inssCpp', 'icms', 'ipi', 'iss']
const emptyPartilha = (): Partilha => Object.fromEntries(TAX_KEYS.map((k) => [k, null])) as Partilha

/** A row of tax names (the `Partilha:` row): two or more of them. */
const TAX_NAME = String.raw`(?:IRPJ|CSLL|COFINS|PIS(?:\/PASEP)?|(?:INSS\/)?CPP|INSS|ICMS|IPI|ISS(?:QN)?)`
const NAMES_ROW = new RegExp(`^\\s*((?:${TAX_NAME}\\s+)+${TAX_NAME})\\s*$`, 'i')
const AMOUNTS_ROW = new RegExp(`^\\s*(${MONEY_PATTERN}(?:\\s+${MONEY_PATTERN})*)\\s*$`)
/** `Anexo:` starting a line or a cell of a row of labels. */
const ANEXO = re(`(?:^|\\s)${label('Anexo:')}`)

const ANEXO_VALUE = /^\s*(Anexo\s+[IVX]+\b.*)$/i
const TEXT = /^\s*(\S.*)$/
/** The k-th value of each block heading's label, printed once per block (undefined: not as many values as blocks). */
interface BlockHeads { anexo: Hit[] | undefined, secao: Hit[] | undefined, tabela: Hit[] | undefined }

/**
 * The blocks' `Anexo:`, `Seção:` and `Tabela:` values read on the whole document, the k-th for
 * the k-th block when each label gives as many values as there are blocks: a column of labels
 * printed before its column of values (serialized) may start above a block's `Anexo:` line,
 * outside its region.
 */
function blockHeads (doc: TextDocument, blocks: number): BlockHeads {
  const each = (labelText: string, value: RegExp): Hit[] | undefined => {
    const hits = doc.labelValues(re(`^${label(labelText)}`), value)
    return hits.length === blocks ? hits : undefined
  }
  return { anexo: each('Anexo:', ANEXO_VALUE), secao: each('Seção:', TEXT), tabela: each('Tabela:', TEXT) }
}

/**
 * One apuração: its block runs from its `Anexo:` label to the next one (TextRegion.sections).
 * Every value is read by TextRegion.labelValue (after its label, under it, in a row of values,
 * in a serialized column); the first `Alíquota:` of the block is the block's rate (the
 * partilha's `Alíquota:` row comes after it).
 */
function block (region: TextRegion, ctx: ParseContext, ordem: number, heads: BlockHeads): Apuracao {
  const f = `apuracoes.${ordem - 1}`
  const anexoHit = heads.anexo?.[ordem - 1] ?? region.labelValue(re(`^${label('Anexo:')}`), ANEXO_VALUE)
  const roman = anexoHit === undefined ? null : /^Anexo\s+([IVX]+)\b/i.exec(anexoHit.value.trim())
  const text = (field: 'secao' | 'tabela', labelText: string): string | null => ctx.take(`${f}.${field}`, heads[field]?.[ordem - 1] ?? region.labelValue(re(`^${label(labelText)}`), TEXT), (t) => t.trim())
  const tabela = text('tabela', 'Tabela:')
  const amount = (labelText: string): Hit | undefined => region.labelValue(re(label(labelText)), re(`^\\s*${M}`))
  const names = region.labelValue(re(`^${label('Partilha:')}`), NAMES_ROW, { linesBelow: 1 })
  const values = region.labelValue(re(`^${label('Valor:')}`), AMOUNTS_ROW, { linesBelow: 1 })
  let partilha: Partilha | null = null
  if (names !== undefined && values !== undefined && names.conflict === undefined && values.conflict === undefined) {
    const keys = names.value.trim().split(/\s+/).map((n) => TAX_NAMES.find(([p]) => p.test(n))?.[1])
    const amounts = values.value.match(MONEY_G) ?? []
    if (keys.length === amounts.length && keys.every((k) => k !== undefined)) {
      partilha = emptyPartilha()
      keys.forEach((k, i) => { partilha![k!] = ctx.take(`${f}.partilha.${k!}`, values, () => moneyNumber(amounts[i]!)) })
    } else {
      ctx.report({ code: 'PARTILHA_UNREADABLE', message: `block ${ordem}: the Partilha names and values do not pair up`, field: `${f}.partilha` })
    }
  }
  return {
    ordem,
    anexo: roman === null ? null : ctx.take(`${f}.anexo`, anexoHit, () => roman[1]!.toUpperCase()),
    descricaoAnexo: ctx.take(`${f}.descricaoAnexo`, anexoHit, (t) => /^Anexo\s+[IVX]+\s*-\s*(\S.*)$/i.exec(t.trim())?.[1] ?? null),
    secao: text('secao', 'Seção:'),
    tabela,
    tratamentoTributario: tabela === null ? null : (/^Tabela\s+\d+\s*-\s*(\S.*)$/i.exec(tabela)?.[1] ?? null),
    receitaTributada: ctx.take(`${f}.receitaTributada`, amount('Receita Tributada Total:'), moneyNumber),
    aliquotaEfetiva: ctx.take(`${f}.aliquotaEfetiva`, region.labelValue(re(label('Alíquota:')), /^\s*(\d+(?:,\d+)?)\s*%?(?!\S)/), percentNumber),
    valorSimples: ctx.take(`${f}.valorSimples`, amount('Simples Nacional Total:'), moneyNumber),
    partilha
  }
}

const toCents = (n: number | null): number | null => n === null ? null : Math.round(n * 100)

function consolidate (apuracoes: Apuracao[]): ConsolidacaoAnexo[] {
  const groups = new Map<string, Apuracao[]>()
  for (const a of apuracoes) if (a.anexo !== null) groups.set(a.anexo, [...(groups.get(a.anexo) ?? []), a])
  return [...groups].map(([anexo, list]) => {
    const sum = (pick: (a: Apuracao) => number | null): number | null => {
      const cents = list.map((a) => toCents(pick(a)))
      return cents.some((c) => c === null) ? null : cents.reduce<number>((s, c) => s + c!, 0)
    }
    const receita = sum((a) => a.receitaTributada)
    const valor = sum((a) => a.valorSimples)
    return {
      anexo,
      receitaTributada: receita === null ? null : centsToMoney(receita),
      valorSimples: valor === null ? null : centsToMoney(valor),
      quantidadeApuracoes: list.length,
      aliquotaMedia: receita === null || valor === null ? null : percentOf(valor, receita)
    }
  })
}

function totalPartilha (apuracoes: Apuracao[]): Partilha | null {
  if (apuracoes.length === 0 || apuracoes.some((a) => a.partilha === null)) return null
  const out = emptyPartilha()
  for (const k of TAX_KEYS) {
    const printed = apuracoes.map((a) => toCents(a.partilha![k])).filter((c): c is number => c !== null)
    out[k] = printed.length === 0 ? null : centsToMoney(printed.reduce((s, c) => s + c, 0))
  }
  return out
}

export function parseRelatorio (doc: TextDocument, ctx: ParseContext): RelatorioSimples {
  const money = (field: string, labelText: string): number | null => ctx.take(field, doc.labelValue(re(`^${label(labelText)}`), re(`^\\s*${M}`)), moneyNumber)
  // A row of the receipts table: its three columns (Mercado Interno, Mercado Externo, Total), the total last.
  // The row's name may follow the table's title on its line (`… (RPA) - Regime de Competência 10.238,00 …`).
  const columns = `${MONEY_PATTERN}\\s+${MONEY_PATTERN}\\s+${M}`
  const rowTotal = (rowLabel: string): Hit | undefined => doc.labelValue(re(label(rowLabel)), re(`^\\s*${columns}\\s*$`), { linesBelow: 1 })
  const lastOfRow = (row: string): Hit | undefined => doc.find(re(`${row}\\s+${columns}(?!\\S)`))

  // The company: `Empresa: 0381 - Name` up to the next label (`Emiss?o:` too, where accents are lost).
  const header = doc.labelValue(re(`^${label('Empresa:')}`), re(`^\\s*(?:(\\d+)\\s*-\\s*)?(\\S.*?)(?:\\s+(?:${label('Emissão:')}|${label('Página:')}).*)?$`))
  // RPA: the row of the regime whose total is not zero; both zero → 0 (documents.md §3).
  const competencia = rowTotal('Regime de Competência')
  const caixa = rowTotal('Regime de Caixa')
  const nonZero = [competencia, caixa].filter((h) => h !== undefined && h.conflict === undefined && moneyCents(h.value) !== 0)
  if (nonZero.length > 1) ctx.report({ code: 'RPA_TWO_REGIMES', message: 'both regimes print receipts; the competência row is used', field: 'resumo.receitaBrutaMes' })
  const rpaHit = nonZero[0] ?? competencia ?? caixa
  const rpa = ctx.take('resumo.receitaBrutaMes', rpaHit, (t) => moneyCents(t) === null ? null : t)
  const rpaCents = rpa === null ? null : moneyCents(rpa)
  const recolherHit = doc.labelValue(re(`^${label('Simples Nacional a recolher:')}`), re(`^\\s*${M}`))
  const recolherCents = recolherHit === undefined || recolherHit.conflict !== undefined ? null : moneyCents(recolherHit.value)
  const valorSimplesRecolher = ctx.take('resumo.valorSimplesRecolher', recolherHit, moneyNumber)

  // One block per `Anexo:` label, up to the next one (or the end of the document).
  const regions = doc.sections(ANEXO)
  const heads = blockHeads(doc, regions.length)
  const apuracoes = regions.map((region, i) => block(region, ctx, i + 1, heads))
  const fator = doc.labelValue(re(`^${label('Fator r:')}`), /^\s*(\d+,\d+)/)

  return {
    identificacao: {
      empresa: ctx.take('identificacao.empresa', header?.parts[1], textValue),
      cnpj: ctx.take('identificacao.cnpj', doc.labelValue(/CNPJ:/, new RegExp(`(${CNPJ_PATTERN})`)), cnpjChars),
      competencia: ctx.take('identificacao.competencia', doc.labelValue(re(`(?:${label('Período')}|${label('Competência')})(?: de ${label('Apuração')})?:`), PERIOD, { linesBelow: 1 }), reportPeriod),
      dataEmissao: ctx.take('identificacao.dataEmissao', doc.labelValue(re(label('Emissão:')), DATE), isoDate),
      codigoEmpresa: ctx.take('identificacao.codigoEmpresa', header?.parts[0], (t) => t)
    },
    resumo: {
      receitaBrutaMes: rpa,
      receitaBrutaMesNumero: rpaCents === null ? null : centsToNumericString(rpaCents),
      rbt12: ctx.take('resumo.rbt12', lastOfRow(String.raw`\(RBT12\)`), moneyNumber),
      rbaAtual: ctx.take('resumo.rbaAtual', lastOfRow(String.raw`corrente \(RBA\)`), moneyNumber),
      rbaAnterior: ctx.take('resumo.rbaAnterior', lastOfRow(String.raw`anterior \(RBA\)`), moneyNumber),
      faixaEnquadramento: ctx.take('resumo.faixaEnquadramento', doc.labelValue(/Faixa de Enquadramento:/, new RegExp(`^\\s*(${MONEY_PATTERN} a ${MONEY_PATTERN})`)), (t) => t),
      valorSimplesRecolher,
      valorSimplesRecolherNumero: recolherCents === null ? null : centsToNumericString(recolherCents),
      cargaTributariaTotalNumero: rpaCents === null || recolherCents === null ? null : percentOf(recolherCents, rpaCents)
    },
    apuracoes,
    consolidacaoPorAnexo: consolidate(apuracoes),
    partilha: totalPartilha(apuracoes),
    folha12m: money('folha12m', 'Valor da Folha nos últimos 12 meses:'),
    fatorR: ctx.take('fatorR', fator, percentNumber),
    valorFixoIcms: money('valorFixoIcms', 'Valor Fixo ICMS:'),
    valorFixoIss: money('valorFixoIss', 'Valor Fixo ISS:'),
    outrosAcrescimos: money('outrosAcrescimos', 'Outros Acréscimos:'),
    outrasDeducoes: money('outrasDeducoes', 'Outras Deduções:'),
    valorDiferido: money('valorDiferido', 'Valor Diferido:')
  }
}
