/**
 * Whether a file's cross-reference data can be trusted for an incremental update. Our
 * update chains to the newest section with /Prev (ISO 32000-1 §7.5.6), so every section
 * on that chain must parse and every in-use entry must point at its object; otherwise a
 * reader that follows the chain meets holes, and poppler, pdf.js and qpdf fall back to
 * scanning the file (the signed update would then sit on a structure they guess at).
 *
 * pdf-lib ignores cross-reference data: it reads objects in file order, later ones
 * replacing earlier ones, which is the reconstruction those readers do. So a damaged
 * file still loads; this check tells whether it may be updated in place.
 */
import { PDFArray, PDFDict, PDFName, PDFNumber, PDFObjectParser, PDFRawStream, decodePDFRawStream } from 'pdf-lib'
import type { PDFContext, PDFObject } from 'pdf-lib'

/** Thrown for cross-reference data an update cannot chain to; `reason` is for the warning or refusal. */
export class DamagedCrossReference extends Error {
  constructor (readonly reason: string) {
    super(reason)
    this.name = 'DamagedCrossReference'
  }
}

const isSpace = (b: number | undefined): boolean => b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09 || b === 0x0c || b === 0x00

/** The object number of an `N G obj` header at `offset` (white space before it allowed), or -1. */
export function objectNumberAt (bytes: Uint8Array, offset: number): number {
  let i = offset
  while (i < bytes.length && isSpace(bytes[i])) i++
  const readInt = (): number => {
    const start = i
    let n = 0
    while (i < bytes.length && bytes[i]! >= 0x30 && bytes[i]! <= 0x39 && i - start < 10) n = n * 10 + bytes[i++]! - 0x30
    return i === start ? -1 : n
  }
  const number = readInt()
  if (number < 0 || !isSpace(bytes[i])) return -1
  while (i < bytes.length && isSpace(bytes[i])) i++
  if (readInt() < 0 || !isSpace(bytes[i])) return -1
  while (i < bytes.length && isSpace(bytes[i])) i++
  return bytes[i] === 0x6f && bytes[i + 1] === 0x62 && bytes[i + 2] === 0x6a ? number : -1
}

const latin1 = (bytes: Uint8Array, start: number, end: number): string => Buffer.from(bytes.buffer, bytes.byteOffset + start, end - start).toString('latin1')

interface Section { trailer: PDFDict, offsets: Array<[number, number]> }

/**
 * A classic table at `offset`: its in-use entries as [object number, offset] and its
 * trailer. Read byte by byte (no string per entry): this runs on every file signed, and
 * a tokenizing version cost 1 ms on a 100-page file, a sixth of its whole signature.
 */
function readTable (bytes: Uint8Array, offset: number, context: PDFContext): Section {
  let i = offset
  const skipSpace = (): void => { while (i < bytes.length && isSpace(bytes[i])) i++ }
  const readInt = (): number => {
    const start = i
    let n = 0
    while (i < bytes.length && bytes[i]! >= 0x30 && bytes[i]! <= 0x39 && i - start < 12) n = n * 10 + bytes[i++]! - 0x30
    return i === start ? -1 : n
  }
  skipSpace()
  if (latin1(bytes, i, Math.min(bytes.length, i + 4)) !== 'xref') throw new DamagedCrossReference(`no cross-reference table at byte ${offset}`)
  i += 4
  const offsets: Array<[number, number]> = []
  for (;;) {
    skipSpace()
    if (i >= bytes.length) throw new DamagedCrossReference(`the cross-reference table at byte ${offset} has no trailer`)
    if (bytes[i] === 0x74) break
    const first = readInt()
    skipSpace()
    const count = readInt()
    if (first < 0 || count < 0) throw new DamagedCrossReference(`the cross-reference table at byte ${offset} has a malformed subsection`)
    for (let n = 0; n < count; n++) {
      skipSpace()
      const at = readInt()
      skipSpace()
      const generation = readInt()
      skipSpace()
      const kind = bytes[i++]
      if (at < 0 || generation < 0 || (kind !== 0x6e && kind !== 0x66)) {
        throw new DamagedCrossReference(`the cross-reference table at byte ${offset} is truncated or has a malformed entry`)
      }
      if (kind === 0x6e) offsets.push([first + n, at])
    }
  }
  if (latin1(bytes, i, Math.min(bytes.length, i + 7)) !== 'trailer') throw new DamagedCrossReference(`the cross-reference table at byte ${offset} has no trailer`)
  const trailer = PDFObjectParser.forBytes(bytes.subarray(i + 7), context).parseObject()
  if (!(trailer instanceof PDFDict)) throw new DamagedCrossReference(`the trailer after byte ${offset} is not a dictionary`)
  return { trailer, offsets }
}

