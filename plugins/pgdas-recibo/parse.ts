/**
 * Parser of the PGDAS-D receipt, "Recibo de Entrega da Apuração no PGDAS-D" (documents.md
 * §8a). Every value is read through the text API, so each has evidence; a field whose
 * label or value is missing is null.
 */
import { CNPJ_PATTERN, MONEY_PATTERN, cnpjChars, competence, isoDateTime, moneyNumber } from '../../core/plugin-api.js'
import type { Hit, ParseContext, TextDocument } from '../../core/plugin-api.js'

export interface PgdasRecibo {
  razaoSocial: string | null
  cnpj: string | null
  competencia: string | null
  numeroDeclaracao: string | null
  tipoDeclaracao: 'ORIGINAL' | 'RETIFICADORA' | null
  receitaBrutaAuferida: number | null
  totalDebitoDeclarado: number | null
  totalDebitoSuspenso: number | null
  totalDebitoExigivel: number | null
  dataHoraTransmissao: string | null
  numeroRecibo: string | null
  autenticacao: string | null
}

/** The API's CNPJ pattern: tolerates the stray spaces some extractors leave (`26.873. 829/0001-92`). */
const CNPJ_MASK = CNPJ_PATTERN
/** A money cell of the table, `R$` optional; cells may come glued (`R$ 18.939,46R$ 1.136,35`). */
const CELL = String.raw`\s*(?:R\$\s*)?(${MONEY_PATTERN})`
/** The table's value row: period, apuração number, then four money cells. */
const ROW = new RegExp(String.raw`^(\d{2}\/\d{4})\s*(\d{17})${CELL}${CELL}${CELL}${CELL}$`)
const same = (t: string): string => t

/** The value after `label`, on its line or the next one (documents.md §8a), anchored so a bare label never takes an unrelated line. */
function labelled (doc: TextDocument, label: RegExp, value: RegExp): Hit | undefined {
  return doc.labelValue(label, new RegExp(String.raw`^\s*:?\s*${value.source}`), { linesBelow: 1 })
}

/** One value of the table's row: a period, an apuração number or an amount (`R$` aside). */
const TOKEN = new RegExp(String.raw`(?:^|\s)(?:R\$\s*)?(\d{2}\/\d{4}|\d{17}|${MONEY_PATTERN})(?=\s|R\$|$)`)
const TOKEN_LINE = new RegExp(String.raw`^(?:\s*(?:R\$\s*)?(?:\d{2}\/\d{4}|\d{17}|${MONEY_PATTERN}))+\s*$`)

/**
 * The table's row where positions are lost and its cells come one or two a line among its
 * wrapped headers (pdfminer's and pdftotext's order: column after column, left to right):
 * the lines of values alone between the first header and section 3, in order, taken only
 * when they are exactly a period, a number and four amounts, and the declared debt is the
 * suspended plus the payable one to the cent (else the order is not trusted: undefined).
 */
function rowByOrder (doc: TextDocument): Hit[] | undefined {
  const table = doc.section(/^Período de(?:\s+Apuração)?$/, /^3\.\s/)
  const tokens = table.lines.filter((l) => TOKEN_LINE.test(l.text)).flatMap((l) => table.findAll(TOKEN, { page: l.page, within: l.box }))
  if (tokens.length !== 6 || !/^\d{2}\/\d{4}$/.test(tokens[0]!.value) || !/^\d{17}$/.test(tokens[1]!.value)) return undefined
  const cents = tokens.slice(2).map((t) => Math.round((moneyNumber(t.value) ?? Number.NaN) * 100))
  return cents[1] === cents[2]! + cents[3]! ? tokens : undefined
}

