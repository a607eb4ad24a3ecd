/**
 * Which images pdf.js decodes to draw a page, and at what size, found before it draws
 * anything (pdf.js decodes an image whole, at the size its decoder allocates, before
 * scaling it onto the canvas; image-bounds.ts holds the limits).
 *
 * A page draws what its content names: the census reads the page's content streams
 * (and its annotations' appearances) through core/pdf/raw-objects.ts and follows every
 * resource a name in them leads to, as pdf.js's evaluator would: image XObjects, forms
 * (their content in turn), tiling patterns, the soft-mask groups of graphics states, and
 * the glyph procedures of Type3 fonts; inline images (`BI … ID … EI`) are read where
 * they sit. Any name counts, wherever it stands (an operand, a string, image data): a
 * name that draws nothing makes the count larger, never smaller. Each image of a page
 * counts once (pdf.js decodes it once a page), with its soft mask and its mask.
 *
 * When a page cannot be followed (a content stream in a filter this reader does not
 * decode, a page object it does not find, forms nested past MAX_DEPTH), it is charged
 * with every image of the file instead: `file()`, every image stream and every inline
 * image of every stream that decodes.
 */
import { Cmd, Lexer, Name, RawObjects, Ref } from '../../pdf/index.js'
import type { Dict, ObjectDefinition, RawObjectsOptions, Value } from '../../pdf/index.js'
import { imageRasters, isImage } from './image-sizes.js'
import type { ImageRaster } from './image-sizes.js'

export type { ImageRaster } from './image-sizes.js'

/** What one page decodes. */
export interface PageImages {
  rasters: ImageRaster[]
  /** The pixels of all of them together. */
  pixels: number
  /** True when the page could not be followed and every image of the file was counted. */
  wholeFile: boolean
}

/** Forms within forms (or patterns, glyphs) deeper than this are not followed: the page counts the whole file. */
const MAX_DEPTH = 32
/** How far after `BI` an inline image's dictionary may run (pdf.js has no bound; a real one is a few dozen bytes). */
const MAX_INLINE_DICT = 4096

const sum = (rasters: ImageRaster[]): number => rasters.reduce((n, r) => n + r.width * r.height, 0)

function isDict (value: Value): value is Dict {
  return value instanceof Map
}

/** Every name in content data (`/Im0`, escapes decoded), wherever it stands. */
function namesIn (data: Uint8Array): Set<string> {
  const names = new Set<string>()
  for (let i = data.indexOf(0x2f); i >= 0; i = data.indexOf(0x2f, i + 1)) {
    const token = new Lexer(data, i).token()
    if (token instanceof Name) names.add(token.name)
  }
  return names
}

/** Where `BI` may start an inline image: pdf.js's lexer ends a known command there even when glued to the one before (`QBI`). */
function inlineStarts (data: Uint8Array): number[] {
  const starts: number[] = []
  const buffer = Buffer.from(data.buffer, data.byteOffset, data.byteLength)
  for (let at = buffer.indexOf('BI'); at >= 0; at = buffer.indexOf('BI', at + 2)) starts.push(at + 2)
  return starts
}

/**
 * The census of one file. Throws TooMuchWork (core/pdf/raw-objects.ts) for a file whose
 * objects cannot be read within bounds.
 */
export class ImageCensus {
  readonly objects: RawObjects
  private streamRasters: ImageRaster[] | undefined
  private fileRasters: ImageRaster[] | undefined

  constructor (bytes: Uint8Array, options: RawObjectsOptions = {}) {
    this.objects = new RawObjects(bytes, options)
  }

