/**
 * How much content each page would make a content reader (pdf.js) decode, measured
 * without it, so that a decompression bomb is never handed to it: 400 KB of deflate can
 * hold 200 MB of drawing operators, which pdf.js took 20 s and 630 MB to walk through.
 *
 * Counted per page: its content streams and the form XObjects its resources hold (and
 * theirs, to a depth of 8; a page with forms nested deeper is not measured at all), each
 * shared stream once per page. Deflate streams are
 * inflated here with a ceiling on the output (stopping as soon as it is passed); other
 * filters are estimated from their encoded size (ASCII filters shrink, run-length and LZW
 * are counted at 20 times, a ratio ordinary text and drawing operators stay well under).
 */
import { inflateSync } from 'node:zlib'
import { PDFArray, PDFDict, PDFName, PDFRawStream, PDFRef, PDFStream } from 'pdf-lib'
import type { PDFDocument, PDFObject } from 'pdf-lib'

const MAX_FORM_DEPTH = 8
const UNKNOWN_FILTER_RATIO = 20

function filters (stream: PDFStream): string[] {
  const f = stream.dict.get(PDFName.of('Filter'))
  if (f instanceof PDFName) return [f.asString()]
  if (f instanceof PDFArray) return f.asArray().map((x) => x instanceof PDFName ? x.asString() : '?')
  return []
}

/** Decoded size of one stream, or `ceiling + 1` when it is past `ceiling`. */
function decodedSize (stream: PDFStream, ceiling: number): number {
  if (!(stream instanceof PDFRawStream)) return stream.getContentsSize()
  const raw = stream.contents
  const chain = filters(stream)
  if (chain.length === 0) return raw.length
  if (chain[0] === '/FlateDecode' || chain[0] === '/Fl') {
    let inflated: number
    try {
      inflated = inflateSync(raw, { maxOutputLength: Math.max(1, ceiling + 1), finishFlush: 2 /* Z_SYNC_FLUSH: tolerate a truncated stream */ }).length
    } catch (err) {
      // Past the ceiling (ERR_BUFFER_TOO_LARGE), or damaged data: a reader stops there too, so count what was there.
      if ((err as { code?: unknown }).code === 'ERR_BUFFER_TOO_LARGE') return ceiling + 1
      inflated = raw.length
    }
    return chain.length === 1 ? inflated : inflated * UNKNOWN_FILTER_RATIO
  }
  return raw.length * UNKNOWN_FILTER_RATIO
}

function lookup (doc: PDFDocument, object: PDFObject | undefined): PDFObject | undefined {
  return object instanceof PDFRef ? doc.context.lookup(object) : object
}

/**
 * The pages (1-based) whose content stays within `maxPageBytes`, in order, with their
 * decoded content size; a page that would take the running total past `maxTotalBytes` is
 * left out. A size of 0 means the page draws nothing.
 */
export function pagesWithinContentLimit (doc: PDFDocument, maxPageBytes: number, maxTotalBytes: number): Array<{ page: number, bytes: number }> {
  const out: Array<{ page: number, bytes: number }> = []
  let total = 0
  for (const [i, page] of doc.getPages().entries()) {
    let size = 0
    const seen = new Set<PDFObject>()
    const add = (object: PDFObject | undefined): void => {
      const stream = lookup(doc, object)
      if (!(stream instanceof PDFStream) || seen.has(stream) || size > maxPageBytes) return
      seen.add(stream)
      size += decodedSize(stream, maxPageBytes - size)
    }
    // Forms nested deeper than MAX_FORM_DEPTH are not measured, but a reader still draws
    // them: such a page counts as too large rather than as measured.
    let tooDeep = false
    const forms = (resources: PDFObject | undefined, depth: number): void => {
      const res = lookup(doc, resources)
      const xobjects = res instanceof PDFDict ? lookup(doc, res.get(PDFName.of('XObject'))) : undefined
      if (!(xobjects instanceof PDFDict)) return
      if (depth > MAX_FORM_DEPTH) {
        tooDeep ||= xobjects.values().some((v) => { const f = lookup(doc, v); return f instanceof PDFStream && f.dict.get(PDFName.of('Subtype'))?.toString() === '/Form' })
        return
      }
      for (const value of xobjects.values()) {
        const form = lookup(doc, value)
        if (!(form instanceof PDFStream) || seen.has(form) || form.dict.get(PDFName.of('Subtype'))?.toString() !== '/Form') continue
        add(form)
        forms(form.dict.get(PDFName.of('Resources')), depth + 1)
      }
    }
    try {
      const contents = lookup(doc, page.node.get(PDFName.of('Contents')))
      if (contents instanceof PDFArray) contents.asArray().forEach(add)
      else add(contents)
      forms(page.node.Resources(), 0)
    } catch {
      // A structure pdf-lib cannot walk: leave the page to the fallback rather than to pdf.js.
      continue
    }
    if (tooDeep || size > maxPageBytes || total + size > maxTotalBytes) continue
    total += size
    out.push({ page: i + 1, bytes: size })
  }
  return out
}
