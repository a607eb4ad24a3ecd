/**
 * Which of a page's candidate stamp rectangles hold text, read straight from the page's
 * content streams: the text-showing operators (Tj, TJ, ', ") with the state that places
 * them (cm, q/Q, BT, Tm, Td, TD, T*, TL, Tc, Tw, Tz, Ts, Tf) and the form XObjects the page
 * draws (Do), without decoding any font program. It answers the question the stamp asks,
 * "is this corner free?", at a small fraction of what pdf.js's full text reading costs
 * (about a tenth of a millisecond for a page of dense text against five).
 *
 * Each run gets two boxes in default user space, computed from its font size, its byte
 * length and, where the font dictionary gives them, its glyph widths:
 *
 * - the *possible* box, which holds whatever box pdf.js would give the run: from 0.6 em
 *   below the baseline to 1.5 em above (the bounds pdf.js puts on a font's descent and
 *   ascent), and along the baseline the run's advance, or a bound on it when the widths
 *   are not known (every code as wide as the font's widest glyph, 1.1 em for a standard
 *   14 font without /Widths);
 * - the *sure* box, which pdf.js's box always contains: baseline to half an em, exact
 *   advance; only when the advance is exact (a simple font with /Widths, a Type0 font on
 *   Identity-H with /W) and the run's start is known.
 *
 * A rectangle that no possible box meets is free; one that a sure box meets is covered;
 * otherwise the scan cannot tell and says `unknown`, and the caller asks pdf.js. So does
 * everything the scan does not read: a Type3 or vertical font, an inline image, a filter
 * other than Flate (or Flate with a predictor), a stream that does not decode, forms
 * nested deeper than eight, and content past the size limit. Images are not read at all:
 * like pdf.js's text layer, the stamp's rule counts text only (see docs/signature.md).
 */
import { inflateSync } from 'node:zlib'
import { PDFArray, PDFDict, PDFName, PDFNull, PDFNumber, PDFRawStream, PDFRef, PDFStream, StandardFontEmbedder } from 'pdf-lib'
import type { PDFContext, PDFObject } from 'pdf-lib'
import type { Box } from './page-box.js'
import { decodeChain } from './raw-objects.js'

export type RectState = 'free' | 'covered' | 'unknown'

export interface RectScan {
  /** One state per rectangle asked about, in the same order. */
  states: RectState[]
  /** Why the scan gave up on the page, when it did (every state is then `unknown`). */
  gaveUp?: 'too-large' | 'unsupported' | undefined
  /** Decoded content bytes read (each form counted each time it is drawn). */
  bytes: number
  /**
   * With `rank`: per rectangle, the area the page's text covers in it (the sum of each run's
   * overlap, as the stamp's rule counts it), when every run near a rectangle had an exact extent.
   */
  areas?: number[] | undefined
}

/** Bounds on pdf.js's descent and ascent, in ems (pdfjs.ts, runBox): the possible box spans them. */
const DESCENT_BOUND = -0.6
const ASCENT_BOUND = 1.5
/** pdf.js's box always spans at least this much above the baseline (its ascent is at least 0.5). */
const SURE_ASCENT = 0.5
/** Widest glyph assumed for a font without /Widths (the standard 14 are at most about 1.05 em). */
const UNKNOWN_MAX_WIDTH = 1100
const MAX_FORM_DEPTH = 8
// pdf-lib decodes a name with a regular expression on every PDFName.of: the ones used per operator are made once.
const FONT = PDFName.of('Font')
const XOBJECT = PDFName.of('XObject')

type Matrix = [number, number, number, number, number, number]
const IDENTITY: Matrix = [1, 0, 0, 1, 0, 0]

/** p × m × n, as ISO 32000 composes matrices (row vectors). */
function multiply (m: Matrix, n: Matrix): Matrix {
  return [
    m[0] * n[0] + m[1] * n[2], m[0] * n[1] + m[1] * n[3],
    m[2] * n[0] + m[3] * n[2], m[2] * n[1] + m[3] * n[3],
    m[4] * n[0] + m[5] * n[2] + n[4], m[4] * n[1] + m[5] * n[3] + n[5]
  ]
}

/** What the scan knows of a font's metrics. */
interface FontInfo {
  /** Bytes per character code: 2 for Identity-H, 1 for simple fonts, 0 when it varies (other CMaps). */
  bytesPerCode: 0 | 1 | 2
  /** Width of a code in thousandths of an em, when the dictionary gives it. */
  width?: ((code: number) => number) | undefined
  /** No code is wider than this, in thousandths of an em. */
  maxWidth: number
  /** Type3, vertical writing, or a dictionary the scan cannot read: shows with it are not placed. */
  unreadable: boolean
  /**
   * The widths are the ones readers draw with (a standard font's own metrics): a run's
   * possible extent is its exact advance, not the widest-glyph bound. /Widths are not
   * trusted so: a reader may take an embedded font program's widths instead.
   */
  exactWidths?: boolean
}

function numbers (array: PDFArray | undefined, context: PDFContext): number[] {
  if (array === undefined) return []
  return array.asArray().map((v) => {
    const n = context.lookup(v)
    return n instanceof PDFNumber ? n.asNumber() : NaN
  })
}

