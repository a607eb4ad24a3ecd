/**
 * The name a file is offered under (`fileName`, Content-Disposition). It is cut to fit, and
 * cut between code points: a cut through a surrogate pair (199 ASCII characters and 📄) left
 * half a character that encodeURIComponent refuses, and every download of the file answered
 * 500. The caps are those of the places the name ends up: 200 characters (the documented
 * limit) and 255 bytes of UTF-8, the longest file name of the common file systems (ext4,
 * XFS, APFS), so that a browser saving the download keeps the name. When it has to be cut,
 * the extension is kept: a PDF saved without `.pdf` no longer opens with a double click.
 */
import { basename, extname } from 'node:path'

export const MAX_NAME_CHARS = 200
export const MAX_NAME_BYTES = 255
/** An extension longer than this is not kept whole when a name is cut. */
const MAX_KEPT_EXTENSION_CHARS = 16

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g
const CONTROL = /[\u0000-\u001f\u007f]/g

/**
 * A name for the download: the last path segment, half surrogates replaced by U+FFFD (JSON
 * may carry them as `\ud83d`), no control characters, within MAX_NAME_CHARS code points and
 * MAX_NAME_BYTES bytes; undefined when nothing usable is left.
 */
export function cleanFileName (name: string | undefined): string | undefined {
  if (typeof name !== 'string') return undefined
  const segment = basename(name.replace(/\\/g, '/'))
  const cleaned = fitFileName(segment.replace(LONE_SURROGATE, '\uFFFD').replace(CONTROL, '').trim()).trim()
  return cleaned === '' || cleaned === '.' || cleaned === '..' ? undefined : cleaned
}

/** `name` (well formed) cut on code points to the caps, its extension kept when it is short. */
export function fitFileName (name: string): string {
  const points = Array.from(name)
  if (points.length <= MAX_NAME_CHARS && Buffer.byteLength(name) <= MAX_NAME_BYTES) return name
  const extension = extname(name)
  const extensionPoints = Array.from(extension).length
  if (extension === '' || extensionPoints > MAX_KEPT_EXTENSION_CHARS || extension.length === name.length) return cut(points, MAX_NAME_CHARS, MAX_NAME_BYTES)
  const stem = points.slice(0, points.length - extensionPoints)
  return cut(stem, MAX_NAME_CHARS - extensionPoints, MAX_NAME_BYTES - Buffer.byteLength(extension)) + extension
}

/** The longest prefix of the code points within both caps. */
function cut (points: string[], maxChars: number, maxBytes: number): string {
  let bytes = 0
  let out = ''
  for (const point of points.slice(0, maxChars)) {
    bytes += Buffer.byteLength(point)
    if (bytes > maxBytes) break
    out += point
  }
  return out
}
