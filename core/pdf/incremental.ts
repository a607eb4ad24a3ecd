/**
 * Our incremental-update writer (ISO 32000-1 §7.5.6). pdf-lib can only rewrite a whole
 * file, which breaks every earlier signature's ByteRange; here the original bytes are
 * kept untouched and only the objects we changed or created are appended, followed by
 * a cross-reference section of the same kind as the file's last one with /Prev
 * pointing at it.
 *
 * What changed is found by comparison, not by bookkeeping: `track` serializes every
 * dictionary/array object (and each stream's dictionary) right after loading, and
 * `write` serializes them again. pdf-lib edits a page tree, an /Annots array or an
 * AcroForm wherever they happen to live (direct, indirect, inside an object stream),
 * and the comparison catches each case.
 */
import { randomBytes } from 'node:crypto'
import { PDFArray, PDFContext, PDFDict, PDFHexString, PDFName, PDFRef, PDFStream } from 'pdf-lib'
import type { PDFObject } from 'pdf-lib'
import { encryptObject } from './crypt.js'
import { findStartXref, readLastSection } from './open.js'
import type { OpenedPdf } from './open.js'
import { encryptBytes } from './security.js'

/** An object written verbatim (the signature dictionary with its placeholders). */
export interface RawObject {
  ref: PDFRef
  /** The object's body, between `N G obj` and `endobj`. */
  body: Buffer
}

export interface Tracked {
  readonly opened: OpenedPdf
  /** Highest object number present when the file was loaded. */
  readonly originalMax: number
  readonly before: Map<string, string>
}

function fingerprint (object: PDFObject): string | undefined {
  if (object instanceof PDFStream) return `stream:${object.dict.toString()}`
  if (object instanceof PDFDict || object instanceof PDFArray) return object.toString()
  return undefined
}

/** Takes the snapshot the writer compares against; call before any change. */
export function track (opened: OpenedPdf): Tracked {
  const before = new Map<string, string>()
  let originalMax = 0
  for (const [ref, object] of opened.doc.context.enumerateIndirectObjects()) {
    originalMax = Math.max(originalMax, ref.objectNumber)
    const print = fingerprint(object)
    if (print !== undefined) before.set(ref.tag, print)
  }
  // New objects (ours and pdf-lib's) take numbers past both the parsed objects and the
  // trailer's /Size, so none reuses a number an earlier revision freed.
  const { context } = opened.doc
  context.largestObjectNumber = Math.max(context.largestObjectNumber, originalMax, opened.last.size - 1)
  return { opened, originalMax: context.largestObjectNumber, before }
}

/**
 * The snapshot for one more update on top of `bytes`: a file that `writeUpdate` made from
 * `tracked` (its placeholders filled since, same objects). The new section chains to the
 * newest one in `bytes` and every object (or only those in `watch`, when the caller knows
 * nothing else will change) is compared with its state now, so only what changes after
 * this call is written again (a DSS, then a document timestamp's field).
 */
export function trackAfter (tracked: Tracked, bytes: Uint8Array, watch?: PDFRef[]): Tracked {
  const last = readLastSection(PDFContext.create(), bytes, findStartXref(bytes))
  const opened = { ...tracked.opened, bytes, last }
  if (watch === undefined) return track(opened)
  // Only `watch` can change (the catalog, for a DSS): the others need no snapshot, which for
  // a long file is most of the update's cost.
  const { context } = opened.doc
  const before = new Map<string, string>()
  for (const ref of watch) {
    const object = context.lookup(ref)
    const print = object === undefined ? undefined : fingerprint(object)
    if (print !== undefined) before.set(ref.tag, print)
  }
  context.largestObjectNumber = Math.max(context.largestObjectNumber, last.size - 1)
  return { opened, originalMax: context.largestObjectNumber, before }
}

/** `N G obj`, the body, `endobj`. */
function indirect (ref: PDFRef, body: Uint8Array): Buffer {
  return Buffer.concat([Buffer.from(`${ref.objectNumber} ${ref.generationNumber} obj\n`, 'latin1'), body, Buffer.from('\nendobj\n', 'latin1')])
}

