/**
 * The character encoding of an upstream XML answer, and a decoder for it that takes the
 * bytes as they arrive. Where the encoding is named: the Content-Type's charset (RFC 7303
 * §3.2), a byte order mark, the XML declaration (XML 1.0 §4.3.3); none of them means UTF-8.
 * When the header and the declaration both name one, they must agree: an answer that says
 * two things about its own bytes is the authority's fault, not ours to guess.
 *
 * Only the encodings an authority plausibly sends are read: UTF-8 (what the NF-e services
 * declare), ISO-8859-1 and US-ASCII. Anything else is refused rather than read as UTF-8:
 * a wrong decoding would hand on a damaged xMotivo or docZip with a 200.
 */

export type AnswerEncoding = 'utf-8' | 'iso-8859-1' | 'us-ascii'

const LABELS: Record<string, AnswerEncoding> = {
  'utf-8': 'utf-8',
  utf8: 'utf-8',
  // IANA's names for ISO-8859-1 and US-ASCII (the character-sets registry).
  'iso-8859-1': 'iso-8859-1',
  iso_8859_1: 'iso-8859-1',
  'iso_8859-1': 'iso-8859-1',
  'iso_8859-1:1987': 'iso-8859-1',
  'iso8859-1': 'iso-8859-1',
  'iso-ir-100': 'iso-8859-1',
  latin1: 'iso-8859-1',
  l1: 'iso-8859-1',
  ibm819: 'iso-8859-1',
  cp819: 'iso-8859-1',
  csisolatin1: 'iso-8859-1',
  'us-ascii': 'us-ascii',
  ascii: 'us-ascii',
  'iso646-us': 'us-ascii',
  'ansi_x3.4-1968': 'us-ascii',
  csascii: 'us-ascii'
}

/**
 * Why an upstream answer is not read: a sentence about the answer ("it holds ..."), which
 * the caller words as the authority's fault (503) or as its HTTP error.
 */
export class AnswerRefused extends Error {
  constructor (why: string) {
    super(why)
    this.name = 'AnswerRefused'
  }
}

/** The charset parameter of a Content-Type, lower case, or undefined. */
export function charsetOf (contentType: string | undefined): string | undefined {
  const m = /;\s*charset\s*=\s*"?([^";\s]+)"?/i.exec(contentType ?? '')
  return m?.[1]?.toLowerCase()
}

function known (label: string, where: string): AnswerEncoding {
  const encoding = LABELS[label.toLowerCase()]
  if (encoding === undefined) throw new AnswerRefused(`its ${where} names the encoding "${label.slice(0, 40)}", which the gateway does not read (UTF-8, ISO-8859-1, US-ASCII)`)
  return encoding
}

/** The declaration is at most this long (an XML declaration is a few dozen characters). */
const MAX_DECLARATION_BYTES = 512

/**
 * Decides the encoding from the header and the first bytes. Returns undefined while the
 * first bytes may still be an unfinished XML declaration (give it more bytes, or `atEnd`).
 */
export function sniffEncoding (head: Buffer, contentTypeCharset: string | undefined, atEnd: boolean): AnswerEncoding | undefined {
  const fromHeader = contentTypeCharset === undefined ? undefined : known(contentTypeCharset, 'Content-Type')
  let fromBytes: AnswerEncoding | undefined
  if (head.length >= 2 && ((head[0] === 0xfe && head[1] === 0xff) || (head[0] === 0xff && head[1] === 0xfe))) {
    throw new AnswerRefused('it is UTF-16 (its byte order mark says so), which the gateway does not read')
  }
  const bom = head.length >= 3 && head[0] === 0xef && head[1] === 0xbb && head[2] === 0xbf
  const start = bom ? 3 : 0
  const opening = Buffer.from('<?xml')
  const seen = head.subarray(start, start + opening.length)
  if (!atEnd && seen.length < opening.length && opening.subarray(0, seen.length).equals(seen)) return undefined
  if (seen.equals(opening)) {
    const close = head.indexOf('?>', start)
    if (close < 0) {
      if (head.length - start > MAX_DECLARATION_BYTES || atEnd) throw new AnswerRefused('its XML declaration does not end')
      return undefined
    }
    const declaration = head.subarray(start, close).toString('latin1')
    const label = /\sencoding\s*=\s*(?:"([^"]*)"|'([^']*)')/.exec(declaration)
    if (label !== null) fromBytes = known(label[1] ?? label[2] ?? '', 'XML declaration')
  }
  if (bom) {
    if (fromBytes !== undefined && fromBytes !== 'utf-8') throw new AnswerRefused(`it starts with a UTF-8 byte order mark but declares ${fromBytes}`)
    fromBytes = 'utf-8'
  }
  if (fromHeader !== undefined && fromBytes !== undefined && fromHeader !== fromBytes) {
    throw new AnswerRefused(`its Content-Type says ${fromHeader} but its XML declaration says ${fromBytes}`)
  }
  return fromHeader ?? fromBytes ?? 'utf-8'
}

/** Turns bytes into text as they arrive; throws AnswerRefused on bytes the encoding does not allow. */
export interface TextDecoding {
  write: (bytes: Buffer) => string
  end: () => string
}

export function decoderFor (encoding: AnswerEncoding): TextDecoding {
  if (encoding === 'utf-8') {
    // fatal: a byte sequence that is not UTF-8 is refused, never replaced by U+FFFD.
    const decoder = new TextDecoder('utf-8', { fatal: true })
    const guard = (decode: () => string): string => {
      try {
        return decode()
      } catch {
        throw new AnswerRefused('it holds bytes that are not UTF-8, the encoding it declares')
      }
    }
    return { write: (bytes) => guard(() => decoder.decode(bytes, { stream: true })), end: () => guard(() => decoder.decode()) }
  }
  // Buffer's latin1 is ISO-8859-1 byte for byte (TextDecoder's "iso-8859-1" is windows-1252).
  return {
    write: (bytes) => {
      if (encoding === 'us-ascii' && bytes.some((b) => b > 0x7f)) throw new AnswerRefused('it holds bytes outside US-ASCII, the encoding it declares')
      return bytes.toString('latin1')
    },
    end: () => ''
  }
}
