/**
 * Consistency checks of the declaration (documents.md §0.4, §0.5, §2): each passes, fails
 * (a warning and lower confidence) or is skipped when its values are missing. The receipt
 * plugin repeats the number checks in its own folder (plugins share no code).
 */
import { isValidCnpj, moneyCents } from '../../core/plugin-api.js'
import type { CheckOutcome, ConsistencyCheck } from '../../core/plugin-api.js'
import type { PgdasDeclaracao, Tributos } from './parse.js'

/** JSON money back to cents for exact sums (the value came from two-decimal text). */
const cents = (n: number): number => moneyCents(n.toFixed(2).replace('.', ',')) ?? Number.NaN
const KEYS = ['irpj', 'csll', 'cofins', 'pis', 'inssCpp', 'icms', 'ipi', 'iss', 'total'] as const
const TABLES = [['totalDebitoDeclarado', 'declared'], ['totalDebitoSuspenso', 'suspended'], ['totalDebitoExigivel', 'payable']] as const

const complete = (t: Tributos | null): t is { [K in keyof Tributos]: number } => t !== null && KEYS.every((k) => t[k] !== null)

/** The eight taxes add up to the `Total` column, in every table that was read whole. */
function taxesAddUp (d: PgdasDeclaracao): CheckOutcome {
  const tables = TABLES.filter(([field]) => complete(d[field]))
  if (tables.length === 0) return { status: 'skip' }
  for (const [field, name] of tables) {
    const t = d[field]!
    const sum = KEYS.slice(0, 8).reduce((a, k) => a + cents(t[k]!), 0)
    if (sum !== cents(t.total!)) return { status: 'fail', message: `the eight taxes of the ${name} debt add up to ${sum / 100}, its total is ${t.total}` }
  }
  return { status: 'pass' }
}

/** Débito declarado = exigível + suspenso, column by column (the table's own title says so). */
function declaredIsPayablePlusSuspended ({ totalDebitoDeclarado: dec, totalDebitoExigivel: exi, totalDebitoSuspenso: sus }: PgdasDeclaracao): CheckOutcome {
  if (!complete(dec) || !complete(exi) || !complete(sus)) return { status: 'skip' }
  const wrong = KEYS.filter((k) => cents(dec[k]) !== cents(exi[k]) + cents(sus[k]))
  return wrong.length === 0 ? { status: 'pass' } : { status: 'fail', message: `declared debt differs from payable + suspended in ${wrong.join(', ')}` }
}

/** Day of the year (1-366) of an ISO date. */
function dayOfYear (iso: string): number {
  const [y, m, d] = iso.slice(0, 10).split('-').map(Number) as [number, number, number]
  return Math.round((Date.UTC(y, m - 1, d) - Date.UTC(y, 0, 1)) / 86_400_000) + 1
}

/** `01.07.YYDDD.NNNNNNN-D`, YYDDD the transmission date (documents.md §0.4). */
export function receiptNumberOutcome (numero: string | null, transmitted: string | null): CheckOutcome {
  if (numero === null) return { status: 'skip' }
  const m = /^01\.07\.(\d{2})(\d{3})\.\d{7}-\d$/.exec(numero)
  if (m === null) return { status: 'fail', message: `the receipt number ${numero} is not of the form 01.07.YYDDD.NNNNNNN-D` }
  if (transmitted === null) return { status: 'pass' }
  const expected = `${transmitted.slice(2, 4)}${String(dayOfYear(transmitted)).padStart(3, '0')}`
  return m[1]! + m[2]! === expected ? { status: 'pass' } : { status: 'fail', message: `the receipt number's date ${m[1]}${m[2]} is not the transmission date ${transmitted.slice(0, 10)} (${expected})` }
}

/** 17 digits = CNPJ básico + year + month + sequence; sequence 001 is the original (documents.md §0.4). */
export function declarationNumberOutcome (numero: string | null, cnpjBasico: string | null, competencia: string | null, tipo: 'ORIGINAL' | 'RETIFICADORA' | null): CheckOutcome {
  if (numero === null || cnpjBasico === null || competencia === null) return { status: 'skip' }
  const expected = cnpjBasico + competencia.replace('-', '')
  if (!/^\d{17}$/.test(numero) || !numero.startsWith(expected)) return { status: 'fail', message: `the declaration number ${numero} does not start with the CNPJ básico and the period (${expected})` }
  const seq = Number(numero.slice(14))
  if (seq === 0) return { status: 'fail', message: 'the declaration number\'s sequence is 000' }
  if (tipo !== null && (seq === 1) !== (tipo === 'ORIGINAL')) return { status: 'fail', message: `sequence ${numero.slice(14)} in the declaration number but the declaration is ${tipo.toLowerCase()}` }
  return { status: 'pass' }
}

/** RBT12 = the twelve months before the PA listed under 2.2.1 (and 2.2.2), when all twelve are there (documents.md §0.5). */
function rbt12MatchesMonths ({ rbt12, receitasAnteriores: months, competencia }: PgdasDeclaracao): CheckOutcome {
  if (rbt12 === null || months === null || competencia === null) return { status: 'skip' }
  const [y, m] = competencia.split('-').map(Number) as [number, number]
  const wanted = Array.from({ length: 12 }, (_, i) => { const d = new Date(Date.UTC(y, m - 13 + i, 1)); return `${d.getUTCFullYear()}-${String(d.getUTCMonth() + 1).padStart(2, '0')}` })
  const rows = wanted.map((p) => months.find((e) => e.competencia === p))
  if (rows.some((r) => r === undefined)) return { status: 'skip' }
  for (const side of ['interno', 'externo'] as const) {
    const total = rbt12[side]
    if (total === null || rows.some((r) => r![side] === null)) continue
    const sum = rows.reduce((a, r) => a + cents(r![side]!), 0)
    if (sum !== cents(total)) return { status: 'fail', message: `the twelve months before the PA (${side}) add up to ${sum / 100}, RBT12 is ${total}` }
  }
  return { status: 'pass' }
}

export const checks: Array<ConsistencyCheck<PgdasDeclaracao>> = [
  { name: 'taxes-add-up-to-total', weight: 2, run: taxesAddUp },
  { name: 'declarado-is-exigivel-plus-suspenso', weight: 2, run: declaredIsPayablePlusSuspended },
  {
    name: 'resumo-matches-total',
    weight: 1,
    run: ({ valorTotalDebitoDeclarado: v, totalDebitoDeclarado: t }) => v === null || t === null || t.total === null
      ? { status: 'skip' }
      : cents(v) === cents(t.total) ? { status: 'pass' } : { status: 'fail', message: `the summary's declared debt ${v} differs from the table's total ${t.total}` }
  },
  { name: 'rbt12-matches-receitas-anteriores', weight: 1, run: rbt12MatchesMonths },
  { name: 'numero-declaracao-matches', weight: 2, run: (d) => declarationNumberOutcome(d.numeroDeclaracao, d.cnpjBasico, d.competencia, d.tipoDeclaracao) },
  { name: 'numero-recibo-matches', weight: 1, run: (d) => receiptNumberOutcome(d.numeroRecibo, d.dataTransmissao) },
  {
    name: 'cnpj-valid',
    weight: 1,
    run: ({ cnpj }) => cnpj === null ? { status: 'skip' } : isValidCnpj(cnpj) ? { status: 'pass' } : { status: 'fail', message: `the CNPJ ${cnpj} has wrong check digits` }
  }
]
