/**
 * Counts and sizes a PDF declares, checked against what its bytes can hold before any
 * parser allocates for them. pdf-lib trusts them: a 517-byte file whose cross-reference
 * stream declared `/Index [0 2147483647]` with `/W [0 0 0]` made it build one entry (and
 * one cached reference) per declared object, about 230 bytes and 7 µs each, and held a
 * pool thread for tens of seconds at 2 GB. pdf.js allocates a predictor's row from
 * /Columns × /Colors × /BitsPerComponent before reading any data.
 *
 * Read from the raw bytes, like raw-content-size.ts, so the check holds for files no
 * parser accepts; each stream dictionary is parsed on its own. What is checked:
 * - cross-reference streams (ISO 32000-1 §7.5.8): /Size, /W and /Index are direct
 *   integers; three widths of 0 to 8 bytes, not all 0; /Index pairs within /Size; their
 *   entries fit in the stream's decoded data; and all streams' entries together are no
 *   more than the objects the file holds, nor more than MAX_XREF_ENTRIES;
 * - object streams (§7.5.7): /N and /First are direct non-negative integers, and the N
 *   number pairs fit before /First;
 * - a /Count (page tree, outline) no larger than the objects the file holds;
 * - PNG and TIFF predictor parameters (§7.4.4.4) giving rows of at most MAX_ROW_BYTES.
 * Stream /Length is not trusted by our scan or by either parser (both look for
 * `endstream`), so a wrong one costs nothing and is not refused here.
 */
import { PDFArray, PDFContext, PDFDict, PDFName, PDFNumber, PDFObjectParser } from 'pdf-lib'
import type { PDFObject } from 'pdf-lib'
import { decodedLength, filterNames, findStreams } from './raw-content-size.js'
import type { RawStream } from './raw-content-size.js'

/** ISO 32000-1 Annex C: a PDF holds at most 8,388,607 indirect objects. */
export const MAX_OBJECTS = 8_388_607
/**
 * Cross-reference entries all of a file's streams may declare together: a 2,000-page
 * scanned book has some tens of thousands of objects; this many cost pdf-lib about
 * 115 MB and 3.5 s.
 */
export const MAX_XREF_ENTRIES = 500_000
/** Free entries (deleted or never used numbers) allowed beyond the objects a file holds. */
const FREE_ENTRY_SLACK = 1024
/** A predictor row: 16,384 pixels of 32 components at 16 bits is 1 MiB. */
export const MAX_ROW_BYTES = 1 << 20

const name = (n: string): PDFName => PDFName.of(n)
/** Stream dictionaries worth parsing: cross-reference and object streams, and decoding parameters. */
const RELEVANT = /\/(?:XRef|ObjStm|DecodeParms|DP)\b/

/** A direct integer ≥ 0, or undefined (absent, indirect, real or negative). */
function count (dict: PDFDict, key: string): number | undefined {
  const value = dict.get(name(key))
  if (!(value instanceof PDFNumber)) return undefined
  const n = value.asNumber()
  return Number.isSafeInteger(n) && n >= 0 ? n : undefined
}

function integers (value: PDFObject | undefined): number[] | undefined {
  if (!(value instanceof PDFArray)) return undefined
  const out: number[] = []
  for (const item of value.asArray()) {
    if (!(item instanceof PDFNumber) || !Number.isSafeInteger(item.asNumber()) || item.asNumber() < 0) return undefined
    out.push(item.asNumber())
  }
  return out
}

function parseDict (text: string, context: PDFContext): PDFDict | undefined {
  if (text === '') return undefined
  try {
    const object = PDFObjectParser.forBytes(Buffer.from(text, 'latin1'), context).parseObject()
    return object instanceof PDFDict ? object : undefined
  } catch {
    return undefined
  }
}

const where = (s: RawStream): string => s.object === undefined ? 'a stream' : `object ${s.object}`

