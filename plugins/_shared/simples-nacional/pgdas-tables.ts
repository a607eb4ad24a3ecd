/**
 * The tables the PGDAS-D prints alike in its extract and its declaration (documents.md §1
 * "Layout", §2): the revenue rows of 2.1 (internal, external, total), the previous
 * revenues and payroll of 2.2 and 2.3 (`MM/AAAA valor` pairs, four per line), and the
 * 9-column tax tables (`IRPJ ... ISS Total`). A family module: pgdas-extrato and
 * pgdas-declaracao import it (docs/plugins.md, "Code a family shares"). Every value goes
 * through `ctx.take` or `ctx.cite`, so each has evidence; what is not printed is null.
 */
import { MONEY_PATTERN, competence, moneyNumber, normalizeText } from '../../../core/plugin-api.js'
import type { Hit, Label, ParseContext, TableRow, TextRegion } from '../../../core/plugin-api.js'

export interface Triple { interno: number | null, externo: number | null, total: number | null }
export interface Tributos { irpj: number | null, csll: number | null, cofins: number | null, pis: number | null, inssCpp: number | null, icms: number | null, ipi: number | null, iss: number | null, total: number | null }
export interface ReceitaAnterior { competencia: string, interno: number | null, externo: number | null }
export interface FolhaAnterior { competencia: string, valor: number | null }

/** Section 2 of the extract, as the declaration prints it too: 2.1's rows, 2.2, 2.3 and 2.4. */
export interface PgdasReceitas {
  rpa: Triple | null
  rbt12: Triple | null
  rbt12p: Triple | null
  rba: Triple | null
  rbaa: Triple | null
  limiteReceitaProporcionalizado: number | null
  receitasAnteriores: ReceitaAnterior[] | null
  folhaSalariosAnteriores: FolhaAnterior[] | null
  fatorR: number | null
}

/** The three tax tables (the extract's section 4, the declaration's 2.8). */
export interface PgdasDebitos {
  totalDebitoDeclarado: Tributos | null
  totalDebitoSuspenso: Tributos | null
  totalDebitoExigivel: Tributos | null
}

/** The keys of a tax table, in the order of its columns. */
export const TAX_KEYS = ['irpj', 'csll', 'cofins', 'pis', 'inssCpp', 'icms', 'ipi', 'iss', 'total'] as const
/** Its column headers as printed. */
export const TAX_HEADERS = ['IRPJ', 'CSLL', 'COFINS', 'PIS/Pasep', 'INSS/CPP', 'ICMS', 'IPI', 'ISS', 'Total']

const M = `(${MONEY_PATTERN})`
const MONEY_CELL = new RegExp(`^${M}$`)
const PAIR = new RegExp(`(\\d{2}\\/\\d{4})\\s+${M}`)
/** A numbered heading of the PGDAS-D prints: `2.2)`, `2.2.1)`, `3)`, `3.`. */
export const PGDAS_HEADING = /^(?:\d+(?:\.\d+)*\)|\d+\.\s)/

/** A 2.1 row's tag, `(RPA)`, `(RBT12p)`: a line that prints one is a row of its own. */
const ROW_TAG = /\(R[A-Z]+\d*p?\)/
const THREE = `\\s+${M}\\s+${M}\\s+${M}$`

/**
 * A row of three money columns (interno, externo, total) whose label ends with `label` (the
 * tag, `\(RBT12\)`); null when the row or its values are absent. The label takes two lines
 * and prints differ in which one holds the values: the tag line (`(RBT12) 1.000,00 0,00
 * 1.000,00`), or the label's first line right above a bare tag line (the RFB's declaration:
 * `Receita bruta acumulada nos doze meses anteriores 12.000,00 0,00 12.000,00` over `ao PA
 * (RBT12)`), so the values are looked for beside the tag first, then on the line above it.
 */
export function readTriple (doc: TextRegion, ctx: ParseContext, field: string, label: string, wording?: string): Triple | null {
  // The whole label (its wording and its tag), wherever it wraps and whichever of its lines holds the values.
  const whole = wording === undefined ? undefined : doc.labelValue(new RegExp(`${wording.replace(/ /g, '\\s+')}\\s+${label}`, 'i'), new RegExp(`^\\s*${M}\\s+${M}\\s+${M}\\s*$`))
  const hit = whole ?? doc.find(new RegExp(`^${label}${THREE}`)) ?? besideFirstLine(doc, label) ?? (wording === undefined ? undefined : underLabel(doc, label, wording))
  const parts = hit?.parts ?? (doc.positionless ? valuesAfterTag(doc, label) : undefined)
  if (parts === undefined) return null
  return {
    interno: ctx.take(`${field}.interno`, parts[0], moneyNumber),
    externo: ctx.take(`${field}.externo`, parts[1], moneyNumber),
    total: ctx.take(`${field}.total`, parts[2], moneyNumber)
  }
}

