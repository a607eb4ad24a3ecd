import { describe, expect, it } from 'vitest'
import { DateCell, dateToSerial, serialToISO } from './cells.js'

describe('serialToISO', () => {
  it('converts serials to calendar dates without the host time zone', () => {
    // Runs under TZ=UTC and TZ=America/Sao_Paulo (npm test); the results must not move.
    expect(serialToISO(45000)).toBe('2023-03-15')
    expect(serialToISO(1)).toBe('1900-01-01')
    expect(serialToISO(61)).toBe('1900-03-01')
    expect(serialToISO(2958465)).toBe('9999-12-31')
    expect(serialToISO(43466)).toBe('2019-01-01')
  })

  it('keeps the time of day to the second when it is not midnight', () => {
    expect(serialToISO(45000.5)).toBe('2023-03-15T12:00:00')
    expect(serialToISO(45000 + (13 * 3600 + 14 * 60 + 15) / 86400)).toBe('2023-03-15T13:14:15')
    // 23:59:59.6 rounds to the next day's midnight, as Excel shows it.
    expect(serialToISO(45000 + 86399.6 / 86400)).toBe('2023-03-16')
  })

  it('covers the days Sao Paulo skipped for daylight saving', () => {
    // 2018-11-04 00:00 did not exist in America/Sao_Paulo; local-time readers shift it.
    expect(serialToISO(dateToSerial(2018, 11, 4))).toBe('2018-11-04')
    expect(new DateCell(dateToSerial(2018, 11, 4) + 0.25).toISO()).toBe('2018-11-04T06:00:00')
  })

  it('round-trips calendar dates', () => {
    for (let serial = 30000; serial < 60000; serial += 37) {
      const iso = serialToISO(serial)
      const [y, m, d] = iso.split('-').map(Number) as [number, number, number]
      expect(dateToSerial(y, m, d)).toBe(serial)
    }
  })
})

describe('dayToISO', () => {
  it('agrees with Date for every day from 1900 to 2200', () => {
    for (let serial = 61; serial < dateToSerial(2200, 1, 1); serial++) {
      expect(serialToISO(serial)).toBe(new Date((serial - 25569) * 86_400_000).toISOString().slice(0, 10))
    }
  })
})
