/**
 * Reader of the RFB's SENDA collection guide as printed for the Simples Nacional (DAS from
 * PGDAS-D and installment plans, DAS-MEI from PGMEI): documents.md §0.3, §0.4, §4, §5.
 *
 * The content stream order of these prints is unrelated to the page (§0.1), so values are
 * found by type and by the column of their label: a value belongs to the label whose
 * column it sits in, on the label's line (to its right) or just below it.
 *
 * A family module: the das and das-mei plugins both import it (docs/plugins.md, "Code a
 * family shares").
 */
import { CNPJ_PATTERN, MONEY_PATTERN, cnpjChars, competence, conflictHit, isoDate, isoDateTime, moneyCents, moneyNumber, normalizeText, numberToCents, readCollectionLine, textValue } from '../../../core/plugin-api.js'
import type { CheckOutcome, Hit, OrderedRow, ParseContext, SearchOptions, TextDocument } from '../../../core/plugin-api.js'
import { GUIDE_LABELS } from './guide-fields.js'

/** One row of `Composição do Documento de Arrecadação`. */
export interface LinhaComposicao {
  codigo: string | null
  denominacao: string | null
  principal: number | null
  /** Null when the cell is printed empty (no multa). */
  multa: number | null
  /** Null when the cell is printed empty (no juros). */
  juros: number | null
  total: number | null
  /** `YYYY-MM` from the row's second line. */
  periodo: string | null
  municipio: string | null
  uf: string | null
}

export interface Totais { principal: number | null, multa: number | null, juros: number | null, total: number | null }

/** The fields every SENDA Simples Nacional guide prints. */
export interface Guia {
  /** `YYYY-MM`, or `DIVERSOS` (installment plans). */
  competencia: string | null
  dataVencimento: string | null
  pagarAte: string | null
  /** 17 bare digits. */
  numeroDocumento: string | null
  /** As printed, `NN.NN.YYDDD.NNNNNNN-D`. */
  numeroDocumentoFormatado: string | null
  valorTotal: number | null
  observacoes: string | null
  composicao: LinhaComposicao[]
  totais: Totais | null
  /** 48 digits. */
  linhaDigitavel: string | null
  /** 44 digits (the line without its four block check digits). */
  codigoBarras: string | null
  dataEmissao: string | null
  versaoSenda: string | null
}

const M = `(${MONEY_PATTERN})`
const DATE = /\d{2}\/\d{2}\/\d{4}/
const NUMBER = /(\d{2}\.\d{2}\.\d{5}\.\d{7}-\d)/
const LINE48 = /(\d{11}[ -]?\d(?: \d{11}[ -]?\d){3})/
const ROW = new RegExp(`^(\\d{4}) ?(\\D+?) ${M}(?: ${M})?(?: ${M})?(?: ${M})?$`)
const PERIOD_LINE = /^(?:(.+?) \(([A-Z]{2})\) - |([A-Z]{2}) - )?(\d{2}\/\d{4})$/

const cx = (h: Hit): number => h.box.x + h.box.width / 2
const cy = (h: Hit): number => h.box.y + h.box.height / 2
const text = textValue

/**
 * The first hit of `pattern` in the column of `label`: on the label's line to its right,
 * or on a line below it (within `depth` points) horizontally overlapping the label.
 */
function inColumn (doc: TextDocument, label: Hit | undefined, pattern: RegExp, depth = 26, slack = 30): Hit | undefined {
  if (label === undefined) return undefined
  const hits = doc.findAll(pattern, { page: label.page })
  const right = hits.find((h) => Math.abs(cy(h) - cy(label)) < label.box.height / 2 && h.box.x >= label.box.x + label.box.width)
  if (right !== undefined) return right
  const below = hits.filter((h) => h.box.y < label.box.y - 1 && h.box.y > label.box.y - depth &&
    h.box.x < label.box.x + label.box.width + slack && h.box.x + h.box.width > label.box.x - slack)
  below.sort((a, b) => b.box.y - a.box.y || Math.abs(cx(a) - cx(label)) - Math.abs(cx(b) - cx(label)))
  return below[0]
}

interface Columns { page: number, y: number, labels: Hit[] }

/** Column labels `Principal Multa Juros Total` of each composition header (one per page). */
function compositionColumns (doc: TextDocument, scope: SearchOptions): Columns[] {
  return doc.findAll(/(Principal) (Multa) (Juros) (Total)$/, scope).map((h) => ({ page: h.page, y: h.box.y, labels: h.parts.filter((p): p is Hit => p !== undefined) }))
}

const KEYS = ['principal', 'multa', 'juros', 'total'] as const

