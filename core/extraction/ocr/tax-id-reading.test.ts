import { describe, expect, it } from 'vitest'
import { isValidCnpj } from '../../cnpj.js'
import { isValidCpf } from '../tax-ids.js'
import { chooseTaxId, mendTaxIds, printTaxId } from './tax-id-reading.js'

describe('choosing a CNPJ or CPF read by OCR by its check digits', () => {
  it('keeps a reading that verifies, numeric or alphanumeric', () => {
    expect(chooseTaxId('CNPJ', '11222333000181')).toBe('11222333000181')
    expect(chooseTaxId('CNPJ', '12abc34501de35')).toBe('12ABC34501DE35')
    expect(chooseTaxId('CPF', '12345678909')).toBe('12345678909')
  })

  it('recovers a CNPJ or CPF from a reading with letters read for digits, when the check digits then hold', () => {
    expect(chooseTaxId('CNPJ', '11222333OOO181')).toBe('11222333000181')
    expect(chooseTaxId('CNPJ', '1I222333000181')).toBe('11222333000181')
    expect(chooseTaxId('CNPJ', '11222333000lB1')).toBe('11222333000181')
    expect(chooseTaxId('CNPJ', '12345678000I9S')).toBe('12345678000195')
    expect(chooseTaxId('CPF', 'I2345678909')).toBe('12345678909')
    expect(chooseTaxId('CPF', '123456789O9')).toBe('12345678909')
    expect(chooseTaxId('CPF', '1Z3456789O9')).toBe('12345678909')
  })

  it('takes one of Tesseract\'s own alternatives for a character when it alone makes the digits verify', () => {
    // The 8 of 0001-81 read as 3, Tesseract's second choice an 8.
    const alternatives: string[] = []
    alternatives[12] = '8'
    expect(chooseTaxId('CNPJ', '11222333000131', alternatives)).toBe('11222333000181')
    // Without the alternative nothing makes it verify: refused, not guessed.
    expect(chooseTaxId('CNPJ', '11222333000131')).toBeNull()
  })

  it('refuses a reading whose digits cannot be made to verify: never a value with wrong check digits', () => {
    expect(chooseTaxId('CNPJ', '11222333000182')).toBeNull()
    expect(chooseTaxId('CNPJ', '11222333OOO182')).toBeNull()
    expect(chooseTaxId('CPF', '12345678900')).toBeNull()
    // A mark that looks like no digit.
    expect(chooseTaxId('CPF', '12345678#09')).toBeNull()
    // The wrong length.
    expect(chooseTaxId('CNPJ', '1122233300018')).toBeNull()
    // A digit is not turned into a letter blindly: 12.ABC.345/01DE-35 with its B read as 8.
    expect(chooseTaxId('CNPJ', '12A8C34501DE35')).toBeNull()
  })

  it('refuses when two readings verify: an alphanumeric CNPJ as read, and the numeric one its letters look like', () => {
    // I and O are worth 25 and 31 in the alphanumeric check digits, 1 and 0 as digits: at
    // positions 1 and 9 (both weighed 5, then 6) the differences add up to multiples of 11,
    // so both readings verify with the same check digits.
    const read = 'I1222333O00181'
    expect(isValidCnpj(read)).toBe(true)
    expect(isValidCnpj('11222333000181')).toBe(true)
    expect(chooseTaxId('CNPJ', read)).toBeNull()
  })

  it('never answers anything but a valid CNPJ or null, whatever it is given', () => {
    const chars = '0123456789OIlSBZG|'
    let seed = 7
    const next = (): number => { seed = (seed * 1103515245 + 12345) % 2 ** 31; return seed }
    for (let n = 0; n < 2000; n++) {
      const read = Array.from({ length: 14 }, () => chars[next() % chars.length]).join('')
      const chosen = chooseTaxId('CNPJ', read)
      if (chosen !== null) expect(isValidCnpj(chosen)).toBe(true)
      const cpf = chooseTaxId('CPF', read.slice(0, 11))
      if (cpf !== null) expect(isValidCpf(cpf)).toBe(true)
    }
  })
})

describe('mending the tax ids of an OCR run', () => {
  it('replaces a masked CNPJ or CPF by its valid reading, printed with the standard mask', () => {
    expect(mendTaxIds('CNPJ: 11.222.333/OOO1-81')).toBe('CNPJ: 11.222.333/0001-81')
    expect(mendTaxIds('CNPJ: 11,222.333/0001-81')).toBe('CNPJ: 11.222.333/0001-81')
    expect(mendTaxIds('11.222.333l0001-8I')).toBe('11.222.333/0001-81')
    expect(mendTaxIds('11.222.333/ 0001-81')).toBe('11.222.333/0001-81')
    expect(mendTaxIds('CPF 123.456.789-O9 Telefone')).toBe('CPF 123.456.789-09 Telefone')
    expect(mendTaxIds('12.abc.345/01de-35')).toBe('12.ABC.345/01DE-35')
  })

  it('leaves alone what it cannot verify, and what is not a tax id', () => {
    expect(mendTaxIds('CNPJ: 11.222.333/0001-82')).toBe('CNPJ: 11.222.333/0001-82')
    expect(mendTaxIds('Período: 01/10/2026 a 31/10/2026')).toBe('Período: 01/10/2026 a 31/10/2026')
    expect(mendTaxIds('Valor Total 1.234,56')).toBe('Valor Total 1.234,56')
    expect(mendTaxIds('07.20.26305.1234567-8')).toBe('07.20.26305.1234567-8')
    expect(mendTaxIds('Razão Social: ABC.DEF.GHI/JKLM-NO')).toBe('Razão Social: ABC.DEF.GHI/JKLM-NO')
  })

  it('prints the masks', () => {
    expect(printTaxId('CNPJ', '11222333000181')).toBe('11.222.333/0001-81')
    expect(printTaxId('CPF', '12345678909')).toBe('123.456.789-09')
  })
})
