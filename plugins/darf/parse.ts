/**
 * Parser of the DARF (documents.md §6), both layouts: the current SENDA print (§6a:
 * header boxes, a composition table whose rows span three lines, `Totais` on the last
 * page) and the numbered-box form (§6b: boxes 01-11, two copies per page). Every value is
 * read through the text API, so each has evidence; a value that is not printed is null.
 */
import { CNPJ_PATTERN, MONEY_PATTERN, cnpjChars, competence, isoDate, isoDateTime, moneyCents, moneyNumber, onlyDigits, readCollectionLine, textValue } from '../../core/plugin-api.js'
import type { Hit, OrderedField, OrderedRow, ParseContext, SearchOptions, TextDocument } from '../../core/plugin-api.js'

export interface DarfTributo {
  codigoReceita: string | null
  codigoVariacao: string | null
  denominacao: string | null
  descricao: string | null
  periodoApuracao: string | null
  vencimento: string | null
  principal: number | null
  multa: number | null
  juros: number | null
  total: number | null
}

export interface DarfTotais { principal: number | null, multa: number | null, juros: number | null, total: number | null }

/** The tear-off stub of a SENDA DARF (documents.md §4 layout: `CNPJ:`, `Número:`, `Pagar até:`, `Valor:`). */
export interface DarfCanhoto { cnpjCpf: string | null, numeroDocumento: string | null, pagarAte: string | null, valor: number | null }

/** The copies of a numbered-box DARF ("1a. via", "2a. via") and the fields on which they differ. */
export interface DarfVias { quantidade: number, divergencias: string[] }

export interface Darf {
  layout: 'SENDA' | 'CAMPOS_NUMERADOS'
  cnpjCpf: string | null
  razaoSocial: string | null
  periodoApuracao: string | null
  dataVencimento: string | null
  pagarAte: string | null
  numeroDocumento: string | null
  numeroReferencia: string | null
  numeroReciboDeclaracao: string | null
  valorTotal: number | null
  tributos: DarfTributo[]
  totais: DarfTotais | null
  linhaDigitavel: string | null
  codigoBarras: string | null
  origem: 'SENDA' | 'SICALC_WEB' | 'IRPF' | null
  dataEmissao: string | null
  canhoto: DarfCanhoto | null
  vias: DarfVias | null
}

const M = `(${MONEY_PATTERN})`
const DATE = String.raw`(\d{2}\/\d{2}\/\d{4})`
/** The RFB document number as printed: `07.93.26190.1234567-8` (documents.md §0.4). */
const DOC_NUMBER = String.raw`(\d{2}\.\d{2}\.\d{5}\.\d{7}-\d)`
/** The 48-digit collection line: four blocks of 11 digits, each with its check digit after a space or a dash. */
const LINE = /(?:^|\s)(\d{11}[ -]?\d \d{11}[ -]?\d \d{11}[ -]?\d \d{11}[ -]?\d)(?:\s|$)/
const CPF = String.raw`\d{3}\.\d{3}\.\d{3}-\d{2}`
/** Up to four money columns after a row label; which column each is comes from the header. */
const AMOUNTS = `${M}(?: ${M})?(?: ${M})?(?: ${M})?`

type Column = 'principal' | 'multa' | 'juros' | 'total'
const COLUMNS: Column[] = ['principal', 'multa', 'juros', 'total']