/** Assigns a row's money hits to the column label whose centre is nearest (left- or right-aligned cells alike); without a header, 4 values are the four columns and 2 are principal and total (§4: empty multa and juros cells print nothing). */
function assign (values: Hit[], columns: Columns | undefined): Partial<Record<typeof KEYS[number], Hit | undefined>> {
  if (columns === undefined || columns.labels.length !== 4) {
    if (values.length === 4) return { principal: values[0], multa: values[1], juros: values[2], total: values[3] }
    if (values.length === 2) return { principal: values[0], total: values[1] }
    // Three cells that add up (principal + one more = total): a blank multa or juros cell, and
    // which of the two the middle one is only its place on the page says.
    const [p, x, t] = values.map((v) => moneyCents(v.value)) as Array<number | null | undefined>
    if (values.length === 3 && p != null && x != null && t != null && p + x === t) {
      const why = `the row prints three amounts, ${values[1]!.value} between its principal and its total, and without their places on the page whether it is the multa or the juros is not known; it is not guessed`
      return { principal: values[0], multa: conflictHit(values[1]!, why), juros: conflictHit(values[1]!, why), total: values[2] }
    }
    return {}
  }
  const out: Partial<Record<typeof KEYS[number], Hit | undefined>> = {}
  for (const v of values) {
    let best = 0
    columns.labels.forEach((l, i) => { if (Math.abs(cx(l) - cx(v)) < Math.abs(cx(columns.labels[best]!) - cx(v))) best = i })
    out[KEYS[best]!] = v
  }
  return out
}

function columnsFor (all: Columns[], hit: Hit): Columns | undefined {
  return all.filter((c) => c.page === hit.page && c.y > hit.box.y).sort((a, b) => a.y - b.y)[0] ?? all.find((c) => c.page === hit.page) ?? all[0]
}

type Key = typeof KEYS[number]
type Money = Partial<Record<Key, Hit | undefined>>
interface RowHits { codigo: Hit | undefined, denominacao: Hit | undefined, money: Money, period: Hit | undefined }

/** The composition's rows printed as rows (`1001 IRPJ - SIMPLES NACIONAL 2,20 …`, the code glued to its name where a library joins the two pieces). */
function compositionRows (doc: TextDocument, scope: SearchOptions, columns: Columns[]): RowHits[] {
  const periods = doc.findAll(PERIOD_LINE, scope)
  return doc.findAll(ROW, scope).map((row) => ({
    codigo: row.parts[0],
    denominacao: row.parts[1],
    money: assign(row.parts.slice(2).filter((p): p is Hit => p !== undefined), columnsFor(columns, row)),
    period: periods.find((p) => p.page === row.page && p.box.y < row.box.y && p.box.y > row.box.y - 16)
  }))
}

const centsOf = (h: Hit | undefined): number | null => h === undefined || h.conflict !== undefined ? null : moneyCents(h.value)

/**
 * Positions lost, the rows and `Totais` read each in its own order: a row's cells in the order
 * the text gives them, the totals in theirs. A library need not give both in the page's order
 * (pypdf hands the SENDA totals over as principal, juros, multa, total, the rows as principal,
 * multa, juros, total), so each totals cell is checked against the sum of its column's rows: a
 * cell that differs is not taken, and where the two orders swap two columns (the totals' cell
 * of one is the rows' sum of the other) neither says which is which, so those columns are null
 * in the rows too. Every conflict is a warning naming both readings; nothing is picked.
 */
function reconcile (rows: RowHits[], totals: Money | undefined, page: number): void {
  if (totals === undefined || rows.length === 0) return
  // A column's sum is known when every row gives its cell (a blank cell is a zero only where positions say it is blank).
  const sums = Object.fromEntries(KEYS.map((k) => [k, rows.every((r) => r.money[k] !== undefined && r.money[k]!.conflict === undefined)
    ? rows.reduce((a, r) => a + (centsOf(r.money[k]) ?? 0), 0)
    : null])) as Record<Key, number | null>
  const show = (c: number | null): string => c === null ? '?' : (c / 100).toFixed(2).replace('.', ',')
  const disputed = new Set<Key>()
  for (const k of KEYS) {
    const cell = totals[k]
    const printed = centsOf(cell)
    if (cell === undefined || printed === null || printed === sums[k]) continue
    if (sums[k] === null) {
      // Unverified: the principal is the first cell in every order a library gives; multa and juros may come either way round.
      if (k === 'multa' || k === 'juros') totals[k] = conflictHit(cell, `the text whose positions are lost prints ${show(printed)} as the ${k} of Totais by its order, and the rows do not give the ${k} of each to check it against (page ${page}); the value is not guessed`)
      continue
    }
    const other = KEYS.find((j) => j !== k && sums[j] === printed && centsOf(totals[j]) === sums[k])
    if (other !== undefined) {
      disputed.add(k).add(other)
      continue
    }
    totals[k] = conflictHit(cell, `the text whose positions are lost prints ${show(printed)} as the ${k} of Totais by its order, but the rows' ${k} add up to ${show(sums[k])} (page ${page}); the value is not guessed`)
  }
  for (const k of disputed) {
    const why = `the text whose positions are lost gives the rows' cells and the Totais cells in orders that swap ${[...disputed].join(' and ')} (page ${page}); which column is which is not guessed`
    if (totals[k] !== undefined) totals[k] = conflictHit(totals[k], why)
    for (const r of rows) if (r.money[k] !== undefined) r.money[k] = conflictHit(r.money[k], why)
  }
}

