import { describe, expect, it } from 'vitest'
import { isValidCnpj } from '../../../core/extraction/index.js'
import { InputError, normalizeCnpj, readInput } from './input.mjs'

describe('dec-issqn-poa input: CNPJ', () => {
  it('accepts a numeric CNPJ with or without punctuation', () => {
    expect(normalizeCnpj('11.222.333/0001-81')).toBe('11222333000181')
    expect(normalizeCnpj('11222333000181')).toBe('11222333000181')
  })

  it('accepts an alphanumeric CNPJ (letters count as their code minus 48) in any case', () => {
    expect(normalizeCnpj('12.ABC.345/01DE-35')).toBe('12ABC34501DE35')
    expect(normalizeCnpj('12abc34501de35')).toBe('12ABC34501DE35')
  })

  it('agrees with the extraction engine\'s CNPJ check on every changed check digit', () => {
    for (const base of ['11222333000181', '12ABC34501DE35']) {
      for (let d = 0; d <= 99; d++) {
        const candidate = base.slice(0, 12) + String(d).padStart(2, '0')
        expect(normalizeCnpj(candidate) !== null, candidate).toBe(isValidCnpj(candidate))
      }
    }
  })

  it('refuses wrong lengths, letters in the check digits and repeated digits', () => {
    for (const bad of ['1122233300018', '112223330001812', '12ABC34501DEA5', '00000000000000', '11111111111111', '']) expect(normalizeCnpj(bad)).toBeNull()
  })
})

describe('dec-issqn-poa input: the run', () => {
  const good = { razaoSocial: 'A', cnpj: '11222333000181', senha: 's3', inscricaoMunicipal: '1', competenciaAno: '2026', competenciaMes: '7' }

  it('defaults to headless without delay and normalizes the period to MM/YYYY', () => {
    const run = readInput({ empresas: [good, { ...good, competenciaMes: 12, competenciaAno: 2025 }] })
    expect(run).toMatchObject({ headless: true, slowMo: 0, secrets: ['s3', 's3'] })
    expect(run.companies).toEqual([
      { ok: true, company: { razaoSocial: 'A', cnpj: '11222333000181', senha: 's3', inscricaoMunicipal: '1', ano: 2026, mes: 7, competencia: '07/2026' } },
      { ok: true, company: expect.objectContaining({ ano: 2025, mes: 12, competencia: '12/2025' }) }
    ])
  })

  it('collects the passwords of malformed companies too, for redaction', () => {
    expect(readInput({ empresas: [{ ...good, cnpj: 'x', senha: 'pw-bad-cnpj' }] }).secrets).toEqual(['pw-bad-cnpj'])
  })

  it.each([
    [{ ...good, competenciaMes: '0' }, 'competenciaMes must be a month from 1 to 12.'],
    [{ ...good, competenciaMes: '7.5' }, 'competenciaMes must be a month from 1 to 12.'],
    [{ ...good, competenciaAno: '202' }, 'competenciaAno must be a 4-digit year (2000 or later).'],
    [{ ...good, competenciaAno: 1999 }, 'competenciaAno must be a 4-digit year (2000 or later).'],
    [{ ...good, razaoSocial: 5 }, 'razaoSocial must be a string.'],
    [{ ...good, cnpj: 11222333000181 }, 'cnpj is required (14 characters).']
  ])('makes a failed item of %j', (company, error) => {
    expect(readInput({ empresas: [company] }).companies).toEqual([{ ok: false, cnpj: expect.any(String), competencia: expect.any(String), error: `empresas[0]: ${error}` }])
  })

  it('refuses a run that cannot start', () => {
    for (const input of [null, 'x', [], {}, { empresas: {} }, { empresas: [good], slowMo: 'fast' }, { empresas: Array(501).fill(good) }]) {
      expect(() => readInput(input)).toThrow(InputError)
    }
  })
})
