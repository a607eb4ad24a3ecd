/**
 * Parser of the PGDAS-D declaration print (documents.md §2 "Fields"). Every value is read
 * through the text API, so each has evidence; a field whose label or value is missing is
 * null. The body repeats the extract's section 2 tables (RPA, RBT12..., 2.2, 2.3, the three
 * 9-column tables): their readers are the family's (plugins/_shared/simples-nacional/).
 */
import { CNPJ_PATTERN, MONEY_PATTERN, cnpjChars, competence, isoDate, isoDateTime, moneyNumber } from '../../core/plugin-api.js'
import type { Hit, ParseContext, TextDocument, TextRegion } from '../../core/plugin-api.js'
import { PGDAS_HEADING, readDebitos, readReceitas } from '../_shared/simples-nacional/pgdas-tables.js'
import type { PgdasDebitos, PgdasReceitas } from '../_shared/simples-nacional/pgdas-tables.js'

export type { FolhaAnterior, ReceitaAnterior, Triple, Tributos } from '../_shared/simples-nacional/pgdas-tables.js'

/** The declaration: its own fields, then section 2 and the 2.8 tables as the family reads them. */
export interface PgdasDeclaracao extends PgdasReceitas, PgdasDebitos {
  numeroDeclaracao: string | null
  tipoDeclaracao: 'ORIGINAL' | 'RETIFICADORA' | null
  cnpj: string | null
  cnpjBasico: string | null
  razaoSocial: string | null
  dataAbertura: string | null
  regimeApuracao: 'COMPETENCIA' | 'CAIXA' | null
  periodoInicio: string | null
  periodoFim: string | null
  competencia: string | null
  filiais: string[] | null
  receitaBrutaAuferida: number | null
  valorTotalDebitoDeclarado: number | null
  dataTransmissao: string | null
  numeroRecibo: string | null
  autenticacao: string | null
}

const M = `(${MONEY_PATTERN})`
const DATE = /(\d{2}\/\d{2}\/\d{4})/
const DATE_TIME = /(\d{2}\/\d{2}\/\d{4} \d{2}:\d{2}:\d{2})/
/** The API's CNPJ pattern: tolerates the stray spaces some extractors leave (`26.873. 829/0001-92`). */
const CNPJ_MASK = CNPJ_PATTERN
/** Some libraries' text breaks the receipt number after a dot (`22090. 9999999-3`): `noSpaces` takes the space off. */
const RECIBO = /(\d{2}\.\d{2}\.\d{5}\. ?\d{7}-\d)/
/** The declaration number, 17 digits; some libraries' text splits it once (`00000 000201801001`): `numero17` joins it. */
const NUMERO = /\b(\d{17}|(?=[\d ]{18}\b)\d+ \d+)\b/
const noSpaces = (t: string): string => t.replace(/\s+/g, '')
const numero17 = (t: string): string | null => /^\d{17}$/.test(noSpaces(t)) ? noSpaces(t) : null
const AUTENTICACAO = /(\d{5}\.\d{5}\.\d{5}\.\d{5})/
/** The receipt's title: a combined declaration+receipt file carries it on the receipt's page. */
const RECEIPT_TITLE = /RECIBO DE ENTREGA DA APURA[CÇ][AÃ]O NO PGDAS ?-D/i
const same = (t: string): string => t

/**
 * The CNPJs listed under `1.1 CNPJ das filiais presentes nesta declaração:`, down to the
 * next section title; null when the heading is not printed, [] when it lists none.
 */
function filiais (doc: TextDocument, ctx: ParseContext): string[] | null {
  const heading = doc.boxOf(/^1\.1\)? CNPJ das filiais/)
  if (heading === undefined) return null
  const next = doc.boxOf(/^2\.\s*Apura[cç][aã]o do Simples Nacional/, { page: heading.page })
  // Printed with its dots, slash and dash, never a run of digits inside a longer number (the declaration's).
  const cnpj = /(?<![0-9A-Za-z])([0-9A-Z]{2}\.\s?[0-9A-Z]{3}\.\s?[0-9A-Z]{3}\/[0-9A-Z]{4}-\d{2})(?!\d)/
  // Without section 2's title below it, or where positions are lost, the lines down to the next numbered heading.
  const hits = next === undefined || next.y > heading.y || doc.positionless
    ? doc.section(/^1\.1\)? CNPJ das filiais/, [/^2\.\s*Apura[cç][aã]o/, PGDAS_HEADING]).findAll(cnpj)
    : doc.findAll(cnpj, { page: heading.page, within: { x: 0, y: next.y + next.height, width: 10_000, height: Math.max(0, heading.y - next.y - next.height) } })
  const out: string[] = []
  for (const hit of hits) {
    const cnpj = ctx.take(`filiais.${out.length}`, hit, cnpjChars)
    if (cnpj !== null) out.push(cnpj)
  }
  return out
}

