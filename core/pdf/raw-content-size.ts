/**
 * A bound on what a PDF's streams inflate to, read from the raw bytes with no parser, so
 * that it holds for files pdf-lib cannot parse or walk (content-size.ts measures pages
 * through pdf-lib, and a file it rejects would reach pdf.js unmeasured; pdf.js repairs far
 * more: a page tree without /Type, /Kids that is not an array). The scan finds every
 * stream the way pdf.js's own recovery does when the cross-reference table is useless:
 * a dictionary, the `stream` keyword, data up to `endstream` (ISO 32000-1 7.3.8; /Length
 * is not trusted, pdf.js does not trust a wrong one either).
 *
 * Counted: every stream pdf.js may decode while reading text (content streams, forms,
 * fonts, object and cross-reference streams). Not counted: images, which the text layer
 * never decodes (pdf.js's text extraction skips an image XObject), unless the stream is
 * named as a page's /Contents, where pdf.js decodes whatever it is. Deflate is inflated
 * with a ceiling (stopping as soon as it is passed), ASCIIHex and ASCII85 are decoded, so
 * that a chain such as [/ASCII85Decode /FlateDecode] is measured too; image codecs count
 * at their stored size; LZW and run-length at 20 times it; any other filter followed by a
 * further filter cannot be measured and counts as past the ceiling.
 */
import { inflateSync } from 'node:zlib'
import { EngineError } from '../errors.js'

/** One stream past the ceiling, or all of them together past the total. */
export interface RawContentExcess {
  /** Object number of the stream, when its `N G obj` header was found. */
  object?: number
  /** True when a page names the stream as its /Contents. */
  pageContent?: boolean
  /** Decoded bytes counted, when the total was passed. */
  totalBytes?: number
}

const EXPANDING_FILTER_RATIO = 20
/** How far back from `>>` the scan looks for the dictionary's `<<`: stream dictionaries are small. */
const MAX_DICT_BYTES = 64 * 1024
const IMAGE_CODECS = new Set(['DCTDecode', 'DCT', 'JPXDecode', 'JBIG2Decode', 'CCITTFaxDecode', 'CCF'])

/** Where the dictionary ending just before `end` starts (its `<<`), nesting counted; -1 when not found. */
function dictStart (text: string, end: number): number {
  let depth = 0
  const floor = Math.max(0, end - MAX_DICT_BYTES)
  for (let i = end - 1; i > floor; i--) {
    const pair = text.slice(i - 1, i + 1)
    if (pair === '>>') { depth++; i-- } else if (pair === '<<') {
      depth--
      if (depth === 0) return i - 1
      i--
    }
  }
  return -1
}

export function filterNames (dict: string): string[] {
  const m = /\/Filter\s*(\/[^\s/<>[\]()]+|\[[^\]]*\])/.exec(dict)
  if (m === null) return []
  return [...m[1]!.matchAll(/\/([^\s/<>[\]()]+)/g)].map((n) => n[1]!)
}

export function decodeAsciiHex (data: Buffer): Buffer {
  const text = data.toString('latin1')
  const end = text.indexOf('>')
  const digits = (end === -1 ? text : text.slice(0, end)).replace(/[^0-9A-Fa-f]/g, '')
  return Buffer.from(digits.length % 2 === 0 ? digits : `${digits}0`, 'hex')
}

/**
 * ASCII85 (ISO 32000-1 7.4.3), stopping once past `ceiling` bytes (`z` makes 4 of 1). Read
 * byte by byte: reportlab filters every page it writes through it, so the stamp's corner scan
 * decodes it for each page. Bytes outside `!`..`u` (whitespace among them) are skipped.
 */
export function decodeAscii85 (data: Uint8Array, ceiling: number): Buffer {
  const bytes = Buffer.isBuffer(data) ? data : Buffer.from(data.buffer, data.byteOffset, data.byteLength)
  const found = bytes.indexOf('~>')
  const stop = found === -1 ? bytes.length : found
  const out = Buffer.allocUnsafe(Math.min(stop * 4, ceiling + 8))
  let length = 0
  // The group's digits so far, as a number (85^5 < 2^53, so it stays exact); written modulo 2^32.
  let value = 0
  let count = 0
  for (let i = 0; i < stop; i++) {
    if (length > ceiling) break
    const ch = bytes[i]!
    if (ch === 0x7a && count === 0) { out.fill(0, length, length + 4); length += 4; continue }
    const c = ch - 33
    if (c < 0 || c > 84) continue
    value = value * 85 + c
    if (++count === 5) {
      out[length++] = (value >>> 24) & 0xff
      out[length++] = (value >>> 16) & 0xff
      out[length++] = (value >>> 8) & 0xff
      out[length++] = value & 0xff
      value = 0
      count = 0
    }
  }
  if (count > 1) {
    // A final partial group is padded with `u` (84), and gives one byte fewer than its digits.
    for (let k = count; k < 5; k++) value = value * 85 + 84
    for (let k = 0; k < count - 1; k++) out[length++] = (value >>> (24 - 8 * k)) & 0xff
  }
  return out.subarray(0, length)
}

