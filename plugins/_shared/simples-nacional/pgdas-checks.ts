/**
 * Consistency checks the PGDAS-D documents share (documents.md §0.4, §0.5): the
 * declaration (apuração) number, the receipt number, and RBT12 against the twelve
 * previous months of 2.2. A family module: pgdas-extrato, pgdas-declaracao and
 * pgdas-recibo import it.
 */
import { numberToCents } from '../../../core/plugin-api.js'
import type { CheckOutcome } from '../../../core/plugin-api.js'
import type { ReceitaAnterior, Triple } from './pgdas-tables.js'

/** Day of the year (1-366) of an ISO date. */
function dayOfYear (iso: string): number {
  const [y, m, d] = iso.slice(0, 10).split('-').map(Number) as [number, number, number]
  return Math.round((Date.UTC(y, m - 1, d) - Date.UTC(y, 0, 1)) / 86_400_000) + 1
}

/** `01.07.YYDDD.NNNNNNN-D`, YYDDD the transmission date (documents.md §0.4). */
export function receiptNumberOutcome (numero: string | null, transmitted: string | null): CheckOutcome {
  if (numero === null) return { status: 'skip' }
  const m = /^01\.07\.(\d{5})\.\d{7}-\d$/.exec(numero)
  if (m === null) return { status: 'fail', message: `the receipt number ${numero} is not of the form 01.07.YYDDD.NNNNNNN-D` }
  if (transmitted === null) return { status: 'pass' }
  const expected = `${transmitted.slice(2, 4)}${String(dayOfYear(transmitted)).padStart(3, '0')}`
  return m[1] === expected ? { status: 'pass' } : { status: 'fail', message: `the receipt number's date ${m[1]} is not the transmission date ${transmitted.slice(0, 10)} (${expected})` }
}

/**
 * 17 digits = CNPJ básico + year + month + sequence; sequence 001 is the original, a
 * rectification counts up (documents.md §0.4). `noun` names the number in the message.
 */
export function declarationNumberOutcome (numero: string | null, cnpjBasico: string | null, competencia: string | null, tipo: 'ORIGINAL' | 'RETIFICADORA' | null, noun = 'declaration'): CheckOutcome {
  if (numero === null || cnpjBasico === null || competencia === null) return { status: 'skip' }
  const expected = cnpjBasico + competencia.replace('-', '')
  if (!/^\d{17}$/.test(numero) || !numero.startsWith(expected)) return { status: 'fail', message: `the ${noun} number ${numero} does not start with the CNPJ básico and the period (${expected})` }
  const seq = Number(numero.slice(14))
  if (seq === 0) return { status: 'fail', message: `the ${noun} number's sequence is 000` }
  if (tipo !== null && (seq === 1) !== (tipo === 'ORIGINAL')) return { status: 'fail', message: `sequence ${numero.slice(14)} in the ${noun} number but the ${noun} is ${tipo.toLowerCase()}` }
  return { status: 'pass' }
}

/** RBT12 = the twelve months before the PA listed under 2.2.1 (and 2.2.2), when all twelve are there (documents.md §0.5). */
export function rbt12Outcome (rbt12: Triple | null, months: ReceitaAnterior[] | null, competencia: string | null): CheckOutcome {
  if (rbt12 === null || months === null || competencia === null) return { status: 'skip' }
  const [y, m] = competencia.split('-').map(Number) as [number, number]
  const wanted = Array.from({ length: 12 }, (_, i) => { const d = new Date(Date.UTC(y, m - 13 + i, 1)); return `${d.getUTCFullYear()}-${String(d.getUTCMonth() + 1).padStart(2, '0')}` })
  const rows = wanted.map((p) => months.find((e) => e.competencia === p))
  if (rows.some((r) => r === undefined)) return { status: 'skip' }
  for (const side of ['interno', 'externo'] as const) {
    const total = rbt12[side]
    if (total === null || rows.some((r) => r![side] === null)) continue
    const sum = rows.reduce((a, r) => a + numberToCents(r![side]!), 0)
    if (sum !== numberToCents(total)) return { status: 'fail', message: `the twelve months before the PA (${side}) add up to ${sum / 100}, RBT12 is ${total}` }
  }
  return { status: 'pass' }
}
