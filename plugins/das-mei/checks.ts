/**
 * Consistency checks of the DAS-MEI (documents.md §0.3, §0.5, §5). The guide checks run on
 * every month of the file: one failing month fails the check (its message names the month);
 * a check none of the months could run is skipped.
 */
import type { CheckOutcome, ConsistencyCheck } from '../../core/plugin-api.js'
import { barcodeAmountCheck, barcodeDateCheck, barcodeIssuerCheck, barcodeNumberCheck, cents, compositionCheck, lineDigitsCheck, rowPeriodsCheck } from '../_shared/simples-nacional/guide.js'
import type { DasMei, GuiaMei } from './parse.js'

function everyGuide (check: (g: GuiaMei) => CheckOutcome): (d: DasMei) => CheckOutcome {
  return (d) => {
    let passed = false
    for (const [i, g] of d.guias.entries()) {
      const outcome = check(g)
      if (outcome.status === 'fail') return { status: 'fail', message: `guide ${i + 1} (${g.competencia ?? 'period unread'}): ${outcome.message}` }
      if (outcome.status === 'pass') passed = true
    }
    return passed ? { status: 'pass' } : { status: 'skip' }
  }
}

const CODES = { inss: '0151', icms: '0083', iss: '0125' } as const

/** The `Tributos` line lists all three taxes; rows exist for those above zero and carry the same principal. */
function tributosMatchRows (g: GuiaMei): CheckOutcome {
  const t = g.tributosMei
  if (t === null || g.composicao.length === 0) return { status: 'skip' }
  for (const [tax, code] of Object.entries(CODES) as Array<[keyof typeof CODES, string]>) {
    const listed = t[tax]
    if (listed === null) return { status: 'skip' }
    const row = g.composicao.find((r) => r.codigo === code)
    const printed = row?.principal ?? 0
    if (cents(printed) !== cents(listed)) return { status: 'fail', message: `Tributos lists ${tax.toUpperCase()} ${listed}, the composition ${printed}` }
  }
  return { status: 'pass' }
}

/** A MEI's business name ends with the owner's CPF digits (§5); when it does, they are the printed CPF's. */
function cpfInName ({ cpf, razaoSocial }: DasMei): CheckOutcome {
  const tail = razaoSocial === null ? null : /(\d{11})$/.exec(razaoSocial)?.[1] ?? null
  if (cpf === null || tail === null) return { status: 'skip' }
  return tail === cpf ? { status: 'pass' } : { status: 'fail', message: 'the CPF digits at the end of the business name differ from the printed CPF' }
}

export const checks: Array<ConsistencyCheck<DasMei>> = [
  { name: 'collection-line-digits', weight: 3, run: everyGuide(lineDigitsCheck) },
  { name: 'barcode-amount-equals-total', weight: 2, run: everyGuide(barcodeAmountCheck) },
  { name: 'barcode-number-equals-printed', weight: 2, run: everyGuide(barcodeNumberCheck) },
  { name: 'barcode-issuer-0328', weight: 1, run: everyGuide(barcodeIssuerCheck) },
  { name: 'barcode-date-matches', weight: 1, run: everyGuide(barcodeDateCheck) },
  { name: 'composition-adds-up', weight: 2, run: everyGuide(compositionCheck) },
  { name: 'row-periods-match-header', weight: 1, run: everyGuide(rowPeriodsCheck) },
  { name: 'tributos-match-composition', weight: 1, run: everyGuide(tributosMatchRows) },
  { name: 'cpf-in-name', weight: 1, run: cpfInName }
]
