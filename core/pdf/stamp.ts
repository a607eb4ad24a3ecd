/**
 * The stamp on every page, added as a Stamp annotation with its own appearance stream
 * (ISO 32000-1 §12.5.6.12) instead of rewriting the page's content: the page objects
 * only gain an /Annots entry, so an earlier signature's content stays byte-identical.
 * What pages share of the drawing (background, frame, the text but the page number) is
 * one form XObject that each page's appearance draws (addSharedStamp), so that a long
 * document does not carry the same few hundred bytes once a page.
 *
 * Size: the text is set at 6.5 points as printed (UserUnit applied), shrinking to fit the
 * width of the page as shown; below the legibility floor (MIN_FONT_PT) it wraps onto more
 * lines instead of shrinking further. A stamp that still does not fit inside the visible
 * box, or would cover more than a quarter of it, is not drawn: the caller reports the page.
 *
 * Placement: a corner of the visible box as the reader sees it (see page-box.ts for the
 * box, /Rotate and UserUnit), a few points from both edges. With /Rotate the viewer turns
 * the page and its annotations together, so the rectangle is computed in the reader's
 * frame and mapped back to user space, and the appearance /Matrix turns the text by the
 * same angle so it reads left to right (§12.5.5: the transformed BBox is fitted to /Rect).
 */
import { PDFHexString, PDFString } from 'pdf-lib'
import type { PDFFont, PDFPage, PDFRef } from 'pdf-lib'
import type { Tracked } from './incremental.js'
import { appendAnnotation } from './incremental.js'
import { readerSize, toUserRect, uprightMatrix } from './page-box.js'
import type { Box, Corner, PageGeometry } from './page-box.js'
import { encodedText, num, printable, shownAdvance, textWidth, wrapText } from './text.js'

/**
 * A PDF text string (§7.9.2.2): a literal in PDFDocEncoding when every character has the
 * same code there as in Latin-1 (printable ASCII, and U+00A1 to U+00FF but U+00AD: the
 * Portuguese letters), a quarter of the size of UTF-16 hex, with parentheses and backslashes
 * escaped; UTF-16 hex for the rest.
 */
function textString (text: string): PDFString | PDFHexString {
  return /^[\x20-\x7e\xa1-\xac\xae-\xff]*$/.test(text) ? PDFString.of(text.replace(/[()\\]/g, '\\$&')) : PDFHexString.fromText(text)
}

/** Largest font size, in points as printed. */
export const MAX_FONT_PT = 6.5
/**
 * The legibility floor, in points as printed: Helvetica capitals are then about 1 mm tall,
 * the smallest print a reader takes in without a magnifier. Text never gets smaller; it wraps.
 */
export const MIN_FONT_PT = 4
/** Distance from the page's edges, in points as printed (less on small pages). */
const EDGE_GAP_PT = 6
/** A stamp may cover at most this share of the visible box. */
const MAX_SHARE = 0.25
/** Inner margin and line spacing, relative to the font size. */
const PAD = 0.45
const LEADING = 1.22

export interface StampLayout {
  /** Font size, lines, outer size and edge gap, in points as printed (the appearance's own space). */
  size: number
  lines: string[]
  length: number
  height: number
  gap: number
}

/**
 * Sets `texts` for a page of geometry `g`, or returns undefined when no legible stamp fits.
 * Sizes are in printed points; the viewer scales the appearance to /Rect, which is in user units.
 */
export function layoutStamp (font: PDFFont, texts: string[], g: PageGeometry): StampLayout | undefined {
  const shown = readerSize(g)
  const width = shown.width * g.userUnit
  const height = shown.height * g.userUnit
  const gap = Math.min(EDGE_GAP_PT, Math.min(width, height) * 0.04)
  const room = width - 2 * gap
  // Width is proportional to size: measure once at 1 pt (a search over sizes re-measured every line of every page).
  const unitWidth = texts.reduce((w, t) => Math.max(w, textWidth(font, t, 1)), 0)
  let size = unitWidth === 0 ? MAX_FONT_PT : Math.min(MAX_FONT_PT, Math.floor(room / (unitWidth + 2 * PAD) * 4) / 4)
  let lines = texts
  if (size < MIN_FONT_PT) {
    size = MIN_FONT_PT
    const lineRoom = room - 2 * PAD * size
    // Wrapped at spaces only: a word cut in two (the document identifier, a CNPJ) is worse than no stamp.
    const widestWord = texts.reduce((w, t) => t.split(' ').reduce((m, word) => Math.max(m, textWidth(font, word, size)), w), 0)
    if (widestWord > lineRoom) return undefined
    lines = texts.flatMap((t) => wrapText(font, t, size, lineRoom))
  }
  // Unwrapped, the widest line is the one measured above.
  const widest = lines === texts ? unitWidth * size : lines.reduce((w, t) => Math.max(w, textWidth(font, t, 1) * size), 0)
  const length = widest + 2 * PAD * size
  const boxHeight = lines.length * LEADING * size + 2 * PAD * size - (LEADING - 1) * size
  if (length > room || boxHeight > height - 2 * gap || length * boxHeight > MAX_SHARE * width * height) return undefined
  return { size, lines, length, height: boxHeight, gap }
}

/** Where a stamp of `layout` goes in `corner`, as a rectangle in default user space. */
export function stampRect (g: PageGeometry, layout: StampLayout, corner: Corner): Box {
  const u = g.userUnit
  const shown = readerSize(g)
  const length = layout.length / u
  const height = layout.height / u
  const gap = layout.gap / u
  const x = corner.endsWith('right') ? shown.width - gap - length : gap
  const y = corner.startsWith('bottom') ? gap : shown.height - gap - height
  return toUserRect(g, { x, y, width: length, height })
}