/** An amount alone on its line. */
const LONE = new RegExp(`^\\s*${M}\\s*$`)
const cents = (hit: Hit | undefined): number => Math.round((moneyNumber(hit?.value ?? '') ?? Number.NaN) * 100)

/**
 * Positions lost (pdftotext's order): the row's label, its tag ending a line, then its three
 * cells one a line. Taken only when internal plus external is the total to the cent: a blank
 * row (RBT12p) followed by another row's amounts, or by the limit's two, fails it.
 */
function valuesAfterTag (doc: TextRegion, label: string): Array<Hit | undefined> | undefined {
  const re = new RegExp(`${label}$`)
  const at = doc.lines.findIndex((l) => re.test(l.text))
  const cells = at < 0 ? [] : doc.lines.slice(at + 1, at + 4).map((l) => doc.find(LONE, { page: l.page, within: l.box }))
  if (cells.length !== 3 || cells.some((c) => c === undefined)) return undefined
  return cents(cells[0]) + cents(cells[1]) === cents(cells[2]) ? cells : undefined
}

/**
 * The values on the line right above a bare tag line (a label without digits before them):
 * the line that precedes the tag in reading order, close above it, and no row of its own (a
 * line with a tag of its own, `(RPA)`, is the row above: where the wrapped label is joined
 * into one line, or lines are drawn close together, a blank row such as RBT12p would
 * otherwise take that row's values).
 */
function besideFirstLine (doc: TextRegion, label: string): Hit | undefined {
  const re = new RegExp(`${label}$`)
  const at = doc.lines.findIndex((l) => re.test(l.text))
  const tag = doc.lines[at]
  const prev = doc.lines[at - 1]
  if (tag === undefined || prev === undefined || prev.page !== tag.page) return undefined
  // Its centre within two tag heights over the tag: the line above, not a row further up.
  const centre = prev.box.y + prev.box.height / 2 - (tag.box.y + tag.box.height)
  if (centre < 0 || centre > 2 * tag.box.height || ROW_TAG.test(prev.text)) return undefined
  return doc.find(new RegExp(`^\\D+?${THREE}`), { page: prev.page, within: prev.box })
}

/**
 * The values on a line of their own under the label: under its wording (the tag, if printed,
 * on that line or below the values), or under a bare tag line ending the wrapped label. The
 * wording must end its line or be followed by the tag (`ao PA` is also the start of the
 * RBT12p's label, `ao PA proporcionalizada`).
 */
function underLabel (doc: TextRegion, label: string, wording: string): Hit | undefined {
  const alone = new RegExp(`^\\s*${M}\\s+${M}\\s+${M}\\s*$`)
  return doc.labelValue(new RegExp(`${wording.replace(/ /g, '\\s+')}(?:\\s+${label})?(?!\\s*\\p{L})`, 'iu'), alone) ??
    doc.labelValue(new RegExp(`^${label}$`), alone, { linesBelow: 1 })
}

/**
 * A 9-column tax table under its title: the first row of money under the header
 * `IRPJ ... Total`, each value from the column it sits under (an empty cell is null, not
 * a shifted neighbour). Null when the title or the header row is not printed.
 */
export function readTributos (doc: TextRegion, ctx: ParseContext, field: string, title: Label): Tributos | null {
  const row = taxRow(doc, title)
  if (row === undefined) return null
  return Object.fromEntries(TAX_KEYS.map((k, i) => [k, ctx.take(`${field}.${k}`, row.cells[i], moneyNumber)])) as unknown as Tributos
}

/** The first row of money under the header `IRPJ ... Total`, in the section `title` opens. */
function taxRow (doc: TextRegion, title: Label): Pick<TableRow, 'cells'> | undefined {
  const section = doc.section(title)
  if (section.isEmpty) return undefined
  return section.table(TAX_HEADERS, { cell: MONEY_CELL, maxRows: 1 })?.[0] ?? rowByOrder(section)
}