function serialized (object: PDFObject): Buffer {
  const body = Buffer.alloc(object.sizeInBytes())
  object.copyBytesInto(body, 0)
  return body
}

function idArray (id: PDFObject | undefined): string {
  const fresh = randomBytes(16).toString('hex').toUpperCase()
  const first = id instanceof PDFArray ? id.get(0) : undefined
  // The first identifier is permanent; the second changes with each update (§14.4).
  const permanent = first instanceof PDFHexString || (first !== undefined && first.toString().startsWith('(')) ? first.toString() : `<${fresh}>`
  return `[${permanent} <${fresh}>]`
}

function trailerEntries (tracked: Tracked, size: number): string {
  const { trailer, offset } = tracked.opened.last
  const { encryption } = tracked.opened
  const parts = [`/Size ${size}`]
  for (const key of ['Root', 'Info']) {
    const value = trailer.get(PDFName.of(key)) ?? (key === 'Root' ? tracked.opened.doc.context.trailerInfo.Root : tracked.opened.doc.context.trailerInfo.Info)
    if (value instanceof PDFRef) parts.push(`/${key} ${value.toString()}`)
  }
  // An encrypted file keeps its encryption dictionary, as written, and its first /ID, from
  // which revisions 2 to 4 derive the key: a file without /ID was keyed with an empty one,
  // so none is added (§7.6.3.3 Algorithm 2, step e).
  if (encryption !== undefined) parts.push(`/Encrypt ${encryption.entry.toString()}`)
  if (encryption === undefined) parts.push(`/ID ${idArray(trailer.get(PDFName.of('ID')))}`)
  else if (encryption.id !== undefined) parts.push(`/ID ${idArray(encryption.id)}`)
  parts.push(`/Prev ${offset}`)
  return parts.join(' ')
}

/**
 * A text string for a raw object we write ourselves: hex, and encrypted with the key of
 * object `ref` when the file is encrypted.
 */
export function rawString (tracked: Tracked, ref: PDFRef, bytes: Uint8Array): string {
  const { encryption } = tracked.opened
  const data = encryption === undefined ? Buffer.from(bytes) : encryptBytes(encryption.handler, encryption.handler.strings, ref, bytes)
  return `<${data.toString('hex').toUpperCase()}>`
}

/** Groups sorted object numbers into `first count` runs for a subsection or /Index. */
function runs (numbers: number[]): Array<[number, number]> {
  const out: Array<[number, number]> = []
  for (const n of numbers) {
    const last = out[out.length - 1]
    if (last !== undefined && last[0] + last[1] === n) last[1]++
    else out.push([n, 1])
  }
  return out
}

/**
 * The whole file: original bytes, then every changed or new object, `raw` objects as
 * given, the cross-reference section and trailer. Ends with `%%EOF\n`.
 */