/** A cross-reference stream at `offset`: its type-1 entries and its dictionary. */
function readStream (bytes: Uint8Array, offset: number, context: PDFContext): Section {
  const header = /^\s*\d+\s+\d+\s+obj\b/.exec(latin1(bytes, offset, Math.min(bytes.length, offset + 64)))
  const object = header === null ? undefined : PDFObjectParser.forBytes(bytes.subarray(offset + header[0].length), context).parseObject()
  if (!(object instanceof PDFRawStream) || object.dict.get(PDFName.of('Type')) !== PDFName.of('XRef')) {
    throw new DamagedCrossReference(`no cross-reference section at byte ${offset}`)
  }
  const { dict } = object
  const w = dict.lookup(PDFName.of('W'))
  const size = dict.lookup(PDFName.of('Size'))
  const widths = w instanceof PDFArray ? w.asArray().map((n) => (n instanceof PDFNumber ? n.asNumber() : -1)) : []
  if (widths.length !== 3 || widths.some((n) => n < 0 || n > 8) || !(size instanceof PDFNumber)) throw new DamagedCrossReference(`the cross-reference stream at byte ${offset} has no valid /W or /Size`)
  const index = dict.lookup(PDFName.of('Index'))
  const ranges = index instanceof PDFArray ? index.asArray().map((n) => (n instanceof PDFNumber ? n.asNumber() : 0)) : [0, size.asNumber()]
  const width = widths[0]! + widths[1]! + widths[2]!
  const data = unpredicted(decodePDFRawStream(object).decode(), dict.lookup(PDFName.of('DecodeParms')), width)
  const field = (at: number, length: number, fallback: number): number => {
    if (length === 0) return fallback
    let n = 0
    for (let k = 0; k < length; k++) n = n * 256 + data[at + k]!
    return n
  }
  const offsets: Array<[number, number]> = []
  let at = 0
  for (let r = 0; r + 1 < ranges.length; r += 2) {
    for (let n = 0; n < ranges[r + 1]!; n++, at += width) {
      if (at + width > data.length) throw new DamagedCrossReference(`the cross-reference stream at byte ${offset} is shorter than its /Index says`)
      if (field(at, widths[0]!, 1) === 1) offsets.push([ranges[r]! + n, field(at + widths[0]!, widths[1]!, 0)])
    }
  }
  return { trailer: dict, offsets }
}

/**
 * Undoes a PNG predictor (/Predictor 10 to 15, ISO 32000-1 §7.4.4.4), which writers such
 * as qpdf and Word put on cross-reference streams; pdf-lib's decoder only inflates. Each
 * row is a filter-type byte and `columns` bytes of one entry.
 */
function unpredicted (data: Uint8Array, params: unknown, columns: number): Uint8Array {
  const predictor = params instanceof PDFDict ? params.lookup(PDFName.of('Predictor')) : undefined
  if (!(predictor instanceof PDFNumber) || predictor.asNumber() < 10) return data
  const rows = Math.floor(data.length / (columns + 1))
  const out = new Uint8Array(rows * columns)
  for (let r = 0; r < rows; r++) {
    const kind = data[r * (columns + 1)]
    const row = data.subarray(r * (columns + 1) + 1, (r + 1) * (columns + 1))
    const at = r * columns
    for (let c = 0; c < columns; c++) {
      // One byte per pixel: "left" is the previous byte of this row, "up" the same byte of the previous row.
      const left = c > 0 ? out[at + c - 1]! : 0
      const up = r > 0 ? out[at - columns + c]! : 0
      const upLeft = r > 0 && c > 0 ? out[at - columns + c - 1]! : 0
      let value = row[c]!
      if (kind === 1) value += left
      else if (kind === 2) value += up
      else if (kind === 3) value += (left + up) >> 1
      else if (kind === 4) {
        const p = left + up - upLeft
        const [pa, pb, pc] = [Math.abs(p - left), Math.abs(p - up), Math.abs(p - upLeft)]
        value += pa <= pb && pa <= pc ? left : pb <= pc ? up : upLeft
      }
      out[at + c] = value & 255
    }
  }
  return out
}

/** What the chain of sections says, newest first: where each object is, and the encryption entries. */
export interface CrossReferences {
  /** The newest in-use offset of each object stored plainly (not in an object stream). */
  offsets: Map<number, number>
  /** The first /Encrypt and /ID met along the chain (an update should repeat them; not all writers do). */
  encrypt: PDFObject | undefined
  id: PDFObject | undefined
}

/**
 * Follows the chain from the newest section (`startXref`) through /Prev and /XRefStm and
 * checks that each in-use entry points at an `N G obj` header of the same number. Throws
 * DamagedCrossReference naming the first fault. The work is bounded by the file: each
 * section is read once, each entry costs a look at a few bytes.
 */
export function checkCrossReferences (bytes: Uint8Array, startXref: number, context: PDFContext): CrossReferences {
  const found: CrossReferences = { offsets: new Map(), encrypt: undefined, id: undefined }
  const pending = [startXref]
  const seen = new Set<number>()
  while (pending.length > 0) {
    const offset = pending.pop()!
    if (seen.has(offset)) continue
    seen.add(offset)
    if (offset >= bytes.length) throw new DamagedCrossReference(`a cross-reference offset (${offset}) points past the end of the file`)
    const isTable = /^\s*xref\b/.test(latin1(bytes, offset, Math.min(bytes.length, offset + 16)))
    let section: Section
    try {
      section = isTable ? readTable(bytes, offset, context) : readStream(bytes, offset, context)
    } catch (err) {
      if (err instanceof DamagedCrossReference) throw err
      throw new DamagedCrossReference(`the cross-reference section at byte ${offset} cannot be read`)
    }
    for (const [number, at] of section.offsets) {
      if (at >= bytes.length || objectNumberAt(bytes, at) !== number) {
        throw new DamagedCrossReference(`the cross-reference entry of object ${number} points at byte ${at}, where that object is not`)
      }
      if (!found.offsets.has(number)) found.offsets.set(number, at)
    }
    found.encrypt ??= section.trailer.get(PDFName.of('Encrypt'))
    found.id ??= section.trailer.get(PDFName.of('ID'))
    // Popped last-in first: the hidden stream of a hybrid section is read before the older sections.
    for (const key of ['Prev', 'XRefStm']) {
      const next = section.trailer.get(PDFName.of(key))
      if (next instanceof PDFNumber) pending.push(next.asNumber())
    }
  }
  return found
}
