/**
 * Consistency checks of the DEC print: the guide against the declaration, and the
 * guide's barcode (documents.md §0.3: segment 1, value id 6, modulo-10 check digits).
 */
import { isValidCnpj, readCollectionLine } from '../../core/plugin-api.js'
import type { ConsistencyCheck } from '../../core/plugin-api.js'
import type { DecIssqnPoa } from './parse.js'

const cents = (n: number): number => Math.round(n * 100)

export const checks: Array<ConsistencyCheck<DecIssqnPoa>> = [
  {
    name: 'guide-matches-declaration',
    weight: 2,
    run: ({ guia, financeiro }) => guia === null || guia.valorImposto === null || financeiro.totalRecolher === null
      ? { status: 'skip' }
      : cents(guia.valorImposto) === cents(financeiro.totalRecolher)
        ? { status: 'pass' }
        : { status: 'fail', message: `the guide's tax ${guia.valorImposto} differs from the declaration's total to recolher ${financeiro.totalRecolher}` }
  },
  {
    name: 'barcode-check-digits',
    weight: 2,
    run: ({ guia }) => {
      if (guia === null || guia.linhaDigitavel === null) return { status: 'skip' }
      const line = readCollectionLine(guia.linhaDigitavel)
      if (line === null) return { status: 'fail', message: 'the collection line has not 48 digits starting with 8' }
      if (line.barcode[1] !== '1' || line.barcode[2] !== '6') return { status: 'fail', message: `the collection line is not a municipal one with value id 6 (segment ${line.barcode[1]}, value id ${line.barcode[2]})` }
      return line.valid ? { status: 'pass' } : { status: 'fail', message: `the collection line's check digits do not verify (${line.failures.join(', ')})` }
    }
  },
  {
    name: 'barcode-amount',
    weight: 1,
    run: ({ guia }) => {
      if (guia === null || guia.linhaDigitavel === null || guia.valorPagar === null) return { status: 'skip' }
      const line = readCollectionLine(guia.linhaDigitavel)
      if (line === null) return { status: 'skip' }
      return line.amountCents === cents(guia.valorPagar) ? { status: 'pass' } : { status: 'fail', message: `the barcode's amount ${line.amountCents / 100} differs from the guide's value to pay ${guia.valorPagar}` }
    }
  },
  {
    name: 'cnpj-valid',
    weight: 1,
    run: ({ empresa: { cnpj } }) => cnpj === null ? { status: 'skip' } : isValidCnpj(cnpj) ? { status: 'pass' } : { status: 'fail', message: 'the CNPJ check digits do not verify' }
  }
]