/** One line of the composition from its cells, however they were found: the period line gives municipality, state and period. */
function compositionLine (ctx: ParseContext, f: string, codigo: Hit | undefined, denominacao: Hit | undefined,
  money: Partial<Record<typeof KEYS[number], Hit | undefined>>, period: Hit | undefined): LinhaComposicao {
  const amount = (k: typeof KEYS[number]): number | null => ctx.take(`${f}.${k}`, money[k], moneyNumber)
  return {
    codigo: ctx.take(`${f}.codigo`, codigo, (t) => t),
    denominacao: ctx.take(`${f}.denominacao`, denominacao, text),
    principal: amount('principal'),
    multa: amount('multa'),
    juros: amount('juros'),
    total: amount('total'),
    periodo: ctx.take(`${f}.periodo`, period?.parts[3], competence),
    municipio: ctx.take(`${f}.municipio`, period?.parts[0], text),
    uf: ctx.take(`${f}.uf`, period?.parts[1] ?? period?.parts[2], text)
  }
}

/**
 * The composition handed over column by column (positions lost: a text fixture, another
 * library's order): the codes make the rows; the denominations (each with its period line),
 * and each money column, are lined up with them in order when they print as many cells (one
 * more: the `Totais` cell). A column printed with another count (blank cells print nothing)
 * is not placed: its cells stay null, with a warning. Page by page: each page repeats the header.
 */
function orderedComposition (doc: TextDocument, ctx: ParseContext, scope: SearchOptions, prefix: string): { rows: LinhaComposicao[], totais: Totais | null } | undefined {
  const pages = scope.page !== undefined ? [scope.page] : [...new Set(doc.lines.map((l) => l.page))]
  const rows: LinhaComposicao[] = []
  let totals: OrderedRow | undefined
  for (const page of pages) {
    const table = doc.orderedColumns({ name: 'codigo', header: /^Código\b/, cell: /^(\d{4})$/ }, [
      { name: 'denominacao', header: /Denominação$/, cell: [/^(\D*\p{L}\D*)$/u, PERIOD_LINE] },
      ...KEYS.map((k) => ({ name: k, header: new RegExp(`^${k[0]!.toUpperCase()}${k.slice(1)}$`), cell: new RegExp(`^${M}$`) }))
    ], { ...scope, page, totals: 'Totais' })
    if (table === undefined) continue
    // `Código Denominação` printed as one piece heads the codes: the denominations (each with its
    // period line) come as a run of their own elsewhere, lined up with the codes when they are as many.
    if (table.rows.every((r) => r.denominacao === undefined)) {
      const names = doc.orderedColumns({ name: 'denominacao', cell: [/^(\D*\p{L}\D*)$/u, PERIOD_LINE] }, [], { ...scope, page })
      if (names !== undefined && names.rows.length === table.rows.length) names.rows.forEach((r, i) => { table.rows[i]!.denominacao = r.denominacao })
      else if (names !== undefined) table.unplaced.push(`the column "denominacao" prints ${names.rows.length} values for ${table.rows.length} rows in an order that does not say which row each belongs to; they are not placed`)
    }
    const lone = loneTotals(doc, table, page)
    for (const why of table.unplaced) {
      if (!Object.keys(lone).some((k) => why.includes(`"${k}"`))) ctx.report({ code: 'COLUMN_NOT_PLACED', field: `${prefix}composicao`, message: `page ${page}: ${why}` })
    }
    if (Object.keys(lone).length > 0) table.totals = { ...table.totals, ...lone }
    const short = shortColumn(doc, table, page)
    if (short !== undefined) table.unplaced = table.unplaced.filter((why) => !short.some((k) => why.includes(`"${k}"`)))
    const labelled = labelledTotals(doc, table, page)
    if (labelled !== undefined) table.totals = labelled
    for (const row of table.rows) {
      const f = `${prefix}composicao.${rows.length}`
      const [name, period] = row.denominacao ?? []
      rows.push(compositionLine(ctx, f, row.codigo?.[0], name, Object.fromEntries(KEYS.map((k) => [k, row[k]?.[0]])), period))
    }
    totals = table.totals ?? totals
  }
  if (rows.length === 0) return undefined
  const sum = (k: typeof KEYS[number]): number | null => ctx.take(`${prefix}totais.${k}`, totals?.[k]?.[0], moneyNumber)
  return { rows, totais: totals === undefined ? null : { principal: sum('principal'), multa: sum('multa'), juros: sum('juros'), total: sum('total') } }
}

/**
 * Multa and juros columns that print one cell under their header while every row leaves them
 * blank: a row's amount is always summed into `Totais` too (two cells), so one cell is the
 * total. Taken only when the totals row then adds up (principal + multa + juros = total, in
 * cents): otherwise the cell may be a row's, its total handed over elsewhere.
 */
function loneTotals (doc: TextDocument, table: { rows: OrderedRow[], totals: OrderedRow | undefined }, page: number): OrderedRow {
  const totals = table.totals ?? {}
  const cents = (h: Hit[] | undefined): number | null => h?.[0] === undefined ? null : moneyCents(h[0].value)
  const found: OrderedRow = {}
  for (const k of ['multa', 'juros'] as const) {
    if (totals[k] !== undefined || table.rows.some((r) => r[k] !== undefined)) continue
    const column = doc.orderedColumns({ name: k, header: new RegExp(`^${k[0]!.toUpperCase()}${k.slice(1)}$`), cell: new RegExp(`^${M}$`) }, [], { page })
    if (column?.rows.length === 1) found[k] = column.rows[0]![k]
  }
  const all = { ...totals, ...found }
  const [p, m, j, t] = KEYS.map((k) => cents(all[k])) as [number | null, number | null, number | null, number | null]
  if (Object.keys(found).length === 0 || p === null || m === null || j === null || t === null || p + m + j !== t) return {}
  return found
}

