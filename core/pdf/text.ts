/**
 * Text for the standard 14 fonts (Helvetica, WinAnsiEncoding: ISO 32000-1 Annex D).
 * Portuguese letters are all in WinAnsi; anything else in a certificate name (another
 * script, an emoji) is replaced rather than failing the signature.
 */
import { StandardFontEmbedder } from 'pdf-lib'
import type { PDFFont } from 'pdf-lib'

/** What measuring and encoding a font's text needs, learnt one character (or pair) at a time. */
interface Metrics {
  /** Whether the font can encode a character. */
  encodable: Map<string, boolean>
  /** Advance of a code point, in thousandths of an em. */
  widths: Map<number, number>
  /** Kerning of a pair of code points (first × 0x110000 + second), in thousandths of an em. */
  kerns: Map<number, number>
  /** A code point's bytes in the font's encoding, as hex digits. */
  hex: Map<number, string>
  /**
   * Whole texts lately measured (their units, before scaling) and made printable: a stamp's
   * first line is the same on every page of a document, and is measured twice per page.
   */
  units: Map<string, number>
  printable: Map<string, string>
}

/** How many whole texts each of Metrics' `units` and `printable` keeps (then it starts again). */
const TEXTS_KEPT = 256

function remember<T> (map: Map<string, T>, key: string, value: T): T {
  if (map.size >= TEXTS_KEPT) map.clear()
  map.set(key, value)
  return value
}

const metricsByFont = new WeakMap<PDFFont, Metrics>()
/**
 * A standard 14 font's widths, kerning and encoding depend on its name alone, so they are
 * learnt once per thread rather than once per document (each signature embeds its fonts anew).
 */
const standardMetrics = new Map<string, Metrics>()

function metricsOf (font: PDFFont): Metrics {
  let m = metricsByFont.get(font)
  if (m === undefined) {
    const embedder = (font as unknown as { embedder: unknown }).embedder
    const standard = embedder instanceof StandardFontEmbedder ? embedder.fontName : undefined
    m = (standard === undefined ? undefined : standardMetrics.get(standard)) ?? { encodable: new Map(), widths: new Map(), kerns: new Map(), hex: new Map(), units: new Map(), printable: new Map() }
    if (standard !== undefined) standardMetrics.set(standard, m)
    metricsByFont.set(font, m)
  }
  return m
}

function glyphUnits (font: PDFFont, m: Metrics, ch: string, cp: number): number {
  let w = m.widths.get(cp)
  if (w === undefined) {
    w = font.widthOfTextAtSize(ch, 1000)
    m.widths.set(cp, w)
  }
  return w
}

/**
 * The width of `text` at `size`, equal to pdf-lib's `widthOfTextAtSize` (glyph advances
 * plus the kerning of each adjacent pair, in whole thousandths of an em, scaled once), but
 * learnt per character and pair: pdf-lib maps every character to a glyph name and looks
 * each pair up in the font's kerning table on every call, and the stamp and the final page
 * measure hundreds of lines a signature that differ only in a page number or a date.
 */
export function textWidth (font: PDFFont, text: string, size: number): number {
  const m = metricsOf(font)
  const known = m.units.get(text)
  if (known !== undefined) return known * (size / 1000)
  let total = 0
  let prev = -1
  let prevCh = ''
  for (const ch of text) {
    const cp = ch.codePointAt(0)!
    total += glyphUnits(font, m, ch, cp)
    if (prev >= 0) {
      const key = prev * 0x110000 + cp
      let kern = m.kerns.get(key)
      if (kern === undefined) {
        kern = font.widthOfTextAtSize(prevCh + ch, 1000) - glyphUnits(font, m, prevCh, prev) - glyphUnits(font, m, ch, cp)
        m.kerns.set(key, kern)
      }
      total += kern
    }
    prev = cp
    prevCh = ch
  }
  return remember(m.units, text, total) * (size / 1000)
}

/** How far `text` moves the pen when shown with Tj at `size`: its glyphs' advances, no kerning (Tj applies none). */
export function shownAdvance (font: PDFFont, text: string, size: number): number {
  const m = metricsOf(font)
  let advance = 0
  for (const ch of text) advance += glyphUnits(font, m, ch, ch.codePointAt(0)!) * (size / 1000)
  return advance
}

/** `text` as a hex string operand in the font's encoding (what pdf-lib's `encodeText` gives), learnt per character. */
export function encodedText (font: PDFFont, text: string): string {
  const m = metricsOf(font)
  let out = '<'
  for (const ch of text) {
    const cp = ch.codePointAt(0)!
    let hex = m.hex.get(cp)
    if (hex === undefined) {
      hex = font.encodeText(ch).asString()
      m.hex.set(cp, hex)
    }
    out += hex
  }
  return `${out}>`
}

function encodable (m: Metrics, font: PDFFont, ch: string): boolean {
  let ok = m.encodable.get(ch)
  if (ok === undefined) {
    try { font.encodeText(ch); ok = true } catch { ok = false }
    // Kept per thread: bounded, whatever scripts certificate names use.
    if (m.encodable.size >= 4096) m.encodable.clear()
    m.encodable.set(ch, ok)
  }
  return ok
}

/** The text with every character the font cannot encode replaced by `?`. */
export function printable (font: PDFFont, text: string): string {
  const m = metricsOf(font)
  const known = m.printable.get(text)
  if (known !== undefined) return known
  let out = ''
  for (const ch of text.replace(/[\r\n\t]+/g, ' ')) out += encodable(m, font, ch) ? ch : '?'
  return remember(m.printable, text, out)
}

/**
 * Cuts `text` with an ellipsis so that it fits `maxWidth` at `size`. A binary search on
 * the cut: one character at a time re-measured the line per character, which on a narrow
 * page of a long document added up to seconds.
 */
export function fitText (font: PDFFont, text: string, size: number, maxWidth: number): string {
  if (textWidth(font, text, size) <= maxWidth) return text
  let fits = 1
  let tooLong = text.length
  while (tooLong - fits > 1) {
    const mid = (fits + tooLong) >> 1
    if (textWidth(font, `${text.slice(0, mid)}...`, size) <= maxWidth) fits = mid
    else tooLong = mid
  }
  return `${text.slice(0, fits).trimEnd()}...`
}

/** Splits `text` into lines no wider than `maxWidth` (breaking at spaces, or inside very long words). */
export function wrapText (font: PDFFont, text: string, size: number, maxWidth: number): string[] {
  const lines: string[] = []
  let line = ''
  for (const word of text.split(' ')) {
    const candidate = line === '' ? word : `${line} ${word}`
    if (textWidth(font, candidate, size) <= maxWidth) { line = candidate; continue }
    if (line !== '') lines.push(line)
    line = word
    while (textWidth(font, line, size) > maxWidth && line.length > 1) {
      let n = line.length - 1
      while (n > 1 && textWidth(font, line.slice(0, n), size) > maxWidth) n--
      lines.push(line.slice(0, n))
      line = line.slice(n)
    }
  }
  if (line !== '') lines.push(line)
  return lines
}

/** A PDF number with at most three decimals (content streams need no more). */
export function num (n: number): string {
  return String(Math.round(n * 1000) / 1000)
}
