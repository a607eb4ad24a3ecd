/**
 * Parser of Porto Alegre's "DEC" print (documents.md §9 "Fields"): declaration pages, the
 * optional ISSQN guide and the receipt page. Each page is classified first; declaration
 * values are read on declaration pages only, guide values on the guide page, and so on.
 * Amounts over several activity blocks are summed in integer cents.
 */
import { CNPJ_PATTERN, MONEY_PATTERN, centsToMoney, cnpjChars, competence, conflictHit, isoDate, isoDateTime, moneyCents, moneyNumber, onlyDigits } from '../../core/plugin-api.js'
import type { Hit, OrderedValues, ParseContext, TextDocument } from '../../core/plugin-api.js'

export interface DecFinanceiro {
  receitaServicos: number | null
  deducoes: number | null
  baseCalculo: number | null
  /** Not printed by the DEC (documents.md §9): always null. */
  aliquota: null
  issProprio: number | null
  issRetidoSubstituicao: number | null
  issRetidoTerceiros: number | null
  issResponsabilidadeSolidaria: number | null
  issCpom: number | null
  totalImpostoDevido: number | null
  totalRecolher: number | null
}

export interface DecGuia {
  codigoArrecadacao: string | null
  vencimento: string | null
  geradaEm: string | null
  linhaDigitavel: string | null
  valorImposto: number | null
  valorPagar: number | null
  receita: string | null
}

export interface DecIssqnPoa {
  municipio: { ibge: '4314902', nome: 'Porto Alegre', uf: 'RS' }
  empresa: { cnpj: string | null, razaoSocial: string | null, inscricaoMunicipal: string | null }
  competencia: { ano: number, mes: number, referencia: string } | null
  financeiro: DecFinanceiro
  recibo: { situacao: 'ENTREGUE', recebidoEm: string | null, autenticacao: string | null } | null
  guia: DecGuia | null
  /** 1-based page numbers of each part. */
  paginas: { declaracao: number[], guia: number[], recibo: number[] }
}

const M = `(${MONEY_PATTERN})`
/** Porto Alegre's local time: the receipt's date-time carries the −03:00 offset (Brazil has had no daylight saving since 2019). */
const OFFSET = '-03:00'

/** Each page's part: the receipt and the guide by their titles, the rest declaration. */
export function classifyPages (doc: TextDocument): DecIssqnPoa['paginas'] {
  const out: DecIssqnPoa['paginas'] = { declaracao: [], guia: [], recibo: [] }
  doc.normalizedPages.forEach((text, i) => {
    if (/RECIBO DE ENTREGA - DECLARACAO MENSAL/.test(text)) out.recibo.push(i + 1)
    else if (/GUIA PARA PAGAMENTO DE ISSQN/.test(text)) out.guia.push(i + 1)
    else if (/DECLARACAO MENSAL - ISSQN|IDENTIFICACAO DO DECLARANTE/.test(text)) out.declaracao.push(i + 1)
  })
  return out
}

/** First hit on any of the pages. */
/**
 * Positions lost (text handed over column by column, a value apart from its label): the
 * page's one line wholly of the value's shape. Lines of that shape that differ give a
 * conflict (null and a warning), never a choice.
 */
function soleLine (doc: TextDocument, page: number, pattern: RegExp, what: string): Hit | undefined {
  const hits = doc.findAll(pattern, { page })
  const distinct = [...new Set(hits.map((h) => h.value))]
  if (distinct.length <= 1) return hits[0]
  return conflictHit({ ...hits[0]!, page }, `${what} was handed over apart from its label (positions lost), and page ${page} prints ${distinct.map((v) => `"${v}"`).join(', ')} of its shape; the value is not guessed`)
}

/**
 * Positions lost: the name is the line right before the `CNPJ:` line when it follows the
 * registration or its bare label (documents.md §9: registration, then name, then CNPJ).
 */
function orderedName (doc: TextDocument, page: number): Hit | undefined {
  const lines = doc.lines.filter((l) => l.page === page)
  for (let i = 2; i < lines.length; i++) {
    if (!/^CNPJ:?(?:\s|$)/.test(lines[i]!.text)) continue
    const before = lines[i - 2]!.text.trim()
    if (!/^\d{6}-\d-\d$/.test(before) && !/^Inscrição Municipal:?$/.test(before)) continue
    const name = doc.find(/^\s*(?!CNPJ\b)([^\d\s:][^:]*?)\s*$/, { page, within: lines[i - 1]!.box })
    if (name !== undefined) return name
  }
  return undefined
}

function onPages (pages: number[], query: (page: number) => Hit | undefined): Hit | undefined {
  for (const page of pages) {
    const hit = query(page)
    if (hit !== undefined) return hit
  }
  return undefined
}

/** A row's amount: alone after its label (or under it, or across a wrapped label: labelValue). */
const ROW_VALUE = new RegExp(`^\\s*${M}\\s*$`)