function fontInfo (dict: PDFDict, context: PDFContext): FontInfo {
  const subtype = dict.lookupMaybe(PDFName.of('Subtype'), PDFName)?.asString()
  if (subtype === '/Type3') return { bytesPerCode: 1, maxWidth: 0, unreadable: true }
  if (subtype === '/Type0') {
    const encoding = context.lookup(dict.get(PDFName.of('Encoding')))
    const name = encoding instanceof PDFName ? encoding.asString() : undefined
    if (name === '/Identity-V' || (name !== undefined && name.endsWith('-V'))) return { bytesPerCode: 2, maxWidth: 0, unreadable: true }
    const descendant = dict.lookupMaybe(PDFName.of('DescendantFonts'), PDFArray)?.lookupMaybe(0, PDFDict)
    const dw = descendant?.lookupMaybe(PDFName.of('DW'), PDFNumber)?.asNumber() ?? 1000
    // /W: `c [w1 w2 ...]` or `cFirst cLast w` (§9.7.4.3).
    const widths = new Map<number, number>()
    const w = descendant?.lookupMaybe(PDFName.of('W'), PDFArray)
    let max = dw
    const unreadable: FontInfo = { bytesPerCode: 0, maxWidth: 0, unreadable: true }
    if (w !== undefined) {
      const items = w.asArray().map((v) => context.lookup(v))
      for (let i = 0; i < items.length;) {
        const first = items[i]
        const next = items[i + 1]
        if (!(first instanceof PDFNumber)) break
        if (next instanceof PDFArray) {
          numbers(next, context).forEach((width, k) => { widths.set(first.asNumber() + k, width); max = Math.max(max, width) })
          i += 2
        } else {
          const last = next instanceof PDFNumber ? next.asNumber() : NaN
          const width = items[i + 2] instanceof PDFNumber ? (items[i + 2] as PDFNumber).asNumber() : NaN
          // CIDs are two bytes: a range past that, or more entries than there are CIDs, is not a font the scan reads.
          if (!Number.isFinite(last) || !Number.isFinite(width) || last - first.asNumber() > 65536 || widths.size > 65536) return unreadable
          for (let c = first.asNumber(); c <= last; c++) widths.set(c, width)
          max = Math.max(max, width)
          i += 3
        }
      }
    }
    if (!Number.isFinite(max)) return unreadable
    return name === '/Identity-H'
      ? { bytesPerCode: 2, width: (code) => widths.get(code) ?? dw, maxWidth: max, unreadable: false }
      : { bytesPerCode: 0, maxWidth: max, unreadable: false }
  }
  // Simple fonts: /Widths from /FirstChar, /MissingWidth (descriptor) for the others (§9.6.2.1).
  const widthArray = dict.lookupMaybe(PDFName.of('Widths'), PDFArray)
  if (widthArray === undefined) return standardFontInfo(dict) ?? { bytesPerCode: 1, maxWidth: UNKNOWN_MAX_WIDTH, unreadable: false }
  const widths = numbers(widthArray, context)
  const firstChar = dict.lookupMaybe(PDFName.of('FirstChar'), PDFNumber)?.asNumber() ?? 0
  const missing = dict.lookupMaybe(PDFName.of('FontDescriptor'), PDFDict)?.lookupMaybe(PDFName.of('MissingWidth'), PDFNumber)?.asNumber() ?? 0
  const max = widths.reduce((m, x) => Math.max(m, x), missing)
  if (!Number.isFinite(max) || widths.some((x) => !Number.isFinite(x) || x < 0)) return { bytesPerCode: 1, maxWidth: UNKNOWN_MAX_WIDTH, unreadable: false }
  return { bytesPerCode: 1, width: (code) => widths[code - firstChar] ?? missing, maxWidth: max, unreadable: false }
}

/** The standard 14 text fonts (ISO 32000-1 §9.6.2.2), which a writer may use without /Widths. */
const STANDARD_TEXT_FONTS = new Set(['Helvetica', 'Helvetica-Bold', 'Helvetica-Oblique', 'Helvetica-BoldOblique', 'Times-Roman', 'Times-Bold', 'Times-Italic',
  'Times-BoldItalic', 'Courier', 'Courier-Bold', 'Courier-Oblique', 'Courier-BoldOblique'])
const standardWidths = new Map<string, { widths: number[], max: number }>()

/**
 * A standard text font named without /Widths and not embedded, in WinAnsiEncoding (as
 * reportlab and many report writers leave Helvetica): its widths are the font's own metrics,
 * which readers use for it too (pdf.js draws such a font with the same AFM widths). Without
 * them every run got the 1.1 em-per-byte bound, wide enough to leave a corner next to a line
 * of text unsettled, and the page went to pdf.js. Undefined for anything else.
 */
