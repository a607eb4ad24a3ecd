export { parseAmountText, amountFromNumber, centsToNumber, addCents } from './cents.js'
export type { AmountParse } from './cents.js'
