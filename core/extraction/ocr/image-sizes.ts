/**
 * The size at which pdf.js's decoders allocate an image, which is not always the size its
 * dictionary gives: the JPEG decoder allocates for the frame header's size (the dictionary's
 * only scales the output), JBIG2 for its page and region headers, CCITT a row of /Columns,
 * and a soft mask or a mask (a stream of its own, with or without /Subtype /Image) at its
 * own size. Each is read here from the data's headers, as those decoders read them.
 */
import { decodeChain, decodeParams, Name, Ref } from '../../pdf/index.js'
import type { Dict, ObjectDefinition, RawObjects, Value } from '../../pdf/index.js'

/** One picture pdf.js decodes: an image, its soft mask, its mask, or an inline image. */
export interface ImageRaster {
  kind: 'image' | 'soft mask' | 'mask' | 'inline image'
  /** Pixels across and down, as the decoder allocates them; Infinity when a size cannot be read. */
  width: number
  height: number
  /** The image's object number, when it is an object. */
  object?: number
}

export interface Size { width: number, height: number }

const u16 = (d: Uint8Array, at: number): number => ((d[at]! << 8) | d[at + 1]!) >>> 0
const u32 = (d: Uint8Array, at: number): number => ((d[at]! << 24) | (d[at + 1]! << 16) | (d[at + 2]! << 8) | d[at + 3]!) >>> 0

/** Frame-header markers (ITU T.81 B.1.1.3): SOF0-3, 5-7, 9-11, 13-15. */
const SOF = new Set([0xc0, 0xc1, 0xc2, 0xc3, 0xc5, 0xc6, 0xc7, 0xc9, 0xca, 0xcb, 0xcd, 0xce, 0xcf])

/**
 * The largest frame a JPEG declares, read as pdf.js's JpegImage reads it: from the first
 * SOI, marker by marker up to the first scan, and the line count of a DNL marker anywhere
 * (a frame of height 0 takes its height from DNL). Undefined when there is no frame header.
 */
export function jpegFrameSize (data: Uint8Array): Size | undefined {
  let i = Buffer.from(data.buffer, data.byteOffset, data.byteLength).indexOf(Buffer.from([0xff, 0xd8]))
  if (i < 0) return undefined
  i += 2
  let size: Size | undefined
  while (i + 4 <= data.length) {
    if (data[i] !== 0xff) { i++; continue }
    const marker = data[i + 1]!
    if (marker === 0xff || marker === 0x01 || marker === 0xd8 || (marker >= 0xd0 && marker <= 0xd7)) { i += marker === 0xff ? 1 : 2; continue }
    if (marker === 0xda || marker === 0xd9) break
    if (SOF.has(marker) && i + 9 <= data.length) {
      const height = u16(data, i + 5)
      const width = u16(data, i + 7)
      size = { width: Math.max(width, size?.width ?? 0), height: Math.max(height, size?.height ?? 0) }
    }
    i += 2 + u16(data, i + 2)
  }
  if (size === undefined) return undefined
  // DNL (0xFFDC, length 4): the frame's line count given after its scan.
  const buffer = Buffer.from(data.buffer, data.byteOffset, data.byteLength)
  for (let at = buffer.indexOf(Buffer.from([0xff, 0xdc, 0x00, 0x04])); at >= 0 && at + 6 <= data.length; at = buffer.indexOf(Buffer.from([0xff, 0xdc, 0x00, 0x04]), at + 1)) {
    size.height = Math.max(size.height, u16(data, at + 4))
  }
  return size
}

/** JBIG2 segment types whose data starts with a region segment information field (ITU T.88 7.4.1). */
const REGION_SEGMENTS = new Set([4, 6, 7, 20, 22, 23, 36, 38, 39, 40, 42, 43])
const PAGE_INFORMATION = 48

/**
 * The largest page or region a JBIG2 stream (the embedded organisation of ITU T.88 annex
 * D.3, as PDF stores it) declares: pdf.js's decoder allocates the page and each region at
 * those sizes, a byte a pixel for a region. Undefined when it declares none.
 */
export function jbig2Size (data: Uint8Array): Size | undefined {
  let size: Size | undefined
  let pos = 0
  while (pos + 11 <= data.length) {
    const number = u32(data, pos)
    const flags = data[pos + 4]!
    pos += 5
    let referred = data[pos]! >> 5
    if (referred === 7) {
      if (pos + 4 > data.length) break
      referred = u32(data, pos) & 0x1fffffff
      pos += 4 + Math.ceil((referred + 1) / 8)
    } else {
      pos += 1
    }
    pos += referred * (number <= 256 ? 1 : number <= 65536 ? 2 : 4)
    pos += (flags & 0x40) !== 0 ? 4 : 1
    if (pos + 4 > data.length) break
    const length = u32(data, pos)
    pos += 4
    const type = flags & 0x3f
    if ((type === PAGE_INFORMATION || REGION_SEGMENTS.has(type)) && pos + 8 <= data.length) {
      const width = u32(data, pos)
      const height = u32(data, pos + 4)
      // A page of unknown height (0xffffffff, striped) grows by its regions, counted on their own.
      if (!(type === PAGE_INFORMATION && height === 0xffffffff)) {
        size = { width: Math.max(width, size?.width ?? 0), height: Math.max(height, size?.height ?? 0) }
      }
    }
    // An immediate generic region of unknown length runs to the end: nothing follows it to read.
    if (length === 0xffffffff) break
    pos += length
  }
  return size
}

