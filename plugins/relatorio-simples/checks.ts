/**
 * Consistency checks of the report (documents.md §0.5 in spirit): each passes, fails
 * (a warning and lower confidence) or is skipped when its values are missing. Sums are
 * made in integer cents.
 */
import { isValidCnpj } from '../../core/plugin-api.js'
import type { CheckOutcome, ConsistencyCheck } from '../../core/plugin-api.js'
import type { RelatorioSimples } from './parse.js'

/** JSON money (read from two-decimal text) back to integer cents. */
const cents = (n: number): number => Math.round(n * 100)

/** Σ valorSimples of the blocks + acréscimos − deduções − diferido + fixed ICMS/ISS = a recolher (absent adjustments count 0). */
function blocksAddUp (d: RelatorioSimples): CheckOutcome {
  const total = d.resumo.valorSimplesRecolher
  if (total === null || d.apuracoes.length === 0 || d.apuracoes.some((a) => a.valorSimples === null)) return { status: 'skip' }
  const blocks = d.apuracoes.reduce((s, a) => s + cents(a.valorSimples!), 0)
  const adj = (n: number | null): number => n === null ? 0 : cents(n)
  const expected = blocks + adj(d.outrosAcrescimos) - adj(d.outrasDeducoes) - adj(d.valorDiferido) + adj(d.valorFixoIcms) + adj(d.valorFixoIss)
  return expected === cents(total)
    ? { status: 'pass' }
    : { status: 'fail', message: `the blocks' values (with the footer adjustments) add up to ${expected / 100}, the report's total to recolher is ${total}` }
}

/** Each block's partilha values add up to its `Simples Nacional Total`. */
function partilhaAddsUp (d: RelatorioSimples): CheckOutcome {
  const usable = d.apuracoes.filter((a) => a.partilha !== null && a.valorSimples !== null)
  if (usable.length === 0) return { status: 'skip' }
  const bad = usable.filter((a) => Object.values(a.partilha!).reduce<number>((s, v) => s + (v === null ? 0 : cents(v)), 0) !== cents(a.valorSimples!))
  return bad.length === 0 ? { status: 'pass' } : { status: 'fail', message: `the partilha of block ${bad.map((a) => a.ordem).join(', ')} does not add up to its Simples Nacional total` }
}

export const checks: Array<ConsistencyCheck<RelatorioSimples>> = [
  { name: 'blocks-add-up-to-total', weight: 2, run: blocksAddUp },
  { name: 'partilha-adds-up', weight: 1, run: partilhaAddsUp },
  {
    name: 'cnpj-valid',
    weight: 1,
    run: ({ identificacao: { cnpj } }) => cnpj === null ? { status: 'skip' } : isValidCnpj(cnpj) ? { status: 'pass' } : { status: 'fail', message: 'the CNPJ check digits do not verify' }
  }
]
