/**
 * Bytes to text for CSV/TXT ledgers: what the first bytes say the file is, and a
 * streaming decoder that settles the encoding and holds the rest of the file to it.
 *
 * The encodings are the ones Brazilian exporters write: UTF-8 (with or without a BOM)
 * and the Windows "ANSI" code page, Windows-1252, which ISO-8859-1 files are read as.
 * The two differ only in 0x80-0x9F: C1 control characters in ISO-8859-1, printable
 * characters in Windows-1252 (€ ‚ „ … – — ‘ ’ “ ” •). Text never carries C1 controls, so
 * those bytes always mean Windows-1252, as the WHATWG Encoding Standard decodes
 * "iso-8859-1" labels too. Node's TextDecoder('windows-1252') is not used: Node 20
 * decodes it as Latin-1 (0x80 gives U+0080, not €).
 */
import { isAscii, isUtf8 } from 'node:buffer'

export type CsvEncoding = 'utf-8' | 'windows-1252'

/**
 * What the first bytes of a file are, as text: `text` (a CSV/TXT candidate), `utf-16`
 * (a UTF-16 BOM, or every other byte NUL: Excel's "Unicode Text"), `markup` (HTML or
 * XML, which some systems save under an .xls name) or `binary`.
 */
export type TextKind = 'text' | 'utf-16' | 'markup' | 'binary'

const UTF8_BOM = [0xef, 0xbb, 0xbf] as const

/** Whether the bytes start with the UTF-8 byte order mark. */
export function hasUtf8Bom (head: Uint8Array): boolean {
  return head.length >= 3 && head[0] === UTF8_BOM[0] && head[1] === UTF8_BOM[1] && head[2] === UTF8_BOM[2]
}

/**
 * Judges a file by its first bytes (a KiB is plenty): text is any byte but NUL and the
 * C0 controls other than tab, line feed and carriage return. The head may end inside a
 * UTF-8 sequence; the encoding itself is settled later, by the decoder.
 */
export function sniffText (head: Uint8Array): TextKind {
  if (head.length === 0) return 'binary'
  if (head.length >= 2 && ((head[0] === 0xff && head[1] === 0xfe) || (head[0] === 0xfe && head[1] === 0xff))) return 'utf-16'
  const start = hasUtf8Bom(head) ? 3 : 0
  let nuls = 0
  let controls = 0
  let firstVisible = -1
  for (let i = start; i < head.length; i++) {
    const b = head[i]!
    if (b === 0) nuls++
    else if ((b < 0x20 && b !== 0x09 && b !== 0x0a && b !== 0x0d) || b === 0x7f) controls++
    else if (firstVisible === -1 && b !== 0x20 && b !== 0x09 && b !== 0x0a && b !== 0x0d) firstVisible = i
  }
  // UTF-16 without a BOM: ASCII text with a NUL beside every character.
  if (nuls > 0 && nuls * 3 >= head.length - start && controls === 0) return 'utf-16'
  if (nuls > 0 || controls > 0) return 'binary'
  if (firstVisible !== -1 && head[firstVisible] === 0x3c) return 'markup'
  return 'text'
}

/** A stretch of the file that is not text in the file's encoding; `text` is what decoded before it. */
export class DecodeProblem extends Error {
  constructor (
    readonly kind: 'invalid-utf-8' | 'utf-8-after-windows-1252' | 'truncated-utf-8',
    readonly text: string,
    /** The offending bytes, as hex, for the message. */
    readonly bytes: string
  ) {
    super(kind)
    this.name = 'DecodeProblem'
  }
}

/** Windows-1252 characters of 0x80-0x9F; the five bytes the code page leaves undefined keep their C1 code point (WHATWG). */
const CP1252_HIGH = '\u20ac\u0081\u201a\u0192\u201e\u2026\u2020\u2021\u02c6\u2030\u0160\u2039\u0152\u008d\u017d\u008f' +
  '\u0090\u2018\u2019\u201c\u201d\u2022\u2013\u2014\u02dc\u2122\u0161\u203a\u0153\u009d\u017e\u0178'
const C1_RANGE = /[\x80-\x9f]/
const C1_RANGE_ALL = /[\x80-\x9f]/g
/**
 * UTF-8 read as Windows-1252: Ã or Â followed by a continuation byte (the accented letters,
 * º, ª, the no-break space) or the three-byte punctuation and € (E2 80-84 xx). Portuguese
 * text in Windows-1252 puts neither capital right before one of those symbols.
 */
const UTF8_AS_1252 = /[\xc2\xc3][\x80-\xbf]|\xe2[\x80-\x84][\x80-\xbf]/

/**
 * Decodes a CSV file chunk by chunk. A UTF-8 BOM settles UTF-8. Otherwise the encoding
 * stays open while the bytes are ASCII (both encodings read them alike), and the first
 * non-ASCII character settles it: a well-formed UTF-8 sequence means UTF-8, anything
 * else Windows-1252. From then on the whole file is held to it: a byte that is not UTF-8
 * in a UTF-8 file, or a UTF-8 sequence in a Windows-1252 file, is a DecodeProblem (the
 * file mixes encodings), never decoded into the wrong letters.
 */
export class CsvDecoder {
  encoding: CsvEncoding | undefined
  bom = false
  private started = false
  /** Bytes of a character split across chunks (at most 3). */
  private carry: Buffer = Buffer.alloc(0)
  /** Last two bytes of the previous Windows-1252 chunk, to see a UTF-8 sequence split across chunks. */
  private tail = ''