/**
 * A multa or juros column printed with fewer cells than rows (blank cells print nothing), the
 * other amounts placed: each row's principal + multa + juros = total says what the short column
 * holds, row by row. Its cells are placed only when, in order, they are exactly the rows' nonzero
 * differences (the rows whose difference is zero are the blank ones). A total column holding the
 * rows and then the totals row (principal, multa, juros, total, each its column's sum) is placed
 * with it. The columns placed, or undefined (nothing changed).
 */
function shortColumn (doc: TextDocument, table: { rows: OrderedRow[], totals: OrderedRow | undefined }, page: number): Key[] | undefined {
  const n = table.rows.length
  const missing = KEYS.filter((k) => table.rows.every((r) => r[k] === undefined))
  const short = missing.filter((k) => k === 'multa' || k === 'juros')
  if (short.length !== 1 || missing.some((k) => k !== short[0] && k !== 'total') || n < 2) return undefined
  const k = short[0]!
  const other = k === 'multa' ? 'juros' : 'multa'
  const raw = (key: Key): Hit[] => doc.orderedColumns({ name: key, header: new RegExp(`^${key[0]!.toUpperCase()}${key.slice(1)}$`), cell: new RegExp(`^${M}$`) }, [], { page })?.rows.map((r) => r[key]![0]!) ?? []
  const totalCells = missing.includes('total') ? raw('total') : table.rows.map((r) => r.total![0]!)
  const cells = raw(k)
  if (totalCells.length !== n && totalCells.length !== n + KEYS.length) return undefined
  const c = (h: Hit | undefined): number | null => h === undefined ? null : moneyCents(h.value)
  const diffs = table.rows.map((r, i) => {
    const [p, o, t] = [c(r.principal?.[0]), c(r[other]?.[0]), c(totalCells[i])]
    return p === null || o === null || t === null ? null : t - p - o
  })
  if (diffs.some((d) => d === null || d < 0)) return undefined
  const nonzero = diffs.flatMap((d, i) => d === 0 ? [] : [i])
  if (cells.length !== nonzero.length || cells.length >= n || cells.some((h, j) => c(h) !== diffs[nonzero[j]!])) return undefined
  const sums = KEYS.map((key) => key === k ? diffs.reduce<number>((a, d) => a + d!, 0) : table.rows.reduce((a, r, i) => a + (c(key === 'total' ? totalCells[i] : r[key]?.[0]) ?? 0), 0))
  const trailing = totalCells.slice(n)
  if (trailing.length > 0 && trailing.some((h, i) => c(h) !== sums[i])) return undefined
  nonzero.forEach((i, j) => { table.rows[i]![k] = [cells[j]!] })
  if (missing.includes('total')) table.rows.forEach((r, i) => { r.total = [totalCells[i]!] })
  if (trailing.length > 0) table.totals = { ...table.totals, ...Object.fromEntries(KEYS.map((key, i) => [key, [trailing[i]!]])) }
  return missing
}

/**
 * The totals row handed over as a column of its own: `Totais`, then its cells one a line
 * (pdfminer, after the table's last column). Each cell is the column whose rows add up to it,
 * to the cent: taken only when every row gives every amount, every cell finds one column and
 * no two the same (a row's multa and juros that add up alike cannot be told apart). Undefined
 * when the table's own totals are whole, or nothing fits.
 */
function labelledTotals (doc: TextDocument, table: { rows: OrderedRow[], totals: OrderedRow | undefined }, page: number): OrderedRow | undefined {
  if (KEYS.every((k) => table.totals?.[k] !== undefined) || table.rows.length === 0) return undefined
  const sums = KEYS.map((k) => table.rows.every((r) => r[k] !== undefined) ? table.rows.reduce((a, r) => a + (centsOf(r[k]![0]) ?? NaN), 0) : NaN)
  if (sums.some((c) => Number.isNaN(c)) || new Set(sums).size !== KEYS.length) return undefined
  const lines = doc.lines.filter((l) => l.page === page)
  const at = lines.findIndex((l) => /^\s*Totais\s*$/.test(l.text))
  if (at < 0) return undefined
  const found: OrderedRow = {}
  for (const l of lines.slice(at + 1, at + 1 + KEYS.length)) {
    const hit = doc.find(new RegExp(`^\\s*${M}\\s*$`), { page, within: l.box })
    if (hit === undefined || hit.source !== l.text) break
    const k = KEYS[sums.indexOf(moneyCents(hit.value) ?? NaN)]
    if (k === undefined || found[k] !== undefined) return undefined
    found[k] = [hit]
  }
  return Object.keys(found).length < 2 ? undefined : { ...table.totals, ...found }
}

/** The `Totais` row's cells. */
function totalsHits (doc: TextDocument, scope: SearchOptions, columns: Columns[]): Money | undefined {
  const hit = doc.find(new RegExp(`^Totais ${M}(?: ${M})?(?: ${M})?(?: ${M})?$`), scope)
  return hit === undefined ? undefined : assign(hit.parts.filter((p): p is Hit => p !== undefined), columnsFor(columns, hit))
}