function standardFontInfo (dict: PDFDict): FontInfo | undefined {
  const base = dict.lookupMaybe(PDFName.of('BaseFont'), PDFName)?.decodeText()
  const encoding = dict.lookupMaybe(PDFName.of('Encoding'), PDFName)?.decodeText()
  if (base === undefined || !STANDARD_TEXT_FONTS.has(base) || encoding !== 'WinAnsiEncoding') return undefined
  const descriptor = dict.lookupMaybe(PDFName.of('FontDescriptor'), PDFDict)
  if (descriptor !== undefined && ['FontFile', 'FontFile2', 'FontFile3'].some((k) => descriptor.get(PDFName.of(k)) !== undefined)) return undefined
  let known = standardWidths.get(base)
  if (known === undefined) {
    const embedder = StandardFontEmbedder.for(base as Parameters<typeof StandardFontEmbedder.for>[0])
    const widths: number[] = Array.from({ length: 256 }, () => 0)
    let max = 0
    for (const codePoint of embedder.encoding.supportedCodePoints) {
      const { code, name } = embedder.encoding.encodeUnicodeCodePoint(codePoint)
      const width = embedder.font.getWidthOfGlyph(name)
      if (typeof width !== 'number' || code > 255) continue
      widths[code] = width
      max = Math.max(max, width)
    }
    known = { widths, max }
    standardWidths.set(base, known)
  }
  const { widths, max } = known
  // A code WinAnsi leaves unmapped draws .notdef, of no width in these fonts' metrics.
  return { bytesPerCode: 1, width: (code) => widths[code] ?? 0, maxWidth: max, unreadable: false, exactWidths: true }
}

/** A string operand: where it lies in the content bytes. */
interface Str { data: Uint8Array, start: number, end: number, hex: boolean }
type Operand = number | string | Str | Operand[] | null

/** The bytes a string operand stands for (escapes resolved). */
function stringBytes (s: Str): Uint8Array {
  const { data } = s
  const out: number[] = []
  if (s.hex) {
    let half = -1
    for (let i = s.start + 1; i < s.end - 1; i++) {
      const v = hexValue(data[i]!)
      if (v < 0) continue
      if (half < 0) half = v
      else { out.push(half * 16 + v); half = -1 }
    }
    if (half >= 0) out.push(half * 16)
    return Uint8Array.from(out)
  }
  for (let i = s.start + 1; i < s.end - 1; i++) {
    const c = data[i]!
    if (c !== 0x5c) { out.push(c); continue }
    const e = data[++i]
    if (e === undefined) break
    if (e >= 0x30 && e <= 0x37) {
      let v = e - 0x30
      for (let k = 0; k < 2 && data[i + 1]! >= 0x30 && data[i + 1]! <= 0x37; k++) v = v * 8 + data[++i]! - 0x30
      out.push(v & 0xff)
    } else if (e === 0x0d) {
      if (data[i + 1] === 0x0a) i++
    } else if (e !== 0x0a) {
      out.push(({ 0x6e: 10, 0x72: 13, 0x74: 9, 0x62: 8, 0x66: 12 } as Record<number, number>)[e] ?? e)
    }
  }
  return Uint8Array.from(out)
}

/** At least as many bytes as the string stands for, without decoding it. */
function byteBound (s: Str): number {
  return s.hex ? Math.ceil((s.end - s.start - 2) / 2) : s.end - s.start - 2
}

function hexValue (c: number): number {
  if (c >= 0x30 && c <= 0x39) return c - 0x30
  if (c >= 0x41 && c <= 0x46) return c - 0x37
  if (c >= 0x61 && c <= 0x66) return c - 0x57
  return -1
}

// Byte classes: 1 whitespace, 2 delimiter.
const CLASS = new Uint8Array(256)
for (const c of [0, 9, 10, 12, 13, 32]) CLASS[c] = 1
for (const c of '()<>[]{}/%') CLASS[c.charCodeAt(0)] = 2

/** Operators, as their bytes packed into a number (at most 3 bytes). */
function op (name: string): number {
  let code = 0
  for (let i = 0; i < name.length; i++) code = code * 256 + name.charCodeAt(i)
  return code
}
const OP = {
  q: op('q'), Q: op('Q'), cm: op('cm'), BT: op('BT'), Tf: op('Tf'), Tc: op('Tc'), Tw: op('Tw'), Tz: op('Tz'), TL: op('TL'), Ts: op('Ts'),
  Td: op('Td'), TD: op('TD'), Tm: op('Tm'), TStar: op('T*'), Tj: op('Tj'), TJ: op('TJ'), quote: op('\''), dquote: op('"'), Do: op('Do'), BI: op('BI')
}

/** Text state: part of the graphics state, saved by q and restored by Q. */
interface TextState { font: FontInfo | undefined, size: number, tc: number, tw: number, th: number, tl: number, rise: number }

/** One show on the current line, kept so that the exact start of a later one can be worked out. */
interface Shown { str: Str, font: FontInfo, size: number, tc: number, tw: number, th: number }
/** What moved the text position along the current line: a show, or a TJ adjustment (in text space units). */
type LineStep = Shown | number

class GiveUp extends Error {
  constructor (readonly reason: 'too-large' | 'unsupported') { super(reason) }
}

export interface ScanLimits {
  /** Most decoded content one page may have scanned (forms counted each time drawn). */
  maxBytes: number
  /**
   * Measure how much text each rectangle covers instead of stopping once none can be free:
   * for a page whose every corner is covered, so that the least covered can be told without
   * pdf.js. A run near a rectangle without an exact extent makes the answer `unsupported`.
   */
  rank?: boolean | undefined
}

/**
 * The run's box for ranking covered corners: what pdf.js gives a run whose font states no
 * ascent or descent (pdfjs.ts, runBox). An estimate of its real box, used only to compare
 * corners that are all covered.
 */
const RANK_ASCENT = 0.9
const RANK_DESCENT = -0.25

/**
 * Scans one page's content for runs in `rects` (default user space). Never throws for the
 * file's sake: what it cannot read makes every state `unknown`, with the reason.
 */
