/**
 * Text for the standard 14 fonts (Helvetica, WinAnsiEncoding: ISO 32000-1 Annex D).
 * Portuguese letters are all in WinAnsi; anything else in a certificate name (another
 * script, an emoji) is replaced rather than failing the signature.
 */
import type { PDFFont } from 'pdf-lib'

const cache = new WeakMap<PDFFont, Map<string, boolean>>()

function encodable (font: PDFFont, ch: string): boolean {
  let known = cache.get(font)
  if (known === undefined) { known = new Map(); cache.set(font, known) }
  let ok = known.get(ch)
  if (ok === undefined) {
    try { font.encodeText(ch); ok = true } catch { ok = false }
    known.set(ch, ok)
  }
  return ok
}

/** The text with every character the font cannot encode replaced by `?`. */
export function printable (font: PDFFont, text: string): string {
  let out = ''
  for (const ch of text.replace(/[\r\n\t]+/g, ' ')) out += encodable(font, ch) ? ch : '?'
  return out
}

/**
 * Cuts `text` with an ellipsis so that it fits `maxWidth` at `size`. A binary search on
 * the cut: one character at a time re-measured the line per character, which on a narrow
 * page of a long document added up to seconds.
 */
export function fitText (font: PDFFont, text: string, size: number, maxWidth: number): string {
  if (font.widthOfTextAtSize(text, size) <= maxWidth) return text
  let fits = 1
  let tooLong = text.length
  while (tooLong - fits > 1) {
    const mid = (fits + tooLong) >> 1
    if (font.widthOfTextAtSize(`${text.slice(0, mid)}...`, size) <= maxWidth) fits = mid
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
    if (font.widthOfTextAtSize(candidate, size) <= maxWidth) { line = candidate; continue }
    if (line !== '') lines.push(line)
    line = word
    while (font.widthOfTextAtSize(line, size) > maxWidth && line.length > 1) {
      let n = line.length - 1
      while (n > 1 && font.widthOfTextAtSize(line.slice(0, n), size) > maxWidth) n--
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