export function parseRecibo (doc: TextDocument, ctx: ParseContext): PgdasRecibo {
  const row = doc.find(ROW)
  // Positions lost (text handed over column by column): each cell under its own label, the labels wrapped.
  const alone = (label: RegExp, value: string): Hit | undefined => row === undefined && doc.positionless ? doc.labelValue(label, new RegExp(`^\\s*${value}\\s*$`)) : undefined
  const cells = [
    alone(/^Período de\s+Apuração$/, String.raw`(\d{2}\/\d{4})`),
    alone(/^Número da Apuração$/, String.raw`(\d{17})`),
    alone(/^Receita Bruta\s+Auferida$/, CELL),
    alone(/^Total do Débito\s+Declarado$/, CELL),
    alone(/^Total do Débito com\s+Exigibilidade Suspensa$/, CELL),
    alone(/^Total do Débito\s+Exigível$/, CELL)
  ]
  const ordered = row === undefined && doc.positionless ? rowByOrder(doc) : undefined
  // A cell read under its label and the same cell read by order must agree, or neither is taken.
  const at = (i: number): Hit | undefined => {
    const [a, b] = [row?.parts[i] ?? cells[i], ordered?.[i]]
    if (a === undefined || b === undefined || a.value === b.value) return a ?? b
    return { ...a, conflict: `the table's cell ${i + 1} reads "${a.value}" under its header and "${b.value}" by the order of the row's values; it is not guessed` }
  }
  const cell = (field: keyof PgdasRecibo, i: number): number | null => ctx.take(field, at(i), moneyNumber)
  // Positions lost: the two-column identification handed over as its two labels, then their two values.
  const paired = doc.positionless
    ? doc.orderedValues([
      { name: 'razaoSocial', label: 'Nome Empresarial', value: /^\s*(?!.*\d{2}\.?\d{3}\.?\d{3}\/)(\S.*?)\s*$/ },
      { name: 'cnpj', label: 'CNPJ da Matriz', value: new RegExp(`^\\s*(${CNPJ_MASK})\\s*$`) }
    ])?.[0]
    : undefined
  // Both or neither: a name paired without its CNPJ is a pairing that skipped a label.
  const identification = paired?.cnpj !== undefined && paired.razaoSocial !== undefined ? paired : undefined
  // `Nome Empresarial | CNPJ da Matriz` as a two-column table (values on the next line) or
  // as `label: value` lines. The name is what is left of its line once a CNPJ is taken off.
  const name = doc.labelValue(/^Nome Empresarial:?/, /^(?!\s*CNPJ da Matriz)\s*(\S.*)$/, { linesBelow: 1 }) ?? identification?.razaoSocial
  return {
    razaoSocial: ctx.take('razaoSocial', name, (t) => {
      const rest = t.replace(new RegExp(`\\s*${CNPJ_MASK}$`), '').trim()
      return rest === '' ? null : rest
    }),
    // The CNPJ ends its line (the right-hand column, or after its label): never a run of characters inside the name.
    cnpj: ctx.take('cnpj', doc.labelValue(/CNPJ da Matriz:?/, new RegExp(`(${CNPJ_MASK})\\s*$`), { linesBelow: 1 }) ?? identification?.cnpj, cnpjChars),
    competencia: ctx.take('competencia', at(0), competence),
    numeroDeclaracao: ctx.take('numeroDeclaracao', at(1), same),
    tipoDeclaracao: ctx.take('tipoDeclaracao', doc.find(/^(?:Declaração|Apuração) (Original|Retificadora)\b/), (t) => t === 'Original' ? 'ORIGINAL' as const : 'RETIFICADORA' as const),
    receitaBrutaAuferida: cell('receitaBrutaAuferida', 2),
    totalDebitoDeclarado: cell('totalDebitoDeclarado', 3),
    totalDebitoSuspenso: cell('totalDebitoSuspenso', 4),
    totalDebitoExigivel: cell('totalDebitoExigivel', 5),
    dataHoraTransmissao: ctx.take('dataHoraTransmissao', labelled(doc, /^Data e Horário da Transmissão(?: \(Data e Horário de Brasília\))?/i, /(\d{2}\/\d{2}\/\d{4} \d{2}:\d{2}:\d{2})/), isoDateTime),
    // Some libraries' text breaks the number after a dot (`22090. 9999999-3`): the space is not the number's.
    numeroRecibo: ctx.take('numeroRecibo', labelled(doc, /^Número do Recibo/, /(\d{2}\.\d{2}\.\d{5}\. ?\d{7}-\d)/), (t) => t.replace(/\s+/g, '')),
    autenticacao: ctx.take('autenticacao', labelled(doc, /^Autenticação/, /(\d{5}\.\d{5}\.\d{5}\.\d{5})/), same)
  }
}
