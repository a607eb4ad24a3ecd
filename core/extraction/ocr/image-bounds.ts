/**
 * The image bomb, measured before pdf.js draws a page: pdf.js decodes an image whole,
 * at the size its dictionary declares, before scaling it onto the canvas, so a 60 KB
 * JPEG declaring 40 000 × 40 000 pixels would ask for 6.4 GB. The text layer never
 * decodes images (the stream scan of core/pdf/raw-content-size.ts skips them for that
 * reason); OCR does, so it checks them first.
 *
 * Read from the raw bytes, the way raw-content-size.ts finds streams: every dictionary
 * with `/Subtype /Image` and its `/Width` and `/Height`. An image's dictionary is never
 * compressed (streams cannot sit in object streams) nor encrypted (only strings and
 * stream data are), so every image pdf.js could decode is seen here. A size given by
 * reference (`/Width 12 0 R`) is not followed: it counts as too large, since a file
 * a scanner wrote never does it.
 */
import { EngineError } from '../../errors.js'

/** About a 600-dpi A3 page in colour; a 300-dpi A4 scan has 8.7 million pixels. */
export const DEFAULT_MAX_IMAGE_PIXELS = 70_000_000

/** How far from `/Subtype /Image` its dictionary's `/Width` and `/Height` may sit. */
const DICT_WINDOW = 2048

const SUBTYPE_IMAGE = /\/Subtype\s*\/Image\b/g

function dimension (dict: string, key: 'Width' | 'Height'): number | undefined {
  const m = new RegExp(`/${key}\\s+(\\d+)(\\s+\\d+\\s+R)?\\b`).exec(dict)
  if (m === null || m[2] !== undefined) return undefined
  return Number(m[1])
}

/** The dictionary around `at`: from the nearest `<<` before it to the matching `>>` after, within the window. */
function dictionaryAround (text: string, at: number): string {
  const start = text.lastIndexOf('<<', at)
  const from = start < 0 || at - start > DICT_WINDOW ? Math.max(0, at - DICT_WINDOW) : start
  const end = text.indexOf('stream', at)
  const to = end < 0 || end - at > DICT_WINDOW ? Math.min(text.length, at + DICT_WINDOW) : end
  return text.slice(from, to)
}

/**
 * Throws PDF_CONTENT_TOO_LARGE when an image of the file declares more than `maxPixels`
 * pixels, or a size that cannot be read.
 */
export function refuseImageBombs (bytes: Uint8Array, maxPixels: number = DEFAULT_MAX_IMAGE_PIXELS): void {
  // latin1 keeps one character per byte, so positions are byte offsets.
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1')
  for (const m of text.matchAll(SUBTYPE_IMAGE)) {
    const dict = dictionaryAround(text, m.index)
    const width = dimension(dict, 'Width')
    const height = dimension(dict, 'Height')
    if (width === undefined || height === undefined || width * height > maxPixels) {
      const size = width === undefined || height === undefined ? 'an unreadable size' : `${width} × ${height} pixels`
      throw new EngineError('PDF_CONTENT_TOO_LARGE', `An image of the PDF declares ${size}, past the ${(maxPixels / 1e6).toFixed(0)} million pixels a scanned page is read at; the file may be crafted.`, { maxImagePixels: maxPixels })
    }
  }
}

/** True when the file holds at least one image XObject. */
export function hasImages (bytes: Uint8Array): boolean {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1').search(SUBTYPE_IMAGE) >= 0
}
