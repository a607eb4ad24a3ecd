import { describe, expect, it } from 'vitest'
import { readDate, readInteger } from './values.js'

/** The text rules as regexes and Date, as readDate and readInteger applied them before their faster roads for CSV text. */
const BR_DATE = /^(\d{1,2})\/(\d{1,2})\/(\d{4})(?:\s+\d{1,2}:\d{2}(?::\d{2})?)?$/
const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/
function dateByDate (text: string): ReturnType<typeof readDate> {
  const s = text.trim()
  if (s === '') return { kind: 'empty' }
  const parts = BR_DATE.exec(s) ?? ISO_DATE.exec(s)
  if (parts === null) return { kind: 'invalid' }
  const [year, month, day] = BR_DATE.test(s) ? [Number(parts[3]), Number(parts[2]), Number(parts[1])] : [Number(parts[1]), Number(parts[2]), Number(parts[3])]
  const probe = new Date(Date.UTC(year, month - 1, day))
  if (year < 1900 || probe.getUTCFullYear() !== year || probe.getUTCMonth() !== month - 1 || probe.getUTCDate() !== day) return { kind: 'invalid' }
  return { kind: 'ok', iso: probe.toISOString().slice(0, 10) }
}
function integerByRegex (text: string): ReturnType<typeof readInteger> {
  const s = text.trim()
  if (s === '') return { kind: 'empty' }
  return /^-?\d{1,15}$/.test(s) ? { kind: 'ok', value: Number(s) } : { kind: 'invalid' }
}

describe('text dates', () => {
  it('read every day from 1899 to 2101 and the impossible ones as the calendar says, in both notations', () => {
    const texts: string[] = []
    for (let year = 1899; year <= 2101; year += year < 1905 || year > 2095 || year % 100 === 0 ? 1 : 7) {
      for (let month = 0; month <= 13; month++) {
        for (let day = 0; day <= 32; day++) {
          const dd = String(day).padStart(2, '0')
          const mm = String(month).padStart(2, '0')
          texts.push(`${dd}/${mm}/${year}`, `${day}/${month}/${year}`, `${year}-${mm}-${dd}`)
        }
      }
    }
    texts.push('29/02/2000', '29/02/1900', '29/02/2024', '29/02/2023', ' 05/03/2024 ', '05/03/2024 10:30', '2024-03-05T10:30:00Z', '05/03/24', '5-3-2024', '', '   ', '2024/03/05', '00/00/0000')
    // Twice: the second pass answers from the cache of text dates.
    for (let pass = 0; pass < 2; pass++) {
      const differing = texts.filter((t) => JSON.stringify(readDate(t)) !== JSON.stringify(dateByDate(t)))
      expect(differing.slice(0, 10)).toEqual([])
    }
    expect(readDate('29/02/2024')).toEqual({ kind: 'ok', iso: '2024-02-29' })
    expect(readDate('29/02/1900').kind).toBe('invalid')
  })

  it('read a long text (which is not cached) as a short one', () => {
    expect(readDate('05/03/2024 10:30:00')).toEqual({ kind: 'ok', iso: '2024-03-05' })
    expect(readDate(`${'05/03/2024'.padStart(40)}`)).toEqual({ kind: 'ok', iso: '2024-03-05' })
  })
})

describe('text integers', () => {
  it('read digits, signs, spaces and too many digits as the rule says', () => {
    const texts = ['0', '7', '0042', '123456789012345', '1234567890123456', '-5', ' 12 ', '12a', '1.0', '1e3', '', ' ', '+1', '٣', '９']
    for (let i = 0; i < 2000; i++) texts.push(String(i * 7919), String(i).padStart(i % 17, '0'))
    const differing = texts.filter((t) => JSON.stringify(readInteger(t)) !== JSON.stringify(integerByRegex(t)))
    expect(differing).toEqual([])
  })
})