/** The entries a cross-reference stream declares, or a reason it cannot be what it says. */
function xrefEntries (dict: PDFDict, s: RawStream, data: Buffer): number | string {
  const size = count(dict, 'Size')
  const widths = integers(dict.get(name('W')))
  if (size === undefined || size > MAX_OBJECTS + 1) return `the cross-reference stream (${where(s)}) has no valid /Size`
  if (widths?.length !== 3 || widths.some((w) => w > 8) || widths[0]! + widths[1]! + widths[2]! === 0) {
    return `the cross-reference stream (${where(s)}) has no valid /W`
  }
  const indexValue = dict.get(name('Index'))
  const index = indexValue === undefined ? [0, size] : integers(indexValue)
  if (index === undefined || index.length % 2 !== 0) return `the cross-reference stream (${where(s)}) has no valid /Index`
  let entries = 0
  for (let i = 0; i < index.length; i += 2) {
    if (index[i]! + index[i + 1]! > size) return `the cross-reference stream (${where(s)}) lists objects up to ${index[i]! + index[i + 1]! - 1}, past its /Size ${size}`
    entries += index[i + 1]!
  }
  if (entries > MAX_XREF_ENTRIES) return `the cross-reference stream (${where(s)}) declares ${entries} entries, more than the ${MAX_XREF_ENTRIES} this service reads`
  const need = entries * (widths[0]! + widths[1]! + widths[2]!)
  const has = decodedLength(data.subarray(s.start, s.end), filterNames(s.dict), need, false)
  if (has < need) return `the cross-reference stream (${where(s)}) declares ${entries} entries but its data holds ${has} bytes, not the ${need} they need`
  return entries
}

/** Objects an object stream declares, or a reason it cannot be what it says. */
function objectStreamObjects (dict: PDFDict, s: RawStream): number | string {
  const n = count(dict, 'N')
  const first = count(dict, 'First')
  // Each of the N pairs `number offset` takes at least two digits and two separators.
  if (n === undefined || first === undefined || n > MAX_OBJECTS || 4 * n > first + 1) {
    return `the object stream (${where(s)}) declares /N ${String(dict.get(name('N')))} objects that do not fit before its /First ${String(dict.get(name('First')))}`
  }
  return n
}

/** A reason when a predictor's row (or the arithmetic for it) is out of bounds. */
function predictorFault (dict: PDFDict, s: RawStream): string | undefined {
  const parmsValue = dict.get(name('DecodeParms')) ?? dict.get(name('DP'))
  const all = parmsValue instanceof PDFArray ? parmsValue.asArray() : [parmsValue]
  for (const parms of all) {
    if (!(parms instanceof PDFDict)) continue
    const columns = parms.get(name('Columns'))
    const colors = parms.get(name('Colors'))
    const bits = parms.get(name('BitsPerComponent'))
    const value = (v: PDFObject | undefined, fallback: number): number => v instanceof PDFNumber ? v.asNumber() : fallback
    const rowBytes = Math.ceil(value(columns, 1) * value(colors, 1) * value(bits, 8) / 8)
    if (!(rowBytes >= 0 && rowBytes <= MAX_ROW_BYTES)) return `the decoding parameters of ${where(s)} declare rows of ${rowBytes} bytes, more than ${MAX_ROW_BYTES}`
  }
  return undefined
}

/** Plainly written objects: `N G obj` headers in the bytes. */
function objectHeaders (text: string): number {
  let n = 0
  for (const _ of text.matchAll(/\d\s+\d+\s+obj\b/g)) n++
  return n
}

/**
 * Why the file's declared counts and sizes exceed what its bytes hold, or undefined when
 * they do not. Callers refuse the file with their own code before handing it to a parser.
 */
export function declaredSizeFault (bytes: Uint8Array): string | undefined {
  const data = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  const text = data.toString('latin1')
  const context = PDFContext.create()
  let xrefEntriesTotal = 0
  let held = objectHeaders(text)
  for (const s of findStreams(text)) {
    // Most streams (page contents, fonts) declare none of this: not parsed at all.
    if (!RELEVANT.test(s.dict)) continue
    const dict = parseDict(s.dict, context)
    if (dict === undefined) continue
    const type = dict.get(name('Type'))
    if (type === name('XRef')) {
      const entries = xrefEntries(dict, s, data)
      if (typeof entries === 'string') return entries
      xrefEntriesTotal += entries
    } else if (type === name('ObjStm')) {
      const objects = objectStreamObjects(dict, s)
      if (typeof objects === 'string') return objects
      held += objects
    }
    const predictor = predictorFault(dict, s)
    if (predictor !== undefined) return predictor
  }
  if (xrefEntriesTotal > MAX_XREF_ENTRIES) return `its cross-reference streams declare ${xrefEntriesTotal} entries together, more than the ${MAX_XREF_ENTRIES} this service reads`
  const capacity = Math.min(MAX_OBJECTS, held + FREE_ENTRY_SLACK)
  if (xrefEntriesTotal > capacity) return `its cross-reference streams declare ${xrefEntriesTotal} entries, but the file holds only ${held} objects`
  for (const m of text.matchAll(/\/Count\s+(\d{1,16})(?![\d.])/g)) {
    const declared = Number(m[1])
    if (declared > capacity) return `a /Count of ${declared} exceeds the ${held} objects the file holds`
  }
  return undefined
}