/** `Resumo da Declaração`: two values on a line of their own under the labels, maybe glued (`1.800,00108,00`). */
function resumo (doc: TextDocument): Hit | undefined {
  // The RFB's print sets the page footer (declaration and receipt numbers, authentication, page
  // number: four lines) between the headers and their values; the values' line is two amounts alone.
  const pair = new RegExp(`^${M}\\s*${M}$`)
  const hit = doc.labelValue(/Receita Bruta Auferida/, pair, { linesBelow: 6 })
  if (hit !== undefined) return hit
  // More lines between (a footer laid out over more lines): the section's one line of two amounts
  // alone, down to the next numbered heading; two such lines that differ are not guessed between.
  const section = doc.section(/Receita Bruta Auferida/, PGDAS_HEADING)
  const found = section.findAll(pair)
  const values = new Set(found.map((h) => h.source))
  if (values.size === 0 && doc.positionless) return lonePair(section)
  if (values.size <= 1) return found[0]
  const conflict = `the Resumo da Declaração prints ${values.size} lines of two amounts under its labels ("${[...values].join('", "')}"); the values are not guessed`
  const none: Hit = { ...found[0]!, value: '', groups: [], parts: [], conflict }
  return { ...none, parts: [none, none] }
}

/**
 * Positions lost (pdftotext's order): the section's two values one a line, under the footer's
 * lines; taken in order only when the section holds exactly two amounts alone on their lines.
 */
function lonePair (section: TextRegion): Hit | undefined {
  const alone = new RegExp(`^\\s*${M}\\s*$`)
  const lines = section.lines.filter((l) => alone.test(l.text))
  if (lines.length !== 2) return undefined
  const [a, b] = lines.map((l) => section.find(alone, { page: l.page, within: l.box }))
  return a === undefined || b === undefined ? undefined : { ...a, parts: [a, b] }
}

/**
 * Section 3's value after `label` (same line or the next), never the page footer's copy,
 * and read on section 3's page when its title is found (a combined file's receipt page
 * prints the same labels).
 */
function reception (doc: TextDocument, label: RegExp, value: RegExp): Hit | undefined {
  const page = doc.boxOf(/^3\.\s+Informações da Recepção da Declaração/)?.page
  // Anchored, so a label printed without its value never takes the next line's footer.
  return doc.labelValue(label, new RegExp(`^\\s*${value.source}`), { linesBelow: 1, ...(page === undefined ? {} : { page }) })
}

/**
 * Every page's footer repeats `Número da Declaração: … Número do Recibo: … Autenticação: …`
 * (checks.ts compares them with the body: `data` keeps the body's numbers only).
 */
export const FOOTER = new RegExp(`Número da Declaração:\\s*${NUMERO.source}\\s+Número do Recibo:\\s*${RECIBO.source}(?:\\s+Autenticação:\\s*${AUTENTICACAO.source})?`)