  /** The inline images of content `data` (dictionary up to `ID`, keys names only, as pdf.js requires). */
  inlineImages (data: Uint8Array): ImageRaster[] {
    const out: ImageRaster[] = []
    for (const start of inlineStarts(data)) {
      const lexer = new Lexer(data.subarray(0, Math.min(data.length, start + MAX_INLINE_DICT)), start)
      const dict: Dict = new Map()
      let imageData: number | undefined
      try {
        for (;;) {
          const key = lexer.object()
          if (key instanceof Cmd && key.cmd.startsWith('ID')) {
            // One whitespace byte after ID, then the data (pdf.js's lexer has read it).
            imageData = lexer.pos - key.cmd.length + 3
            break
          }
          if (!(key instanceof Name)) break
          const value = lexer.object()
          if (value === undefined || value instanceof Cmd) break
          dict.set(key.name, value)
        }
      } catch {
        continue
      }
      if (imageData === undefined) continue
      const fake: ObjectDefinition = { num: -1, gen: 0, value: dict }
      out.push(...imageRasters(this.objects, fake, 'inline image', dict, data.subarray(Math.min(imageData, data.length))))
    }
    return out
  }

  /** Every image stream of the file (every definition), with its soft mask and mask: no stream is decoded for it. */
  imageStreams (): ImageRaster[] {
    if (this.streamRasters !== undefined) return this.streamRasters
    const rasters: ImageRaster[] = []
    for (const object of this.objects.all()) {
      if (object.data !== undefined && isImage(object.value)) rasters.push(...imageRasters(this.objects, object, 'image', object.value, this.objects.rawData(object)))
    }
    this.streamRasters = rasters
    return rasters
  }

  /** Every image of the file: the image streams, and every inline image of every other stream that decodes. */
  file (): ImageRaster[] {
    if (this.fileRasters !== undefined) return this.fileRasters
    const rasters = [...this.imageStreams()]
    for (const object of this.objects.all()) {
      if (object.data === undefined || isImage(object.value)) continue
      const data = this.objects.streamData(object)
      if (data !== undefined) rasters.push(...this.inlineImages(data))
    }
    this.fileRasters = rasters
    return rasters
  }

  /** What pdf.js decodes to draw the page whose dictionary is object `pageObject` (pdf.js's `page.ref`). */
  page (pageObject: number | undefined): PageImages {
    const walk = new PageWalk(this)
    const pages = pageObject === undefined ? [] : this.objects.definitions(pageObject).map((o) => o.value).filter(isDict)
    if (pages.length === 0) walk.uncertain = true
    for (const page of pages) walk.page(page)
    if (walk.uncertain) {
      const rasters = this.file()
      return { rasters, pixels: sum(rasters), wholeFile: true }
    }
    return { rasters: walk.rasters, pixels: sum(walk.rasters), wholeFile: false }
  }
}

/** One page's walk through its content and resources. */
class PageWalk {
  readonly rasters: ImageRaster[] = []
  uncertain = false
  private readonly seen = new Set<ObjectDefinition>()
  private readonly objects: RawObjects

  constructor (private readonly census: ImageCensus) {
    this.objects = census.objects
  }

  /**
   * Every definition `value` stands for. A reference to no object the reader found makes the
   * page uncertain when an object stream could not be read (the object may be in it).
   */
  private resolve (value: Value | undefined): ObjectDefinition[] {
    const found = this.objects.resolveObjects(value)
    if (found.length === 0 && value instanceof Ref && this.objects.incomplete) this.uncertain = true
    return found
  }

  private dicts (value: Value | undefined): Dict[] {
    return this.resolve(value).map((o) => o.value).filter(isDict)
  }

  /** A page's resources: its own and those it inherits (pdf.js looks up /Parent); all of them, to be sure. */
  private pageResources (page: Dict): Dict[] {
    const out: Dict[] = []
    const visited = new Set<Dict>()
    let level: Dict[] = [page]
    for (let depth = 0; level.length > 0 && depth < MAX_DEPTH; depth++) {
      const next: Dict[] = []
      for (const node of level) {
        if (visited.has(node)) continue
        visited.add(node)
        out.push(...this.dicts(node.get('Resources')))
        next.push(...this.dicts(node.get('Parent')))
      }
      level = next
    }
    return out
  }

