import { describe, expect, it } from 'vitest'
import { competence, isoDate, isoDateTime, moneyCents, moneyNumber, normalizeText, numberToCents, percentNumber, textValue } from './values.js'

describe('money', () => {
  it('reads Brazilian amounts to integer cents and JSON numbers', () => {
    expect(moneyCents('1.234,56')).toBe(123_456)
    expect(moneyCents('R$ 0,00')).toBe(0)
    expect(moneyCents('2253,85')).toBe(225_385)
    expect(moneyCents('-40,25')).toBe(-4025)
    expect(moneyCents('12.345.678,90')).toBe(1_234_567_890)
    expect(moneyNumber('1.136,35')).toBe(1136.35)
  })

  it('refuses what is not a two-decimal Brazilian amount instead of guessing', () => {
    for (const text of ['1,234.56', '12,5', '1.23,45', 'abc', '', '1.234', '10']) expect(moneyCents(text)).toBeNull()
  })

  it('sums in cents stay exact where float addition drifts', () => {
    const parts = ['0,10', '0,20', '0,30', '1.000,01'].map((t) => moneyCents(t)!)
    expect(parts.reduce((a, b) => a + b, 0)).toBe(100_061)
    expect(0.1 + 0.2 + 0.3).not.toBe(0.6)
  })
})

describe('dates and competences', () => {
  it('turns dd/mm/aaaa into ISO and refuses days that do not exist', () => {
    expect(isoDate('05/02/2026')).toBe('2026-02-05')
    expect(isoDate('29/02/2024')).toBe('2024-02-29')
    expect(isoDate('29/02/2026')).toBeNull()
    expect(isoDate('2026-02-05')).toBeNull()
  })

  it('reads date-times with or without seconds and the DEC receipt\'s "às"', () => {
    expect(isoDateTime('03/08/2026 14:05:09')).toBe('2026-08-03T14:05:09')
    expect(isoDateTime('03/08/2026 às 14:05:09')).toBe('2026-08-03T14:05:09')
    expect(isoDateTime('03/08/2026 24:05')).toBeNull()
    // The DEC and some receipts print a dash between date and time.
    expect(isoDateTime('05/08/2026 - 18:11:11')).toBe('2026-08-05T18:11:11')
    expect(isoDateTime('05/08/2026-18:11')).toBe('2026-08-05T18:11:00')
    expect(isoDateTime('05/08/2026 - ')).toBeNull()
  })

  it('reads competences as numbers, month names with or without accents, and abbreviations', () => {
    expect(competence('07/2026')).toBe('2026-07')
    expect(competence('Dezembro/2022')).toBe('2022-12')
    expect(competence('março/2025')).toBe('2025-03')
    expect(competence('Jul/2026')).toBe('2026-07')
    expect(competence('14/2026')).toBeNull()
    expect(competence('00/2026')).toBeNull()
    expect(competence('Diversos')).toBeNull()
  })

  it('reads the 13th month and annual periods where documents print them', () => {
    expect(competence('13/2025')).toBe('2025-13')
    expect(competence('Anual/2025')).toBe('2025')
    expect(competence('ANO-CALENDÁRIO 2024')).toBe('2024')
    expect(competence('2025')).toBeNull()
  })

  it('reads a printed text as a value: one space, trimmed, empty as null', () => {
    expect(textValue('  Padaria   Pão\nQuente  ')).toBe('Padaria Pão Quente')
    expect(textValue(' \t ')).toBeNull()
  })

  it('gives the detection copy: accents stripped, upper case, one space', () => {
    expect(normalizeText('  Período   de\nApuração (PA):  ')).toBe('PERIODO DE APURACAO (PA):')
  })
})

describe('percentages and cents', () => {
  it('reads the printed percentages of the documents (documents.md §0.2)', () => {
    expect(percentNumber('3,00 %')).toBe(3)
    expect(percentNumber('6,0000000000000')).toBe(6)
    expect(percentNumber('0,28')).toBe(0.28)
    expect(percentNumber('2.00%')).toBe(2)
    expect(percentNumber('12,5%')).toBe(12.5)
    expect(percentNumber('-1,5 %')).toBe(-1.5)
  })

  it('refuses what is not a percentage', () => {
    for (const text of ['', 'abc', '1,2,3', '1.2.3', '%', 'Não se aplica']) expect(percentNumber(text)).toBeNull()
  })

  it('turns a money number of data back into exact cents', () => {
    expect(numberToCents(0.1 + 0.2)).toBe(30)
    expect(numberToCents(1136.35)).toBe(113_635)
    expect(numberToCents(-40.25)).toBe(-4025)
  })
})
