export { parseAmountText, amountFromNumber, wholeCents, centsToNumber, addCents } from './cents.js'
export type { AmountParse } from './cents.js'
export { centsToDecimal, decimalToCents } from './decimal.js'