/** Every number `value` stands for, references followed (every definition). */
function numbers (objects: RawObjects, value: Value | undefined): number[] | 'unreadable' {
  if (value === undefined) return []
  const values = objects.resolve(value)
  if (value instanceof Ref && values.length === 0) return 'unreadable'
  return values.filter((v): v is number => typeof v === 'number')
}

/**
 * A dictionary's size the way pdf.js's `dict.get('W', 'Width')` may read it: /W first, else
 * /Width, each the last of its key's values. Taken here as the largest of all of them, so
 * that whichever pdf.js picks is within it. Undefined when none is a number (pdf.js then
 * decodes nothing); Infinity for a reference to an object the file does not hold.
 */
function declared (objects: RawObjects, dict: Dict, short: string, long: string): number | undefined {
  const found = [numbers(objects, dict.get(short)), numbers(objects, dict.get(long))]
  if (found.includes('unreadable')) return Number.POSITIVE_INFINITY
  const all = (found as number[][]).flat().map((n) => Math.ceil(Math.abs(n))).filter((n) => n > 0)
  return all.length === 0 ? undefined : Math.max(...all)
}

/** Every parameter dictionary of a stream or inline image (one per filter when they are an array). */
function paramDicts (objects: RawObjects, dict: Dict): Dict[] {
  return objects.resolve(decodeParams(dict))
    .flatMap((v) => Array.isArray(v) ? v.flatMap((x) => objects.resolve(x)) : [v])
    .filter((v): v is Dict => v instanceof Map)
}

/** The data a codec at the end of `filters` reads: the stream's data through the filters before it. */
function codecInput (data: Uint8Array, filters: readonly string[]): Uint8Array | undefined {
  return decodeChain(data, filters.slice(0, -1), 64 << 20)
}

/**
 * The rasters of one image: its own, at the largest of its dictionary's size and its
 * codec's, then its soft mask's and its mask's (a stream of their own; without a size they
 * take the image's, as pdf.js gives them). `fallback` is the parent's size, for a mask.
 */
export function imageRasters (objects: RawObjects, image: ObjectDefinition, kind: ImageRaster['kind'], dict: Dict, data: Uint8Array | undefined, fallback?: Size): ImageRaster[] {
  let width = declared(objects, dict, 'W', 'Width') ?? fallback?.width
  let height = declared(objects, dict, 'H', 'Height') ?? fallback?.height
  // pdf.js decodes nothing for an image without a size.
  if (width === undefined || height === undefined) return []
  const filters = objects.filters(dict)
  const codec = filters?.at(-1)
  const grow = (size: Size | undefined): void => {
    if (size === undefined) return
    width = Math.max(width!, size.width)
    height = Math.max(height!, size.height)
  }
  if (data !== undefined && (codec === 'DCTDecode' || codec === 'DCT' || codec === 'JBIG2Decode')) {
    const input = codecInput(data, filters!)
    if (input === undefined) {
      // The codec's own header cannot be read: its size is unknown.
      width = Number.POSITIVE_INFINITY
    } else if (codec === 'JBIG2Decode') {
      grow(jbig2Size(input))
      for (const params of paramDicts(objects, dict)) {
        for (const globals of objects.resolveObjects(params.get('JBIG2Globals'))) {
          const g = objects.streamData(globals)
          if (g !== undefined) grow(jbig2Size(g))
        }
      }
    } else {
      grow(jpegFrameSize(input))
    }
  } else if (codec === 'CCITTFaxDecode' || codec === 'CCF') {
    // pdf.js's CCITT decoder allocates its lines for /Columns (1728 by default), whatever the width.
    for (const params of paramDicts(objects, dict)) {
      const columns = numbers(objects, params.get('Columns'))
      if (columns !== 'unreadable') grow({ width: Math.max(0, ...columns), height: 0 })
    }
  }
  const self: ImageRaster = { kind, width, height, ...(image.num >= 0 ? { object: image.num } : {}) }
  const rasters = [self]
  if (kind !== 'image' && kind !== 'inline image') return rasters
  for (const [key, maskKind] of [['SMask', 'soft mask'], ['Mask', 'mask']] as const) {
    for (const mask of objects.resolveObjects(dict.get(key))) {
      if (!(mask.value instanceof Map) || mask.data === undefined) continue
      rasters.push(...imageRasters(objects, mask, maskKind, mask.value, objects.rawData(mask), { width, height }))
    }
  }
  return rasters
}

/** True for an image XObject's dictionary. */
export function isImage (value: Value): value is Dict {
  return value instanceof Map && value.get('Subtype') instanceof Name && (value.get('Subtype') as Name).name === 'Image'
}