const HEADER_LINE = normalizeText(TAX_HEADERS.join(' '))
const HEADERS_NORMALIZED = TAX_HEADERS.map((h) => normalizeText(h))
/** A line of amounts only, and each amount on it. */
const AMOUNTS = new RegExp(`^(?:\\s*${MONEY_PATTERN})+\\s*$`)
const AMOUNT = new RegExp(`(?:^|\\s)${M}(?=\\s|$)`)

/**
 * The headers as one piece of text, or one a line (a library's text keeps a row as a line, or
 * hands the row over cell after cell), right under the title, then nine amounts on the lines right after them, one
 * line or one a line: the cells in the headers' order. Nine amounts for nine headers leave
 * no cell blank, and the eight taxes must add up to the total to the cent, or the order is
 * not trusted (undefined).
 */
function rowByOrder (section: TextRegion): Pick<TableRow, 'cells'> | undefined {
  const lines = section.lines
  const one = lines.findIndex((l) => normalizeText(l.text) === HEADER_LINE)
  const each = one >= 0 ? -1 : lines.findIndex((_, i) => HEADERS_NORMALIZED.every((h, k) => lines[i + k] !== undefined && normalizeText(lines[i + k]!.text) === h))
  // Right under the title (a line may come between): further down are another table's headers.
  const start = one >= 0 ? one : each
  if (start < 0 || start > 2) return undefined
  const from = one >= 0 ? one + 1 : each + TAX_HEADERS.length
  const cells: Hit[] = []
  for (let i = from; i < lines.length && cells.length < TAX_HEADERS.length && AMOUNTS.test(lines[i]!.text); i++) {
    cells.push(...section.findAll(AMOUNT, { page: lines[i]!.page, within: lines[i]!.box }))
  }
  if (cells.length !== TAX_HEADERS.length) return undefined
  return cells.slice(0, -1).reduce((a, c) => a + cents(c), 0) === cents(cells[cells.length - 1]) ? { cells } : undefined
}

/** The `MM/AAAA valor` pairs under a heading, down to the next numbered heading; null when the heading is not printed. */
function pairsUnder (doc: TextRegion, heading: RegExp): Array<[Hit, Hit]> | null | undefined {
  const section = doc.section(heading, PGDAS_HEADING)
  if (section.isEmpty) return null
  const byLine = (): Array<[Hit, Hit]> => section.findAll(PAIR).map((h): [Hit, Hit] => [h.parts[0]!, h.parts[1]!])
  if (!doc.positionless) return byLine()
  // Positions lost: months that do not follow one another are a block read in part (its other
  // lines elsewhere, column by column): undefined, the list is not given.
  const pairs = pairsByOrder(section) ?? byLine()
  return consecutive(pairs) ? pairs : undefined
}

const PERIOD = String.raw`\d{2}\/\d{4}`
const PAIR_TOKEN = new RegExp(`(?:^|\\s)(${PERIOD}|${MONEY_PATTERN})(?=\\s|$)`)
const PAIR_TOKENS = new RegExp(`^(?:\\s*(?:${PERIOD}|${MONEY_PATTERN}))+\\s*$`)

/**
 * Positions lost: the pairs handed over a piece a line or split across lines (pdftotext's
 * `10.000,00 02/2017`): every period and amount of the section's lines of such pieces only,
 * in order, taken as pairs only when they alternate period, amount and the periods are
 * consecutive months (the 2.2 and 2.3 blocks list months in order); else undefined.
 */
