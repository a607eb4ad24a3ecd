import { describe, expect, it } from 'vitest'
import { TextDocument } from '../../core/extraction/index.js'
import { checks } from './checks.js'
import { isValidCpf } from '../../core/plugin-api.js'
import { buildKey, keyCheckDigit, splitKey } from './key.js'
import type { Danfse } from './parse.js'

/** The real v1.0 key quoted in documents.md §7. */
const REAL_KEY = '29192072218294792000110000000000017126094422711907'
const run = (name: string, data: Partial<Danfse>) => checks.find((c) => c.name === name)!.run(data as Danfse, new TextDocument([]))

describe('nfse-danfse: access key and document checks', () => {
  it('splits the real key and verifies its modulo-11 check digit', () => {
    expect(splitKey(REAL_KEY)).toEqual({ municipio: '2919207', ambiente: '2', tipoInscricao: '2', inscricao: '18294792000110', numero: '0000000000171', aamm: '2609', codigo: '442271190', dv: '7' })
    expect(keyCheckDigit(REAL_KEY.slice(0, 49))).toBe(7)
    expect(run('chave-estrutura', { chaveAcesso: REAL_KEY })).toEqual({ status: 'pass' })
  })

  it('fails a key with one digit changed, and one whose month is not a month', () => {
    const tampered = REAL_KEY.slice(0, 30) + String((Number(REAL_KEY[30]) + 1) % 10) + REAL_KEY.slice(31)
    expect(run('chave-estrutura', { chaveAcesso: tampered })).toMatchObject({ status: 'fail' })
    const month13 = buildKey({ ...splitKey(REAL_KEY)!, aamm: '2613' })
    expect(run('chave-estrutura', { chaveAcesso: month13 })).toEqual({ status: 'fail', message: "the access key's AAMM 2613 is not a month" })
  })

  it('accepts an alphanumeric issuer CNPJ inside the key (the Receita Federal CNPJ rules: 12ABC34501DE35)', () => {
    const key = buildKey({ municipio: '4314902', ambiente: '1', tipoInscricao: '2', inscricao: '12ABC34501DE35', numero: '42', aamm: '2608', codigo: '123456789' })
    expect(key).toHaveLength(50)
    expect(run('chave-estrutura', { chaveAcesso: key })).toEqual({ status: 'pass' })
    expect(run('chave-emitente', { chaveAcesso: key, prestador: { documento: '12ABC34501DE35' } as Danfse['prestador'] })).toEqual({ status: 'pass' })
  })

  it('compares the key with the printed number, issuer and issue month', () => {
    expect(run('chave-numero', { chaveAcesso: REAL_KEY, numeroNfse: '171' })).toEqual({ status: 'pass' })
    expect(run('chave-numero', { chaveAcesso: REAL_KEY, numeroNfse: '172' })).toMatchObject({ status: 'fail' })
    expect(run('chave-emitente', { chaveAcesso: REAL_KEY, prestador: { documento: '18294792000111' } as Danfse['prestador'] })).toMatchObject({ status: 'fail' })
    expect(run('chave-aamm', { chaveAcesso: REAL_KEY, dataHoraEmissao: '2026-09-14T10:00:00' })).toEqual({ status: 'pass' })
    expect(run('chave-aamm', { chaveAcesso: REAL_KEY, dataHoraEmissao: '2026-10-01T10:00:00' })).toEqual({ status: 'fail', message: "the access key's AAMM 2609 differs from the issue date's 2610" })
    expect(run('chave-numero', { chaveAcesso: null, numeroNfse: '171' })).toEqual({ status: 'skip' })
  })

  it('compares the v2.0 footer stub with the header', () => {
    expect(run('canhoto-confere', { canhoto: { numeroNfse: '171', chaveAcesso: REAL_KEY }, numeroNfse: '171', chaveAcesso: REAL_KEY })).toEqual({ status: 'pass' })
    expect(run('canhoto-confere', { canhoto: { numeroNfse: '171', chaveAcesso: REAL_KEY }, numeroNfse: '117', chaveAcesso: null })).toEqual({ status: 'fail', message: 'the footer stub prints another number than the header' })
    expect(run('canhoto-confere', { canhoto: null, numeroNfse: '171', chaveAcesso: REAL_KEY })).toEqual({ status: 'skip' })
  })

  it('verifies CNPJ (numeric and alphanumeric) and CPF check digits of the parties', () => {
    expect(isValidCpf('11144477735')).toBe(true)
    expect(isValidCpf('11144477736')).toBe(false)
    const parties = (...docs: string[]) => ({ prestador: { documento: docs[0] }, tomador: { documento: docs[1] ?? null }, intermediario: null, destinatario: null }) as unknown as Partial<Danfse>
    expect(run('documentos-validos', parties('11222333000181', '12ABC34501DE35'))).toEqual({ status: 'pass' })
    expect(run('documentos-validos', parties('11222333000181', '11144477735'))).toEqual({ status: 'pass' })
    expect(run('documentos-validos', parties('11222333000181', '12ABC34501DE36'))).toEqual({ status: 'fail', message: 'wrong check digits in 12ABC34501DE36' })
  })
})