  page (page: Dict): void {
    const resources = this.pageResources(page)
    const parts: Uint8Array[] = []
    for (const value of this.resolve(page.get('Contents')).map((o) => o.value)) {
      const items = Array.isArray(value) ? value : [page.get('Contents')!]
      for (const item of items) {
        for (const stream of this.resolve(item)) {
          if (stream.data === undefined) continue
          const data = this.objects.streamData(stream)
          if (data === undefined) this.uncertain = true
          else parts.push(data)
        }
      }
    }
    // pdf.js reads a page's content streams as one sequence.
    this.content(Buffer.concat(parts), resources, 0)
    for (const annotations of this.resolve(page.get('Annots')).map((o) => o.value)) {
      if (!Array.isArray(annotations)) continue
      for (const annotation of annotations.flatMap((a) => this.dicts(a))) {
        for (const appearances of this.dicts(annotation.get('AP'))) {
          for (const state of ['N', 'R', 'D']) {
            for (const value of this.resolve(appearances.get(state))) {
              // An appearance is a form, or a dictionary of forms by state.
              const forms = value.data !== undefined ? [value] : isDict(value.value) ? [...value.value.values()].flatMap((v) => this.resolve(v)) : []
              for (const form of forms) this.form(form, resources, 1)
            }
          }
        }
      }
    }
  }

  /** A form-like stream (form, tiling pattern, glyph procedure, appearance): its content with its own resources, or the caller's. */
  private form (stream: ObjectDefinition, resources: Dict[], depth: number): void {
    if (stream.data === undefined || this.seen.has(stream)) return
    this.seen.add(stream)
    const own = isDict(stream.value) ? this.dicts(stream.value.get('Resources')) : []
    this.content(this.objects.streamData(stream), own.length > 0 ? own : resources, depth)
  }

  private image (stream: ObjectDefinition): void {
    if (this.seen.has(stream) || !isDict(stream.value)) return
    this.seen.add(stream)
    this.rasters.push(...imageRasters(this.objects, stream, 'image', stream.value, this.objects.rawData(stream)))
  }

  private content (data: Uint8Array | undefined, resources: Dict[], depth: number): void {
    if (data === undefined || depth > MAX_DEPTH) {
      this.uncertain = true
      return
    }
    this.rasters.push(...this.census.inlineImages(data))
    const names = namesIn(data)
    const named = (resource: Dict, category: string): ObjectDefinition[] => this.dicts(resource.get(category)).flatMap((entries) =>
      [...names].flatMap((name) => this.resolve(entries.get(name))))
    for (const resource of resources) {
      for (const x of named(resource, 'XObject')) {
        if (!isDict(x.value)) continue
        const subtype = x.value.get('Subtype')
        if (subtype instanceof Name && subtype.name === 'Image') this.image(x)
        else if (subtype instanceof Name && subtype.name === 'Form') this.form(x, resources, depth + 1)
      }
      for (const state of named(resource, 'ExtGState')) {
        if (!isDict(state.value)) continue
        for (const mask of this.dicts(state.value.get('SMask'))) {
          for (const group of this.resolve(mask.get('G'))) this.form(group, resources, depth + 1)
        }
      }
      for (const pattern of named(resource, 'Pattern')) {
        if (isDict(pattern.value) && pattern.value.get('PatternType') === 1) this.form(pattern, resources, depth + 1)
      }
      for (const font of named(resource, 'Font')) {
        if (!isDict(font.value) || !(font.value.get('Subtype') instanceof Name) || (font.value.get('Subtype') as Name).name !== 'Type3') continue
        const own = this.dicts(font.value.get('Resources'))
        for (const procs of this.dicts(font.value.get('CharProcs'))) {
          for (const glyph of [...procs.values()].flatMap((v) => this.resolve(v))) this.form(glyph, own.length > 0 ? own : resources, depth + 1)
        }
      }
    }
  }
}