export function parseDeclaracao (doc: TextDocument, ctx: ParseContext): PgdasDeclaracao {
  const text = (s: string): string | null => s.trim() === '' ? null : s.trim()
  const periodo = doc.labelValue(/Per[ií]odo de Apura[cç][aã]o:/, /^\s*(\d{2}\/\d{2}\/\d{4}) a (\d{2}\/\d{2}\/\d{4})/)
  // Positions lost (pdfminer's order): the labels `CNPJ Matriz:` and `Nome empresarial:`, then their two values.
  const paired = doc.positionless
    ? doc.orderedValues([
      { name: 'cnpj', label: 'CNPJ Matriz:', value: new RegExp(`^\\s*(${CNPJ_MASK})\\s*$`) },
      // A name: no CNPJ, no date, no label (`Data de abertura no CNPJ:`), no number alone.
      { name: 'razaoSocial', label: 'Nome empresarial:', value: /^\s*(?!.*\d{2}\.?\d{3}\.?\d{3}\/|.*:|\d{2}\/\d{2}\/\d{4}\s*$|[\d.,\s]+$)(\S.*?)\s*$/ }
    ])?.[0]
    : undefined
  // Both or neither: a name paired without its CNPJ is a pairing that skipped a label.
  const identification = paired?.cnpj !== undefined && paired.razaoSocial !== undefined ? paired : undefined
  const cnpjHit = doc.labelValue(/^CNPJ Matriz:/, new RegExp(`(${CNPJ_MASK})`)) ?? identification?.cnpj
  const resumoHit = resumo(doc)
  // The section 1 number first; the footer's copy when section 1 does not print it.
  // Beside the label, or on the next line alone (a library's text ends the label's line there).
  const numero = doc.labelValue(/\bN[º°o]\.? da Declaração:/, /^\s*(\d{17})\s*$/, { linesBelow: 1 }) ?? doc.labelValue(/\bN[º°o]\.? da Declaração:/, /\b(\d{17})\b/) ??
    doc.labelValue(/Número da Declaração:/, NUMERO)
  const receiptPage = doc.boxOf(RECEIPT_TITLE)?.page
  const headerPage = doc.boxOf(/Simples Nacional - Declaratório/)?.page
  if (receiptPage !== undefined) {
    ctx.report({ code: 'PGDAS_COMBINED_RECEIPT', message: `Page ${receiptPage} is the PGDAS-D receipt (Recibo de Entrega) of this declaration, printed in the same file: the data is the declaration's; its section 3 holds the receipt's number, date and authentication.` })
  }
  return {
    numeroDeclaracao: ctx.take('numeroDeclaracao', numero, numero17),
    tipoDeclaracao: ctx.take('tipoDeclaracao', doc.find(/^Declaração (Original|Retificadora)\b/, headerPage === undefined ? {} : { page: headerPage }), (t) => t === 'Original' ? 'ORIGINAL' as const : 'RETIFICADORA' as const),
    cnpj: ctx.take('cnpj', cnpjHit, cnpjChars),
    cnpjBasico: ctx.take('cnpjBasico', cnpjHit, (t) => cnpjChars(t)?.slice(0, 8) ?? null),
    // Individual entrepreneurs' names start with the CNPJ básico: kept as printed (it is the registered name).
    // The name ends where another label of section 1 starts, should the print share its line.
    razaoSocial: ctx.take('razaoSocial', doc.labelValue(/^Nome empresarial:/i, /^\s*(\S.*)$/) ?? identification?.razaoSocial, (t) => /:\s*$/.test(t) ? null : text(t.split(/\s+(?:Data de abertura no CNPJ|Optante pelo Simples Nacional|Regime de Apuração|N[º°o]\.? da Declaração|CNPJ Matriz):/i)[0]!)),
    dataAbertura: ctx.take('dataAbertura', doc.labelValue(/Data de abertura no CNPJ:/i, DATE), isoDate),
    regimeApuracao: ctx.take('regimeApuracao', doc.labelValue(/Regime de Apuração:/, /^\s*(Competência|Caixa)\b/), (t) => t === 'Caixa' ? 'CAIXA' as const : 'COMPETENCIA' as const),
    periodoInicio: ctx.take('periodoInicio', periodo?.parts[0], isoDate),
    periodoFim: ctx.take('periodoFim', periodo?.parts[1], isoDate),
    // documents.md §2: the competence is the month/year of the range start.
    competencia: ctx.take('competencia', periodo?.parts[0], (t) => competence(t.slice(3))),
    filiais: filiais(doc, ctx),
    ...readReceitas(doc, ctx),
    receitaBrutaAuferida: ctx.take('receitaBrutaAuferida', resumoHit?.parts[0], moneyNumber),
    valorTotalDebitoDeclarado: ctx.take('valorTotalDebitoDeclarado', resumoHit?.parts[1], moneyNumber),
    ...readDebitos(doc, ctx),
    dataTransmissao: ctx.take('dataTransmissao', reception(doc, /^Data e hor[aá]rio da transmiss[aã]o da Declaração:/i, DATE_TIME), isoDateTime),
    // Anchored at the line start: the footer's `Número do Recibo:` follows `Número da Declaração:` on its line.
    numeroRecibo: ctx.take('numeroRecibo', reception(doc, /^Número do Recibo:/, RECIBO), noSpaces),
    autenticacao: ctx.take('autenticacao', reception(doc, /^Autenticação:/, AUTENTICACAO), same)
  }
}
