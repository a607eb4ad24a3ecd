/**
 * Consistency checks of the receipt (documents.md §0.4, §8a). The number checks are the
 * family's (plugins/_shared/simples-nacional/pgdas-checks.ts), as the declaration's are.
 */
import { cnpjChars, isValidCnpj, numberToCents as cents } from '../../core/plugin-api.js'
import type { ConsistencyCheck } from '../../core/plugin-api.js'
import { declarationNumberOutcome, receiptNumberOutcome } from '../_shared/simples-nacional/pgdas-checks.js'
import type { PgdasRecibo } from './parse.js'

export const checks: Array<ConsistencyCheck<PgdasRecibo>> = [
  {
    name: 'declarado-is-exigivel-plus-suspenso',
    weight: 2,
    run: ({ totalDebitoDeclarado: dec, totalDebitoExigivel: exi, totalDebitoSuspenso: sus }) => dec === null || exi === null || sus === null
      ? { status: 'skip' }
      : cents(dec) === cents(exi) + cents(sus) ? { status: 'pass' } : { status: 'fail', message: `declared debt ${dec} differs from payable ${exi} + suspended ${sus}` }
  },
  { name: 'numero-declaracao-matches', weight: 2, run: (d) => declarationNumberOutcome(d.numeroDeclaracao, d.cnpj === null ? null : (cnpjChars(d.cnpj) ?? d.cnpj).slice(0, 8), d.competencia, d.tipoDeclaracao, 'apuração') },
  { name: 'numero-recibo-matches', weight: 1, run: (d) => receiptNumberOutcome(d.numeroRecibo, d.dataHoraTransmissao) },
  {
    name: 'cnpj-valid',
    weight: 1,
    run: ({ cnpj }) => cnpj === null ? { status: 'skip' } : isValidCnpj(cnpj) ? { status: 'pass' } : { status: 'fail', message: `the CNPJ ${cnpj} has wrong check digits` }
  }
]