export class ContentScanner {
  /** What the scan knows of a font, by its dictionary and by the entries that lead to it (undefined: not a font dictionary). */
  private readonly fonts = new Map<PDFObject, FontInfo | undefined>()
  /** Per resources dictionary (and per /Font dictionary), each font name's entry in the /Font dictionary. */
  private readonly fontNames = new Map<PDFDict, Map<string, PDFObject>>()
  private readonly decoded = new Map<PDFObject, Uint8Array>()

  constructor (readonly context: PDFContext) {}

  scanPage (contents: PDFObject | undefined, resources: PDFDict | undefined, rects: Box[], limits: ScanLimits): RectScan {
    const run = new PageRun(this, rects, limits.maxBytes, limits.rank === true)
    try {
      const streams = this.contentStreams(contents)
      const parts = streams.map((s) => run.decode(s, false))
      // The page's streams are one sequence of operators (§7.8.2): a token may not cross them, but operators may.
      const data = parts.length === 1 ? parts[0]! : joinWithBreaks(parts)
      run.scan(data, resources, IDENTITY, freshText(), 0)
      return { states: run.states, bytes: run.bytes, areas: run.areas }
    } catch (err) {
      if (err instanceof GiveUp) return { states: rects.map(() => 'unknown'), gaveUp: err.reason, bytes: run.bytes }
      if (err === DECIDED) return { states: run.states, bytes: run.bytes }
      // pdf-lib's lookups throw on damaged objects: that page is left to pdf.js.
      return { states: rects.map(() => 'unknown'), gaveUp: 'unsupported', bytes: run.bytes }
    }
  }

  private contentStreams (contents: PDFObject | undefined): PDFObject[] {
    const value = contents instanceof PDFRef ? this.context.lookup(contents) : contents
    if (value === undefined) return []
    if (value instanceof PDFArray) return value.asArray().map((v) => this.context.lookup(v) as PDFObject)
    return [value]
  }

  /**
   * The font `name` of `resources`. Each /Font dictionary is read once into a map by name:
   * looking a name up made a PDFName for it (a regular expression each time), and files
   * whose every line sets a font of its own name (pdf-lib writes them) have dozens a page.
   */
  fontNamed (resources: PDFDict | undefined, name: string): FontInfo | undefined {
    if (resources === undefined) return undefined
    let named = this.fontNames.get(resources)
    if (named === undefined) {
      // Pages with resources of their own often share one /Font dictionary: it is read once.
      const fonts = this.lookup(resources.get(FONT))
      named = fonts instanceof PDFDict ? this.fontNames.get(fonts) : undefined
      if (named === undefined) {
        named = new Map()
        if (fonts instanceof PDFDict) {
          for (const [key, value] of fonts.entries()) {
            const encoded = key.asString()
            named.set(encoded.includes('#') ? key.decodeText() : encoded.slice(1), value)
          }
          this.fontNames.set(fonts, named)
        }
      }
      this.fontNames.set(resources, named)
    }
    const entry = named.get(name)
    if (entry === undefined) return undefined
    if (this.fonts.has(entry)) return this.fonts.get(entry)
    // Remembered by the entry (usually a reference that many pages' names share) and by the dictionary it leads to.
    const dict = this.lookup(entry)
    let info = dict instanceof PDFDict ? this.fonts.get(dict) : undefined
    if (dict instanceof PDFDict && info === undefined) {
      info = fontInfo(dict, this.context)
      this.fonts.set(dict, info)
    }
    this.fonts.set(entry, info)
    return info
  }

  lookup (object: PDFObject | undefined): PDFObject | undefined {
    return object instanceof PDFRef ? this.context.lookup(object) : object
  }

  /**
   * The stream's filters in order, or undefined when the scan cannot decode them: a name
   * that is not a filter, or /DecodeParms other than null (a predictor, an LZW early change).
   */
  private filterNames (dict: PDFDict): string[] | undefined {
    const parms = this.lookup(dict.get(PDFName.of('DecodeParms')))
    if (parms !== undefined && parms !== PDFNull && !(parms instanceof PDFArray && parms.asArray().every((p) => this.lookup(p) === PDFNull))) return undefined
    const filter = this.lookup(dict.get(PDFName.of('Filter')))
    if (filter === undefined || filter === PDFNull) return []
    const items = filter instanceof PDFArray ? filter.asArray().map((f) => this.lookup(f)) : [filter]
    const names: string[] = []
    for (const item of items) {
      if (!(item instanceof PDFName)) return undefined
      names.push(item.decodeText())
    }
    return names
  }