/** Sum in cents of every `label value` row on the pages; null when no row is printed. */
function sumRows (doc: TextDocument, ctx: ParseContext, field: string, pages: number[], label: RegExp): number | null {
  const hits = pages.flatMap((page) => doc.labelValues(label, ROW_VALUE, { page }))
  if (hits.length === 0) return null
  let total = 0
  for (const hit of hits) {
    // A row whose label reads two values: the sum is not guessed (ctx.take warns).
    if (hit.conflict !== undefined) return ctx.take(field, hit, () => null)
    const c = moneyCents(hit.value)
    if (c === null) return null
    total += c
    ctx.cite(field, hit)
  }
  return centsToMoney(total)
}

/** The amounts of the declaration's block (field, label), for `orderedValues` when positions are lost. */
const FINANCE: Array<[string, RegExp]> = [
  ['financeiro.receitaServicos', /^Base de Cálculo Receita Bruta$/], ['financeiro.deducoes', /^Deduções Legais$/], ['financeiro.baseCalculo', /^Base de cálculo$/],
  ['financeiro.issProprio', /^Imposto de Responsabilidade Própria Total$/], ['financeiro.issRetidoSubstituicao', /^Imposto retido por Substituição tributária$/],
  ['financeiro.issRetidoTerceiros', /^Imposto retido de contribuinte substituído$/], ['financeiro.issResponsabilidadeSolidaria', /^Imposto retido por Responsabilidade Solidária$/],
  ['financeiro.issCpom', /^Imposto retido por falta de inscrição no CPOM$/], ['financeiro.totalImpostoDevido', /^Total do imposto devido$/], ['financeiro.totalRecolher', /^Total Geral A Recolher$/]
]

/** An activity's heading, `Atividade:` and `04.03 - Clínicas e consultórios`, on one line or on two. */
const ACTIVITY_HEADING = /^\s*(?:Atividade:\s*$|(?:Atividade:\s*)?\d{2}\.\d{2}\s*-\s*\S)/

/** Sum in cents of a field over the records read by order (one per activity); null when one is missing. */
function sumOrdered (ctx: ParseContext, field: string, records: OrderedValues[]): number | null {
  const hits = records.map((r) => r[field]).filter((h): h is Hit => h !== undefined)
  if (hits.length === 0 || hits.length !== records.length) return null
  let total = 0
  for (const hit of hits) {
    const c = hit.conflict === undefined ? moneyCents(hit.value) : null
    if (c === null) return ctx.take(field, hit, moneyNumber)
    total += c
    ctx.cite(field, hit)
  }
  return centsToMoney(total)
}

