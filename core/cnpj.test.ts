import { describe, expect, it } from 'vitest'
import { cnpjCheckDigits, cnpjChars, cnpjRoot, isValidCnpj, normalizeCnpj } from './cnpj.js'

describe('CNPJ', () => {
  it('verifies numeric and alphanumeric check digits (the Receita Federal CNPJ rules)', () => {
    expect(isValidCnpj('11222333000181')).toBe(true)
    expect(isValidCnpj('99999090910270')).toBe(true)
    expect(isValidCnpj('12ABC34501DE35')).toBe(true)
    expect(isValidCnpj('12abc34501de35')).toBe(true)
    expect(isValidCnpj('11222333000182')).toBe(false)
    expect(isValidCnpj('12ABC34501DE36')).toBe(false)
    expect(isValidCnpj('00000000000000')).toBe(false)
    expect(isValidCnpj('1122233300018A')).toBe(false)
  })

  it('strips the mask and the stray spaces extractors leave', () => {
    expect(cnpjChars('11.222.333/0001-81')).toBe('11222333000181')
    expect(cnpjChars('26.873. 829/0001-92')).toBe('26873829000192')
    expect(cnpjChars('12.ABC.345/01DE-35')).toBe('12ABC34501DE35')
    expect(cnpjChars('11.222.333/0001')).toBeNull()
  })
})

describe('normalizeCnpj', () => {
  it('accepts numeric and alphanumeric CNPJs typed with punctuation or in lower case', () => {
    expect(normalizeCnpj('11.222.333/0001-81')).toBe('11222333000181')
    expect(normalizeCnpj(' 11222333000181 ')).toBe('11222333000181')
    expect(normalizeCnpj('12.abc.345/01de-35')).toBe('12ABC34501DE35')
    expect(normalizeCnpj('12ABC34501DE35')).toBe('12ABC34501DE35')
  })

  it('refuses wrong check digits, letters in the check digits, wrong lengths and repeated digits', () => {
    expect(normalizeCnpj('11.222.333/0001-82')).toBeNull()
    expect(normalizeCnpj('12.abc.345/01de-53')).toBeNull()
    expect(normalizeCnpj('12ABC34501DEA5')).toBeNull()
    expect(normalizeCnpj('1122233300018')).toBeNull()
    expect(normalizeCnpj('112223330001811')).toBeNull()
    expect(normalizeCnpj('11111111111111')).toBeNull()
    expect(normalizeCnpj('12ABC*34501DE35')).toBeNull()
    expect(normalizeCnpj('')).toBeNull()
  })

  it('gives the 8-character root a head office shares with its branches', () => {
    expect(cnpjRoot('12ABC34501DE35')).toBe('12ABC345')
    expect(cnpjRoot('11222333000181')).toBe('11222333')
  })
})

describe('cnpjCheckDigits', () => {
  it('computes the digits of both forms (the Receita Federal CNPJ rules, their examples)', () => {
    expect(cnpjCheckDigits('112223330001')).toBe('81')
    expect(cnpjCheckDigits('12abc34501de')).toBe('35')
    expect(cnpjCheckDigits('999990909102')).toBe('70')
    expect(() => cnpjCheckDigits('12ABC')).toThrow(RangeError)
  })
})
