/**
 * A page as a greyscale image for OCR: pdf.js draws it on a canvas of `@napi-rs/canvas`
 * (the canvas pdf.js's Node build uses when it is installed), at the resolution OCR
 * reads best, within a pixel budget, and the pixels go out as a PGM (Tesseract's image
 * library reads it without any decoding: a header and one byte a pixel).
 *
 * Rendering, rather than taking the page's image out of the file, handles every way a
 * scan is stored (JPEG, CCITT fax, JBIG2, Flate; rotated, cropped, several strips)
 * and whatever else the page draws over it (a stamp, a typed note).
 */
import { createRequire } from 'node:module'
import type { PdfJsPage } from '../../pdf/index.js'

/** What OCR reads best: Tesseract is trained on text of 20 to 40 pixels a line, which is 10-point type at 300 dpi. */
export const OCR_DPI = 200

export interface PageImage {
  /** PGM (P5) bytes. */
  pgm: Uint8Array
  width: number
  height: number
  /** Pixels per PDF point (1/72 in). */
  scale: number
  /** The resolution the page was drawn at, dpi. */
  dpi: number
}

interface NapiCanvas {
  getContext: (kind: '2d') => { fillStyle: string, fillRect: (x: number, y: number, w: number, h: number) => void, getImageData: (x: number, y: number, w: number, h: number) => { data: Uint8ClampedArray } }
  encodeSync: (format: 'jpeg', quality: number) => Uint8Array
  width: number
  height: number
}

interface NapiCanvasModule {
  createCanvas: (width: number, height: number) => NapiCanvas
}

const require = createRequire(import.meta.url)
let canvasModule: NapiCanvasModule | undefined

function canvas (): NapiCanvasModule {
  canvasModule ??= require('@napi-rs/canvas') as NapiCanvasModule
  return canvasModule
}

/**
 * The scale (pixels per point) for a page of `width` × `height` points: OCR_DPI, lowered
 * so that the image stays within `maxPixels` (a poster-sized page is read at less).
 */
export function renderScale (width: number, height: number, dpi: number, maxPixels: number): number {
  const wanted = dpi / 72
  const fit = Math.sqrt(maxPixels / Math.max(1, width * height))
  return Math.min(wanted, fit)
}

/** `page` (as displayed: its /Rotate applied) drawn on white at up to `dpi`, within `maxPixels`. */
async function drawPage (page: PdfJsPage, dpi: number, maxPixels: number): Promise<{ target: NapiCanvas, width: number, height: number, scale: number }> {
  const base = page.getViewport({ scale: 1 })
  const scale = renderScale(base.width, base.height, dpi, maxPixels)
  const viewport = page.getViewport({ scale })
  const width = Math.max(1, Math.floor(viewport.width))
  const height = Math.max(1, Math.floor(viewport.height))
  const target = canvas().createCanvas(width, height)
  const context = target.getContext('2d')
  context.fillStyle = '#ffffff'
  context.fillRect(0, 0, width, height)
  // The pdf.js types want a DOM canvas; @napi-rs/canvas is the one it uses in Node.
  await page.render({ canvas: target as unknown as Parameters<PdfJsPage['render']>[0]['canvas'], viewport }).promise
  return { target, width, height, scale }
}

/** Releases a canvas's pixels now rather than at the next collection. */
function release (target: NapiCanvas): void {
  target.width = 0
  target.height = 0
}

/** Draws `page` (as displayed: its /Rotate applied) in grey at up to `dpi`, within `maxPixels`. */
export async function renderPageGrey (page: PdfJsPage, dpi: number, maxPixels: number): Promise<PageImage> {
  const { target, width, height, scale } = await drawPage(page, dpi, maxPixels)
  const rgba = target.getContext('2d').getImageData(0, 0, width, height).data
  release(target)
  return { pgm: toPgm(rgba, width, height), width, height, scale, dpi: scale * 72 }
}

/** Draws `page` at up to `dpi` as a JPEG of `quality` (0-100), the way a scanner stores a page (warm.ts). */
export async function renderPageJpeg (page: PdfJsPage, dpi: number, maxPixels: number, quality: number): Promise<Uint8Array> {
  const { target } = await drawPage(page, dpi, maxPixels)
  const jpeg = target.encodeSync('jpeg', quality)
  release(target)
  return jpeg
}

/** RGBA to an 8-bit grey PGM (ITU-R BT.601 luma, in integers). */
export function toPgm (rgba: Uint8ClampedArray | Uint8Array, width: number, height: number): Uint8Array {
  const header = Buffer.from(`P5\n${width} ${height}\n255\n`, 'ascii')
  const out = new Uint8Array(header.length + width * height)
  out.set(header, 0)
  let o = header.length
  for (let i = 0; i < width * height * 4; i += 4) {
    out[o++] = (rgba[i]! * 299 + rgba[i + 1]! * 587 + rgba[i + 2]! * 114 + 500) / 1000
  }
  return out
}