function takeTotals (ctx: ParseContext, prefix: string, cells: Money): Totais {
  const money = (k: Key): number | null => ctx.take(`${prefix}totais.${k}`, cells[k], moneyNumber)
  return { principal: money('principal'), multa: money('multa'), juros: money('juros'), total: money('total') }
}

const DATE_LINE = new RegExp(`^\\s*(${DATE.source})\\s*$`)
/** A header period as the guide prints it, a month by name (`Janeiro/2018`) or `Diversos`: composition rows print `MM/YYYY`. */
const MONTH_PERIOD = /^\s*((?:Janeiro|Fevereiro|Março|Abril|Maio|Junho|Julho|Agosto|Setembro|Outubro|Novembro|Dezembro)\/\d{4}|Diversos)\s*$/i
/**
 * The same periods (by name) and dates as pieces of a longer line: a library that keeps each
 * printed line whole puts the period and the due date on one (`Janeiro/2018 20/02/2018`),
 * or glues a date to the label printed after it (`31/08/2022Observações`). A date followed
 * by a time is the footer's.
 */
const MONTH_PIECE = /(?<![\p{L}\d/])((?:Janeiro|Fevereiro|Março|Abril|Maio|Junho|Julho|Agosto|Setembro|Outubro|Novembro|Dezembro)\/\d{4})(?![\d/])/iu
const DATE_PIECE = new RegExp(`(?<![\\d/])(${DATE.source})(?![\\d/]|\\s*\\d{2}:\\d{2})`)

/**
 * Positions lost: the value of `label` when it is the only line of the scope of its shape
 * (its label's place in the order says nothing: another library may hand the value over
 * before it). Lines of that shape with different values are a conflict, never a choice.
 */
function soleLine (doc: TextDocument, scope: SearchOptions, pattern: RegExp, label: string): Hit | undefined {
  const hits = doc.findAll(pattern, scope)
  const distinct = [...new Set(hits.map((h) => h.value))]
  if (distinct.length <= 1) return hits[0]
  return conflictHit(hits[0]!, `the label "${label}" (page ${hits[0]!.page}) has its value in text whose positions are lost, and the page prints ${distinct.map((v) => `"${v}"`).join(', ')} of its shape; the value is not guessed`)
}

/**
 * Positions lost: the due date. The guide prints two dates apart from its footer's date-time,
 * the due date and the pay-until date (repeated on the stub); two readings: the date on the
 * line right after `Data de Vencimento`, and the page's one date other than the pay-until
 * date (the label's own reading first: `labelValue` pairs a column of labels with its values).
 * Either alone is taken; both must agree.
 */
function orderedDueDate (doc: TextDocument, scope: SearchOptions, pagar: Hit | undefined): Hit | undefined {
  const next = doc.labelValue(/^Data de Vencimento$/, DATE_LINE, scope) ?? doc.labelValue(/^Data de Vencimento$/, DATE_LINE, { ...scope, linesBelow: 1 })
  const otherDates = (pattern: RegExp): Hit[] => pagar === undefined || pagar.conflict !== undefined ? [] : doc.findAll(pattern, scope).filter((h) => h.value !== pagar.value)
  const soleOf = (hits: Hit[]): Hit | undefined => new Set(hits.map((h) => h.value)).size === 1 ? hits[0] : undefined
  // Dates on lines of their own first; then dates anywhere in a line (see DATE_PIECE).
  const lines = otherDates(DATE_LINE)
  const sole = lines.length > 0 ? soleOf(lines) : soleOf(otherDates(DATE_PIECE))
  if (next === undefined || sole === undefined || next.conflict !== undefined || next.value === sole.value) return next ?? sole
  return conflictHit(next, `the label "Data de Vencimento" (page ${next.page}) is followed by "${next.value}", but the page's one date other than the pay-until date is "${sole.value}"; the value is not guessed`)
}

/**
 * Reads one guide. `scope` limits it to a page (a DAS-MEI file holds one guide per page);
 * `prefix` prefixes evidence paths (`guias.3.`).
 */
