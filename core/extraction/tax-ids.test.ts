import { describe, expect, it } from 'vitest'
import { cnpjCheckDigits, cnpjChars, cpfCheckDigits, cpfDigits, isValidCnpj, isValidCpf, CPF_PATTERN } from './tax-ids.js'

describe('CNPJ', () => {
  it('verifies numeric and alphanumeric check digits (tax-protocols.md 3.5-3.6)', () => {
    expect(isValidCnpj('11222333000181')).toBe(true)
    expect(isValidCnpj('99999090910270')).toBe(true)
    expect(isValidCnpj('12ABC34501DE35')).toBe(true)
    expect(isValidCnpj('12abc34501de35')).toBe(true)
    expect(isValidCnpj('11222333000182')).toBe(false)
    expect(isValidCnpj('12ABC34501DE36')).toBe(false)
    expect(isValidCnpj('00000000000000')).toBe(false)
    expect(isValidCnpj('1122233300018A')).toBe(false)
  })

  it('computes the check digits a generator needs, for both forms', () => {
    expect(cnpjCheckDigits('112223330001')).toBe('81')
    expect(cnpjCheckDigits('12ABC34501DE')).toBe('35')
    expect(() => cnpjCheckDigits('1122233300')).toThrow(RangeError)
  })

  it('strips the mask and the stray spaces extractors leave', () => {
    expect(cnpjChars('11.222.333/0001-81')).toBe('11222333000181')
    expect(cnpjChars('26.873. 829/0001-92')).toBe('26873829000192')
    expect(cnpjChars('12.ABC.345/01DE-35')).toBe('12ABC34501DE35')
    expect(cnpjChars('11.222.333/0001')).toBeNull()
  })
})

describe('CPF', () => {
  it('verifies the two modulo-11 check digits and refuses all-equal numbers', () => {
    expect(isValidCpf('52998224725')).toBe(true)
    expect(isValidCpf('52998224726')).toBe(false)
    expect(isValidCpf('11111111111')).toBe(false)
    expect(isValidCpf('5299822472')).toBe(false)
    expect(isValidCpf('5299822472A')).toBe(false)
  })

  it('computes the check digits a generator needs', () => {
    expect(cpfCheckDigits('529982247')).toBe('25')
    expect(isValidCpf(`123456789${cpfCheckDigits('123456789')}`)).toBe(true)
  })

  it('reads the printed forms and its pattern finds them in a line', () => {
    expect(cpfDigits('529.982.247-25')).toBe('52998224725')
    expect(cpfDigits('529 982 247 25')).toBe('52998224725')
    expect(cpfDigits('529.982.247')).toBeNull()
    expect(new RegExp(`CPF: (${CPF_PATTERN})`).exec('CPF: 529.982.247-25 Nome')?.[1]).toBe('529.982.247-25')
  })
})