export function writeUpdate (tracked: Tracked, raw: RawObject[]): Buffer {
  const { doc, bytes, last } = tracked.opened
  const rawNumbers = new Set(raw.map((r) => r.ref.objectNumber))
  const chunks: Buffer[] = [Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length)]
  let position = bytes.length
  const lastByte = bytes[bytes.length - 1]
  if (lastByte !== 0x0a && lastByte !== 0x0d) {
    chunks.push(Buffer.from('\n'))
    position += 1
  }
  const entries: Array<{ ref: PDFRef, offset: number }> = []
  const push = (ref: PDFRef, chunk: Buffer): void => {
    entries.push({ ref, offset: position })
    chunks.push(chunk)
    position += chunk.length
  }
  const { encryption } = tracked.opened
  for (const [ref, object] of doc.context.enumerateIndirectObjects()) {
    if (rawNumbers.has(ref.objectNumber)) continue
    const isNew = ref.objectNumber > tracked.originalMax
    const before = tracked.before.get(ref.tag)
    const print = isNew || before === undefined ? undefined : fingerprint(object)
    if (isNew || (before !== undefined && before !== print)) {
      // A changed dictionary or array in clear is written from its fingerprint: pdf-lib's toString and
      // copyBytesInto give the same bytes for every object a dictionary can hold, and a stamped page's
      // dictionary (with its resources) is otherwise measured and copied once more, object by object.
      // pdf-lib holds an encrypted file's objects in clear; each is encrypted with its own key as it is written.
      push(ref, indirect(ref, encryption === undefined && print !== undefined && !(object instanceof PDFStream)
        ? Buffer.from(print, 'latin1')
        : serialized(encryption === undefined ? object : encryptObject(encryption.handler, ref, object, doc.context))))
    }
  }
  for (const r of raw) {
    push(r.ref, indirect(r.ref, r.body))
  }
  // A loop, not Math.max(...spread): a stamp on every page of a long file is many entries.
  const highest = entries.reduce((n, e) => Math.max(n, e.ref.objectNumber), last.size - 1)
  if (last.kind === 'table') {
    entries.sort((a, b) => a.ref.objectNumber - b.ref.objectNumber)
    const byNumber = new Map(entries.map((e) => [e.ref.objectNumber, e]))
    let section = 'xref\n'
    for (const [first, count] of runs(entries.map((e) => e.ref.objectNumber))) {
      section += `${first} ${count}\n`
      for (let n = first; n < first + count; n++) {
        const e = byNumber.get(n)!
        section += `${String(e.offset).padStart(10, '0')} ${String(e.ref.generationNumber).padStart(5, '0')} n\r\n`
      }
    }
    const xrefOffset = position
    chunks.push(Buffer.from(`${section}trailer\n<< ${trailerEntries(tracked, highest + 1)} >>\nstartxref\n${xrefOffset}\n%%EOF\n`, 'latin1'))
    return Buffer.concat(chunks)
  }
  // Cross-reference stream (§7.5.8): type-1 entries, W [1 4 2], itself included.
  const xrefNumber = highest + 1
  const xrefOffset = position
  entries.push({ ref: PDFRef.of(xrefNumber, 0), offset: xrefOffset })
  entries.sort((a, b) => a.ref.objectNumber - b.ref.objectNumber)
  const data = Buffer.alloc(entries.length * 7)
  entries.forEach((e, i) => {
    data[i * 7] = 1
    data.writeUInt32BE(e.offset, i * 7 + 1)
    data.writeUInt16BE(e.ref.generationNumber, i * 7 + 5)
  })
  const index = runs(entries.map((e) => e.ref.objectNumber)).map(([a, b]) => `${a} ${b}`).join(' ')
  const dict = `<< /Type /XRef ${trailerEntries(tracked, xrefNumber + 1)} /Index [${index}] /W [1 4 2] /Length ${data.length} >>`
  chunks.push(Buffer.from(`${xrefNumber} 0 obj\n${dict}\nstream\n`, 'latin1'), data, Buffer.from(`\nendstream\nendobj\nstartxref\n${xrefOffset}\n%%EOF\n`, 'latin1'))
  return Buffer.concat(chunks)
}

/** Resolves a possibly indirect object. */
export function resolve<T extends PDFObject> (tracked: Tracked, object: PDFObject | undefined): T | undefined {
  return (object instanceof PDFRef ? tracked.opened.doc.context.lookup(object) : object) as T | undefined
}

/**
 * Adds an annotation reference to a page's /Annots, editing only that array (or the page
 * dictionary when the array is direct or missing). pdf-lib's own `addAnnot` normalizes
 * the page first, wrapping its content streams in q/Q and copying inherited resources:
 * a change to page content that validators report against earlier signatures.
 */
export function appendAnnotation (tracked: Tracked, page: PDFDict, annotation: PDFRef): void {
  const entry = page.get(PDFName.of('Annots'))
  const annots = resolve<PDFObject>(tracked, entry)
  if (annots instanceof PDFArray) {
    annots.push(annotation)
    return
  }
  page.set(PDFName.of('Annots'), tracked.opened.doc.context.obj([annotation]))
}