export function readGuia (doc: TextDocument, ctx: ParseContext, scope: SearchOptions = {}, prefix = ''): Guia {
  const header = doc.find(/(Período de Apuração) (Data de Vencimento) (Número do Documento) (Pagar este documento até)/, scope)
  const [periodoLabel, vencimentoLabel, numeroLabel, pagarLabel] = header?.parts ?? []
  // Without the header row (text handed over column by column, each label over its value), each label's own reader.
  const periodo = inColumn(doc, periodoLabel, /(?<![\d/])((?:\d{2}|[A-Za-zÀ-ú]+)\/\d{4}|Diversos)\b/) ??
    (header === undefined ? doc.labelValue(/^Período de Apuração$/, /^\s*((?:\d{2}|[A-Za-zÀ-ú]+)\/\d{4}|Diversos)\s*$/, scope) : undefined) ??
    (header === undefined && doc.positionless ? soleLine(doc, scope, MONTH_PERIOD, 'Período de Apuração') ?? soleLine(doc, scope, MONTH_PIECE, 'Período de Apuração') : undefined)
  const numero = inColumn(doc, numeroLabel, NUMBER) ??
    (header === undefined ? doc.labelValue(/^Número do Documento$/, new RegExp(`^\\s*${NUMBER.source}\\s*$`), scope) : undefined) ??
    doc.labelValue(/Número:/, NUMBER, scope) ??
    (header === undefined && doc.positionless ? soleLine(doc, scope, new RegExp(`^\\s*${NUMBER.source}\\s*$`), 'Número do Documento') : undefined)
  const alone = (label: RegExp, value: RegExp): Hit | undefined => header === undefined ? doc.labelValue(label, value, scope) : undefined
  const valorLabel = doc.find(/(Valor Total do Documento)/, scope)
  const columns = compositionColumns(doc, scope)
  const line = doc.find(LINE48, scope)
  const read = line === undefined ? null : readCollectionLine(line.value)
  const senda = doc.find(/SENDA \(Versão: ?(\d+(?:\.\d+)+)\)/, scope)
  const emitted = doc.find(/SENDA \(Versão: ?[\d.]+\).*?(\d{2}\/\d{2}\/\d{4} \d{2}:\d{2}:\d{2})/, scope)
  // Positions lost, the rows not printed as rows: the table read column by column.
  const rowHits = compositionRows(doc, scope, columns)
  const totalCells = totalsHits(doc, scope, columns)
  if (doc.positionless) reconcile(rowHits, totalCells, scope.page ?? rowHits[0]?.codigo?.page ?? 1)
  let rows = rowHits.map((r, i) => compositionLine(ctx, `${prefix}composicao.${i}`, r.codigo, r.denominacao, r.money, r.period))
  let sums = totalCells === undefined ? null : takeTotals(ctx, prefix, totalCells)
  if (rows.length === 0 && doc.positionless) {
    const ordered = orderedComposition(doc, ctx, scope, prefix)
    if (ordered !== undefined) {
      rows = ordered.rows
      sums = sums ?? ordered.totais
    }
  }
  // The footer's date-time printed apart from `SENDA (Versão…)`: the only date-time a guide prints.
  const stamps = emitted === undefined && doc.positionless ? doc.findAll(/^(\d{2}\/\d{2}\/\d{4} \d{2}:\d{2}:\d{2})$/, scope) : []
  const stamp = emitted ?? (new Set(stamps.map((h) => h.value)).size === 1 ? stamps[0] : undefined)
  const pagar = inColumn(doc, pagarLabel, new RegExp(`(${DATE.source})`)) ?? alone(/^Pagar este documento até$/, DATE_LINE) ?? doc.labelValue(/Pagar até:/, new RegExp(`(${DATE.source})`), scope)
  const vencimento = inColumn(doc, vencimentoLabel, new RegExp(`(${DATE.source})`)) ??
    (header === undefined && doc.positionless ? orderedDueDate(doc, scope, pagar) : alone(/^Data de Vencimento$/, DATE_LINE))
  const guia: Guia = {
    competencia: ctx.take(`${prefix}competencia`, periodo, (t) => /^diversos$/i.test(t) ? 'DIVERSOS' : competence(t)),
    dataVencimento: ctx.take(`${prefix}dataVencimento`, vencimento, isoDate),
    pagarAte: ctx.take(`${prefix}pagarAte`, pagar, isoDate),
    numeroDocumento: ctx.take(`${prefix}numeroDocumento`, numero, (t) => t.replace(/\D/g, '')),
    numeroDocumentoFormatado: ctx.take(`${prefix}numeroDocumentoFormatado`, numero, (t) => t),
    valorTotal: ctx.take(`${prefix}valorTotal`, inColumn(doc, valorLabel?.parts[0], new RegExp(M), 26, 60) ?? doc.labelValue(/\bValor:/, new RegExp(M), scope), moneyNumber),
    observacoes: observacoes(doc, ctx, scope, prefix, valorLabel),
    composicao: rows,
    totais: sums,
    linhaDigitavel: ctx.take(`${prefix}linhaDigitavel`, line, (t) => read === null ? null : t.replace(/\D/g, '')),
    codigoBarras: ctx.take(`${prefix}codigoBarras`, line, () => read?.barcode ?? null),
    dataEmissao: ctx.take(`${prefix}dataEmissao`, stamp, isoDateTime),
    versaoSenda: ctx.take(`${prefix}versaoSenda`, senda, (t) => t)
  }
  stubAgrees(doc, ctx, scope, prefix, guia)
  return guia
}

/**
 * The tear-off stub repeats the number, the pay-until date and the value (§0.5). Checks see
 * only `data`, which holds the header's values, so a stub that disagrees is a warning here.
 */
function stubAgrees (doc: TextDocument, ctx: ParseContext, scope: SearchOptions, prefix: string, g: Guia): void {
  const compare = (field: 'numeroDocumento' | 'pagarAte' | 'valorTotal', hit: Hit | undefined, read: (t: string) => string | number | null): void => {
    const stub = hit === undefined ? null : read(hit.value)
    const header = g[field]
    if (stub !== null && header !== null && stub !== header) ctx.report({ code: 'GUIDE_STUB_MISMATCH', field: `${prefix}${field}`, message: `the stub prints ${field} ${stub}, the guide ${header}` })
  }
  compare('numeroDocumento', doc.find(new RegExp(`Número: ?${NUMBER.source}`), scope), (t) => t.replace(/\D/g, ''))
  compare('pagarAte', doc.find(new RegExp(`Pagar até: ?(${DATE.source})`), scope), isoDate)
  compare('valorTotal', doc.find(new RegExp(`\\bValor: ?${M}`), scope), moneyNumber)
}

