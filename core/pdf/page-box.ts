/**
 * A page as a reader shows it: the visible box in default user space, the turn applied
 * for display and the size of one user-space unit. Readers differ on malformed values,
 * so each rule below follows what pdf.js and poppler both do:
 *
 * - visible box: CropBox (inheritable, default MediaBox) clipped to MediaBox (ISO 32000-1
 *   §14.11.2); boxes are normalized, so `[612 792 0 0]` is the same as `[0 0 612 792]`;
 *   a CropBox that misses the MediaBox entirely falls back to the MediaBox;
 * - /Rotate (inheritable): taken modulo 360, so -90 is 270 and 450 is 90; a value that is
 *   not a multiple of 90 is shown unrotated (0), not rounded to the nearest quarter turn;
 * - /UserUnit (PDF 1.6, §14.11.2 Table 30, not inheritable): the size of a unit in 1/72
 *   inch; anything but a positive number is 1.
 */
import { PDFArray, PDFDict, PDFName, PDFNumber } from 'pdf-lib'
import type { PDFPage } from 'pdf-lib'

export interface Box { x: number, y: number, width: number, height: number }

export type Rotation = 0 | 90 | 180 | 270

export interface PageGeometry {
  /** Visible box in default user space. */
  box: Box
  rotation: Rotation
  /** Physical size of one user-space unit, in points. */
  userUnit: number
}

/** The four places a stamp may take, named as the reader sees the turned page. */
export type Corner = 'bottom-right' | 'bottom-left' | 'top-right' | 'top-left'
export const CORNERS: readonly Corner[] = ['bottom-right', 'bottom-left', 'top-right', 'top-left']

function normalized (r: { x: number, y: number, width: number, height: number }): Box {
  return {
    x: Math.min(r.x, r.x + r.width),
    y: Math.min(r.y, r.y + r.height),
    width: Math.abs(r.width),
    height: Math.abs(r.height)
  }
}

/** The intersection of two boxes, or undefined when they do not overlap with a positive area. */
export function intersect (a: Box, b: Box): Box | undefined {
  const x = Math.max(a.x, b.x)
  const y = Math.max(a.y, b.y)
  const right = Math.min(a.x + a.width, b.x + b.width)
  const top = Math.min(a.y + a.height, b.y + b.height)
  return right > x && top > y ? { x, y, width: right - x, height: top - y } : undefined
}

/** Visible area of a page: CropBox clipped to MediaBox, or the MediaBox when they do not meet. */
export function visibleBox (page: PDFPage): Box {
  const media = normalized(page.getMediaBox())
  return intersect(media, normalized(page.getCropBox())) ?? media
}

/** /Rotate as readers apply it: modulo 360, and 0 when it is not a multiple of 90. */
export function pageRotation (page: PDFPage): Rotation {
  const angle = page.getRotation().angle
  if (!Number.isFinite(angle) || angle % 90 !== 0) return 0
  return (((angle % 360) + 360) % 360) as Rotation
}

/** /UserUnit of the page dictionary itself, 1 unless it is a positive number. */
export function userUnit (page: PDFPage): number {
  const value = page.node.get(PDFName.of('UserUnit'))
  const n = value instanceof PDFNumber ? value.asNumber() : NaN
  return Number.isFinite(n) && n > 0 ? n : 1
}

export function pageGeometry (page: PDFPage): PageGeometry {
  return { box: visibleBox(page), rotation: pageRotation(page), userUnit: userUnit(page) }
}

/** Width and height of the visible box as the reader sees it (in user-space units). */
export function readerSize (g: PageGeometry): { width: number, height: number } {
  const turned = g.rotation === 90 || g.rotation === 270
  return turned ? { width: g.box.height, height: g.box.width } : { width: g.box.width, height: g.box.height }
}

/**
 * A rectangle given in the reader's frame (origin at the bottom left of the page as shown,
 * x to the right, y up, user-space units) as a rectangle in default user space. /Rotate
 * turns the page clockwise for display (§8.3.2.3 and Table 30).
 */
export function toUserRect (g: PageGeometry, r: Box): Box {
  const { x, y, width: w, height: h } = g.box
  switch (g.rotation) {
    case 0: return { x: x + r.x, y: y + r.y, width: r.width, height: r.height }
    // Clockwise quarter turn: user up becomes reader right, user right becomes reader down.
    case 90: return { x: x + w - r.y - r.height, y: y + r.x, width: r.height, height: r.width }
    case 180: return { x: x + w - r.x - r.width, y: y + h - r.y - r.height, width: r.width, height: r.height }
    case 270: return { x: x + r.y, y: y + h - r.x - r.width, width: r.height, height: r.width }
  }
}

/** Form matrix that turns a horizontal appearance so it reads left to right on the shown page. */
export function uprightMatrix (rotation: Rotation): [number, number, number, number, number, number] {
  switch (rotation) {
    case 0: return [1, 0, 0, 1, 0, 0]
    case 90: return [0, 1, -1, 0, 0, 0]
    case 180: return [-1, 0, 0, -1, 0, 0]
    case 270: return [0, -1, 1, 0, 0, 0]
  }
}

/** Existing annotation rectangles that show on the page (hidden, zero-size and pop-up ones excluded). */
export function annotationBoxes (page: PDFPage): Box[] {
  const out: Box[] = []
  const annots = page.node.lookupMaybe(PDFName.of('Annots'), PDFArray)
  for (let i = 0; i < (annots?.size() ?? 0); i++) {
    try {
      const dict = annots!.lookupMaybe(i, PDFDict)
      if (dict === undefined) continue
      const subtype = dict.lookupMaybe(PDFName.of('Subtype'), PDFName)?.asString()
      const flags = dict.lookupMaybe(PDFName.of('F'), PDFNumber)?.asNumber() ?? 0
      // Hidden (2) or NoView (32) annotations are not drawn; a pop-up is only shown on demand.
      if (subtype === '/Popup' || (flags & (2 | 32)) !== 0) continue
      const rect = dict.lookupMaybe(PDFName.of('Rect'), PDFArray)
      if (rect === undefined || rect.size() !== 4) continue
      const box = normalized(rect.asRectangle())
      if (box.width > 0 && box.height > 0) out.push(box)
    } catch {
      // A malformed annotation is the file's business; it just does not count as an obstacle.
    }
  }
  return out
}