function pairsByOrder (section: TextRegion): Array<[Hit, Hit]> | undefined {
  const tokens = section.lines.filter((l) => PAIR_TOKENS.test(l.text)).flatMap((l) => section.findAll(PAIR_TOKEN, { page: l.page, within: l.box }))
  if (tokens.length === 0 || tokens.length % 2 !== 0) return undefined
  const pairs: Array<[Hit, Hit]> = []
  for (let i = 0; i < tokens.length; i += 2) {
    const [period, amount] = [tokens[i]!, tokens[i + 1]!]
    if (!/^\d{2}\/\d{4}$/.test(period.value) || /\//.test(amount.value)) return undefined
    pairs.push([period, amount])
  }
  return consecutive(pairs) ? pairs : undefined
}

/** True when the pairs' months follow one another. */
function consecutive (pairs: Array<[Hit, Hit]>): boolean {
  const month = ([p]: [Hit, Hit]): number => Number(p.value.slice(3)) * 12 + Number(p.value.slice(0, 2))
  return pairs.every((p, i) => i === 0 || month(p) === month(pairs[i - 1]!) + 1)
}

/**
 * 2.2) Receitas Brutas Anteriores: 2.2.1 (internal market) and 2.2.2 (external market),
 * merged by period in period order; null when neither block is printed. A side its
 * block does not print is null.
 */
export function readReceitasAnteriores (doc: TextRegion, ctx: ParseContext, field = 'receitasAnteriores'): ReceitaAnterior[] | null {
  const sides = [['interno', pairsUnder(doc, /^2\.2\.1\) Mercado Interno/)], ['externo', pairsUnder(doc, /^2\.2\.2\) Mercado Externo/)]] as const
  if (sides.every(([, hits]) => hits === null) || sides.some(([, hits]) => hits === undefined)) return null
  const byPeriod = new Map<string, { entry: ReceitaAnterior, cites: Array<[string, Hit]> }>()
  for (const [side, hits] of sides) {
    for (const [periodHit, valueHit] of hits ?? []) {
      const period = competence(periodHit.value)
      const value = moneyNumber(valueHit.value)
      if (period === null) continue
      const slot = byPeriod.get(period) ?? { entry: { competencia: period, interno: null, externo: null }, cites: [['competencia', periodHit]] }
      byPeriod.set(period, slot)
      slot.entry[side] = value
      if (value !== null) slot.cites.push([side, valueHit])
    }
  }
  const list = [...byPeriod.values()].sort((a, b) => a.entry.competencia.localeCompare(b.entry.competencia))
  // Evidence under each entry's final index.
  list.forEach(({ cites }, i) => { for (const [key, hit] of cites) ctx.cite(`${field}.${i}.${key}`, hit) })
  return list.map(({ entry }) => entry)
}

/** 2.3) Folha de Salários Anteriores: its pairs in period order; [] for `Nenhuma`; null without the heading. */
export function readFolha (doc: TextRegion, ctx: ParseContext, field = 'folhaSalariosAnteriores'): FolhaAnterior[] | null {
  const hits = pairsUnder(doc, /^2\.3\) Folha de Salários Anteriores/)
  if (hits === null || hits === undefined) return null
  const list = hits
    .map(([period, value]) => ({ period, value, competencia: competence(period.value) }))
    .filter((e): e is { period: Hit, value: Hit, competencia: string } => e.competencia !== null)
    .sort((a, b) => a.competencia.localeCompare(b.competencia))
  return list.map(({ period, value, competencia }, i) => {
    ctx.cite(`${field}.${i}.competencia`, period)
    return { competencia, valor: ctx.take(`${field}.${i}.valor`, value, moneyNumber) }
  })
}

/** Every field of `PgdasReceitas`, each null when not printed. */
export function readReceitas (doc: TextRegion, ctx: ParseContext): PgdasReceitas {
  return {
    rpa: readTriple(doc, ctx, 'rpa', String.raw`Receita Bruta do PA \(RPA\) - (?:Competência|Caixa)`),
    rbt12: readTriple(doc, ctx, 'rbt12', String.raw`\(RBT12\)`, 'Receita bruta acumulada nos doze meses anteriores ao PA'),
    rbt12p: readTriple(doc, ctx, 'rbt12p', String.raw`\(RBT12p\)`),
    rba: readTriple(doc, ctx, 'rba', String.raw`\(RBA\)`, 'Receita bruta acumulada no ano-calend[aá]rio corrente'),
    rbaa: readTriple(doc, ctx, 'rbaa', String.raw`\(RBAA\)`, 'Receita bruta acumulada no ano-calend[aá]rio anterior'),
    limiteReceitaProporcionalizado: ctx.take('limiteReceitaProporcionalizado', doc.labelValue(/^Limite de receita bruta proporcionalizado/, new RegExp(M)), moneyNumber),
    receitasAnteriores: readReceitasAnteriores(doc, ctx),
    folhaSalariosAnteriores: readFolha(doc, ctx),
    fatorR: readFatorR(doc, ctx)
  }
}

/** The company's totals' heading: the declaration's 2.8, the extract's 4. */
const TOTAL_GERAL = /^(?:2\.8|4)\)\s*Total Geral da Empresa/
const DEBITO_TITLES = [/^Total do Débito Declarado/, /^Total do Débito com Exigibilidade Suspensa/, /^Total do Débito Exigível \(R\$\)/] as const