  /** A stream's decoded bytes, at most `ceiling` of them, or a GiveUp. Decoded once per document when `keep`. */
  decodeStream (object: PDFObject | undefined, ceiling: number, keep = true): Uint8Array {
    if (object === undefined) return new Uint8Array(0)
    const cached = this.decoded.get(object)
    if (cached !== undefined) {
      if (cached.length > ceiling) throw new GiveUp('too-large')
      return cached
    }
    if (!(object instanceof PDFRawStream)) throw new GiveUp('unsupported')
    const filters = this.filterNames(object.dict)
    let data: Uint8Array
    if (filters === undefined) throw new GiveUp('unsupported')
    if (filters.length === 0) {
      data = object.contents
    } else if (filters.length === 1 && (filters[0] === 'FlateDecode' || filters[0] === 'Fl')) {
      try {
        data = inflateSync(object.contents, { maxOutputLength: Math.max(1, ceiling + 1), finishFlush: 2 /* Z_SYNC_FLUSH: a truncated stream still gives what it has */ })
      } catch (err) {
        throw new GiveUp((err as { code?: unknown }).code === 'ERR_BUFFER_TOO_LARGE' ? 'too-large' : 'unsupported')
      }
    } else {
      // A chain such as reportlab's [/ASCII85Decode /FlateDecode] (every page it writes), or
      // LZW and run-length from old producers: decoded here rather than left to pdf.js, which
      // read such a page in about 5 ms against a fraction of a millisecond for the scan.
      const chained = decodeChain(object.contents, filters, ceiling)
      if (chained === undefined) throw new GiveUp('unsupported')
      data = chained
    }
    if (data.length > ceiling) throw new GiveUp('too-large')
    if (keep) this.decoded.set(object, data)
    return data
  }
}

/** Thrown to stop scanning once no rectangle can still turn out free. */
const DECIDED = Symbol('decided')

function joinWithBreaks (parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length + 1, 0))
  let at = 0
  for (const p of parts) {
    out.set(p, at)
    at += p.length
    out[at++] = 0x0a
  }
  return out
}

/** The state of one page's scan. */
class PageRun {
  readonly states: RectState[]
  /** Ranking only: the text area in each rectangle. */
  readonly areas: number[] | undefined
  bytes = 0

  constructor (private readonly scanner: ContentScanner, private readonly rects: Box[], private readonly maxBytes: number, rank: boolean) {
    this.states = rects.map(() => 'free')
    this.areas = rank ? rects.map(() => 0) : undefined
  }

  /** `keep`: for a form, which other pages may draw too; a page's own content is read once (twice for a ranking), and kept it would only fill the heap. */
  decode (stream: PDFObject | undefined, keep = true): Uint8Array {
    const data = this.scanner.decodeStream(stream, this.maxBytes - this.bytes, keep)
    this.bytes += data.length
    return data
  }

