/**
 * The stamp on every page, added as a Stamp annotation with its own appearance stream
 * (ISO 32000-1 §12.5.6.12) instead of rewriting the page's content: the page objects
 * only gain an /Annots entry, so an earlier signature's content stays byte-identical.
 *
 * Placement: a thin strip along the edge that is at the *bottom as the reader sees the
 * page*, inside the visible area (CropBox ∩ MediaBox), a few points from the edge,
 * where documents normally keep a blank margin. With /Rotate the viewer turns the
 * page and its annotations together, so the strip sits on the edge that ends up at
 * the bottom and its appearance /Matrix turns the text by the same angle, which makes
 * it read left to right after rotation (§12.5.5: the transformed BBox is fitted to /Rect).
 */
import { PDFHexString, PDFString } from 'pdf-lib'
import type { PDFFont, PDFPage } from 'pdf-lib'
import type { Tracked } from './incremental.js'
import { appendAnnotation } from './incremental.js'
import { fitText, num, printable } from './text.js'

/** A PDF text string: literal when plain ASCII (shorter), UTF-16 hex otherwise (§7.9.2.2). */
function textString (text: string): PDFString | PDFHexString {
  return /^[\x20-\x7e]*$/.test(text) && !/[()\\]/.test(text) ? PDFString.of(text) : PDFHexString.fromText(text)
}

export interface Box { x: number, y: number, width: number, height: number }

const EDGE_GAP = 6
const MIN_FONT = 3.5
const MAX_FONT = 6.5

/** The visible area of a page: CropBox clipped to MediaBox (§14.11.2). */
export function visibleBox (page: PDFPage): Box {
  const media = page.getMediaBox()
  const crop = page.getCropBox()
  const x = Math.max(media.x, crop.x)
  const y = Math.max(media.y, crop.y)
  const right = Math.min(media.x + media.width, crop.x + crop.width)
  const top = Math.min(media.y + media.height, crop.y + crop.height)
  return right > x && top > y ? { x, y, width: right - x, height: top - y } : media
}

/** /Rotate as 0, 90, 180 or 270 (it may be negative or above 360 in the file). */
export function pageRotation (page: PDFPage): 0 | 90 | 180 | 270 {
  const angle = ((Math.round(page.getRotation().angle / 90) * 90) % 360 + 360) % 360
  return angle as 0 | 90 | 180 | 270
}

export interface StampPlacement {
  /** Annotation rectangle in default user space. */
  rect: [number, number, number, number]
  /** Form XObject matrix turning the horizontal strip onto the rotated edge. */
  matrix: [number, number, number, number, number, number]
  /** Strip length along the edge and its height, in the form's own space. */
  length: number
  height: number
}

/** Where a strip `length × height` goes on a page of `box` shown with `rotation`. */
export function placeStamp (box: Box, rotation: 0 | 90 | 180 | 270, length: number, height: number): StampPlacement {
  const { x, y, width, height: boxHeight } = box
  const alongWidth = rotation === 0 || rotation === 180
  const edgeLength = alongWidth ? width : boxHeight
  const start = (edgeLength - length) / 2
  switch (rotation) {
    case 0:
      return { rect: [x + start, y + EDGE_GAP, x + start + length, y + EDGE_GAP + height], matrix: [1, 0, 0, 1, 0, 0], length, height }
    case 90:
      // The right edge ends up at the bottom; text runs up the page.
      return { rect: [x + width - EDGE_GAP - height, y + start, x + width - EDGE_GAP, y + start + length], matrix: [0, 1, -1, 0, 0, 0], length, height }
    case 180:
      return { rect: [x + start, y + boxHeight - EDGE_GAP - height, x + start + length, y + boxHeight - EDGE_GAP], matrix: [-1, 0, 0, -1, 0, 0], length, height }
    case 270:
      return { rect: [x + EDGE_GAP, y + start, x + EDGE_GAP + height, y + start + length], matrix: [0, -1, 1, 0, 0, 0], length, height }
  }
}

/**
 * Adds the stamp annotation to one page. Font size shrinks (down to 3.5 pt) for narrow
 * pages; lines still too long are cut with an ellipsis.
 */
export function addStamp (tracked: Tracked, page: PDFPage, font: PDFFont, lines: string[], nameSuffix: string): void {
  const { context } = tracked.opened.doc
  const box = visibleBox(page)
  const rotation = pageRotation(page)
  const edge = rotation === 0 || rotation === 180 ? box.width : box.height
  const texts = lines.map((l) => printable(font, l))
  const pad = 3
  const maxLength = Math.max(20, edge - 2 * EDGE_GAP)
  // Width is proportional to size: measure once at 1 pt and take the largest quarter point
  // that fits (a search over sizes re-measured every line of every page of a long file).
  const unitWidth = texts.reduce((w, t) => Math.max(w, font.widthOfTextAtSize(t, 1)), 0)
  const fitting = unitWidth === 0 ? MAX_FONT : Math.floor((maxLength - 2 * pad) / unitWidth * 4) / 4
  const size = Math.min(MAX_FONT, Math.max(MIN_FONT, fitting))
  const fitted = texts.map((t) => fitText(font, t, size, maxLength - 2 * pad))
  const leading = size * 1.22
  const length = Math.min(maxLength, unitWidth * size + 2 * pad)
  const height = fitted.length * leading + 2 * pad - (leading - size)
  const placement = placeStamp(box, rotation, length, height)

  let content = `q 0.12 0.2 0.45 RG 0.4 w 0.2 0.2 ${num(length - 0.4)} ${num(height - 0.4)} re S BT 0.1 0.16 0.4 rg /F1 ${num(size)} Tf`
  fitted.forEach((text, i) => {
    const baseline = height - pad - size * 0.82 - i * leading
    content += ` 1 0 0 1 ${num(pad)} ${num(baseline)} Tm ${font.encodeText(text).toString()} Tj`
  })
  content += ' ET Q'
  // Left uncompressed: a few hundred bytes each, and a deflate state per page costs more than it saves.
  const appearance = context.register(context.stream(content, {
    Type: 'XObject', Subtype: 'Form', BBox: [0, 0, num(length), num(height)].map(Number), Matrix: placement.matrix,
    Resources: { Font: { F1: font.ref } }
  }))
  const annotation = context.register(context.obj({
    Type: 'Annot', Subtype: 'Stamp', Name: 'razaoSignature',
    Rect: placement.rect.map((n) => Number(num(n))),
    // Print + ReadOnly + Locked + LockedContents (§12.5.3): printed, not movable or editable.
    F: 4 | 64 | 128 | 512,
    P: page.ref,
    AP: { N: appearance },
    Contents: textString(lines.join(' - ')),
    NM: PDFString.of(`razao-stamp-${nameSuffix}`)
  }))
  appendAnnotation(tracked, page.node, annotation)
}