/**
 * A rectangle's four numbers rounded inward, so that rounding never pushes it past the box
 * it was fitted in. More decimals for a large UserUnit, where a point is a small fraction of a unit.
 */
function rectNumbers (r: Box, userUnit: number): [number, number, number, number] {
  const scale = 10 ** Math.min(9, 3 + Math.max(0, Math.ceil(Math.log10(userUnit))))
  return [Math.ceil(r.x * scale) / scale, Math.ceil(r.y * scale) / scale, Math.floor((r.x + r.width) * scale) / scale, Math.floor((r.y + r.height) * scale) / scale]
}

/**
 * The part of a stamp that pages share: for each line, the text every page in a group has
 * at its start (all of it but the page number, usually). Computed over the lines of the
 * pages that share one layout.
 */
export function sharedPrefixes (linesOfPages: string[][]): string[] {
  const first = linesOfPages[0] ?? []
  return first.map((line, i) => {
    let length = line.length
    for (const lines of linesOfPages) {
      const other = lines[i] ?? ''
      let k = 0
      while (k < length && k < other.length && other[k] === line[k]) k++
      length = k
    }
    return line.slice(0, length)
  })
}

/** A stamp's appearance as drawn once for many pages: a form XObject and the line starts it holds. */
export interface SharedStamp {
  form: PDFRef
  prefixes: string[]
  /** How far each prefix moves the pen, where a page's own text for that line starts. */
  advances: number[]
}

/** Where line `i`'s text starts in the appearance, and where its baseline is. */
function lineOrigin (layout: StampLayout, i: number): [number, number] {
  const { size, height } = layout
  return [PAD * size, height - PAD * size - size * 0.82 - i * LEADING * size]
}

/** Text operators for `parts` (line index, text, x offset from the line's start), in the stamp's text colour. */
function textOperators (font: PDFFont, layout: StampLayout, parts: Array<[number, string, number]>): string {
  if (parts.length === 0) return ''
  let content = ` BT 0.1 0.16 0.4 rg /F1 ${num(layout.size)} Tf`
  for (const [i, text, dx] of parts) {
    const [x, y] = lineOrigin(layout, i)
    content += ` 1 0 0 1 ${num(x + dx)} ${num(y)} Tm ${encodedText(font, text)} Tj`
  }
  return `${content} ET`
}

/**
 * Draws what a group of pages share once, as a form XObject (left uncompressed: a few
 * hundred bytes): an opaque light background, a frame, then each line's shared start.
 */
export function addSharedStamp (tracked: Tracked, font: PDFFont, layout: StampLayout, prefixes: string[]): SharedStamp {
  const { context } = tracked.opened.doc
  const { size, length, height } = layout
  const frame = Math.max(0.3, size * 0.07)
  const content = `q 0.97 0.97 1 rg 0.12 0.2 0.45 RG ${num(frame)} w ${num(frame / 2)} ${num(frame / 2)} ${num(length - frame)} ${num(height - frame)} re B` +
    `${textOperators(font, layout, prefixes.flatMap((p, i) => p === '' ? [] : [[i, p, 0] as [number, string, number]]))} Q`
  const form = context.register(context.stream(content, {
    Type: 'XObject', Subtype: 'Form', BBox: [0, 0, Number(num(length)), Number(num(height))],
    Resources: { Font: { F1: font.ref } }
  }))
  return { form, prefixes, advances: prefixes.map((p) => shownAdvance(font, p, size)) }
}

/**
 * Adds the stamp annotation to one page in `corner`. `layout` comes from layoutStamp for
 * the same page and `shared` from addSharedStamp for its group: the page's own appearance
 * draws the shared form, then the rest of each line (the page number); its /Matrix turns it
 * upright on a rotated page. `fullText` (the stamp's text, unwrapped) also goes in /Contents
 * for accessibility.
 */
export function addStamp (tracked: Tracked, page: PDFPage, g: PageGeometry, font: PDFFont, layout: StampLayout, corner: Corner, fullText: string, shared: SharedStamp, nameSuffix: string): Box {
  const { context } = tracked.opened.doc
  const rect = stampRect(g, layout, corner)
  const rest = layout.lines.flatMap((line, i) => {
    const prefix = shared.prefixes[i] ?? ''
    return line.length > prefix.length ? [[i, line.slice(prefix.length), shared.advances[i] ?? 0] as [number, string, number]] : []
  })
  const text = textOperators(font, layout, rest)
  const appearance = context.register(context.stream(`q /S Do Q${text}`, {
    Type: 'XObject', Subtype: 'Form', BBox: [0, 0, Number(num(layout.length)), Number(num(layout.height))],
    // The identity, the default, is left out: a hundred pages' worth of bytes.
    ...(g.rotation === 0 ? {} : { Matrix: uprightMatrix(g.rotation) }),
    Resources: text === '' ? { XObject: { S: shared.form } } : { XObject: { S: shared.form }, Font: { F1: font.ref } }
  }))
  const annotation = context.register(context.obj({
    Type: 'Annot', Subtype: 'Stamp', Name: 'razaoSignature',
    Rect: rectNumbers(rect, g.userUnit),
    // Print + ReadOnly + Locked + LockedContents (§12.5.3): printed, not movable or editable.
    F: 4 | 64 | 128 | 512,
    P: page.ref,
    AP: { N: appearance },
    Contents: textString(fullText),
    NM: PDFString.of(`razao-stamp-${nameSuffix}`)
  }))
  appendAnnotation(tracked, page.node, annotation)
  return rect
}

/** The stamp's texts as the font can print them. */
export function stampTexts (font: PDFFont, lines: string[]): string[] {
  return lines.map((l) => printable(font, l))
}