/** The free text under `Observações`, left of the total, above the composition title. */
function observacoes (doc: TextDocument, ctx: ParseContext, scope: SearchOptions, prefix: string, valorLabel: Hit | undefined): string | null {
  if (doc.positionless) {
    // The label alone on its line, or last on it after a value a library glued to it (`31/08/2022Observações`).
    const ordered = doc.findAll(/(Observações)\s*$/, scope).find((h) => {
      const before = h.source.slice(0, h.source.lastIndexOf(h.value)).trim()
      return before === '' || VALUE_LINE.test(before)
    })
    if (ordered !== undefined) return orderedObservacoes(doc, ctx, prefix, ordered)
  }
  const label = doc.find(/^(Observações)\b/, scope)
  const end = doc.find(/(Composição do Documento de Arrecadação)/, scope)
  if (label === undefined || end === undefined || label.page !== end.page) return null
  const right = valorLabel?.parts[0]?.box.x ?? 1000
  const top = label.box.y - 1
  const bottom = end.box.y + end.box.height + 1
  const found = doc.inBox(label.page, { x: 0, y: bottom, width: right - 5, height: top - bottom })
  const value = text(found.replace(/\s+/g, ' '))
  if (value !== null) ctx.cite(`${prefix}observacoes`, label)
  return value
}

/** A line that is one of the guide's values (a date, an amount, a period, a number, a code, a block of the collection line): not free text. */
const VALUE_LINE = new RegExp(`^\\s*(?:${DATE.source}(?: \\d{2}:\\d{2}:\\d{2})?|${M}|(?:\\d{2}|\\p{L}+)\\/\\d{4}|${NUMBER.source}|${CNPJ_PATTERN}|\\d{4}|\\d{11}[ -]\\d)\\s*$`, 'u')
const LABELS = GUIDE_LABELS.map(normalizeText)
/** A CNPJ as a piece of a line: not the tail of longer digits a library glued to it. */
const CNPJ_PIECE = new RegExp(`(?<![\\d./-])(${CNPJ_PATTERN})(?![\\d/])`)