  /** Reads `data`'s operators with `resources`, starting from `ctm`. */
  scan (data: Uint8Array, resources: PDFDict | undefined, startCtm: Matrix, startText: TextState, depth: number): void {
    let ctm = startCtm
    let text: TextState = { ...startText }
    const saved: Array<{ ctm: Matrix, text: TextState }> = []
    let tlm: Matrix = IDENTITY
    // The current line: where it starts (the text matrix after the last Td, Tm or T*) and what was shown on it since.
    let line: LineStep[] = []
    let offsetLow = 0
    let offsetHigh = 0
    // The operand stack, with its own top: resizing an array for every operator costs more than the rest of the scan.
    const operands: Operand[] = []
    let top = 0
    const arrays: Operand[][] = []
    const push = (v: Operand): void => {
      if (arrays.length > 0) arrays[arrays.length - 1]!.push(v)
      else operands[top++] = v
    }
    const n = (k: number): number => {
      const v = top >= k ? operands[top - k] : undefined
      return typeof v === 'number' ? v : NaN
    }
    const last = (): Operand | undefined => top > 0 ? operands[top - 1] : undefined
    // The line's matrix in user space (tlm × ctm), made at the line's first show and kept until the line or the ctm changes.
    let lineCtm: Matrix | undefined
    const newLine = (m: Matrix): void => { tlm = m; lineCtm = undefined; line = []; offsetLow = 0; offsetHigh = 0 }
    // [1 0 0 1 tx ty] × tlm, written out: Td and T* come once a line.
    const translate = (tx: number, ty: number): void => { newLine([tlm[0], tlm[1], tlm[2], tlm[3], tx * tlm[0] + ty * tlm[2] + tlm[4], tx * tlm[1] + ty * tlm[3] + tlm[5]]) }
    const show = (s: Str): void => {
      const font = text.font
      if (font === undefined || font.unreadable) throw new GiveUp('unsupported')
      const shown: Shown = { str: s, font, size: text.size, tc: text.tc, tw: text.tw, th: text.th }
      const [low, high] = advanceBounds(shown)
      lineCtm ??= multiply(tlm, ctm)
      this.place(shown, low, high, line, offsetLow, offsetHigh, lineCtm, text.rise)
      line.push(shown)
      offsetLow += low
      offsetHigh += high
    }
    const kern = (k: number): void => {
      const shift = -k / 1000 * text.size * text.th
      offsetLow += shift
      offsetHigh += shift
      line.push(shift)
    }

    const end = data.length
    let i = 0
    // The next `(` and `\\` after the current string's start (`end` when there is none).
    let nextOpen = -1
    let nextEscape = -1
    while (i < end) {
      const c = data[i]!
      const cls = CLASS[c]!
      if (cls === 1) { i++; continue }
      if (c === 0x25) { // % comment
        while (i < end && data[i] !== 0x0a && data[i] !== 0x0d) i++
        continue
      }
      if ((c >= 0x30 && c <= 0x39) || c === 0x2d || c === 0x2b || c === 0x2e) {
        let sign = 1
        let j = i
        if (data[j] === 0x2d) { sign = -1; j++ } else if (data[j] === 0x2b) j++
        let value = 0
        while (j < end && data[j]! >= 0x30 && data[j]! <= 0x39) value = value * 10 + data[j++]! - 0x30
        if (data[j] === 0x2e) {
          j++
          let scale = 0.1
          while (j < end && data[j]! >= 0x30 && data[j]! <= 0x39) { value += (data[j++]! - 0x30) * scale; scale /= 10 }
        }
        // A malformed number ("--5", "1.2.3") reads as far as it parses, as pdf.js does; the rest starts a new token.
        push(sign * value)
        i = j === i ? i + 1 : j
        continue
      }
      if (c === 0x28) { // ( literal string )
        // Most strings hold neither a backslash nor a nested parenthesis before their `)`:
        // found with indexOf (native, several times faster than this loop on text-dense
        // pages, where strings are most of the bytes), the next of each kept for later strings.
        if (nextOpen <= i) nextOpen = indexFrom(data, 0x28, i + 1, end)
        if (nextEscape <= i) nextEscape = indexFrom(data, 0x5c, i + 1, end)
        let j = indexFrom(data, 0x29, i + 1, end)
        if (j > nextOpen || j > nextEscape) {
          let depth = 0
          for (j = i; j < end; j++) {
            const d = data[j]!
            if (d === 0x5c) { j++; continue }
            if (d === 0x28) depth++
            else if (d === 0x29 && --depth === 0) break
          }
        }
        push({ data, start: i, end: Math.min(j + 1, end), hex: false })
        i = j + 1
        continue
      }
      if (c === 0x3c) {
        if (data[i + 1] === 0x3c) { // << dictionary >> (marked-content properties): skipped whole
          let depth = 0
          let j = i
          while (j < end) {
            if (data[j] === 0x3c && data[j + 1] === 0x3c) { depth++; j += 2 } else if (data[j] === 0x3e && data[j + 1] === 0x3e) { j += 2; if (--depth === 0) break } else if (data[j] === 0x28) {
              let d = 0
              for (; j < end; j++) { if (data[j] === 0x5c) { j++; continue } if (data[j] === 0x28) d++; else if (data[j] === 0x29 && --d === 0) break }
              j++
            } else j++
          }
          push(null)
          i = j
          continue
        }
        let j = data.indexOf(0x3e, i + 1)
        if (j < 0) j = end
        push({ data, start: i, end: Math.min(j + 1, end), hex: true })
        i = j + 1
        continue
      }
      if (c === 0x5b) { arrays.push([]); i++; continue }
      if (c === 0x5d) {
        const array = arrays.pop()
        if (array !== undefined) push(array)
        i++
        continue
      }
      if (c === 0x2f) { // /Name
        let j = i + 1
        while (j < end && CLASS[data[j]!] === 0) j++
        push(decodeName(data, i + 1, j))
        i = j
        continue
      }
      if (cls === 2) { i++; continue } // a stray ) > { }
      // An operator: regular bytes up to the next whitespace or delimiter.
      let j = i
      let code = 0
      while (j < end && CLASS[data[j]!] === 0) { code = code * 256 + data[j]!; j++ }
      if (j - i > 3) code = -1
      i = j
      if (arrays.length > 0) arrays.length = 0
      switch (code) {
        case OP.q: saved.push({ ctm, text: { ...text } }); break
        case OP.Q: { const s = saved.pop(); if (s !== undefined) { ctm = s.ctm; text = s.text; lineCtm = undefined } break }
        case OP.cm: {
          const m: Matrix = [n(6), n(5), n(4), n(3), n(2), n(1)]
          if (m.every(Number.isFinite)) { ctm = multiply(m, ctm); lineCtm = undefined }
          break
        }
        case OP.BT: newLine(IDENTITY); break
        case OP.Tf: {
          const name = top >= 2 ? operands[top - 2] : undefined
          text.font = typeof name === 'string' ? this.scanner.fontNamed(resources, name) : undefined
          text.size = n(1)
          break
        }
        case OP.Tc: text.tc = n(1); break
        case OP.Tw: text.tw = n(1); break
        case OP.Tz: text.th = n(1) / 100; break
        case OP.TL: text.tl = n(1); break
        case OP.Ts: text.rise = n(1); break
        case OP.Td: translate(n(2), n(1)); break
        case OP.TD: text.tl = -n(1); translate(n(2), n(1)); break
        case OP.Tm: newLine([n(6), n(5), n(4), n(3), n(2), n(1)]); break
        case OP.TStar: translate(0, -text.tl); break
        case OP.Tj: { const s = last(); if (isStr(s)) show(s); break }
        case OP.quote: { translate(0, -text.tl); const s = last(); if (isStr(s)) show(s); break }
        case OP.dquote: {
          text.tw = n(3); text.tc = n(2); translate(0, -text.tl)
          const s = last()
          if (isStr(s)) show(s)
          break
        }
        case OP.TJ: {
          const items = last()
          if (Array.isArray(items)) for (const item of items) { if (isStr(item)) show(item); else if (typeof item === 'number') kern(item) }
          break
        }
        case OP.Do: {
          const name = last()
          if (typeof name === 'string') this.drawXObject(name, resources, ctm, text, depth)
          break
        }
        // Inline image data is binary up to an `EI` the scan cannot find reliably.
        case OP.BI: throw new GiveUp('unsupported')
      }
      top = 0
    }
  }

