import { describe, expect, it } from 'vitest'
import * as cnpj from '../cnpj.js'
import { cnpjCheckDigits, cnpjChars, cpfCheckDigits, cpfDigits, isValidCnpj, isValidCpf, CPF_PATTERN } from './tax-ids.js'

describe('CNPJ', () => {
  it('is the one CNPJ module of razao, re-exported for the plugins (its tests: core/cnpj.test.ts)', () => {
    expect([isValidCnpj, cnpjChars, cnpjCheckDigits]).toEqual([cnpj.isValidCnpj, cnpj.cnpjChars, cnpj.cnpjCheckDigits])
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
