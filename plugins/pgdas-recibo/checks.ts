/**
 * Consistency checks of the receipt (documents.md §0.4, §8a). The number checks repeat
 * those of plugins/pgdas-declaracao/checks.ts: plugins share no code.
 */
import { cnpjChars, isValidCnpj, moneyCents } from '../../core/plugin-api.js'
import type { CheckOutcome, ConsistencyCheck } from '../../core/plugin-api.js'
import type { PgdasRecibo } from './parse.js'

const cents = (n: number): number => moneyCents(n.toFixed(2).replace('.', ',')) ?? Number.NaN

function dayOfYear (iso: string): number {
  const [y, m, d] = iso.slice(0, 10).split('-').map(Number) as [number, number, number]
  return Math.round((Date.UTC(y, m - 1, d) - Date.UTC(y, 0, 1)) / 86_400_000) + 1
}

/** `01.07.YYDDD.NNNNNNN-D`, YYDDD the transmission date. */
function receiptNumber ({ numeroRecibo: numero, dataHoraTransmissao: at }: PgdasRecibo): CheckOutcome {
  if (numero === null) return { status: 'skip' }
  const m = /^01\.07\.(\d{5})\.\d{7}-\d$/.exec(numero)
  if (m === null) return { status: 'fail', message: `the receipt number ${numero} is not of the form 01.07.YYDDD.NNNNNNN-D` }
  if (at === null) return { status: 'pass' }
  const expected = `${at.slice(2, 4)}${String(dayOfYear(at)).padStart(3, '0')}`
  return m[1] === expected ? { status: 'pass' } : { status: 'fail', message: `the receipt number's date ${m[1]} is not the transmission date ${at.slice(0, 10)} (${expected})` }
}

/** 17 digits = CNPJ básico + year + month + sequence; sequence 001 is the original. */
function declarationNumber ({ numeroDeclaracao: numero, cnpj, competencia, tipoDeclaracao: tipo }: PgdasRecibo): CheckOutcome {
  if (numero === null || cnpj === null || competencia === null) return { status: 'skip' }
  const expected = (cnpjChars(cnpj) ?? cnpj).slice(0, 8) + competencia.replace('-', '')
  if (!numero.startsWith(expected)) return { status: 'fail', message: `the apuração number ${numero} does not start with the CNPJ básico and the period (${expected})` }
  const seq = Number(numero.slice(14))
  if (seq === 0) return { status: 'fail', message: 'the apuração number\'s sequence is 000' }
  if (tipo !== null && (seq === 1) !== (tipo === 'ORIGINAL')) return { status: 'fail', message: `sequence ${numero.slice(14)} in the apuração number but the declaration is ${tipo.toLowerCase()}` }
  return { status: 'pass' }
}

export const checks: Array<ConsistencyCheck<PgdasRecibo>> = [
  {
    name: 'declarado-is-exigivel-plus-suspenso',
    weight: 2,
    run: ({ totalDebitoDeclarado: dec, totalDebitoExigivel: exi, totalDebitoSuspenso: sus }) => dec === null || exi === null || sus === null
      ? { status: 'skip' }
      : cents(dec) === cents(exi) + cents(sus) ? { status: 'pass' } : { status: 'fail', message: `declared debt ${dec} differs from payable ${exi} + suspended ${sus}` }
  },
  { name: 'numero-declaracao-matches', weight: 2, run: declarationNumber },
  { name: 'numero-recibo-matches', weight: 1, run: receiptNumber },
  {
    name: 'cnpj-valid',
    weight: 1,
    run: ({ cnpj }) => cnpj === null ? { status: 'skip' } : isValidCnpj(cnpj) ? { status: 'pass' } : { status: 'fail', message: `the CNPJ ${cnpj} has wrong check digits` }
  }
]
