/**
 * Parser of the accounting-software "Relatório do Simples" (documents.md §3 "Fields").
 * Printed values are read through the text API (each with evidence); the burden and the
 * per-annex consolidation are derived from them in integer cents and are null whenever an
 * input is missing. Labels are matched with `.` for accented letters, because some
 * installations print `Emiss?o`.
 */
import { CNPJ_PATTERN, MONEY_PATTERN, cnpjChars, competence, conflictHit, isoDate, moneyCents, moneyNumber, centsToMoney, percentNumber, textValue } from '../../core/plugin-api.js'
import type { Hit, OrderedField, ParseContext, TextDocument, TextLine, TextRegion } from '../../core/plugin-api.js'

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

/**
 * The header's row of labels (`CPF Responsável: Código de Acesso: Período:`, some versions
 * `Início das atividades:`), each value of its own shape, for `orderedValues` when positions
 * are lost and each label and value is a line of its own.
 */
function headerFields (periodLabel: RegExp): OrderedField[] {
  return [
    { name: 'cpf', label: re(`^${label('CPF Responsável:')}`), value: /^\s*(\d{3}\.\d{3}\.\d{3}-\d{2})\s*$/ },
    { name: 'codigo', label: re(`^${label('Código de Acesso:')}`), value: /^\s*((?=[A-Za-z]*\d)[0-9A-Za-z]{4,20})\s*$/ },
    { name: 'periodo', label: re(`^${periodLabel.source}`), value: /^\s*(\d{2}\/\d{4}|\d{2}\/\d{2}\/\d{4}\s*(?:a|até|-)\s*\d{2}\/\d{2}\/\d{4}|[A-Za-zÀ-ú]+\s*\/\s*\d{4})\s*$/ },
    { name: 'inicio', label: re(`^${label('Início das atividades:')}`), value: /^\s*(\d{2}\/\d{2}\/\d{4})\s*$/ }
  ]
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

/** A line that is one money value and nothing else. */
const MONEY_LINE = new RegExp(`^\\s*${M}\\s*$`)
/** A line that is only `text` (a label printed as a piece of its own, accents possibly lost). */
const onlyLabel = (text: string): RegExp => re(`^\\s*${label(text)}\\s*$`)
/** The hit of a whole line's value (its evidence), found on that line. */
const lineHit = (region: TextRegion, line: TextLine, value: RegExp): Hit | undefined => region.find(value, { page: line.page, within: line.box })

/**
 * The partilha's rows under the tax names, in printed order, and each cell's shape. Positions
 * lost, the table comes column by column or in slabs of columns (below); a row is expected
 * only when its label is printed in the block (`Alíquota:` twice: the block's rate shares it).
 */
const PARTILHA_ROWS: ReadonlyArray<{ label: string, head: RegExp, cell: RegExp, times: number }> = [
  { label: 'Situação:', head: onlyLabel('Situação:'), cell: /^\s*(\p{L}[\p{L} ]*?)\s*$/u, times: 1 },
  { label: 'Base de Cálculo:', head: onlyLabel('Base de Cálculo:'), cell: MONEY_LINE, times: 1 },
  { label: 'Alíquota:', head: onlyLabel('Alíquota:'), cell: /^\s*(\d+,\d+)\s*%?\s*$/, times: 2 },
  { label: 'Valor:', head: onlyLabel('Valor:'), cell: MONEY_LINE, times: 1 }
]
const TAX_LINE = new RegExp(`^\\s*(${TAX_NAME})\\s*$`, 'i')

/** The partilha read by order: each tax's value, and the lines its columns took. */
interface OrderedPartilha { values: Array<{ key: Tributo, line: TextLine }>, taken: Set<TextLine> }

/**
 * The partilha of a block whose positions are lost. Another library hands the table over as
 * slabs of columns: k tax names one a line, then each row's k cells in turn (each row's label
 * possibly before them); k = 1 is a table handed over column by column (pdfminer: the name,
 * its situation, base, rate and value), a slab as wide as the table is the table row by row
 * under its labels (pdftotext puts the slabs of one table apart). Every slab must be whole;
 * a tax named twice, or values whose sum is not the block's total to the cent, give nothing
 * (and a warning): which value is whose is not known. Undefined when no slab is printed.
 */
function orderedPartilha (region: TextRegion, ctx: ParseContext, field: string, total: number | null): OrderedPartilha | undefined {
  const lines = region.lines
  const rows = PARTILHA_ROWS.filter((r) => lines.filter((l) => r.head.test(l.text)).length >= r.times)
  if (rows[rows.length - 1]?.label !== 'Valor:') return undefined
  const names = onlyLabel('Partilha:')
  const values: OrderedPartilha['values'] = []
  const taken = new Set<TextLine>()
  for (let i = 0; i < lines.length;) {
    let j = names.test(lines[i]!.text) ? i + 1 : i
    const slab: TextLine[] = []
    while (j < lines.length && TAX_LINE.test(lines[j]!.text)) slab.push(lines[j++]!)
    const k = slab.length
    let cells: TextLine[] = []
    for (const row of rows) {
      if (k === 0) break
      if (j < lines.length && row.head.test(lines[j]!.text)) j++
      const run = lines.slice(j, j + k)
      if (run.length < k || run.some((l) => !row.cell.test(l.text) || TAX_LINE.test(l.text))) { cells = []; break }
      cells = run
      j += k
    }
    if (k === 0 || cells.length === 0) { i++; continue }
    slab.forEach((name, c) => {
      const key = TAX_NAMES.find(([p]) => p.test(name.text.trim()))?.[1]
      if (key !== undefined) values.push({ key, line: cells[c]! })
    })
    for (let t = i; t < j; t++) taken.add(lines[t]!)
    i = j
  }
  if (values.length === 0) return undefined
  const keys = values.map((v) => v.key)
  const sum = values.reduce((a, v) => a + (moneyCents(MONEY_LINE.exec(v.line.text)?.[1] ?? '') ?? NaN), 0)
  if (new Set(keys).size !== keys.length || (total !== null && sum !== total)) {
    ctx.report({ code: 'PARTILHA_UNREADABLE', message: `the partilha was handed over column by column (positions lost) and ${new Set(keys).size !== keys.length ? 'names a tax twice' : 'its values do not add up to the block\'s total'}; no value is guessed`, field })
    return { values: [], taken }
  }
  return { values, taken }
}

/** The value on the line after the `labelText` line, the lines of `taken` left out (positions lost: another column's pieces between). */
function afterTaken (region: TextRegion, labelText: string, taken: ReadonlySet<TextLine>): Hit | undefined {
  const lines = region.lines
  const head = onlyLabel(labelText)
  const at = lines.findIndex((l) => head.test(l.text))
  if (at < 0) return undefined
  let next = at + 1
  while (next < lines.length && taken.has(lines[next]!)) next++
  const line = lines[next]
  return line === undefined || !MONEY_LINE.test(line.text) ? undefined : lineHit(region, line, MONEY_LINE)
}

/**
 * The receipts table when positions are lost: its money cells (from its title on; a value
 * right after a `label:` line is that label's) handed over column by column (Mercado
 * Interno, Mercado Externo, Total), row by row, or in slabs of rows each column by column,
 * up to the first block's `Receita Tributada Total:`; there must be 3 × rows of them.
 * Every way of cutting them into such slabs where each row's total is its
 * two markets' sum to the cent is tried; a row gets its total only when every such cut gives
 * the same. `rows`: the row labels, in printed order.
 */
/** The receipts table's rows that print amounts, in printed order (`Total de Receitas Brutas` prints none). */
const RECEIPT_ROWS = ['Regime de Competência', 'Regime de Caixa', '(RBT12)', 'corrente (RBA)', 'anterior (RBA)']

function orderedReceipts (doc: TextDocument, rows: readonly string[]): Array<Hit | undefined> {
  const lines = doc.lines
  const title = re(label('Receita Bruta do período de Apuração (RPA)'))
  const start = lines.findIndex((l) => title.test(l.text))
  if (start < 0) return []
  const printed = rows.map((r) => re(label(r))).filter((r) => lines.some((l) => r.test(l.text)))
  if (printed.length !== rows.length) return []
  // The table's cells end where the first block's amounts begin: a count other than three per
  // row (a row such as `Total de Receitas Brutas` printing amounts) is not cut at all.
  const cells: TextLine[] = []
  const blockStart = re(`^\\s*${label('Receita Tributada Total:')}`)
  for (let i = start + 1; i < lines.length && !blockStart.test(lines[i]!.text); i++) {
    if (MONEY_LINE.test(lines[i]!.text) && !/:\s*$/.test(lines[i - 1]!.text)) cells.push(lines[i]!)
  }
  const n = rows.length
  if (cells.length !== 3 * n) return []
  const cents = cells.map((l) => moneyCents(MONEY_LINE.exec(l.text)![1]!)!)
  const totals: Array<Set<number>> = rows.map(() => new Set())
  // at: the next cell; row: the next row; picked: the total cell of each row so far.
  const cut = (at: number, row: number, picked: number[]): void => {
    if (row === n) { picked.forEach((cell, r) => totals[r]!.add(cell)); return }
    for (let k = 1; row + k <= n; k++) {
      let adds = true
      for (let r = 0; r < k && adds; r++) adds = cents[at + r]! + cents[at + k + r]! === cents[at + 2 * k + r]!
      if (adds) cut(at + 3 * k, row + k, [...picked, ...Array.from({ length: k }, (_, r) => at + 2 * k + r)])
    }
  }
  cut(0, 0, [])
  return totals.map((t, r) => {
    const values = [...new Set([...t].map((c) => cells[c]!.text.trim()))]
    const hit = t.size === 0 ? undefined : lineHit(doc, cells[[...t][0]!]!, MONEY_LINE)
    if (hit === undefined || values.length === 1) return hit
    return conflictHit(hit, `the receipts table was handed over without positions, and the row "${rows[r]!}" totals ${values.map((v) => `"${v}"`).join(' or ')} depending on how its cells are cut; the value is not guessed`)
  })
}

const ANEXO_VALUE = /^\s*(Anexo\s+[IVX]+\b.*)$/i
const TEXT = /^\s*(\S.*)$/
/** A whole line that can only be a block's annex (`Anexo III - Prestação de Serviços`) or table (`Tabela 1 - Sem retenção de ISS`). */
const ANEXO_LINE = /^\s*(Anexo\s+[IVX]+\s+-\s+\S.*?)\s*$/
const TABELA_LINE = /^\s*(Tabela\s+\d+\s+-\s+\S.*?)\s*$/
/** The k-th value of each block heading's label, printed once per block (undefined: not as many values as blocks). */
interface BlockHeads { anexo: Hit[] | undefined, secao: Hit[] | undefined, tabela: Hit[] | undefined }

/**
 * The blocks' `Anexo:`, `Seção:` and `Tabela:` values read on the whole document, the k-th for
 * the k-th block when each label gives as many values as there are blocks: a column of labels
 * printed before its column of values (serialized) may start above a block's `Anexo:` line,
 * outside its region.
 */
function blockHeads (doc: TextDocument, blocks: number): BlockHeads {
  const each = (labelText: string, value: RegExp, shape?: RegExp): Hit[] | undefined => {
    const hits = doc.labelValues(re(`^${label(labelText)}`), value)
    if (hits.length === blocks) return hits
    // Positions lost, a value of a shape only it has, handed over apart from its label: the
    // k-th line of that shape is block k's when there are as many such lines as blocks.
    const alone = shape === undefined || !doc.positionless ? [] : doc.findAll(shape)
    return blocks > 0 && alone.length === blocks ? alone : undefined
  }
  return { anexo: each('Anexo:', ANEXO_VALUE, ANEXO_LINE), secao: each('Seção:', TEXT), tabela: each('Tabela:', TEXT, TABELA_LINE) }
}

/**
 * One apuração: its block runs from its `Anexo:` label to the next one (TextRegion.sections).
 * Every value is read by TextRegion.labelValue (after its label, under it, in a row of values,
 * in a serialized column); the first `Alíquota:` of the block is the block's rate (the
 * partilha's `Alíquota:` row comes after it).
 */
function block (region: TextRegion, ctx: ParseContext, ordem: number, heads: BlockHeads): { apuracao: Apuracao, taken: ReadonlySet<TextLine> } {
  const f = `apuracoes.${ordem - 1}`
  const anexoHit = heads.anexo?.[ordem - 1] ?? region.labelValue(re(`^${label('Anexo:')}`), ANEXO_VALUE)
  const roman = anexoHit === undefined ? null : /^Anexo\s+([IVX]+)\b/i.exec(anexoHit.value.trim())
  const text = (field: 'secao' | 'tabela', labelText: string): string | null => ctx.take(`${f}.${field}`, heads[field]?.[ordem - 1] ?? region.labelValue(re(`^${label(labelText)}`), TEXT), (t) => t.trim())
  const tabela = text('tabela', 'Tabela:')
  const amount = (labelText: string): Hit | undefined => region.labelValue(re(label(labelText)), re(`^\\s*${M}`))
  const names = region.labelValue(re(`^${label('Partilha:')}`), NAMES_ROW, { linesBelow: 1 })
  const values = region.labelValue(re(`^${label('Valor:')}`), AMOUNTS_ROW, { linesBelow: 1 })
  let total = amount('Simples Nacional Total:')
  let partilha: Partilha | null = null
  let taken: ReadonlySet<TextLine> = new Set()
  // Positions lost, no row of names nor of values: the table handed over by columns.
  if ((names === undefined || values === undefined) && region.positionless) {
    const totalCents = total === undefined || total.conflict !== undefined ? null : moneyCents(total.value)
    const ordered = orderedPartilha(region, ctx, `${f}.partilha`, total === undefined ? null : totalCents)
    if (ordered !== undefined) taken = ordered.taken
    // The block's total printed after its label with a slab of the table between them: the next line once the slabs are left out, taken only when the values add up to it.
    if (total === undefined && ordered !== undefined && ordered.values.length > 0) {
      total = afterTaken(region, 'Simples Nacional Total:', ordered.taken)
      const sum = ordered.values.reduce((a, v) => a + (moneyCents(MONEY_LINE.exec(v.line.text)?.[1] ?? '') ?? NaN), 0)
      if (total !== undefined && moneyCents(total.value) !== sum) total = undefined
    }
    if (ordered !== undefined && ordered.values.length > 0) {
      partilha = emptyPartilha()
      for (const v of ordered.values) partilha[v.key] = ctx.take(`${f}.partilha.${v.key}`, lineHit(region, v.line, MONEY_LINE), moneyNumber)
    }
  }
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
  const apuracao: Apuracao = {
    ordem,
    anexo: roman === null ? null : ctx.take(`${f}.anexo`, anexoHit, () => roman[1]!.toUpperCase()),
    descricaoAnexo: ctx.take(`${f}.descricaoAnexo`, anexoHit, (t) => /^Anexo\s+[IVX]+\s*-\s*(\S.*)$/i.exec(t.trim())?.[1] ?? null),
    secao: text('secao', 'Seção:'),
    tabela,
    tratamentoTributario: tabela === null ? null : (/^Tabela\s+\d+\s*-\s*(\S.*)$/i.exec(tabela)?.[1] ?? null),
    receitaTributada: ctx.take(`${f}.receitaTributada`, amount('Receita Tributada Total:'), moneyNumber),
    aliquotaEfetiva: ctx.take(`${f}.aliquotaEfetiva`, region.labelValue(re(label('Alíquota:')), /^\s*(\d+(?:,\d+)?)\s*%?(?!\S)/), percentNumber),
    valorSimples: ctx.take(`${f}.valorSimples`, total, moneyNumber),
    partilha
  }
  return { apuracao, taken }
}

/** A piece of the page's header or number, repeated on every page. */
const PAGE_HEADER = re(`^\\s*(?:${['Empresa:', 'Emissão:', 'Página:', 'CNPJ:', 'Período:'].map(label).join('|')})`)

/** The footer's labels (and the last block's total, which may be handed over with them), each a money value. */
const FOOTER: ReadonlyArray<[string, string]> = [
  ['total', 'Simples Nacional Total:'], ['outrosAcrescimos', 'Outros Acréscimos:'], ['outrasDeducoes', 'Outras Deduções:'], ['valorDiferido', 'Valor Diferido:'],
  ['valorFixoIcms', 'Valor Fixo ICMS:'], ['valorFixoIss', 'Valor Fixo ISS:'], ['recolher', 'Simples Nacional a recolher:']
]

/**
 * Positions lost: the footer's labels in a block and their amounts after it (another
 * library's order, pieces of the last block's partilha between them, `taken`), paired by
 * order (TextRegion.orderedValues). Taken only when the report's sum holds to the cent with
 * them: the blocks' totals + acréscimos − deduções − diferido + fixed ICMS and ISS = the total
 * to recolher (each value printed, the plain readings `plain` first); else nothing, and a
 * warning. The last block's total must also be its partilha's sum when that was read.
 */
function orderedFooter (doc: TextDocument, last: TextRegion, taken: ReadonlySet<TextLine>, apuracoes: readonly Apuracao[], plain: Record<string, Hit | undefined>, ctx: ParseContext): Record<string, Hit | undefined> {
  const fields = FOOTER.map(([name, text]) => ({ name, label: re(`^${label(text)}`), value: MONEY_LINE }))
  // The page's header and number (`Página: 0002`) may stand between the labels and their amounts.
  const record = last.orderedValues(fields, { ignore: (l) => taken.has(l) || PAGE_HEADER.test(l.text) })?.[0]
  if (record === undefined) return {}
  const cents = (h: Hit | undefined): number | null => h === undefined || h.conflict !== undefined ? null : moneyCents(h.value)
  const values = new Map<string, number | null>(fields.map((f) => [f.name, doc.lines.some((l) => f.label.test(l.text)) ? cents(plain[f.name] ?? record[f.name]) : 0]))
  const lastBlock = apuracoes[apuracoes.length - 1]!
  const lastTotal = lastBlock.valorSimples === null ? values.get('total')! : toCents(lastBlock.valorSimples)
  const blocks = apuracoes.slice(0, -1).map((a) => toCents(a.valorSimples))
  const v = (name: string): number | null => values.get(name) ?? null
  const parts = [...blocks, lastTotal, v('outrosAcrescimos'), v('outrasDeducoes'), v('valorDiferido'), v('valorFixoIcms'), v('valorFixoIss'), v('recolher')]
  if (parts.some((c) => c === null)) return {}
  const [acr, ded, dif, icms, iss, recolher] = parts.slice(-6) as number[]
  const sum = [...blocks, lastTotal].reduce<number>((a, c) => a + c!, 0) + acr! - ded! - dif! + icms! + iss!
  const partilhaSum = lastBlock.partilha === null ? null : Object.values(lastBlock.partilha).reduce<number>((a, c) => a + (toCents(c) ?? 0), 0)
  if (sum !== recolher || (partilhaSum !== null && lastBlock.valorSimples === null && partilhaSum !== lastTotal)) {
    ctx.report({ code: 'FOOTER_UNREADABLE', message: 'the footer\'s amounts were handed over apart from their labels (positions lost) and, paired by order, the blocks and adjustments do not add up to the total to recolher; no value is guessed', field: 'resumo.valorSimplesRecolher' })
    return {}
  }
  return record
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
  const moneyHit = (labelText: string): Hit | undefined => doc.labelValue(re(`^${label(labelText)}`), re(`^\\s*${M}`))
  // A row of the receipts table: its three columns (Mercado Interno, Mercado Externo, Total), the total last.
  // The row's name may follow the table's title on its line (`… (RPA) - Regime de Competência 10.238,00 …`).
  const columns = `${MONEY_PATTERN}\\s+${MONEY_PATTERN}\\s+${M}`
  const rowTotal = (rowLabel: string): Hit | undefined => doc.labelValue(re(label(rowLabel)), re(`^\\s*${columns}\\s*$`), { linesBelow: 1 })
  const lastOfRow = (row: string): Hit | undefined => doc.find(re(`${row}\\s+${columns}(?!\\S)`))

  // The company: `Empresa: 0381 - Name` up to the next label (`Emiss?o:` too, where accents are lost).
  const header = doc.labelValue(re(`^${label('Empresa:')}`), re(`^\\s*(?:(\\d+)\\s*-\\s*)?(\\S.*?)(?:\\s+(?:${label('Emissão:')}|${label('Página:')}).*)?$`))
  // RPA: the row of the regime whose total is not zero; both zero → 0 (documents.md §3).
  const positionless = doc.positionless
  // Positions lost: the table's cells by order (orderedReceipts), for the rows the plain reading misses.
  const receipts = positionless ? orderedReceipts(doc, RECEIPT_ROWS) : []
  const competencia = rowTotal('Regime de Competência') ?? receipts[0]
  const caixa = rowTotal('Regime de Caixa') ?? receipts[1]
  const nonZero = [competencia, caixa].filter((h) => h !== undefined && h.conflict === undefined && moneyCents(h.value) !== 0)
  if (nonZero.length > 1) ctx.report({ code: 'RPA_TWO_REGIMES', message: 'both regimes print receipts; the competência row is used', field: 'resumo.receitaBrutaMes' })
  const rpaHit = nonZero[0] ?? competencia ?? caixa
  const rpa = ctx.take('resumo.receitaBrutaMes', rpaHit, (t) => moneyCents(t) === null ? null : t)
  const rpaCents = rpa === null ? null : moneyCents(rpa)
  // One block per `Anexo:` label, up to the next one (or the end of the document).
  const regions = doc.sections(ANEXO)
  const heads = blockHeads(doc, regions.length)
  const blocks = regions.map((region, i) => block(region, ctx, i + 1, heads))
  const apuracoes = blocks.map((b) => b.apuracao)
  const plain: Record<string, Hit | undefined> = Object.fromEntries(FOOTER.slice(1).map(([name, text]) => [name, moneyHit(text)]))
  // Positions lost, footer amounts the plain reading misses: by order, when the report's sum holds.
  const late = positionless && regions.length > 0 && Object.values(plain).some((h) => h === undefined)
    ? orderedFooter(doc, regions[regions.length - 1]!, blocks[blocks.length - 1]!.taken, apuracoes, plain, ctx)
    : {}
  const lastBlock = apuracoes[apuracoes.length - 1]
  if (lastBlock !== undefined && lastBlock.valorSimples === null && late.total !== undefined) lastBlock.valorSimples = ctx.take(`apuracoes.${apuracoes.length - 1}.valorSimples`, late.total, moneyNumber)
  const money = (field: string, labelText: string): number | null => ctx.take(field, plain[field] ?? late[field] ?? moneyHit(labelText), moneyNumber)
  const recolherHit = plain.recolher ?? late.recolher
  const recolherCents = recolherHit === undefined || recolherHit.conflict !== undefined ? null : moneyCents(recolherHit.value)
  const valorSimplesRecolher = ctx.take('resumo.valorSimplesRecolher', recolherHit, moneyNumber)

  const periodLabel = re(`(?:${label('Período')}|${label('Competência')})(?: de ${label('Apuração')})?:`)
  // Positions lost, the header's labels one a line and then their values one a line: paired by order and shape.
  const periodHit = doc.labelValue(periodLabel, PERIOD, { linesBelow: 1 }) ??
    (positionless ? doc.orderedValues(headerFields(periodLabel))?.[0]?.periodo : undefined)
  // Positions lost: the range handed over apart from its label, the page's one line of that shape.
  const faixas = positionless ? doc.findAll(new RegExp(`^\\s*(${MONEY_PATTERN} a ${MONEY_PATTERN})\\s*$`)) : []
  const faixaAlone = new Set(faixas.map((h) => h.value)).size === 1 ? faixas[0] : undefined
  const fator = doc.labelValue(re(`^${label('Fator r:')}`), /^\s*(\d+,\d+)/)

  return {
    identificacao: {
      empresa: ctx.take('identificacao.empresa', header?.parts[1], textValue),
      cnpj: ctx.take('identificacao.cnpj', doc.labelValue(/CNPJ:/, new RegExp(`(${CNPJ_PATTERN})`)), cnpjChars),
      competencia: ctx.take('identificacao.competencia', periodHit, reportPeriod),
      dataEmissao: ctx.take('identificacao.dataEmissao', doc.labelValue(re(label('Emissão:')), DATE), isoDate),
      codigoEmpresa: ctx.take('identificacao.codigoEmpresa', header?.parts[0], (t) => t)
    },
    resumo: {
      receitaBrutaMes: rpa,
      receitaBrutaMesNumero: rpaCents === null ? null : centsToNumericString(rpaCents),
      rbt12: ctx.take('resumo.rbt12', lastOfRow(String.raw`\(RBT12\)`) ?? receipts[2], moneyNumber),
      rbaAtual: ctx.take('resumo.rbaAtual', lastOfRow(String.raw`corrente \(RBA\)`) ?? receipts[3], moneyNumber),
      rbaAnterior: ctx.take('resumo.rbaAnterior', lastOfRow(String.raw`anterior \(RBA\)`) ?? receipts[4], moneyNumber),
      faixaEnquadramento: ctx.take('resumo.faixaEnquadramento', doc.labelValue(/Faixa de Enquadramento:/, new RegExp(`^\\s*(${MONEY_PATTERN} a ${MONEY_PATTERN})`)) ?? faixaAlone, (t) => t),
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
