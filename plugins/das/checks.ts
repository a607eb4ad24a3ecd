/**
 * Consistency checks of the DAS (documents.md §0.3, §0.5): each passes, fails (a warning,
 * lower confidence) or is skipped when its values are missing.
 */
import type { ConsistencyCheck } from '../../core/plugin-api.js'
import { barcodeAmountCheck, barcodeDateCheck, barcodeIssuerCheck, barcodeNumberCheck, compositionCheck, lineDigitsCheck, rowPeriodsCheck } from '../_shared/simples-nacional/guide.js'
import type { Das } from './parse.js'

export const checks: Array<ConsistencyCheck<Das>> = [
  { name: 'collection-line-digits', weight: 3, run: lineDigitsCheck },
  { name: 'barcode-amount-equals-total', weight: 2, run: barcodeAmountCheck },
  { name: 'barcode-number-equals-printed', weight: 2, run: barcodeNumberCheck },
  { name: 'barcode-issuer-0328', weight: 1, run: barcodeIssuerCheck },
  { name: 'barcode-date-matches', weight: 1, run: barcodeDateCheck },
  { name: 'composition-adds-up', weight: 2, run: compositionCheck },
  { name: 'row-periods-match-header', weight: 1, run: rowPeriodsCheck }
]
