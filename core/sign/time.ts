/**
 * The one signing instant, written three ways: ISO 8601 with offset for the API,
 * a PDF date for the signature dictionary's /M (ISO 32000-1 §7.9.4), and the
 * Brazilian display form printed on the stamp and the final page. All three come
 * from the same Date and the configured IANA time zone, never the host's zone.
 */

interface ZonedParts {
  year: string
  month: string
  day: string
  hour: string
  minute: string
  second: string
  /** Minutes east of UTC. */
  offsetMinutes: number
}

const formatters = new Map<string, Intl.DateTimeFormat>()

function formatterFor (timeZone: string): Intl.DateTimeFormat {
  let f = formatters.get(timeZone)
  if (f === undefined) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone, hourCycle: 'h23', year: 'numeric', month: '2-digit', day: '2-digit',
      hour: '2-digit', minute: '2-digit', second: '2-digit', timeZoneName: 'longOffset'
    })
    formatters.set(timeZone, f)
  }
  return f
}

/** True when `timeZone` is an IANA name this runtime knows. */
export function isValidTimeZone (timeZone: string): boolean {
  try { formatterFor(timeZone); return true } catch { return false }
}

/**
 * Each zone's UTC offset during the last UTC minute asked about. formatToParts is the
 * costly step (10-60 µs a call, a few per cent of a one-page signature, which needs the
 * same instant three times: `signedAt`, /M and the printed time); the fields themselves
 * follow from the offset. Offsets change only at whole minutes (tz transitions fall on
 * local wall-clock minutes), so within one UTC minute the cached offset is exact.
 */
const lastOffset = new Map<string, { minute: number, offsetMinutes: number }>()

function offsetMinutesAt (date: Date, timeZone: string): number {
  const minute = Math.floor(date.getTime() / 60_000)
  const last = lastOffset.get(timeZone)
  if (last !== undefined && last.minute === minute) return last.offsetMinutes
  const name = formatterFor(timeZone).formatToParts(date).find((p) => p.type === 'timeZoneName')?.value ?? ''
  const match = /GMT([+-])(\d{2}):(\d{2})/.exec(name)
  const offsetMinutes = match === null ? 0 : (match[1] === '-' ? -1 : 1) * (Number(match[2]) * 60 + Number(match[3]))
  lastOffset.set(timeZone, { minute, offsetMinutes })
  return offsetMinutes
}

const two = (n: number): string => String(n).padStart(2, '0')

function zoned (date: Date, timeZone: string): ZonedParts {
  const offsetMinutes = offsetMinutesAt(date, timeZone)
  // The wall-clock time in the zone, read with the UTC getters of a shifted instant.
  const local = new Date(date.getTime() + offsetMinutes * 60_000)
  return {
    year: String(local.getUTCFullYear()), month: two(local.getUTCMonth() + 1), day: two(local.getUTCDate()),
    hour: two(local.getUTCHours()), minute: two(local.getUTCMinutes()), second: two(local.getUTCSeconds()), offsetMinutes
  }
}

function offsetText (minutes: number, separator: string): { sign: string, hh: string, mm: string, text: string } {
  const sign = minutes < 0 ? '-' : '+'
  const abs = Math.abs(minutes)
  const hh = String(Math.floor(abs / 60)).padStart(2, '0')
  const mm = String(abs % 60).padStart(2, '0')
  return { sign, hh, mm, text: `${sign}${hh}${separator}${mm}` }
}

/** `2026-11-21T23:30:00.000-03:00` */
export function isoWithOffset (date: Date, timeZone: string): string {
  const p = zoned(date, timeZone)
  const ms = String(date.getUTCMilliseconds()).padStart(3, '0')
  return `${p.year}-${p.month}-${p.day}T${p.hour}:${p.minute}:${p.second}.${ms}${offsetText(p.offsetMinutes, ':').text}`
}

/** `D:20261121233000-03'00'` (ISO 32000-1 §7.9.4); `Z` when the zone is UTC. */
export function pdfDate (date: Date, timeZone: string): string {
  const p = zoned(date, timeZone)
  const o = offsetText(p.offsetMinutes, '')
  const zone = p.offsetMinutes === 0 ? 'Z' : `${o.sign}${o.hh}'${o.mm}'`
  return `D:${p.year}${p.month}${p.day}${p.hour}${p.minute}${p.second}${zone}`
}

/** `21/11/2026 23:30:00 (UTC-03:00)`, as printed on the stamp and the final page. */
export function displayDate (date: Date, timeZone: string): string {
  const p = zoned(date, timeZone)
  return `${p.day}/${p.month}/${p.year} ${p.hour}:${p.minute}:${p.second} (UTC${offsetText(p.offsetMinutes, ':').text})`
}