/** A label written without accents, as a pattern that takes the printed accents (and their loss) too. */
export function label (plain: string, flags = 'i'): RegExp {
  const classes: Record<string, string> = { A: '[AÁÂÃÀ]', E: '[EÉÊ]', I: '[IÍ]', O: '[OÓÔÕ]', U: '[UÚÜ]', C: '[CÇ]' }
  const source = [...plain].map((ch) => classes[ch.toUpperCase()] ?? ch.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')).join('').replace(/ /g, '\\s+')
  return new RegExp(source, flags)
}

/**
 * A printed period as data: `MM/AAAA` or a month name → `AAAA-MM`; a date → `AAAA-MM-DD`
 * (quarterly taxes, old DARF box 02); `2º Trimestre/2026` → `2026-T2`; `Diversos` → `DIVERSOS`.
 */
export function period (text: string): string | null {
  const t = text.trim()
  if (/^diversos$/i.test(t)) return 'DIVERSOS'
  const quarter = /^([1-4])\s*[º°oa]\.?\s*trimestre\s*\/\s*(\d{4})$/i.exec(t)
  if (quarter !== null) return `${quarter[2]}-T${quarter[1]}`
  if (/^\d{2}\/\d{2}\/\d{4}$/.test(t)) return isoDate(t)
  return competence(t)
}

const PERIOD = String.raw`(Diversos|\d{2}\/\d{2}\/\d{4}|\d{2}\/\d{4}|[1-4]\s*[º°oa]\.?\s*Trimestre\s*\/\s*\d{4}|[A-Za-zÀ-ú]+\s*\/\s*\d{4})`

const text = textValue
/**
 * A row's name or description: a number reference (`Lei 9.711/98`, `IN 971/09`) is never
 * printed with a space around its slash; a library that spaces characters by their gaps may
 * put one there (`9.711/ 98`), and it is taken out.
 */
const rowText = (s: string): string | null => text(s.replace(/(\d)\s*\/\s*(?=\d)/g, '$1/'))
const same = (s: string): string => s
const docNumber = (s: string): string | null => { const d = onlyDigits(s); return d.length === 17 ? d : null }
const taxId = (s: string): string | null => { const d = onlyDigits(s); return d.length === 11 && /^\d{3}\.\d{3}\.\d{3}-\d{2}$/.test(s.replace(/\s+/g, '')) ? d : cnpjChars(s) }
const lineDigits = (s: string): string | null => { const d = onlyDigits(s); return d.length === 48 ? d : null }

/** Money parts of a row placed in columns; `unplaced` when some could not be (their columns stay unknown, not 0). */
interface Cells { hits: Partial<Record<Column, Hit>>, unplaced: boolean, why?: string | undefined }

/** Money parts of a row assigned to columns: by the nearest header label when the page has the header, else by count. */
function columnsOf (values: Array<Hit | undefined>, header: Map<Column, number> | undefined): Cells {
  const hits = values.filter((h): h is Hit => h !== undefined)
  const out: Partial<Record<Column, Hit>> = {}
  // The header helps only when its labels are separate runs (their centres apart, left to right).
  const centres = header === undefined ? [] : COLUMNS.map((c) => header.get(c)!)
  if (centres.length === 4 && centres.every((x, i) => i === 0 || x - centres[i - 1]! > 5)) {
    let collided = false
    for (const hit of hits) {
      const centre = hit.box.x + hit.box.width / 2
      let best = 0
      centres.forEach((x, i) => { if (Math.abs(x - centre) < Math.abs(centres[best]! - centre)) best = i })
      // Two amounts nearest one column: the placement cannot be trusted, and keeping either would
      // lose the other without a word; fall back to reading by count below.
      if (out[COLUMNS[best]!] !== undefined) collided = true
      out[COLUMNS[best]!] = hit
    }
    if (!collided) return { hits: out, unplaced: false }
    for (const c of COLUMNS) delete out[c]
  }
  // Empty multa and juros cells print nothing (documents.md §4): the first number is the principal and
  // the last the total; with three, the middle one may be multa or juros, so neither is given.
  // By count only when the row adds up (principal + the middle ones = total, to the cent): a
  // row whose cells were handed over apart (`Totais 1.000,00 58,40`, the rest on the next
  // line) is not placed at all rather than read with a juros as its total.
  const cents = hits.map((h) => moneyCents(h.value))
  const addsUp = hits.length >= 2 && hits.length <= 4 && cents.every((c) => c !== null) &&
    cents.slice(0, -1).reduce((a: number, c) => a + c!, 0) === cents[cents.length - 1]
  if (!addsUp) return { hits: out, unplaced: hits.length > 0, why: hits.length === 0 ? undefined : `${hits.map((h) => h.value).join(' ')}: without a usable header, its amounts are placed by count only when the first plus the middle ones make the last; these do not, so no amount is given` }
  if (hits.length === 4) COLUMNS.forEach((c, i) => { out[c] = hits[i]! })
  out.principal = hits[0]!
  out.total = hits[hits.length - 1]!
  return { hits: out, unplaced: hits.length === 3 }
}

/**
 * The four amounts of a row. A cell with nothing printed is null, as everywhere else: the form
 * leaves multa and juros blank when nothing is owed, but a blank is not a value read
 * (documents.md §0.2), and the sum checks count it as nothing owed.
 */
function amounts (ctx: ParseContext, field: string, cells: Cells): DarfTotais {
  if (cells.why !== undefined) ctx.report({ code: 'COLUMN_NOT_PLACED', field, message: cells.why })
  const take = (c: Column): number | null => {
    const hit = cells.hits[c]
    return hit === undefined ? null : ctx.take(`${field}.${c}`, hit, moneyNumber)
  }
  return { principal: take('principal'), multa: take('multa'), juros: take('juros'), total: take('total') }
}

function collectionLine (doc: TextDocument, ctx: ParseContext, options: SearchOptions = {}): { linha: string | null, barcode: string | null } {
  const linha = ctx.take('linhaDigitavel', doc.find(LINE, options), lineDigits)
  return { linha, barcode: linha === null ? null : readCollectionLine(linha)?.barcode ?? null }
}

function origin (doc: TextDocument): Darf['origem'] {
  if (doc.find(/Sicalc/i) !== undefined) return 'SICALC_WEB'
  if (doc.find(/\bIRPF\b|Receitanet/i) !== undefined) return 'IRPF'
  if (doc.find(/^SENDA\b/) !== undefined) return 'SENDA'
  return null
}

/**
 * The SENDA footer's date-time; positions lost, printed apart from `SENDA (Versão…)`: the
 * page's one date-time printed alone (a DARF prints no other).
 */
function footer (doc: TextDocument, ctx: ParseContext): string | null {
  const printed = doc.find(/^SENDA\s*\(Vers[aã]o:\s*[\d.]+\).*?(\d{2}\/\d{2}\/\d{4}\s+\d{2}:\d{2}:\d{2})\s*$/)
  const alone = printed === undefined && doc.positionless && doc.find(/^SENDA\s*\(Vers[aã]o:\s*[\d.]+\)\s*$/) !== undefined ? doc.findAll(/^\s*(\d{2}\/\d{2}\/\d{4}\s+\d{2}:\d{2}:\d{2})\s*$/) : []
  return ctx.take('dataEmissao', printed ?? (new Set(alone.map((h) => h.value)).size === 1 ? alone[0] : undefined), isoDateTime)
}

/**
 * Positions lost: the period when its value was handed over apart from its label (before
 * it): the page's one period-shaped line other than the due and pay-until dates read by
 * their labels. Two or more such lines that differ give nothing: the value is not guessed.
 */
function otherPeriod (doc: TextDocument, dates: Array<Hit | undefined>): Hit | undefined {
  if (dates.some((d) => d === undefined || d.conflict !== undefined)) return undefined
  const taken = new Set(dates.map((d) => d!.value))
  const hits = doc.findAll(new RegExp(`^\\s*${PERIOD}\\s*$`)).filter((h) => !taken.has(h.value))
  return new Set(hits.map((h) => h.value)).size === 1 ? hits[0] : undefined
}

// ----- 6a: the SENDA layout -----

/** The stub's four labels and values, for the reading by order (positions lost). */
const STUB: OrderedField[] = [
  { name: 'cnpjCpf', label: /^(?:CNPJ|CPF):/, value: new RegExp(`^\\s*(${CNPJ_PATTERN}|${CPF})\\s*$`) },
  { name: 'numeroDocumento', label: label('Numero:'), value: new RegExp(`^\\s*${DOC_NUMBER}\\s*$`) },
  { name: 'pagarAte', label: label('Pagar ate:'), value: new RegExp(`^\\s*${DATE}\\s*$`) },
  { name: 'valor', label: /^Valor:/, value: new RegExp(`^\\s*${M}\\s*$`) }
]

/** The stub's labels end in a colon, unlike the header's; null when the page has no stub. */
function stub (doc: TextDocument, ctx: ParseContext): DarfCanhoto | null {
  const cnpj = doc.find(new RegExp(`(?:^|\\s)(?:CNPJ|CPF):\\s*(${CNPJ_PATTERN}|${CPF})`))
  const numero = doc.find(new RegExp(`(?:^|\\s)N[uú]mero:\\s*${DOC_NUMBER}`))
  const pagar = doc.find(new RegExp(`Pagar at[eé]:\\s*${DATE}`))
  const valor = doc.find(new RegExp(`(?:^|\\s)Valor:\\s*${M}`))
  // Positions lost: the stub's labels, each alone on its line, and their values after them in order.
  const read = doc.positionless ? doc.interleavedValues(STUB) : undefined
  if (cnpj === undefined && numero === undefined && pagar === undefined && valor === undefined && read === undefined) return null
  return {
    cnpjCpf: ctx.take('canhoto.cnpjCpf', cnpj ?? read?.cnpjCpf, taxId),
    numeroDocumento: ctx.take('canhoto.numeroDocumento', numero ?? read?.numeroDocumento, docNumber),
    pagarAte: ctx.take('canhoto.pagarAte', pagar ?? read?.pagarAte, isoDate),
    valor: ctx.take('canhoto.valor', valor ?? read?.valor, moneyNumber)
  }
}

/** The identity's two cells, for the reading by order (`CNPJ:` is the stub's label). */
const IDENTITY: OrderedField[] = [
  { name: 'cnpjCpf', label: /^(?:CNPJ|CPF)(?!\s*:)/, value: new RegExp(`^\\s*(${CNPJ_PATTERN}|${CPF})\\s*$`) },
  { name: 'razaoSocial', label: /^(?:Raz[aã]o Social|Nome)(?!\s*:)/i, value: /^\s*(\D\S.*?)\s*$/ }
]

/** The header's four cells (their labels as printed, then as read by order where positions are lost). */
const HEADER_TEXT = ['Período de Apuração', 'Data de Vencimento', 'Número do Documento', 'Pagar este documento até']
const HEADER: OrderedField[] = [
  { name: 'periodo', label: label('Periodo de Apuracao'), value: new RegExp(`^\\s*${PERIOD}\\s*$`) },
  { name: 'vencimento', label: label('Data de Vencimento'), value: new RegExp(`^\\s*${DATE}\\s*$`) },
  { name: 'numero', label: label('Numero do Documento'), value: new RegExp(`^\\s*${DOC_NUMBER}\\s*$`) },
  { name: 'pagar', label: label('Pagar este documento ate'), value: new RegExp(`^\\s*${DATE}\\s*$`) }
]

/**
 * The header's four values, each read under its label (Sicalc Web prints `Pagar este
 * documento até` a line lower than the others); a header printed as one line of four
 * values (our own drawing, some extractors) is read by that line.
 */
function header (doc: TextDocument): { periodo: Hit | undefined, vencimento: Hit | undefined, numero: Hit | undefined, pagar: Hit | undefined } {
  const line = doc.find(new RegExp(`^${PERIOD} ${DATE} ${DOC_NUMBER} ${DATE}$`))
  // Positions lost: the labels and their values in one stream (the row of labels merged with
  // the row of values by another library), read by their order only; the line after a label
  // is not its value there (L1 L2 V1 L3 V2 …).
  const read = doc.positionless ? doc.interleavedValues(HEADER) : undefined
  if (read !== undefined) return { periodo: read.periodo ?? line?.parts[0], vencimento: read.vencimento ?? line?.parts[1], numero: read.numero ?? line?.parts[2], pagar: read.pagar ?? line?.parts[3] }
  // Positions lost and no order to read by: the line after a label is its value only when the
  // label stands alone (the line before it is no other header label: not `L1 L2 V1`).
  const heads = HEADER.map((f) => f.label as RegExp)
  const isHead = (t: string): boolean => heads.some((re) => { const m = re.exec(t); return m !== null && m.index === 0 && t.slice(m[0].length).trim() === '' })
  const alone = (labelText: string): boolean => {
    if (!doc.positionless) return true
    const at = doc.lines.findIndex((l) => heads[HEADER_TEXT.indexOf(labelText)]!.exec(l.text.trim())?.index === 0 && isHead(l.text.trim()))
    return at >= 0 && (at === 0 || !isHead(doc.lines[at - 1]!.text.trim()))
  }
  const cell = (labelText: string, value: RegExp): Hit | undefined => {
    if (!alone(labelText)) return undefined
    const hit = doc.under(labelText)
    const m = hit === undefined ? null : value.exec(hit.value)
    return hit === undefined || m === null ? undefined : { ...hit, value: m[1]! }
  }
  return {
    periodo: cell('Período de Apuração', new RegExp(`^${PERIOD}$`)) ?? line?.parts[0],
    vencimento: cell('Data de Vencimento', new RegExp(`^${DATE}$`)) ?? line?.parts[1],
    numero: cell('Número do Documento', new RegExp(`^${DOC_NUMBER}$`)) ?? line?.parts[2],
    pagar: cell('Pagar este documento até', new RegExp(`^${DATE}$`)) ?? line?.parts[3]
  }
}

function parseSenda (doc: TextDocument, ctx: ParseContext): Darf {
  const head = header(doc)
  const who = doc.labelValue(/^(?:CNPJ|CPF)\s+(?:Raz[aã]o Social|Nome)$/i, new RegExp(`^\\s*(${CNPJ_PATTERN}|${CPF})(?:\\s+(\\S.*))?$`), { linesBelow: 1 })

  // Column centres of the table header, per page (multi-page DARFs repeat it).
  const headers = new Map<number, Map<Column, number>>()
  for (const h of doc.findAll(/C[oó]digo\s+Denomina[cç][aã]o\s+(Principal)\s+(Multa)\s+(Juros)\s+(Total)/i)) {
    if (headers.has(h.page)) continue
    headers.set(h.page, new Map(COLUMNS.map((c, i) => [c, h.parts[i]!.box.x + h.parts[i]!.box.width / 2])))
  }

  const rows = doc.findAll(new RegExp(`^(\\d{4})\\s+(\\S.*?)\\s+${AMOUNTS}$`))
  const details = doc.findAll(/^(\d{2})\s+(\S.*)$/)
  const periods = doc.findAll(new RegExp(`^PA:?\\s*${PERIOD}.*?\\bVencimento:?\\s*${DATE}$`, 'i'))
  const totalsHit = doc.find(new RegExp(`^Totais\\s+${AMOUNTS}$`))
  /** True when `h` sits below row `i` and above the next row (same page). */
  const belongs = (h: Hit, i: number): boolean => {
    const row = rows[i]!
    const next = rows[i + 1]
    const limit = next !== undefined && next.page === row.page ? next.box.y : totalsHit !== undefined && totalsHit.page === row.page ? totalsHit.box.y : -Infinity
    return h.page === row.page && h.box.y < row.box.y && h.box.y > limit
  }
  const tributos: DarfTributo[] = rows.map((row, i) => {
    const f = `tributos.${i}`
    const detail = details.find((h) => belongs(h, i))
    const pa = periods.find((h) => belongs(h, i))
    return {
      codigoReceita: ctx.take(`${f}.codigoReceita`, row.parts[0], same),
      codigoVariacao: ctx.take(`${f}.codigoVariacao`, detail?.parts[0], same),
      denominacao: ctx.take(`${f}.denominacao`, row.parts[1], rowText),
      descricao: ctx.take(`${f}.descricao`, detail?.parts[1], rowText),
      periodoApuracao: ctx.take(`${f}.periodoApuracao`, pa?.parts[0], period),
      vencimento: ctx.take(`${f}.vencimento`, pa?.parts[1], isoDate),
      ...amounts(ctx, f, columnsOf(row.parts.slice(2), headers.get(row.page)))
    }
  })
  // Positions lost (text handed over column by column): the composition read column by column.
  const documentTotal = doc.labelValue(/Valor Total do Documento/i, new RegExp(`${M}\\s*$`), { linesBelow: 1 })
  const ordered = rows.length === 0 && doc.positionless ? orderedTributos(doc, ctx, documentTotal) : undefined
  if (ordered !== undefined) tributos.push(...ordered.tributos)
  // …and the CNPJ and the name: the two labels and their two values in one stream (`CNPJ`,
  // `Razão Social`, the CNPJ, the name; taken only when its CNPJ is the one read above, if any),
  // or as one piece under `CNPJ` (the header's two cells handed over as one), or each under its label.
  const read = doc.positionless && who?.parts[1] === undefined ? doc.interleavedValues(IDENTITY) : undefined
  const pair = who === undefined || read?.cnpjCpf?.value === who.parts[0]?.value ? read : undefined
  const id = who === undefined && doc.positionless ? pair?.cnpjCpf ?? doc.labelValue(/^(?:CNPJ|CPF)$/, new RegExp(`^\\s*(${CNPJ_PATTERN}|${CPF})(?:\\s+(\\D\\S.*?))?\\s*$`)) : undefined
  const name = who === undefined && doc.positionless ? pair?.razaoSocial ?? id?.parts[1] ?? doc.labelValue(/^(?:Raz[aã]o Social|Nome)$/i, /^\s*(\D\S.*)$/) : pair?.razaoSocial
  const { linha, barcode } = collectionLine(doc, ctx)
  return {
    layout: 'SENDA',
    cnpjCpf: ctx.take('cnpjCpf', who?.parts[0] ?? id, taxId),
    razaoSocial: ctx.take('razaoSocial', who?.parts[1] ?? name, text),
    periodoApuracao: ctx.take('periodoApuracao', head.periodo ?? (doc.positionless ? otherPeriod(doc, [head.vencimento, head.pagar]) : undefined), period),
    dataVencimento: ctx.take('dataVencimento', head.vencimento, isoDate),
    pagarAte: ctx.take('pagarAte', head.pagar, isoDate),
    numeroDocumento: ctx.take('numeroDocumento', head.numero, docNumber),
    numeroReferencia: null,
    numeroReciboDeclaracao: ctx.take('numeroReciboDeclaracao', doc.labelValue(/N(?:º|°|o\.?|úmero)?\s*(?:do\s+)?Recibo\s+(?:da\s+)?Declara[cç][aã]o:?/i, /^\s*(\d{14})\b/), same),
    valorTotal: ctx.take('valorTotal', documentTotal, moneyNumber),
    tributos,
    totais: totalsHit === undefined ? ordered?.totais ?? null : amounts(ctx, 'totais', columnsOf(totalsHit.parts, headers.get(totalsHit.page))),
    linhaDigitavel: linha,
    codigoBarras: barcode,
    origem: origin(doc),
    dataEmissao: footer(doc, ctx),
    canhoto: stub(doc, ctx),
    vias: null
  }
}

/** A row's name, by order: any text but a header of the table (`Total` printed between the name and its description). */
const ROW_NAME = /^(?!\s*(?:C[oó]digo|Denomina[cç][aã]o|Principal|Multa|Juros|Total|Totais)\s*$)(\D\S.*)$/i

/**
 * The SENDA composition handed over column by column (positions lost): each row's code and
 * variation make the rows; its denominação, description and `PA:` line, and each money
 * column, are lined up in order when their counts agree (core's orderedColumns); a column
 * with another count is not placed (null, COLUMN_NOT_PLACED). Page by page.
 */
function orderedTributos (doc: TextDocument, ctx: ParseContext, documentTotal: Hit | undefined): { tributos: DarfTributo[], totais: DarfTotais | null } | undefined {
  const tributos: DarfTributo[] = []
  let sums: Partial<Record<Column, Hit>> | undefined
  // Each row's money cells, taken once every page is read and each column is checked against its sum.
  const cells: Array<Partial<Record<Column, Hit>>> = []
  for (const page of new Set(doc.lines.map((l) => l.page))) {
    const others = [
      { name: 'denominacao', header: /Denomina[cç][aã]o$/, cell: [ROW_NAME, /^(\D\S.*)$/, new RegExp(`^PA:?\\s*${PERIOD}`, 'i')] },
      ...COLUMNS.map((c) => ({ name: c, header: new RegExp(`^${c}$`, 'i'), cell: new RegExp(`^${M}$`) }))
    ]
    const code = { name: 'codigo', header: /^C[oó]digo\b/, cell: [/^(\d{4})$/, /^(\d{2})$/] }
    const table = doc.orderedColumns(code, others, { page, totals: 'Totais' }) ?? doc.orderedColumns({ ...code, cell: [/^(\d{4})$/] }, others, { page, totals: 'Totais' })
    if (table === undefined) continue
    const apart = new Map<number, { name: Hit | undefined, detail: Hit | undefined, pa: Hit | undefined }>()
    // `Código Denominação` printed as one piece heads the codes: each row's lines (its name, its
    // `NN description`, its `PA:` line) come as a run of their own elsewhere, lined up with the
    // codes when they are as many; without the name beside them, the variation, description and period only.
    if (table.rows.every((r) => r.denominacao === undefined)) {
      const pa = new RegExp(`^PA:?\\s*${PERIOD}.*?\\bVencimento:?\\s*${DATE}$`, 'i')
      const detail = /^(\d{2})\s+(\D.*)$/
      const full = doc.orderedColumns({ name: 'denominacao', cell: [ROW_NAME, detail, pa] }, [], { page })
      const runs = full !== undefined && full.rows.length === table.rows.length ? full : doc.orderedColumns({ name: 'denominacao', cell: [detail, pa] }, [], { page })
      if (runs !== undefined && runs.rows.length === table.rows.length) {
        runs.rows.forEach((r, i) => {
          const cells = r.denominacao!
          const [name, detailHit, paHit] = cells.length === 3 ? cells : [undefined, ...cells]
          apart.set(i, { name, detail: detailHit, pa: paHit })
        })
      }
    }
    for (const why of table.unplaced) ctx.report({ code: 'COLUMN_NOT_PLACED', field: 'tributos', message: `page ${page}: ${why}` })
    // The page prints more codes (a code line and its variation line) than the table has rows:
    // its columns were lined up with too few rows, and the rows after would take the next
    // page's codes. The rows are the printed codes; the table's rows are kept only as the
    // first of them (the same codes), without their amounts (counted for too few rows).
    const printed = codeLines(doc, page)
    const short = printed.length > table.rows.length
    const prefix = short && table.rows.every((r, i) => r.codigo?.[0]?.value === printed[i]![0].value && r.codigo?.[1]?.value === printed[i]![1].value)
    if (short) ctx.report({ code: 'COLUMN_NOT_PLACED', field: 'tributos', message: `page ${page}: ${printed.length} codes are printed, but the columns lined up by order give ${table.rows.length} rows; the page's amounts are not placed` })
    const pageRows = short ? printed.map((codes, i): OrderedRow => ({ ...(prefix ? table.rows[i] : undefined), codigo: codes, ...Object.fromEntries(COLUMNS.map((c) => [c, undefined])) })) : table.rows
    for (const [i, row] of pageRows.entries()) {
      const f = `tributos.${tributos.length}`
      const own = short && !prefix ? undefined : apart.get(i)
      const [name, description, pa] = own === undefined ? row.denominacao ?? [] : [own.name, own.detail?.parts[1], own.pa]
      cells.push(Object.fromEntries(COLUMNS.map((c) => [c, row[c]?.[0]])))
      tributos.push({
        codigoReceita: ctx.take(`${f}.codigoReceita`, row.codigo?.[0], same),
        codigoVariacao: ctx.take(`${f}.codigoVariacao`, row.codigo?.[1] ?? own?.detail?.parts[0], same),
        denominacao: ctx.take(`${f}.denominacao`, name, rowText),
        descricao: ctx.take(`${f}.descricao`, description, rowText),
        periodoApuracao: ctx.take(`${f}.periodoApuracao`, pa, period),
        vencimento: ctx.take(`${f}.vencimento`, own?.pa?.parts[1], isoDate),
        principal: null,
        multa: null,
        juros: null,
        total: null
      })
    }
    if (table.totals !== undefined) sums = Object.fromEntries(COLUMNS.map((c) => [c, table.totals![c]?.[0]]))
  }
  if (tributos.length === 0) return undefined
  for (const c of COLUMNS) {
    const why = columnContradicted(cells.map((r) => r[c]), sums?.[c] ?? (c === 'total' ? documentTotal : undefined))
    if (why !== undefined) ctx.report({ code: 'COLUMN_NOT_PLACED', field: 'tributos', message: `the column "${c}" lined up by order ${why}; where its cells belong is not known, they are not placed` })
    else cells.forEach((r, i) => { tributos[i]![c] = ctx.take(`tributos.${i}.${c}`, r[c], moneyNumber) })
  }
  const sum = (c: Column): number | null => sums?.[c] === undefined ? null : ctx.take(`totais.${c}`, sums[c], moneyNumber)
  return { tributos, totais: sums === undefined ? null : { principal: sum('principal'), multa: sum('multa'), juros: sum('juros'), total: sum('total') } }
}

/** Positions lost: the page's composition codes, a line of four digits and its variation's line of two under it. */
function codeLines (doc: TextDocument, page: number): Array<[Hit, Hit]> {
  const lines = doc.lines.filter((l) => l.page === page)
  const out: Array<[Hit, Hit]> = []
  for (let i = 0; i + 1 < lines.length; i++) {
    if (!/^\s*\d{4}\s*$/.test(lines[i]!.text) || !/^\s*\d{2}\s*$/.test(lines[i + 1]!.text)) continue
    const code = doc.find(/^\s*(\d{4})\s*$/, { page, within: lines[i]!.box })
    const variation = doc.find(/^\s*(\d{2})\s*$/, { page, within: lines[i + 1]!.box })
    if (code !== undefined && variation !== undefined) out.push([code, variation])
    i++
  }
  return out
}

/**
 * Why a money column lined up by order cannot be trusted, or undefined: its cells must add up
 * to the column's printed sum (the totals cell, or for the total column the document's total)
 * when every row has one, and may not exceed it when some row has none (amounts are never
 * negative). A column whose cells add up to something else holds another column's cell (a
 * library handed a juros over among the totals): its order does not say which row has which.
 */
function columnContradicted (cells: Array<Hit | undefined>, printed: Hit | undefined): string | undefined {
  const placed = cells.filter((h): h is Hit => h !== undefined)
  const want = printed === undefined ? null : moneyCents(printed.value)
  if (placed.length === 0 || want === null) return undefined
  const got = placed.reduce((a, h) => a + (moneyCents(h.value) ?? 0), 0)
  if (placed.length === cells.length ? got === want : got <= want) return undefined
  return `adds up to ${(got / 100).toFixed(2)}, but ${printed!.value} is printed as its sum`
}

// ----- 6b: the numbered-box layout -----

/** The boxes of one copy as hits (undefined: not printed); `labelled` lists the boxes whose label is printed. */
interface Copy {
  hits: Record<string, Hit | undefined>
  labelled: Set<string>
}

/**
 * The name under box 01: the left column shares its lines with the boxes on the right
 * (documents.md §6b), so it stops before the next box number and never starts with one.
 */
const NAME = /^\s*(?!(?:0\d|1[01])\s+\p{Lu})(\S.*?)(?=\s+(?:0[2-9]|1[01])\s+\p{Lu}{3}|\s*$)/u

/**
 * A box label: its number and words, the number optional (some producers draw the box
 * number apart from its words, a little higher or lower: another visual line).
 */
const box = (n: string, words: string): RegExp => new RegExp(`(?:\\b${n}\\s+)?${label(words).source}`, 'i')
/** A money box: the amount ends the line (the juros label wraps, `E / OU` stays beside the value). */
const MONEY_BOX = new RegExp(`${M}\\s*$`)
/** A printed CPF or CNPJ, with the stray spaces some prints leave after a dot. */
const TAX_ID = new RegExp(`^\\s*(${CNPJ_PATTERN}|\\d{3}\\.\\s?\\d{3}\\.\\s?\\d{3}-\\d{2})\\s*$`)

/** Box labels (documents.md §6b), and the pattern of the value after each on its line. */
const BOXES: Array<[field: string, labelText: RegExp, value: RegExp, linesBelow?: number]> = [
  ['razaoSocial', new RegExp(String.raw`(?:\b01\s+NOME|\bNOME\s*\/\s*(?:RAZ[AÃ]O SOCIAL|TELEFONE))(?:\s*\/\s*(?:RAZ[AÃ]O SOCIAL|TELEFONE))?`, 'i'), NAME, 1],
  ['periodoApuracao', box('02', 'PERIODO DE APURACAO'), new RegExp(`^\\s*${PERIOD}\\s*$`)],
  ['cnpjCpf', box('03', 'NUMERO DO CPF OU CNPJ'), TAX_ID],
  ['codigoReceita', box('04', 'CODIGO DA RECEITA'), /^\s*(\d{4})(?:-(\d{2}))?\s*$/],
  ['numeroReferencia', box('05', 'NUMERO DE REFERENCIA'), /^\s*(\S+)\s*$/],
  ['dataVencimento', box('06', 'DATA DE VENCIMENTO'), new RegExp(`^\\s*${DATE}\\s*$`)],
  ['principal', box('07', 'VALOR DO PRINCIPAL'), MONEY_BOX],
  ['multa', box('08', 'VALOR DA MULTA'), MONEY_BOX],
  ['juros', box('09', 'VALOR DOS JUROS'), MONEY_BOX],
  ['valorTotal', box('10', 'VALOR TOTAL'), MONEY_BOX],
  ['numeroDocumento', label('Numero do Documento:'), new RegExp(`^\\s*${DOC_NUMBER}`)],
  ['pagarAte', label('Data limite para acolhimento:'), new RegExp(`^\\s*${DATE}`)],
  ['linhaDigitavel', /^/, LINE]
]

/**
 * The boxes 02-10 as read by order when positions are lost: multa, juros and the reference
 * are left blank when there is nothing to print (documents.md §6b), every other box is filled.
 */
const ORDERED: OrderedField[] = BOXES
  .filter(([field]) => !['razaoSocial', 'numeroDocumento', 'pagarAte', 'linhaDigitavel'].includes(field))
  .map(([name, l, value]) => ({ name, label: l, value, optional: ['numeroReferencia', 'multa', 'juros'].includes(name) }))

/** A box's number and the start of its words (`04 CÓDIGO`): where a box begins on a line. */
const BOX_START = /(?:^|\s)(?:0[1-9]|1[01])\s+\p{Lu}{3}/u
/** A box's value sits within this many label heights under the label's line. */
const BOX_DEPTH = 3

/**
 * The value printed in a box's lower right, on a line of its own under the label's (older
 * prints right-align the value low in the box, beside no text of its label: neither after
 * it on its line nor under its words). The value is the text of that line right of the
 * label's start; the line must be nearer this label than the next box's label below it, and
 * no box may begin on it. Read only where no other reading gave a value.
 */
function lowInBox (doc: TextDocument, l: RegExp, value: RegExp, within: SearchOptions): Hit | undefined {
  const labelHit = doc.find(l, within)
  if (labelHit === undefined || labelHit.box.height <= 0) return undefined
  const h = labelHit.box.height
  const lines = doc.lines.filter((line) => line.page === labelHit.page && line.box.y < labelHit.box.y - 0.5 * h && line.box.y > labelHit.box.y - BOX_DEPTH * h &&
    (within.within === undefined || (line.box.y >= within.within.y && line.box.y <= within.within.y + within.within.height)))
  lines.sort((a, b) => b.box.y - a.box.y)
  for (const line of lines) {
    const runs = line.runs.map(({ run }) => run).filter((r) => r.box.x >= labelHit.box.x - 2)
    if (runs.length === 0) continue
    const cell = runs.map((r) => r.text.trim()).join(' ')
    if (BOX_START.test(` ${cell}`) || l.test(cell)) return undefined
    // The next box's label below: the value must sit nearer this label than that one.
    const next = doc.lines.find((n) => n.page === line.page && n.box.y < labelHit.box.y && n.box.y > line.box.y - BOX_DEPTH * h &&
      n.runs.some(({ run }) => run.box.x >= labelHit.box.x - 20 && BOX_START.test(` ${run.text}`)))
    const y = Math.min(...runs.map((r) => r.box.y))
    if (next !== undefined && labelHit.box.y - y > y - next.box.y) return undefined
    const m = value.exec(cell)
    if (m === null) return undefined
    const box = { x: runs[0]!.box.x, y: Math.min(...runs.map((r) => r.box.y)), width: Math.max(...runs.map((r) => r.box.x + r.box.width)) - runs[0]!.box.x, height: Math.max(...runs.map((r) => r.box.height)) }
    const hit: Hit = { value: (m[1] ?? m[0]).trim(), groups: m.slice(1), parts: [], page: line.page, source: line.text, box }
    hit.parts = m.slice(1).map((g) => g === undefined ? undefined : { ...hit, value: g, groups: [], parts: [] })
    return hit
  }
  return undefined
}

/**
 * Positions lost: the value on the line right after its box's label, when that label stands
 * alone, i.e. the line before it is no box label (in `L1 L2 V1 V2`, V1 is not L2's) and the
 * label line holds nothing else.
 */
function nextLine (doc: TextDocument, l: RegExp, value: RegExp, within: SearchOptions): Hit | undefined {
  const lines = doc.lines.filter((line) => line.page === within.page && (within.within === undefined || (line.box.y >= within.within.y && line.box.y <= within.within.y + within.within.height)))
  const bare = (text: string): boolean => { const m = l.exec(text); return m !== null && text.slice(0, m.index).trim() === '' && text.slice(m.index + m[0].length).trim() === '' }
  const at = lines.findIndex((line) => bare(line.text))
  const before = lines[at - 1]
  if (at < 0 || lines[at + 1] === undefined || (before !== undefined && (BOX_START.test(` ${before.text}`) || BOXES.some(([, other]) => other.source !== '^' && other.exec(before.text)?.index === 0)))) return undefined
  const m = value.exec(lines[at + 1]!.text)
  if (m === null) return undefined
  return doc.find(value, { ...(within.page === undefined ? {} : { page: within.page }), within: lines[at + 1]!.box })
}

function readCopy (doc: TextDocument, within: SearchOptions): Copy {
  const hits: Copy['hits'] = {}
  const labelled = new Set<string>()
  for (const [field, l, value, linesBelow] of BOXES) {
    if (field === 'linhaDigitavel') { hits[field] = doc.find(value, within); continue }
    if (doc.find(l, within) === undefined) continue
    labelled.add(field)
    hits[field] = doc.labelValue(l, value, { ...within, linesBelow: linesBelow ?? 0 }) ??
      (field === 'razaoSocial' ? undefined : doc.positionless ? nextLine(doc, l, value, within) : lowInBox(doc, l, value, within))
  }
  return { hits, labelled }
}

/**
 * Positions lost, the box labels handed over in another order than their values (pdfminer
 * groups the labels by text box; the values come down the right column, box 02 to box 10): when
 * the copy prints every box 02-10 and, after its last label, exactly as many value lines, the
 * values are the boxes' in the boxes' numbered order. Taken only when every value has its box's
 * shape and principal + multa + juros make the total to the cent, and only for boxes no other
 * reading filled.
 */
function byNumber (doc: TextDocument, within: SearchOptions, copy: Copy): void {
  const boxes = ORDERED.map((f) => ({ field: f, at: -1 }))
  const lines = doc.lines.filter((line) => line.page === within.page && (within.within === undefined || (line.box.y >= within.within.y && line.box.y <= within.within.y + within.within.height)))
  for (const b of boxes) {
    const re = b.field.label as RegExp
    const at = lines.flatMap((line, i) => { const m = re.exec(line.text); return m !== null && m.index === 0 && /^\s*\d{2}\s/.test(line.text) ? [i] : [] })
    if (at.length !== 1) return
    b.at = at[0]!
  }
  const last = Math.max(...boxes.map((b) => b.at))
  const values = lines.slice(last + 1, last + 1 + boxes.length)
  if (values.length !== boxes.length) return
  const hits: Record<string, Hit> = {}
  for (const [i, b] of boxes.entries()) {
    const hit = doc.find(b.field.value, { page: values[i]!.page, within: values[i]!.box })
    if (hit === undefined || hit.source !== values[i]!.text) return
    hits[b.field.name] = hit
  }
  const cents = ['principal', 'multa', 'juros', 'valorTotal'].map((f) => moneyCents(hits[f]!.value))
  if (cents.some((c) => c === null) || cents[0]! + cents[1]! + cents[2]! !== cents[3]) return
  for (const [field, hit] of Object.entries(hits)) if (copy.hits[field] === undefined) copy.hits[field] = hit
}

/** Converters of the box fields (the same for every copy, so copies compare as data). */
const CONVERT: Record<string, (s: string) => unknown> = {
  razaoSocial: text,
  periodoApuracao: period,
  cnpjCpf: taxId,
  codigoReceita: same,
  numeroReferencia: same,
  dataVencimento: isoDate,
  principal: moneyNumber,
  multa: moneyNumber,
  juros: moneyNumber,
  valorTotal: moneyNumber,
  numeroDocumento: docNumber,
  pagarAte: isoDate,
  linhaDigitavel: lineDigits
}

function parseBoxes (doc: TextDocument, ctx: ParseContext): Darf {
  // Each copy starts at its "MINISTÉRIO DA FAZENDA" and ends where the next one starts (or at the page's end).
  const anchors = doc.findAll(label('MINISTERIO DA FAZENDA'))
  const regions: SearchOptions[] = anchors.length === 0
    ? [{}]
    : anchors.map((a, i) => {
      const next = anchors[i + 1]
      const top = a.box.y + a.box.height + 1
      // The page's last copy runs to the page's end, whatever the coordinates of its lowest line.
      const bottom = next !== undefined && next.page === a.page ? next.box.y + next.box.height + 1 : -1e6
      return { page: a.page, within: { x: -1e6, y: bottom, width: 2e6, height: top - bottom } }
    })
  const copies = regions.map((r) => readCopy(doc, r))
  // Positions lost (a text fixture, text ordered column by column): the boxes' labels come in
  // a block and their values in a block after it; paired by order, one record per copy.
  const ordered = doc.positionless ? doc.orderedValues(ORDERED) : undefined
  ordered?.forEach((values, i) => {
    const copy = copies[i]
    if (copy === undefined) return
    for (const [field, hit] of Object.entries(values)) {
      if (copy.hits[field] === undefined && hit !== undefined) copy.hits[field] = hit
    }
  })
  if (doc.positionless) regions.forEach((r, i) => { if (copies[i] !== undefined) byNumber(doc, r, copies[i]) })
  const first = copies[0]!
  const value = <T>(field: string, convert: (s: string) => T | null): T | null => ctx.take(field, first.hits[field], convert)
  // An empty multa or juros box (nothing to pay, documents.md §6b) is null, not a 0 that was never read.
  const money = (field: 'principal' | 'multa' | 'juros'): number | null => value(field, moneyNumber)
  // Copies differ in a box when two of them read different values there. A copy whose box
  // prints its label but whose value was not read (positions lost, the value handed over
  // elsewhere) says nothing of what it prints: it is not compared, and the reader is told.
  const divergencias: string[] = []
  const unread: string[] = []
  for (const field of Object.keys(CONVERT)) {
    const seen = copies.flatMap((c) => { const h = c.hits[field]; const v = h === undefined ? null : CONVERT[field]!(h.value); return v === null ? [] : [JSON.stringify(v)] })
    if (seen.some((s) => s !== seen[0])) divergencias.push(field)
    else if (seen.length > 0 && copies.some((c) => c.labelled.has(field) && c.hits[field] === undefined)) unread.push(field)
  }
  if (divergencias.length > 0) ctx.report({ code: 'DARF_COPIES_DIFFER', message: `the copies of the DARF print different values for ${divergencias.join(', ')}; the first copy's are returned`, field: divergencias[0]! })
  if (unread.length > 0) ctx.report({ code: 'DARF_COPY_UNREAD', message: `some copy of the DARF prints the box of ${unread.join(', ')} but its value could not be read there; the copies are compared where both were read`, field: unread[0]! })

  const codigoReceita = value('codigoReceita', same)
  const variacao = first.hits.codigoReceita?.parts[1]
  const periodoApuracao = value('periodoApuracao', period)
  const dataVencimento = value('dataVencimento', isoDate)
  const principal = money('principal')
  const multa = money('multa')
  const juros = money('juros')
  const valorTotal = value('valorTotal', moneyNumber)
  const linha = value('linhaDigitavel', lineDigits)
  const tributo: DarfTributo = {
    codigoReceita,
    codigoVariacao: ctx.take('tributos.0.codigoVariacao', variacao, same),
    denominacao: null,
    descricao: null,
    periodoApuracao,
    vencimento: dataVencimento,
    principal,
    multa,
    juros,
    total: valorTotal
  }
  return {
    layout: 'CAMPOS_NUMERADOS',
    cnpjCpf: value('cnpjCpf', taxId),
    razaoSocial: value('razaoSocial', text),
    periodoApuracao,
    dataVencimento,
    pagarAte: value('pagarAte', isoDate),
    numeroDocumento: value('numeroDocumento', docNumber),
    numeroReferencia: value('numeroReferencia', same),
    numeroReciboDeclaracao: null,
    valorTotal,
    tributos: codigoReceita === null && valorTotal === null && principal === null ? [] : [tributo],
    totais: null,
    linhaDigitavel: linha,
    codigoBarras: linha === null ? null : readCollectionLine(linha)?.barcode ?? null,
    origem: origin(doc),
    dataEmissao: footer(doc, ctx),
    canhoto: null,
    vias: { quantidade: copies.length, divergencias }
  }
}

export function parseDarf (doc: TextDocument, ctx: ParseContext): Darf {
  return doc.find(box('04', 'CODIGO DA RECEITA')) !== undefined ? parseBoxes(doc, ctx) : parseSenda(doc, ctx)
}
