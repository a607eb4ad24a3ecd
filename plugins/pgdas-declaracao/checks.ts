/**
 * Consistency checks of the declaration (documents.md §0.4, §0.5, §2): each passes, fails
 * (a warning and lower confidence) or is skipped when its values are missing. The number
 * and RBT12 checks are the family's (plugins/_shared/simples-nacional/pgdas-checks.ts).
 */
import { isValidCnpj, numberToCents as cents } from '../../core/plugin-api.js'
import type { CheckOutcome, ConsistencyCheck, TextDocument } from '../../core/plugin-api.js'
import { declarationNumberOutcome, rbt12Outcome, receiptNumberOutcome } from '../_shared/simples-nacional/pgdas-checks.js'
import { FOOTER } from './parse.js'
import type { PgdasDeclaracao, Tributos } from './parse.js'
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

/**
 * Every page footer repeats the declaration number, the receipt number and the
 * authentication: each printed footer must agree with the body. The footers are not part
 * of `data`, so this check reads the document.
 */
function footersMatchBody (d: PgdasDeclaracao, doc: TextDocument): CheckOutcome {
  const footers = doc.findAll(FOOTER)
  if (footers.length === 0) return { status: 'skip' }
  // A library's text may split a number once (parse.ts): its spaces are not the number's.
  const bare = (t: string | undefined): string | undefined => t?.replace(/\s+/g, '')
  const wrong = footers.filter(({ groups: [numero, recibo, autenticacao] }) =>
    (d.numeroDeclaracao !== null && bare(numero) !== d.numeroDeclaracao) ||
    (d.numeroRecibo !== null && bare(recibo) !== d.numeroRecibo) ||
    (d.autenticacao !== null && autenticacao !== undefined && autenticacao !== d.autenticacao))
  return wrong.length === 0 ? { status: 'pass' } : { status: 'fail', message: `the footer of page ${wrong.map((h) => h.page).join(', ')} prints numbers that differ from the declaration's body` }
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
  { name: 'footers-match-body', weight: 1, run: footersMatchBody },
  { name: 'rbt12-matches-receitas-anteriores', weight: 1, run: (d) => rbt12Outcome(d.rbt12, d.receitasAnteriores, d.competencia) },
  { name: 'numero-declaracao-matches', weight: 2, run: (d) => declarationNumberOutcome(d.numeroDeclaracao, d.cnpjBasico, d.competencia, d.tipoDeclaracao) },
  { name: 'numero-recibo-matches', weight: 1, run: (d) => receiptNumberOutcome(d.numeroRecibo, d.dataTransmissao) },
  {
    name: 'cnpj-valid',
    weight: 1,
    run: ({ cnpj }) => cnpj === null ? { status: 'skip' } : isValidCnpj(cnpj) ? { status: 'pass' } : { status: 'fail', message: `the CNPJ ${cnpj} has wrong check digits` }
  }
]
