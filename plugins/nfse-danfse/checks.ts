/**
 * Consistency checks of the DANFSe (documents.md §0.5, §7): the access key's structure and
 * check digit, the number, issuer and month it embeds against the printed ones, the
 * parties' check digits (CNPJ numeric or alphanumeric, CPF), and the net value.
 */
import { isValidCnpj, isValidCpf, numberToCents as cents } from '../../core/plugin-api.js'
import type { CheckOutcome, ConsistencyCheck } from '../../core/plugin-api.js'
import { keyCheckDigit, splitKey } from './key.js'
import type { Danfse } from './parse.js'

const skip: CheckOutcome = { status: 'skip' }
const pass: CheckOutcome = { status: 'pass' }
const fail = (message: string): CheckOutcome => ({ status: 'fail', message })

function keyStructure (key: string | null): CheckOutcome {
  if (key === null) return skip
  const k = splitKey(key)
  if (k === null) return fail('the access key does not have the 50-position shape')
  const month = Number(k.aamm.slice(2))
  if (!['1', '2'].includes(k.tipoInscricao)) return fail(`registration type ${k.tipoInscricao} in the access key is neither 1 (CPF) nor 2 (CNPJ)`)
  if (month < 1 || month > 12) return fail(`the access key's AAMM ${k.aamm} is not a month`)
  if (k.tipoInscricao === '2' ? !isValidCnpj(k.inscricao) : !isValidCpf(k.inscricao.slice(3))) return fail('the issuer document inside the access key has wrong check digits')
  const dv = keyCheckDigit(key.slice(0, 49))
  return String(dv) === k.dv ? pass : fail(`the access key's check digit is ${k.dv}, modulo 11 gives ${dv}`)
}

/** Printed party documents that can be verified: CNPJ (both forms) and CPF; a NIF is not. */
function documentsValid (d: Danfse): CheckOutcome {
  const docs = [d.prestador, d.tomador, d.intermediario, d.destinatario].map((p) => p?.documento ?? null).filter((x): x is string => x !== null && /^[0-9A-Z]{11}(?:[0-9A-Z]{3})?$/.test(x))
  if (docs.length === 0) return skip
  const bad = docs.filter((x) => x.length === 14 ? !isValidCnpj(x) : !isValidCpf(x))
  return bad.length === 0 ? pass : fail(`wrong check digits in ${bad.join(', ')}`)
}

function netValue (d: Danfse): CheckOutcome {
  const v = d.valores
  if (v === null || v.valorServico === null || v.valorLiquido === null) return skip
  const less = [v.descontoCondicionado, v.descontoIncondicionado, v.issqnRetido, v.totalRetencoes].reduce<number>((a, x) => a + (x === null ? 0 : cents(x)), 0)
  const expected = cents(v.valorServico) - less
  return expected === cents(v.valorLiquido) ? pass : fail(`service value less discounts and withholdings is ${expected / 100}, the net value printed is ${v.valorLiquido}`)
}

export const checks: Array<ConsistencyCheck<Danfse>> = [
  { name: 'chave-estrutura', weight: 2, run: (d) => keyStructure(d.chaveAcesso) },
  {
    name: 'chave-numero',
    weight: 2,
    run: ({ chaveAcesso, numeroNfse }) => {
      const k = chaveAcesso === null ? null : splitKey(chaveAcesso)
      if (k === null || numeroNfse === null) return skip
      return BigInt(k.numero) === BigInt(numeroNfse) ? pass : fail(`the access key holds NFS-e number ${Number(k.numero)}, the DANFSe prints ${numeroNfse}`)
    }
  },
  {
    name: 'chave-emitente',
    weight: 2,
    run: ({ chaveAcesso, prestador }) => {
      const k = chaveAcesso === null ? null : splitKey(chaveAcesso)
      const doc = prestador?.documento ?? null
      if (k === null || doc === null || !/^[0-9A-Z]{11}(?:[0-9A-Z]{3})?$/.test(doc)) return skip
      return k.inscricao === doc.padStart(14, '0') ? pass : fail(`the access key holds issuer ${k.inscricao}, the DANFSe prints ${doc}`)
    }
  },
  {
    name: 'chave-aamm',
    weight: 1,
    run: ({ chaveAcesso, dataHoraEmissao }) => {
      const k = chaveAcesso === null ? null : splitKey(chaveAcesso)
      if (k === null || dataHoraEmissao === null) return skip
      const aamm = dataHoraEmissao.slice(2, 4) + dataHoraEmissao.slice(5, 7)
      return k.aamm === aamm ? pass : fail(`the access key's AAMM ${k.aamm} differs from the issue date's ${aamm}`)
    }
  },
  {
    name: 'canhoto-confere',
    weight: 1,
    run: ({ canhoto, numeroNfse, chaveAcesso }) => {
      if (canhoto === null) return skip
      const pairs = [[canhoto.numeroNfse, numeroNfse, 'number'], [canhoto.chaveAcesso, chaveAcesso, 'access key']].filter(([a, b]) => a !== null && b !== null)
      if (pairs.length === 0) return skip
      const differ = pairs.filter(([a, b]) => a !== b).map(([, , what]) => what)
      return differ.length === 0 ? pass : fail(`the footer stub prints another ${differ.join(' and ')} than the header`)
    }
  },
  { name: 'documentos-validos', weight: 1, run: documentsValid },
  { name: 'valor-liquido', weight: 1, run: netValue }
]