  private drawXObject (name: string, resources: PDFDict | undefined, ctm: Matrix, text: TextState, depth: number): void {
    const xobjects = this.scanner.lookup(resources?.get(XOBJECT))
    if (!(xobjects instanceof PDFDict)) return
    const form = this.scanner.lookup(xobjects.get(PDFName.of(name)))
    if (!(form instanceof PDFStream) || form.dict.get(PDFName.of('Subtype'))?.toString() !== '/Form') return
    if (depth >= MAX_FORM_DEPTH) throw new GiveUp('unsupported')
    const matrix = numbers(form.dict.lookupMaybe(PDFName.of('Matrix'), PDFArray), this.scanner.context)
    const m: Matrix = matrix.length === 6 && matrix.every(Number.isFinite) ? matrix as Matrix : IDENTITY
    const own = this.scanner.lookup(form.dict.get(PDFName.of('Resources')))
    // A form without resources uses those of the page or form that draws it (§7.8.3).
    // The form starts from the graphics state at Do, text state included (§8.10.1).
    this.scan(this.decode(form), own instanceof PDFDict ? own : resources, multiply(m, ctm), text, depth + 1)
  }

  /** Whether `box` meets a rectangle not yet known to be covered. */
  private touchesOpen (box: Box): boolean {
    for (let r = 0; r < this.rects.length; r++) {
      if (this.states[r] !== 'covered' && overlaps(box, this.rects[r]!, true)) return true
    }
    return false
  }

  /**
   * Marks the rectangles a run may or surely meets. The run starts between `startLow` and
   * `startHigh` along its line (equal when every earlier show on the line was exact) and
   * advances between `advanceLow` and `advanceHigh` (advanceBounds).
   */
  private place (shown: Shown, advanceLow: number, advanceHigh: number, line: LineStep[], startLow: number, startHigh: number, m: Matrix, rise: number): void {
    let advLow = advanceLow
    let advHigh = advanceHigh
    const size = shown.size
    const y1 = rise + size * DESCENT_BOUND
    const y2 = rise + size * ASCENT_BOUND
    let possible = boxOf(m, startLow + advLow, startHigh + advHigh, Math.min(y1, y2), Math.max(y1, y2))
    if (this.areas !== undefined) {
      this.rank(shown, line, m, rise, possible, this.areas)
      return
    }
    if (!this.touchesOpen(possible)) return
    if (shown.font.exactWidths === true) {
      // Near a rectangle by the cheap bound: a font drawn with the widths we know gets its
      // exact extent, a hundredth either way for rounding in a reader's arithmetic.
      const exact = exactAdvance(shown)
      if (exact !== undefined) {
        const slack = Math.abs(exact.advance) / 100
        ;[advLow, advHigh] = [Math.min(0, exact.advance) - slack, Math.max(0, exact.advance) + slack]
        possible = boxOf(m, startLow + advLow, startHigh + advHigh, Math.min(y1, y2), Math.max(y1, y2))
        if (!this.touchesOpen(possible)) return
      }
    }
    // Near a rectangle: work the run out exactly, if the fonts on the line allow it.
    const exact = exactRun(shown, line)
    if (exact?.blank === true) return
    const sure = exact === undefined
      ? undefined
      : boxOf(m, Math.min(exact.start, exact.start + exact.advance), Math.max(exact.start, exact.start + exact.advance), Math.min(rise, rise + size * SURE_ASCENT), Math.max(rise, rise + size * SURE_ASCENT))
    for (let r = 0; r < this.rects.length; r++) {
      if (this.states[r] === 'covered' || !overlaps(possible, this.rects[r]!, true)) continue
      this.states[r] = sure !== undefined && overlaps(sure, this.rects[r]!, false) ? 'covered' : 'unknown'
    }
    if (this.states.every((s) => s !== 'free')) throw DECIDED
  }

  /** Ranking: adds the run's estimated box's overlap with each rectangle its possible box meets. */
  private rank (shown: Shown, line: LineStep[], m: Matrix, rise: number, possible: Box, areas: number[]): void {
    if (!this.rects.some((r) => overlaps(possible, r, true))) return
    const exact = exactRun(shown, line)
    if (exact === undefined) throw new GiveUp('unsupported')
    if (exact.blank) return
    const y1 = rise + shown.size * RANK_DESCENT
    const y2 = rise + shown.size * RANK_ASCENT
    const box = boxOf(m, Math.min(exact.start, exact.start + exact.advance), Math.max(exact.start, exact.start + exact.advance), Math.min(y1, y2), Math.max(y1, y2))
    if (!Number.isFinite(box.x + box.y + box.width + box.height)) throw new GiveUp('unsupported')
    for (let r = 0; r < this.rects.length; r++) {
      const rect = this.rects[r]!
      const w = Math.min(box.x + box.width, rect.x + rect.width) - Math.max(box.x, rect.x)
      const h = Math.min(box.y + box.height, rect.y + rect.height) - Math.max(box.y, rect.y)
      if (w > 0 && h > 0) areas[r]! += w * h
    }
  }
}

/** The first `byte` in data[from, end), or `end`. */
function indexFrom (data: Uint8Array, byte: number, from: number, end: number): number {
  const at = data.indexOf(byte, from)
  return at < 0 || at > end ? end : at
}

function freshText (): TextState {
  return { font: undefined, size: 0, tc: 0, tw: 0, th: 1, tl: 0, rise: 0 }
}

function isStr (v: Operand | undefined): v is Str {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}

