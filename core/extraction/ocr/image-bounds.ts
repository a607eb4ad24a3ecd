/**
 * Image bombs, refused before pdf.js draws a page for OCR. pdf.js decodes an image whole,
 * at the size its decoder allocates, before scaling it onto the canvas: a 60 KB JPEG
 * declaring 40 000 × 40 000 pixels would ask for 6.4 GB, and four 8000 × 8000 images on one
 * page took a thread 3.7 GB and 25 seconds. The text layer never decodes images; OCR does,
 * so the pages it draws are measured first, by the census (image-census.ts: the images
 * each page draws, read the way pdf.js reads them), against three bounds:
 *
 * - one image (its soft mask and mask each on their own), `maxImagePixels`: every image
 *   stream of the file, drawn or not, and the inline images of the pages read;
 * - one page, all it draws together, `maxPageImagePixels`: pdf.js holds a page's images
 *   together while it draws it, so this bounds a thread's memory;
 * - the pages read by OCR together, `maxDocumentImagePixels`: what one document may make
 *   the thread decode, refused at once rather than run into the deadline.
 *
 * Decoding costs 6 to 12 bytes a pixel at its peak (the decoded samples, the RGBA image
 * pdf.js builds, the canvas it paints it from) and about 0.07 s a million pixels on our
 * development machine (docs/extraction.md, "Image bombs").
 */
import { EngineError } from '../../errors.js'
import { TooMuchWork } from '../../pdf/index.js'
import type { ImageCensus, ImageRaster } from './image-census.js'

/** About a 600-dpi A3 page in colour; a 300-dpi A4 scan has 8.7 million pixels. */
export const DEFAULT_MAX_IMAGE_PIXELS = 70_000_000
/** As much as one image: a page is one scan, or a few strips and masks that add up to one. */
export const DEFAULT_MAX_PAGE_IMAGE_PIXELS = 70_000_000
/** Twenty 300-dpi A4 pages in colour, or three at the page bound: about 14 s of decoding here, within the 20-s deadline. */
export const DEFAULT_MAX_DOCUMENT_IMAGE_PIXELS = 200_000_000

export interface ImageLimits {
  maxImagePixels: number
  maxPageImagePixels: number
  maxDocumentImagePixels: number
}

/** A page to be drawn: its number, and its dictionary's object number as pdf.js has it (`page.ref`). */
export interface PageToDraw { number: number, object: number | undefined }

const millions = (pixels: number): string => `${(pixels / 1e6).toFixed(1)} million`

function refuseRaster (raster: ImageRaster, maxPixels: number): void {
  if (raster.width * raster.height <= maxPixels) return
  const what = `${raster.kind === 'image' ? 'An image' : raster.kind === 'inline image' ? 'An inline image' : `The ${raster.kind} of an image`} of the PDF${raster.object === undefined ? '' : ` (object ${raster.object})`}`
  const size = Number.isFinite(raster.width * raster.height) ? `${raster.width} × ${raster.height} pixels` : 'an unreadable size'
  throw new EngineError('PDF_CONTENT_TOO_LARGE', `${what} declares ${size}, past the ${(maxPixels / 1e6).toFixed(0)} million pixels a scanned page is read at; the file may be crafted.`, { maxImagePixels: maxPixels, ...(raster.object === undefined ? {} : { object: raster.object }) })
}

/**
 * Throws PDF_CONTENT_TOO_LARGE when an image of the file, or an image `pages` draw, is past
 * `maxImagePixels`, when one of `pages` draws more than `maxPageImagePixels`, or all of
 * them together more than `maxDocumentImagePixels`. Returns each page's pixels.
 */
export function refuseImageBombs (census: () => ImageCensus, pages: readonly PageToDraw[], limits: ImageLimits): Map<number, number> {
  const counted = new Map<number, number>()
  try {
    const c = census()
    for (const raster of c.imageStreams()) refuseRaster(raster, limits.maxImagePixels)
    let total = 0
    for (const page of pages) {
      const drawn = c.page(page.object)
      for (const raster of drawn.rasters) refuseRaster(raster, limits.maxImagePixels)
      if (drawn.pixels > limits.maxPageImagePixels) {
        throw new EngineError('PDF_CONTENT_TOO_LARGE', `Page ${page.number} of the PDF draws images of ${millions(drawn.pixels)} pixels together, past the ${millions(limits.maxPageImagePixels)} one scanned page is read at; the file may be crafted.`, { page: page.number, maxPageImagePixels: limits.maxPageImagePixels })
      }
      counted.set(page.number, drawn.pixels)
      total += drawn.pixels
    }
    if (total > limits.maxDocumentImagePixels) {
      throw new EngineError('PDF_CONTENT_TOO_LARGE', `The scanned pages of the PDF draw images of ${millions(total)} pixels together, past the ${millions(limits.maxDocumentImagePixels)} one document is read at; send fewer pages at a time.`, { maxDocumentImagePixels: limits.maxDocumentImagePixels })
    }
  } catch (err) {
    if (err instanceof TooMuchWork) throw new EngineError('PDF_CONTENT_TOO_LARGE', 'The objects of the PDF overlap too much for its images to be measured; the file may be crafted.')
    throw err
  }
  return counted
}
