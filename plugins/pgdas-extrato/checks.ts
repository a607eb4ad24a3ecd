/**
 * Consistency checks of the extract (documents.md §0.5): each passes, fails (with a
 * warning and lower confidence) or is skipped when its values are missing.
 */
import { isValidCnpj, moneyCents } from '../../core/plugin-api.js'
import type { CheckOutcome, ConsistencyCheck } from '../../core/plugin-api.js'
import type { PgdasExtrato, Tributos } from './parse.js'

/** JSON money back to cents for exact sums (the value came from two-decimal text). */
const cents = (n: number): number => moneyCents(n.toFixed(2).replace('.', ',')) ?? Number.NaN

function taxesAddUp (t: Tributos | null): CheckOutcome {
  if (t === null) return { status: 'skip' }
  const parts = [t.irpj, t.csll, t.cofins, t.pis, t.inssCpp, t.icms, t.ipi, t.iss]
  if (t.total === null || parts.some((p) => p === null)) return { status: 'skip' }
  const sum = parts.reduce<number>((a, p) => a + cents(p!), 0)
  return sum === cents(t.total) ? { status: 'pass' } : { status: 'fail', message: `the eight taxes add up to ${sum / 100}, the table's total is ${t.total}` }
}

export const checks: Array<ConsistencyCheck<PgdasExtrato>> = [
  { name: 'taxes-add-up-to-total', weight: 2, run: (d) => taxesAddUp(d.totalDebitoExigivel) },
  {
    name: 'rpa-parts-add-up',
    weight: 1,
    run: ({ rpa }) => rpa === null || rpa.interno === null || rpa.externo === null || rpa.total === null
      ? { status: 'skip' }
      : cents(rpa.interno) + cents(rpa.externo) === cents(rpa.total) ? { status: 'pass' } : { status: 'fail', message: 'RPA internal plus external market differs from its total' }
  },
  {
    name: 'das-total',
    weight: 2,
    run: ({ das }) => das === null || das.principal === null || das.total === null
      ? { status: 'skip' }
      : cents(das.principal) + cents(das.multa ?? 0) + cents(das.juros ?? 0) === cents(das.total) ? { status: 'pass' } : { status: 'fail', message: `DAS principal + multa + juros differs from its total ${das.total}` }
  },
  {
    name: 'cnpj-matches-basico',
    weight: 1,
    run: ({ cnpj, cnpjBasico }) => cnpj === null || cnpjBasico === null
      ? { status: 'skip' }
      : isValidCnpj(cnpj) && cnpj.startsWith(cnpjBasico) ? { status: 'pass' } : { status: 'fail', message: 'the establishment CNPJ is invalid or does not start with the CNPJ básico' }
  },
  {
    name: 'numero-apuracao-matches',
    weight: 1,
    // 17 digits = CNPJ básico + year + month + sequence (documents.md §0.4).
    run: ({ numeroApuracao, cnpjBasico, competencia }) => numeroApuracao === null || cnpjBasico === null || competencia === null
      ? { status: 'skip' }
      : numeroApuracao.startsWith(cnpjBasico + competencia.replace('-', '')) ? { status: 'pass' } : { status: 'fail', message: 'the apuração number does not hold the CNPJ básico and the period' }
  }
]
