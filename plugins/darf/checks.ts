/**
 * Consistency checks of the DARF (documents.md §0.3, §0.5): each passes, fails (with a
 * warning and lower confidence) or is skipped when its values are missing. Sums are made
 * in integer cents.
 */
import { numberToCents as cents, readCollectionLine } from '../../core/plugin-api.js'
import type { CheckOutcome, ConsistencyCheck } from '../../core/plugin-api.js'
import type { Darf, DarfTotais } from './parse.js'


/** Issuer codes of a DARF's barcode (positions 16-19): SENDA/Sicalc and the old IRPF program. */
export const DARF_ISSUERS = ['0385', '0064']

/**
 * principal + multa + juros = total; null when it cannot be told. A null multa or juros is
 * usually a blank cell (nothing owed) and adds 0; but it may also be an amount the parser could
 * not place in its column, so a row that does not add up with a null in it is unknown, not false.
 */
function addsUp (a: DarfTotais): boolean | null {
  if (a.principal === null || a.total === null) return null
  if (cents(a.principal) + cents(a.multa ?? 0) + cents(a.juros ?? 0) === cents(a.total)) return true
  return a.multa === null || a.juros === null ? null : false
}

function rowsAddUp (d: Darf): CheckOutcome {
  const verdicts = d.tributos.map(addsUp)
  if (verdicts.length === 0 || verdicts.every((v) => v === null)) return { status: 'skip' }
  const bad = verdicts.flatMap((v, i) => v === false ? [d.tributos[i]!.codigoReceita ?? `row ${i + 1}`] : [])
  return bad.length === 0 ? { status: 'pass' } : { status: 'fail', message: `principal + multa + juros differs from the total in the row of ${bad.join(', ')}` }
}

function totaisAddUp (d: Darf): CheckOutcome {
  if (d.totais === null) return { status: 'skip' }
  const own = addsUp(d.totais)
  if (own === false) return { status: 'fail', message: 'in Totais, principal + multa + juros differs from the total' }
  const rows = d.tributos.map((t) => t.total)
  if (d.totais.total === null || rows.length === 0 || rows.some((t) => t === null)) return own === null ? { status: 'skip' } : { status: 'pass' }
  const sum = rows.reduce<number>((a, t) => a + cents(t!), 0)
  return sum === cents(d.totais.total) ? { status: 'pass' } : { status: 'fail', message: `the composition rows add up to ${sum / 100}, Totais prints ${d.totais.total}` }
}

/** The document's total: Totais (SENDA) or box 10 and the row totals agree with it. */
function totalMatches (d: Darf): CheckOutcome {
  const other = d.totais?.total ?? (d.tributos.length === 1 ? d.tributos[0]!.total : null)
  if (d.valorTotal === null || other === null || d.layout === 'CAMPOS_NUMERADOS') return { status: 'skip' }
  return cents(other) === cents(d.valorTotal) ? { status: 'pass' } : { status: 'fail', message: `Valor Total do Documento ${d.valorTotal} differs from Totais ${other}` }
}

function lineVerifies (d: Darf): CheckOutcome {
  if (d.linhaDigitavel === null) return { status: 'skip' }
  const line = readCollectionLine(d.linhaDigitavel)
  if (line === null) return { status: 'fail', message: 'the collection line is not a FEBRABAN collection line' }
  if (!line.valid) return { status: 'fail', message: `the collection line's check digits do not verify (${line.failures.join(', ')})` }
  if (!DARF_ISSUERS.includes(line.issuer)) return { status: 'fail', message: `the barcode's issuer ${line.issuer} is not a DARF issuer (${DARF_ISSUERS.join(', ')})` }
  return { status: 'pass' }
}

function barcodeAmount (d: Darf): CheckOutcome {
  const line = d.linhaDigitavel === null ? null : readCollectionLine(d.linhaDigitavel)
  // Value ids 7 and 9 carry a reference, not the amount (FEBRABAN); nothing to compare then.
  if (line === null || d.valorTotal === null || !['6', '8'].includes(line.barcode[2]!)) return { status: 'skip' }
  return line.amountCents === cents(d.valorTotal) ? { status: 'pass' } : { status: 'fail', message: `the barcode holds ${line.amountCents / 100}, the document's total is ${d.valorTotal}` }
}

function numberInBarcode (d: Darf): CheckOutcome {
  // Positions 25-41 of RFB barcodes since 2021 hold the document number (documents.md §0.3).
  if (d.codigoBarras === null || d.numeroDocumento === null) return { status: 'skip' }
  return d.codigoBarras.slice(24, 41) === d.numeroDocumento ? { status: 'pass' } : { status: 'fail', message: `the barcode does not hold the printed document number ${d.numeroDocumento}` }
}

function stubAgrees (d: Darf): CheckOutcome {
  const c = d.canhoto
  if (c === null) return { status: 'skip' }
  const pairs: Array<[string, unknown, unknown]> = [['CNPJ/CPF', c.cnpjCpf, d.cnpjCpf], ['number', c.numeroDocumento, d.numeroDocumento], ['payment date', c.pagarAte, d.pagarAte], ['amount', c.valor, d.valorTotal]]
  const compared = pairs.filter(([, a, b]) => a !== null && b !== null)
  if (compared.length === 0) return { status: 'skip' }
  const bad = compared.filter(([, a, b]) => a !== b).map(([name]) => name)
  return bad.length === 0 ? { status: 'pass' } : { status: 'fail', message: `the stub differs from the header in ${bad.join(', ')}` }
}

function copiesAgree (d: Darf): CheckOutcome {
  if (d.vias === null || d.vias.quantidade < 2) return { status: 'skip' }
  return d.vias.divergencias.length === 0 ? { status: 'pass' } : { status: 'fail', message: `the copies differ in ${d.vias.divergencias.join(', ')}` }
}

export const checks: Array<ConsistencyCheck<Darf>> = [
  { name: 'collection-line', weight: 3, run: lineVerifies },
  { name: 'barcode-amount', weight: 2, run: barcodeAmount },
  { name: 'document-number-in-barcode', weight: 2, run: numberInBarcode },
  { name: 'rows-add-up', weight: 2, run: rowsAddUp },
  { name: 'totais-add-up', weight: 2, run: totaisAddUp },
  { name: 'total-matches-totais', weight: 1, run: totalMatches },
  { name: 'stub-agrees', weight: 1, run: stubAgrees },
  { name: 'copies-agree', weight: 2, run: copiesAgree }
]
