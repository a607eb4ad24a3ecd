/**
 * Consistency checks of the extract (documents.md §0.5): each passes, fails (with a
 * warning and lower confidence) or is skipped when its values are missing.
 */
import { isValidCnpj, numberToCents as cents } from '../../core/plugin-api.js'
import type { CheckOutcome, ConsistencyCheck } from '../../core/plugin-api.js'
import { declarationNumberOutcome, rbt12Outcome } from '../_shared/simples-nacional/pgdas-checks.js'
import { TAX_KEYS } from '../_shared/simples-nacional/pgdas-tables.js'
import type { PgdasExtrato, Tributos } from './parse.js'

function taxesAddUp (t: Tributos | null): CheckOutcome {
  if (t === null) return { status: 'skip' }
  const parts = [t.irpj, t.csll, t.cofins, t.pis, t.inssCpp, t.icms, t.ipi, t.iss]
  if (t.total === null || parts.some((p) => p === null)) return { status: 'skip' }
  const sum = parts.reduce<number>((a, p) => a + cents(p!), 0)
  return sum === cents(t.total) ? { status: 'pass' } : { status: 'fail', message: `the eight taxes add up to ${sum / 100}, the table's total is ${t.total}` }
}

/** Section 3's activities add up, tax by tax, to section 4's declared debt (all establishments' activities make the company's total). */
function activitiesAddUp ({ atividades, totalDebitoDeclarado: total }: PgdasExtrato): CheckOutcome {
  if (atividades === null || atividades.length === 0 || total === null) return { status: 'skip' }
  if (atividades.some((a) => a.tributos === null || TAX_KEYS.some((k) => a.tributos![k] === null)) || TAX_KEYS.some((k) => total[k] === null)) return { status: 'skip' }
  const wrong = TAX_KEYS.filter((k) => atividades.reduce((s, a) => s + cents(a.tributos![k]!), 0) !== cents(total[k]!))
  return wrong.length === 0 ? { status: 'pass' } : { status: 'fail', message: `the activities' taxes differ from the declared debt in ${wrong.join(', ')}` }
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
  // 17 digits = CNPJ básico + year + month + sequence, 001 for the original (documents.md §0.4).
  { name: 'numero-apuracao-matches', weight: 1, run: (d) => declarationNumberOutcome(d.numeroApuracao, d.cnpjBasico, d.competencia, d.tipoApuracao, 'apuração') },
  { name: 'rbt12-matches-receitas-anteriores', weight: 1, run: (d) => rbt12Outcome(d.rbt12, d.receitasAnteriores, d.competencia) },
  { name: 'atividades-add-up-to-total', weight: 1, run: activitiesAddUp }
]