  /** Text of `chunk` (which may be reused by the caller once this returns). */
  decode (input: Uint8Array): string {
    let chunk = Buffer.from(input.buffer, input.byteOffset, input.byteLength)
    if (!this.started) {
      this.started = true
      if (hasUtf8Bom(chunk)) {
        this.bom = true
        this.encoding = 'utf-8'
        chunk = chunk.subarray(3)
      }
    }
    if (this.carry.length > 0 && this.encoding !== 'utf-8') {
      chunk = Buffer.concat([this.carry, chunk])
      this.carry = Buffer.alloc(0)
    }
    if (this.encoding === undefined) {
      if (isAscii(chunk)) return chunk.toString('latin1')
      let k = 0
      while (chunk[k]! < 0x80) k++
      const length = sequenceLength(chunk[k]!)
      if (length > 1 && k + length > chunk.length && continuationsFrom(chunk, k + 1, chunk.length)) {
        // The first non-ASCII character is cut by the chunk's end: decide on the next one.
        this.carry = Buffer.from(chunk.subarray(k))
        return chunk.toString('latin1', 0, k)
      }
      this.encoding = length > 1 && continuationsFrom(chunk, k + 1, k + length) && isUtf8(chunk.subarray(k, k + length)) ? 'utf-8' : 'windows-1252'
    }
    return this.encoding === 'utf-8' ? this.decodeUtf8(chunk) : this.decode1252(chunk)
  }

  /** Call at the end of the file: a character cut short there is a problem. */
  end (): string {
    if (this.carry.length === 0) return ''
    const rest = this.carry
    this.carry = Buffer.alloc(0)
    if (this.encoding === undefined) {
      this.encoding = 'windows-1252'
      return this.decode1252(rest)
    }
    throw new DecodeProblem('truncated-utf-8', '', hex(rest))
  }

  private decodeUtf8 (chunk: Buffer): string {
    let text = ''
    let start = 0
    if (this.carry.length > 0) {
      const need = sequenceLength(this.carry[0]!) - this.carry.length
      const take = Math.min(need, chunk.length)
      const joined = Buffer.concat([this.carry, chunk.subarray(0, take)])
      if (!continuationsFrom(joined, 1, joined.length)) throw new DecodeProblem('invalid-utf-8', '', hex(joined))
      if (take < need) {
        this.carry = joined
        return ''
      }
      if (!isUtf8(joined)) throw new DecodeProblem('invalid-utf-8', '', hex(joined))
      text = joined.toString('utf8')
      this.carry = Buffer.alloc(0)
      start = take
    }
    const end = completeEnd(chunk, start)
    const body = chunk.subarray(start, end)
    if (!isUtf8(body)) {
      const bad = firstInvalidUtf8(body)
      throw new DecodeProblem('invalid-utf-8', text + body.toString('utf8', 0, bad), hex(body.subarray(bad, bad + 4)))
    }
    if (end < chunk.length) this.carry = Buffer.from(chunk.subarray(end))
    return text + body.toString('utf8')
  }

  private decode1252 (chunk: Buffer): string {
    if (chunk.length === 0) return ''
    const raw = chunk.toString('latin1')
    const seam = this.tail + raw.slice(0, 2)
    const split = UTF8_AS_1252.exec(seam)
    if (split !== null && split.index < this.tail.length) throw new DecodeProblem('utf-8-after-windows-1252', '', hex(Buffer.from(split[0], 'latin1')))
    this.tail = raw.slice(-2)
    const found = UTF8_AS_1252.exec(raw)
    if (found !== null) {
      throw new DecodeProblem('utf-8-after-windows-1252', from1252(raw.slice(0, found.index)), hex(Buffer.from(found[0], 'latin1')))
    }
    return from1252(raw)
  }
}

/** Latin-1 text (one character per byte) read as Windows-1252. */
function from1252 (raw: string): string {
  return C1_RANGE.test(raw) ? raw.replace(C1_RANGE_ALL, (c) => CP1252_HIGH[c.charCodeAt(0) - 0x80]!) : raw
}

/** Bytes a UTF-8 sequence starting with `lead` has (1 for ASCII and for bytes that cannot lead). */
function sequenceLength (lead: number): number {
  if (lead >= 0xc2 && lead <= 0xdf) return 2
  if (lead >= 0xe0 && lead <= 0xef) return 3
  if (lead >= 0xf0 && lead <= 0xf4) return 4
  return 1
}

function continuationsFrom (bytes: Uint8Array, from: number, to: number): boolean {
  for (let i = from; i < to; i++) if ((bytes[i]! & 0xc0) !== 0x80) return false
  return true
}

/** Index after the last whole UTF-8 sequence, from the last 3 bytes (malformed input is left to isUtf8). */
function completeEnd (chunk: Buffer, start: number): number {
  for (let i = chunk.length - 1; i >= Math.max(start, chunk.length - 3); i--) {
    const b = chunk[i]!
    if (b < 0x80) return chunk.length
    if (b >= 0xc0) return i + sequenceLength(b) > chunk.length ? i : chunk.length
  }
  return chunk.length
}

/** Offset of the first byte of `bytes` that does not start or continue a well-formed UTF-8 sequence. */
function firstInvalidUtf8 (bytes: Buffer): number {
  let i = 0
  while (i < bytes.length) {
    const b = bytes[i]!
    if (b < 0x80) { i++; continue }
    const length = sequenceLength(b)
    if (length === 1 || i + length > bytes.length || !isUtf8(bytes.subarray(i, i + length))) return i
    i += length
  }
  return bytes.length
}

function hex (bytes: Uint8Array): string {
  return [...bytes].map((b) => `0x${b.toString(16).toUpperCase().padStart(2, '0')}`).join(' ')
}