export function parseDec (doc: TextDocument, ctx: ParseContext): DecIssqnPoa {
  const paginas = classifyPages(doc)
  const decl = paginas.declaracao
  // Positions lost (text handed over column by column): the block of labels, then the block
  // of their amounts, paired by order (one record per activity for the activity rows). Each
  // activity's heading (`Atividade:` and its code and name) may stand among the labels: it is
  // neither a label of the block nor an amount.
  const ordered = doc.positionless ? decl.flatMap((page) => doc.orderedValues(FINANCE.map(([name, label]) => ({ name, label, value: new RegExp(`^\\s*${M}\\s*$`) })), { page, ignore: ACTIVITY_HEADING }) ?? []) : []
  const one = (field: string, label: RegExp, pages = decl): number | null =>
    ctx.take(field, onPages(pages, (page) => doc.labelValue(label, ROW_VALUE, { page })) ?? ordered[0]?.[field], moneyNumber)
  const rows = (field: string, label: RegExp): number | null => sumRows(doc, ctx, field, decl, label) ?? sumOrdered(ctx, field, ordered)

  const ref = ctx.take('competencia.referencia', onPages(decl, (page) => doc.find(/Declaração Mensal - ISSQN\s+([A-Za-zçÇ]{3}\/\d{4})/, { page })), competence)
  const inscricao = onPages(decl, (page) => doc.labelValue(/Identificação do Declarante/, /\b(\d{6}-\d-\d)\b/, { page, linesBelow: 3 })) ??
    (doc.positionless ? onPages(decl, (page) => soleLine(doc, page, /^\s*(\d{6}-\d-\d)\s*$/, 'The municipal registration')) : undefined)
  // The name is the line under the registration (documents.md §9: registration, then name, then CNPJ).
  // Positions lost, the line after the registration may be any piece of the page: the name is the line before the CNPJ.
  const nome = inscricao === undefined
    ? undefined
    : doc.positionless ? orderedName(doc, inscricao.page) : doc.labelValue(new RegExp(inscricao.value), /^\s*(?!CNPJ\b)([^\d\s:][^:]*?)\s*$/, { page: inscricao.page, linesBelow: 1 })
  const cnpj = onPages(decl, (page) => doc.labelValue(/CNPJ/, new RegExp(`(${CNPJ_PATTERN})`), { page }))

  const guidePages = paginas.guia
  const g = (label: RegExp, value: RegExp): Hit | undefined => onPages(guidePages, (page) => doc.labelValue(label, value, { page }))
  // Positions lost: a value handed over apart from its label, by its shape (the page's one such line).
  const apart = (pattern: RegExp, what: string): Hit | undefined => doc.positionless ? onPages(guidePages, (page) => soleLine(doc, page, pattern, what)) : undefined
  const linha = onPages(guidePages, (page) => doc.find(/\b(8\d{11}(?:\s+\d{12}){3})\b/, { page }))
  const guia: DecGuia | null = guidePages.length === 0
    ? null
    : {
        codigoArrecadacao: ctx.take('guia.codigoArrecadacao', g(/DOSEQ/, /^\s*:?\s*(3283\s?\d{11})\b/) ?? apart(/^\s*(3283\s?\d{11})\s*$/, 'The DOSEQ code'), onlyDigits),
        vencimento: ctx.take('guia.vencimento', g(/(?:^|\s)Até\s/, /^\s*(\d{2}\/\d{2}\/\d{4})/) ?? (doc.positionless ? g(/^Até$/, /^\s*(\d{2}\/\d{2}\/\d{4})\s*$/) ?? onPages(guidePages, (page) => doc.labelValue(/^Até$/, /^\s*(\d{2}\/\d{2}\/\d{4})\s*$/, { page, linesBelow: 1 })) : undefined), isoDate),
        geradaEm: ctx.take('guia.geradaEm', g(/ISSQN-e/, /^\s*(\d{2}\/\d{2}\/\d{4} \d{2}:\d{2}(?::\d{2})?)/) ?? apart(/^\s*(\d{2}\/\d{2}\/\d{4} \d{2}:\d{2}(?::\d{2})?)\s*$/, 'The date the guide was generated'), (t) => { const v = isoDateTime(t); return v === null ? null : v + OFFSET }),
        linhaDigitavel: ctx.take('guia.linhaDigitavel', linha, onlyDigits),
        valorImposto: ctx.take('guia.valorImposto', g(/IMPOSTO:/, new RegExp(`^\\s*R\\$\\s*${M}`)), moneyNumber),
        valorPagar: ctx.take('guia.valorPagar', g(/Declaração Mensal [A-Za-zç]{3}\/\d{4}/, new RegExp(`^\\s*R\\$\\s*${M}`)) ?? apart(new RegExp(`^\\s*R\\$\\s*${M}\\s*$`), 'The amount to pay'), moneyNumber),
        receita: ctx.take('guia.receita', g(/^Receita:/, /^\s*(\S.*?)\s*$/) ?? apart(/^\s*(ISSQN\s+\p{L}.*?)\s*$/u, 'The revenue'), (t) => t)
      }

  const reciboPages = paginas.recibo
  const recebido = onPages(reciboPages, (page) => doc.labelValue(/DECLARAÇÃO RECEBIDA EM/, /^\s*(\d{2}\/\d{2}\/\d{4}\s+às\s+\d{2}:\d{2}:\d{2})/, { page }))
  const auth = onPages(reciboPages, (page) => doc.labelValue(/AUTENTICAÇÃO/, /^\s*:?\s*((?:[0-9A-F]{2}\s+){15}[0-9A-F]{2})\b/, { page, linesBelow: 1 }))

  return {
    municipio: { ibge: '4314902', nome: 'Porto Alegre', uf: 'RS' },
    empresa: {
      cnpj: ctx.take('empresa.cnpj', cnpj, cnpjChars),
      razaoSocial: ctx.take('empresa.razaoSocial', nome, (t) => t.trim() === '' ? null : t.trim()),
      inscricaoMunicipal: ctx.take('empresa.inscricaoMunicipal', inscricao, (t) => t)
    },
    competencia: ref === null ? null : { ano: Number(ref.slice(0, 4)), mes: Number(ref.slice(5)), referencia: ref },
    financeiro: {
      receitaServicos: rows('financeiro.receitaServicos', /Base de Cálculo Receita Bruta/),
      deducoes: rows('financeiro.deducoes', /Deduções Legais/),
      // Case matters: `Base de cálculo` (the block's base) is not `Base de Cálculo Receita Bruta`.
      baseCalculo: rows('financeiro.baseCalculo', /Base de cálculo/),
      aliquota: null,
      issProprio: one('financeiro.issProprio', /Imposto de Responsabilidade Própria Total/),
      issRetidoSubstituicao: one('financeiro.issRetidoSubstituicao', /Imposto retido por Substituição tributária/),
      issRetidoTerceiros: one('financeiro.issRetidoTerceiros', /Imposto retido de contribuinte substituído/),
      issResponsabilidadeSolidaria: one('financeiro.issResponsabilidadeSolidaria', /Imposto retido por Responsabilidade Solidária/),
      issCpom: one('financeiro.issCpom', /Imposto retido por falta de inscrição no CPOM/),
      totalImpostoDevido: one('financeiro.totalImpostoDevido', /Total do imposto devido/),
      totalRecolher: one('financeiro.totalRecolher', /Total Geral A Recolher/)
    },
    recibo: reciboPages.length === 0
      ? null
      : {
          situacao: 'ENTREGUE',
          recebidoEm: ctx.take('recibo.recebidoEm', recebido, (t) => { const v = isoDateTime(t.replace(/\s+/g, ' ')); return v === null ? null : v + OFFSET }),
          autenticacao: ctx.take('recibo.autenticacao', auth, (t) => t.replace(/\s+/g, ''))
        },
    guia,
    paginas
  }
}