/**
 * The three tax tables, each found by its title. Where the positions are lost (text handed
 * over column by column), by order (`tablesByOrder`); `others` are the titles of the other
 * tax tables the document prints with the same headers (the extract's activities).
 */
export function readDebitos (whole: TextRegion, ctx: ParseContext, others: RegExp[] = []): PgdasDebitos {
  // The company's tables (2.8, the extract's 4): the real declaration prints each establishment's
  // totals under the same titles before them (2.7), one establishment's debt, not the company's.
  // With one establishment printed they are the company's: a table 2.8 does not give is read there.
  const total = whole.section(TOTAL_GERAL)
  const company = debitoCells(total.isEmpty ? whole : total, others)
  const single = !total.isEmpty && whole.findAll(/^CNPJ Estabelecimento:/).length <= 1
  let anywhere: Array<Cells | undefined> | undefined
  const read = (field: string, i: number): Tributos | null => {
    if (company[i] === undefined && single) anywhere ??= debitoCells(whole, others)
    const cells = company[i] ?? anywhere?.[i]
    return cells === undefined ? null : Object.fromEntries(TAX_KEYS.map((k, c) => [k, ctx.take(`${field}.${k}`, cells[c], moneyNumber)])) as unknown as Tributos
  }
  return {
    totalDebitoDeclarado: read('totalDebitoDeclarado', 0),
    totalDebitoSuspenso: read('totalDebitoSuspenso', 1),
    totalDebitoExigivel: read('totalDebitoExigivel', 2)
  }
}

type Cells = Array<Hit | undefined>

/**
 * The three tables' cells, each found by its title; where the positions are lost (text handed
 * over column by column), a table not found so is read by order (`tablesByOrder`); `others`
 * are the titles of the other tax tables the document prints with the same headers (the
 * extract's activities).
 */
function debitoCells (doc: TextRegion, others: RegExp[]): Array<Cells | undefined> {
  const rows = DEBITO_TITLES.map((title) => taxRow(doc, title)?.cells)
  if (!doc.positionless || rows.every((r) => r !== undefined)) return rows
  const ordered = tablesByOrder(doc, [...DEBITO_TITLES], others)
  return rows.map((r, i) => r ?? ordered(i))
}

/**
 * One-row tax tables handed over column by column (positions lost): each column's header on
 * a line, its one cell on the next, the tables' columns in the order the tables are printed.
 * The k-th table (its title's rank among every tax table's title printed) takes the k-th
 * one-cell occurrence of each header, and only when every header has exactly as many such
 * occurrences as there are titles: else some table is not accounted for and the order pairs
 * nothing (undefined). A header followed by several cells is another table's column (2.1's `Total`).
 */
function tablesByOrder (doc: TextRegion, titles: RegExp[], others: RegExp[]): (table: number) => Cells | undefined {
  const lines = doc.lines
  const isCell = (i: number): boolean => lines[i] !== undefined && MONEY_CELL.test(lines[i]!.text.trim())
  const ranks: Array<{ at: number, table: number }> = []
  lines.forEach((line, at) => {
    const t = titles.findIndex((re) => re.test(line.text))
    if (t >= 0 && !ranks.some((r) => r.table === t)) ranks.push({ at, table: t })
    else if (t < 0 && others.some((re) => re.test(line.text))) ranks.push({ at, table: -1 })
  })
  const headers = TAX_HEADERS.map((h) => normalizeText(h))
  const cells = headers.map((h) => lines.flatMap((line, at) => normalizeText(line.text) === h && isCell(at + 1) && !isCell(at + 2) ? [lines[at + 1]!] : []))
  // Every header printed once per table, or the order says nothing: a table the titles do not name would shift the others.
  const understood = cells.every((c) => c.length === ranks.length)
  return (table) => {
    const k = ranks.findIndex((r) => r.table === table)
    if (k < 0 || !understood) return undefined
    return TAX_KEYS.map((_, i) => {
      const line = cells[i]![k]
      return line === undefined ? undefined : doc.find(LONE, { page: line.page, within: line.box })
    })
  }
}

/** `Fator r = 0,28` → 0.28; `Não se aplica` or not printed → null. */
export function readFatorR (doc: TextRegion, ctx: ParseContext): number | null {
  const hit = doc.labelValue(/^Fator r =/, /^\s*(Não se aplica|\d+,\d+)/)
  return hit === undefined || /não/i.test(hit.value) ? null : ctx.take('fatorR', hit, (t) => Number(t.replace(',', '.')))
}