/** The guide's labels of two words or more, anywhere in a line (a library may glue one to the text before it: `4/60Valor Total do Documento`). */
const LABEL_IN_LINE = new RegExp(GUIDE_LABELS.filter((l) => l.includes(' ')).map((l) => l.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|'), 'i')

/**
 * Positions lost: the observations are the lines after `Observações` up to the next of the
 * guide's labels or values, a line cut where one of the guide's labels starts inside it. Values
 * right after the label are the value of a label printed before it (a library that hands a row of
 * labels over each before its neighbour's value: `Observações`, `31/08/2022`, then the text),
 * not observations. None when a label follows them.
 */
function orderedObservacoes (doc: TextDocument, ctx: ParseContext, prefix: string, label: Hit): string | null {
  const lines = doc.lines.filter((l) => l.page === label.page)
  const at = lines.findIndex((l) => l.text === label.source)
  const kept: string[] = []
  for (const l of lines.slice(at + 1)) {
    const n = normalizeText(l.text)
    if (LABELS.some((g) => n === g || n.startsWith(`${g} `))) break
    if (VALUE_LINE.test(l.text)) {
      if (kept.length === 0) continue
      break
    }
    const inside = LABEL_IN_LINE.exec(l.text)
    kept.push((inside === null ? l.text : l.text.slice(0, inside.index)).trim())
    if (inside !== null) break
  }
  const value = text(kept.join(' ').replace(/\s+/g, ' '))
  if (value !== null) ctx.cite(`${prefix}observacoes`, label)
  return value
}

// ---------------------------------------------------------------- checks shared by DAS and DAS-MEI

/** JSON money back to integer cents (exact: it came from two-decimal text). */
export const cents = numberToCents

const skip: CheckOutcome = { status: 'skip' }

/** The four block check digits and the general one of the printed line verify (§0.3). */
export function lineDigitsCheck (g: Guia): CheckOutcome {
  if (g.linhaDigitavel === null) return skip
  const read = readCollectionLine(g.linhaDigitavel)
  if (read === null) return { status: 'fail', message: 'the collection line has not 48 digits starting with 8' }
  return read.valid ? { status: 'pass' } : { status: 'fail', message: `the collection line's check digits do not verify (${read.failures.join(', ')})` }
}

/** The amount in the barcode (positions 5-15) equals `Valor Total do Documento`. */
export function barcodeAmountCheck (g: Guia): CheckOutcome {
  if (g.codigoBarras === null || g.valorTotal === null) return skip
  const amount = Number(g.codigoBarras.slice(4, 15))
  return amount === cents(g.valorTotal) ? { status: 'pass' } : { status: 'fail', message: `the barcode carries ${amount / 100}, the document total is ${g.valorTotal}` }
}

/** The 17-digit document number inside the barcode (positions 25-41) equals the printed one (§0.3, RFB 2021+). */
export function barcodeNumberCheck (g: Guia): CheckOutcome {
  if (g.codigoBarras === null || g.numeroDocumento === null) return skip
  const inside = g.codigoBarras.slice(24, 41)
  return inside === g.numeroDocumento ? { status: 'pass' } : { status: 'fail', message: `the barcode carries document number ${inside}, the guide prints ${g.numeroDocumento}` }
}

/** `YYYY-MM-DD` → `YYDDD` (two-digit year, day of the year), as the barcode carries dates. */
function yyddd (isoDate: string): string {
  const [y, m, d] = isoDate.split('-').map(Number) as [number, number, number]
  const day = (Date.UTC(y, m - 1, d) - Date.UTC(y, 0, 1)) / 86_400_000 + 1
  return `${String(y).slice(2)}${String(day).padStart(3, '0')}`
}

/** The date in the barcode (positions 20-24, YYDDD) is the guide's pay-until date or its due date (§0.3). */
export function barcodeDateCheck (g: Guia): CheckOutcome {
  const dates = [g.pagarAte, g.dataVencimento].filter((d): d is string => d !== null)
  if (g.codigoBarras === null || dates.length === 0) return skip
  const inside = g.codigoBarras.slice(19, 24)
  return dates.some((d) => yyddd(d) === inside) ? { status: 'pass' } : { status: 'fail', message: `the barcode's date ${inside} (YYDDD) is neither the pay-until date nor the due date` }
}

/** The issuer code of the barcode is the Simples Nacional's `0328`. */
export function barcodeIssuerCheck (g: Guia): CheckOutcome {
  if (g.codigoBarras === null) return skip
  const issuer = g.codigoBarras.slice(15, 19)
  return issuer === '0328' ? { status: 'pass' } : { status: 'fail', message: `the barcode's issuer is ${issuer}, not 0328 (Simples Nacional)` }
}

/** Each row's principal + multa + juros = its total, the rows add up to `Totais`, and `Totais` = the document total. */
export function compositionCheck (g: Guia): CheckOutcome {
  if (g.composicao.length === 0 || g.totais === null) return skip
  const c = (n: number | null): number => n === null ? 0 : cents(n)
  for (const [i, r] of g.composicao.entries()) {
    if (r.principal === null || r.total === null) return skip
    if (c(r.principal) + c(r.multa) + c(r.juros) !== c(r.total)) return { status: 'fail', message: `composition row ${i + 1} (${r.codigo ?? '?'}): principal + multa + juros differs from its total ${r.total}` }
  }
  for (const k of KEYS) {
    const sum = g.composicao.reduce((a, r) => a + c(r[k]), 0)
    if (g.totais[k] !== null && sum !== c(g.totais[k])) return { status: 'fail', message: `the composition's ${k} adds up to ${sum / 100}, Totais prints ${g.totais[k]}` }
  }
  if (g.totais.total !== null && g.valorTotal !== null && c(g.totais.total) !== c(g.valorTotal)) return { status: 'fail', message: `Totais ${g.totais.total} differs from the document total ${g.valorTotal}` }
  return { status: 'pass' }
}

/** Guides (not installment plans) print the header period under every composition row (§0.5). */
export function rowPeriodsCheck (g: Guia): CheckOutcome {
  if (g.competencia === null || g.competencia === 'DIVERSOS' || g.composicao.length === 0) return skip
  const bad = g.composicao.find((r) => r.periodo !== null && r.periodo !== g.competencia)
  return bad === undefined ? { status: 'pass' } : { status: 'fail', message: `composition row ${bad.codigo ?? '?'} is for ${bad.periodo}, the guide for ${g.competencia}` }
}

/** The header CNPJ and name row: `99.999.999/9999-99 NAME` under `CNPJ Razão Social`. */
export function readIdentity (doc: TextDocument, ctx: ParseContext, scope: SearchOptions = {}): { cnpj: string | null, razaoSocial: string | null } {
  const row = doc.find(new RegExp(`^(${CNPJ_PATTERN})(?: (\\S.*))?$`), scope) ?? doc.find(new RegExp(`^CNPJ: (${CNPJ_PATTERN})`), scope)
  // A CNPJ alone on its line, its name elsewhere (text handed over column by column): each label's own reader.
  const name = row?.parts[1] ?? (row === undefined || row.source.trim() === row.value ? doc.labelValue(/^Razão Social$/, /^\s*(\D\S.*)$/, scope) : undefined)
  return {
    cnpj: ctx.take('cnpj', row?.parts[0] ?? doc.labelValue(/^CNPJ$/, new RegExp(`^\\s*(${CNPJ_PATTERN})\\s*$`), scope) ??
      // Positions lost, the CNPJ a piece of a longer line (the stub's, after the collection line's blocks): the guide prints one CNPJ, twice.
      (doc.positionless ? soleLine(doc, scope, CNPJ_PIECE, 'CNPJ') : undefined), cnpjChars),
    razaoSocial: ctx.take('razaoSocial', name, text)
  }
}

/** A printed 48-digit collection line whose issuer (positions 16-19 of the code) is `0328`. */
export function hasSimplesBarcode (normalized: string): boolean {
  for (const m of normalized.matchAll(/\d{11}[ -]?\d(?: \d{11}[ -]?\d){3}/g)) {
    const digits = m[0].replace(/\D/g, '')
    const code = [0, 1, 2, 3].map((i) => digits.slice(i * 12, i * 12 + 11)).join('')
    if (code.startsWith('8') && code.slice(15, 19) === '0328') return true
  }
  return false
}