/** Short names already made, by their bytes packed into a number: a page sets `/F1` on every line. */
const shortNames = new Map<number, string>()
const SHORT_NAMES_KEPT = 4096

function decodeName (data: Uint8Array, start: number, end: number): string {
  let packed = end - start
  for (let i = start; i < end; i++) {
    if (data[i] === 0x23) return decodeEscapedName(data, start, end)
    // The length, then the bytes: for up to six bytes at most 3 + 48 bits, exact in a double.
    packed = packed * 256 + data[i]!
  }
  const short = end - start <= 6
  if (short) {
    const known = shortNames.get(packed)
    if (known !== undefined) return known
  }
  // One flat string: a name built character by character is a chain of pieces that every map lookup flattens again.
  const name = Buffer.from(data.buffer, data.byteOffset + start, end - start).toString('latin1')
  if (short && shortNames.size < SHORT_NAMES_KEPT) shortNames.set(packed, name)
  return name
}

/** A name with #xx escapes (§7.3.5). */
function decodeEscapedName (data: Uint8Array, start: number, end: number): string {
  let s = ''
  for (let i = start; i < end; i++) {
    if (data[i] === 0x23 && i + 2 < end + 1) {
      const v = hexValue(data[i + 1]!) * 16 + hexValue(data[i + 2]!)
      if (v >= 0) { s += String.fromCharCode(v); i += 2; continue }
    }
    s += String.fromCharCode(data[i]!)
  }
  return s
}

/**
 * Bounds on one show's advance along the line, in text space units, without decoding it:
 * anywhere from no code to as many codes as bytes, each as wide as nothing or the widest
 * glyph, plus its spacing (Tc, and Tw as if every code were a space or none were; either
 * may be negative, and so may the size and the horizontal scaling).
 */
function advanceBounds (s: Shown): [number, number] {
  const codes = s.font.bytesPerCode === 2 ? Math.ceil(byteBound(s.str) / 2) : byteBound(s.str)
  const glyph = s.font.maxWidth / 1000 * s.size
  const perLow = Math.min(0, glyph) + s.tc + Math.min(0, s.tw)
  const perHigh = Math.max(0, glyph) + s.tc + Math.max(0, s.tw)
  const low = Math.min(0, codes * perLow) * s.th
  const high = Math.max(0, codes * perHigh) * s.th
  return low <= high ? [low, high] : [high, low]
}

/**
 * Where a show starts along its line and how far it advances, exactly, from the widths in
 * the font dictionaries; undefined when a font on the line gives no widths. `blank` when
 * every code is white space in a one-byte font (pdf.js drops such runs).
 */
function exactRun (shown: Shown, line: LineStep[]): { start: number, advance: number, blank: boolean } | undefined {
  let start = 0
  for (const s of line) {
    if (typeof s === 'number') { start += s; continue }
    const a = exactAdvance(s)
    if (a === undefined) return undefined
    start += a.advance
  }
  const own = exactAdvance(shown)
  return own === undefined ? undefined : { start, ...own }
}

const BLANK = new Set([9, 10, 13, 32, 160])

function exactAdvance (s: Shown): { advance: number, blank: boolean } | undefined {
  const { font } = s
  if (font.width === undefined || font.bytesPerCode === 0) return undefined
  const bytes = stringBytes(s.str)
  let advance = 0
  let blank = true
  if (font.bytesPerCode === 2) {
    for (let i = 0; i + 1 < bytes.length; i += 2) advance += font.width(bytes[i]! * 256 + bytes[i + 1]!) / 1000 * s.size + s.tc
    blank = false
  } else {
    for (const code of bytes) {
      // Word spacing applies to the single-byte code 32 (§9.3.3).
      advance += font.width(code) / 1000 * s.size + s.tc + (code === 32 ? s.tw : 0)
      if (!BLANK.has(code)) blank = false
    }
  }
  return { advance: advance * s.th, blank }
}

/** The axis-aligned box in user space of the text-space rectangle x1..x2, y1..y2 under `m`. */
function boxOf (m: Matrix, x1: number, x2: number, y1: number, y2: number): Box {
  // The four corners, unrolled: this runs for every show on a page.
  const ax = x1 * m[0] + m[4]; const bx = x2 * m[0] + m[4]; const cx = y1 * m[2]; const dx = y2 * m[2]
  const ay = x1 * m[1] + m[5]; const by = x2 * m[1] + m[5]; const cy = y1 * m[3]; const dy = y2 * m[3]
  const minX = Math.min(ax + cx, ax + dx, bx + cx, bx + dx)
  const maxX = Math.max(ax + cx, ax + dx, bx + cx, bx + dx)
  const minY = Math.min(ay + cy, ay + dy, by + cy, by + dy)
  const maxY = Math.max(ay + cy, ay + dy, by + cy, by + dy)
  return { x: minX, y: minY, width: maxX - minX, height: maxY - minY }
}

/** Overlap with a positive area, as page-box.ts's intersect counts it; `ifUnplaceable` for a box with NaN or infinities in it. */
function overlaps (a: Box, b: Box, ifUnplaceable: boolean): boolean {
  if (!Number.isFinite(a.x + a.y + a.width + a.height)) return ifUnplaceable
  return Math.min(a.x + a.width, b.x + b.width) > Math.max(a.x, b.x) && Math.min(a.y + a.height, b.y + b.height) > Math.max(a.y, b.y)
}