/** Decoded size of one stream's data through its filters, or `ceiling + 1` once past `ceiling`. */
export function decodedLength (raw: Buffer, filters: readonly string[], ceiling: number, isContent: boolean): number {
  let data = raw
  for (const [i, filter] of filters.entries()) {
    const last = i === filters.length - 1
    if (filter === 'FlateDecode' || filter === 'Fl') {
      try {
        data = inflateSync(data, { maxOutputLength: Math.max(1, ceiling + 1), finishFlush: 2 /* Z_SYNC_FLUSH: a truncated stream is read as far as it goes */ })
      } catch (err) {
        if ((err as { code?: unknown }).code === 'ERR_BUFFER_TOO_LARGE') return ceiling + 1
        // Damaged data: a reader stops there too; what is stored is counted.
      }
    } else if (filter === 'ASCIIHexDecode' || filter === 'AHx') {
      data = decodeAsciiHex(data)
    } else if (filter === 'ASCII85Decode' || filter === 'A85') {
      data = decodeAscii85(data, ceiling)
    } else if (!last) {
      return ceiling + 1
    } else if (IMAGE_CODECS.has(filter) && !isContent) {
      return data.length
    } else {
      return data.length * EXPANDING_FILTER_RATIO
    }
    if (data.length > ceiling) return ceiling + 1
  }
  return data.length
}

/** Object numbers named by /Contents entries (a page's content streams) in `text`. */
function contentRefs (text: string, into: Set<number>): void {
  // A reference or an array of them (nested arrays too: readers flatten them), up to the next key.
  for (const m of text.matchAll(/\/Contents((?:\s|\d|R|\[|\])+)/g)) {
    for (const r of m[1]!.matchAll(/(\d+)\s+\d+\s+R/g)) into.add(Number(r[1]))
  }
}

/** A stream found in the raw bytes: its object number when its header was found, its dictionary's text ('' when not found) and where its data lies. */
export interface RawStream { object?: number, dict: string, start: number, end: number }

export function findStreams (text: string): RawStream[] {
  const streams: RawStream[] = []
  const keyword = />>\s*stream(?:\r\n|\r|\n)/g
  let m: RegExpExecArray | null
  while ((m = keyword.exec(text)) !== null) {
    const start = m.index + m[0].length
    const dictFrom = dictStart(text, m.index + 2)
    const header = dictFrom === -1 ? null : /(\d+)\s+\d+\s+obj\s*$/.exec(text.slice(Math.max(0, dictFrom - 32), dictFrom))
    const endAt = text.indexOf('endstream', start)
    const end = endAt === -1 ? text.length : endAt
    streams.push({ ...(header === null ? {} : { object: Number(header[1]) }), dict: dictFrom === -1 ? '' : text.slice(dictFrom, m.index + 2), start, end })
    keyword.lastIndex = end
  }
  return streams
}

/**
 * The first excess found: a stream that decodes past `maxStreamBytes`, or all counted
 * streams together past `maxTotalBytes`; undefined when the file stays within both.
 */
export function rawContentExcess (bytes: Uint8Array, maxStreamBytes: number, maxTotalBytes: number): RawContentExcess | undefined {
  const data = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  const text = data.toString('latin1')
  const streams = findStreams(text)
  const contents = new Set<number>()
  contentRefs(text, contents)
  // Page dictionaries may sit in object streams: their /Contents are read after inflating them.
  for (const s of streams) {
    if (!/\/Type\s*\/ObjStm\b/.test(s.dict)) continue
    const filters = filterNames(s.dict)
    if (filters.length !== 1 || (filters[0] !== 'FlateDecode' && filters[0] !== 'Fl')) continue
    try {
      contentRefs(inflateSync(data.subarray(s.start, s.end), { maxOutputLength: maxStreamBytes + 1, finishFlush: 2 }).toString('latin1'), contents)
    } catch {
      // Past the ceiling or damaged: the stream itself is measured below.
    }
  }
  let total = 0
  for (const s of streams) {
    const isContent = s.object !== undefined && contents.has(s.object)
    if (!isContent && /\/Subtype\s*\/Image\b/.test(s.dict)) continue
    const size = decodedLength(data.subarray(s.start, s.end), filterNames(s.dict), Math.min(maxStreamBytes, maxTotalBytes - total), isContent)
    if (size > maxStreamBytes) return s.object === undefined ? {} : { object: s.object, ...(isContent ? { pageContent: true } : {}) }
    total += size
    if (total > maxTotalBytes) return { totalBytes: total }
  }
  return undefined
}

/** Defaults of the bound: a stream as large as a page's content may be (content-size.ts), and eight times that in all. */
export const DEFAULT_MAX_STREAM_BYTES = 8 << 20
export const DEFAULT_MAX_RAW_TOTAL_BYTES = 64 << 20

const mib = (bytes: number): string => `${(bytes / (1 << 20)).toFixed(1)} MiB`

/**
 * Throws EngineError PDF_CONTENT_TOO_LARGE when `rawContentExcess` finds one; run before
 * any parser sees the file, whether or not pdf-lib can parse it.
 */
export function refuseRawContentBombs (bytes: Uint8Array, maxStreamBytes = DEFAULT_MAX_STREAM_BYTES, maxTotalBytes = DEFAULT_MAX_RAW_TOTAL_BYTES): void {
  const excess = rawContentExcess(bytes, maxStreamBytes, maxTotalBytes)
  if (excess === undefined) return
  if (excess.totalBytes !== undefined) {
    throw new EngineError('PDF_CONTENT_TOO_LARGE', `The PDF's streams would inflate to more than ${mib(maxTotalBytes)} together; no tax document holds so much. The file may be crafted.`, { maxTotalContentBytes: maxTotalBytes })
  }
  const which = excess.object === undefined ? 'A stream' : `Object ${excess.object}${excess.pageContent === true ? ' (a page\'s content)' : ''}`
  throw new EngineError('PDF_CONTENT_TOO_LARGE', `${which} of the PDF would inflate past ${mib(maxStreamBytes)} (or cannot be measured); no tax document holds so much. The file may be crafted.`, { ...(excess.object === undefined ? {} : { object: excess.object }), maxPageContentBytes: maxStreamBytes })
}
