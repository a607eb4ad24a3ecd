import { describe, expect, it } from 'vitest'
import { displayDate, isValidTimeZone, isoWithOffset, pdfDate } from './time.js'

describe('signing time formats', () => {
  const at = new Date('2026-03-10T15:04:05.007Z')

  it('writes ISO 8601 with the zone\'s offset, whatever the host zone', () => {
    expect(isoWithOffset(at, 'America/Sao_Paulo')).toBe('2026-03-10T12:04:05.007-03:00')
    expect(isoWithOffset(at, 'UTC')).toBe('2026-03-10T15:04:05.007+00:00')
    expect(isoWithOffset(at, 'Asia/Kolkata')).toBe('2026-03-10T20:34:05.007+05:30')
  })

  it('writes the PDF date of /M with an apostrophe offset, or Z in UTC', () => {
    expect(pdfDate(at, 'America/Sao_Paulo')).toBe("D:20260310120405-03'00'")
    expect(pdfDate(at, 'UTC')).toBe('D:20260310150405Z')
  })

  it('prints the Brazilian day-first form on the stamp', () => {
    expect(displayDate(at, 'America/Sao_Paulo')).toBe('10/03/2026 12:04:05 (UTC-03:00)')
  })

  it('follows a daylight-saving change from one instant to the next, in both directions', () => {
    // New York moved from -05:00 to -04:00 at 2026-03-08T07:00:00Z.
    const before = new Date('2026-03-08T06:59:59.999Z')
    const after = new Date('2026-03-08T07:00:00.000Z')
    expect(isoWithOffset(before, 'America/New_York')).toBe('2026-03-08T01:59:59.999-05:00')
    expect(isoWithOffset(after, 'America/New_York')).toBe('2026-03-08T03:00:00.000-04:00')
    expect(pdfDate(before, 'America/New_York')).toBe("D:20260308015959-05'00'")
    expect(displayDate(after, 'America/New_York')).toBe('08/03/2026 03:00:00 (UTC-04:00)')
  })

  it('knows a real zone from a made-up one', () => {
    expect(isValidTimeZone('America/Manaus')).toBe(true)
    expect(isValidTimeZone('Mars/Olympus')).toBe(false)
  })
})
