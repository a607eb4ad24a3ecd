/**
 * Opening a PDF for an incremental update. pdf-lib parses the objects (classic
 * tables, cross-reference streams and object streams alike); we read the *last*
 * cross-reference section ourselves, at the offset `startxref` names, because an
 * update must chain to it with /Prev (ISO 32000-1 §7.5.6) and keep its kind: a file
 * whose newest section is a stream gets a stream (§7.5.8), a table gets a table.
 *
 * Around that: bytes before the header are dropped, the whole chain of sections is
 * checked (xref-check.ts) and a damaged unsigned file is rebuilt (rebuild.ts), and an
 * encrypted file that opens without a password is parsed decrypted (crypt.ts).
 */
import { PDFArray, PDFContext, PDFDict, PDFDocument, PDFName, PDFNumber, PDFObjectParser, PDFRawStream, PDFRef, ParseSpeeds } from 'pdf-lib'
import type { PDFObject } from 'pdf-lib'
import { SignError } from '../sign/errors.js'
import { loadDecrypted } from './crypt.js'
import { MAX_OBJECTS, declaredSizeFault } from './declared-sizes.js'
import { rebuildPdf } from './rebuild.js'
import { DamagedCrossReference, checkCrossReferences } from './xref-check.js'
import { firstId, openSecurity } from './security.js'
import type { SecurityHandler } from './security.js'

export interface LastSection {
  kind: 'table' | 'stream'
  /** Offset of that section: our /Prev. */
  offset: number
  /** The trailer dictionary, or the cross-reference stream's dictionary. */
  trailer: PDFDict
  /** The trailer's /Size (one past the highest object number in use). */
  size: number
}

export interface OpenedPdf {
  doc: PDFDocument
  bytes: Uint8Array
  last: LastSection
  /** DocMDP permission of a certification signature (2: forms and signatures, 3: also annotations). */
  certification: 2 | 3 | undefined
  /** The form holds a signed signature field: a page added now would invalidate that signature. */
  signed?: boolean | undefined
  /** Set for an encrypted file that opens without a password: pdf-lib holds its objects decrypted. */
  encryption: Encryption | undefined
  /** What was done to the input before signing (leading bytes removed, a damaged file rebuilt), for the answer's warnings. */
  warnings: string[]
}

export interface Encryption {
  handler: SecurityHandler
  /** The trailer's /Encrypt value (a reference, rarely a direct dictionary), repeated in our trailer. */
  entry: PDFObject
  /** The trailer's /ID, from which revisions 2 to 4 derive the key; without one the key was made with an empty identifier and none may be added. */
  id: PDFObject | undefined
}

const latin1 = (bytes: Uint8Array, start: number, end: number): string => Buffer.from(bytes.buffer, bytes.byteOffset + start, end - start).toString('latin1')

function invalid (message: string, cause?: unknown): never {
  throw new SignError('SIGN_PDF_INVALID', message, 'pdfBase64', cause === undefined ? undefined : { cause })
}

function unsupported (message: string): never {
  throw new SignError('SIGN_PDF_UNSUPPORTED', message)
}

/** Where a file's last revision ends, and the offset its final `startxref` names. */
export interface FileEnd {
  startXref: number
  /** Offset just past the final `%%EOF` (and its end-of-line): what a reader takes as the file. */
  end: number
}

/**
 * Finds the final %%EOF in the last 2 KiB (readers look no further, ISO 32000-1 §7.5.5
 * and Annex H) and the `startxref` before it. Bytes after that %%EOF (NUL padding from
 * mail gateways, a download page's HTML) are not part of the PDF: they are kept in the
 * output untouched but never parsed, so they cannot pose as objects.
 */
export function findFileEnd (bytes: Uint8Array): FileEnd {
  const tailStart = Math.max(0, bytes.length - 2048)
  const tail = latin1(bytes, tailStart, bytes.length)
  const eof = tail.lastIndexOf('%%EOF')
  if (eof < 0) invalid('The PDF is truncated or followed by other data: there is no %%EOF in its last 2 KiB.')
  const at = tail.lastIndexOf('startxref', eof)
  const match = at < 0 ? null : /^startxref\s+(\d+)\s*$/.exec(tail.slice(at, eof))
  if (match === null) throw new DamagedCrossReference('there is no startxref before the final %%EOF')
  const eol = /^(\r\n|\r|\n)?/.exec(tail.slice(eof + 5))![0]
  return { startXref: Number(match[1]), end: tailStart + eof + 5 + eol.length }
}

/** The offset in the final `startxref`. */
export function findStartXref (bytes: Uint8Array): number {
  return findFileEnd(bytes).startXref
}

export function readLastSection (context: PDFContext, bytes: Uint8Array, offset: number): LastSection {
  if (offset >= bytes.length) throw new DamagedCrossReference('its startxref points past the end of the file')
  const head = latin1(bytes, offset, Math.min(bytes.length, offset + 64))
  try {
    if (/^\s*xref\b/.test(head)) {
      const rest = latin1(bytes, offset, bytes.length)
      const at = rest.indexOf('trailer')
      if (at < 0) throw new Error('no trailer')
      const trailer = PDFObjectParser.forBytes(bytes.subarray(offset + at + 'trailer'.length), context).parseObject()
      if (!(trailer instanceof PDFDict)) throw new Error('trailer is not a dictionary')
      return { kind: 'table', offset, trailer, size: sizeOf(trailer) }
    }
    const header = /^\s*\d+\s+\d+\s+obj\b/.exec(head)
    if (header !== null) {
      const object = PDFObjectParser.forBytes(bytes.subarray(offset + header[0].length), context).parseObject()
      if (object instanceof PDFRawStream && object.dict.get(PDFName.of('Type')) === PDFName.of('XRef')) {
        return { kind: 'stream', offset, trailer: object.dict, size: sizeOf(object.dict) }
      }
    }
  } catch {
    // Falls through to the refusal below.
  }
  throw new DamagedCrossReference('its startxref does not point at a cross-reference section')
}

function sizeOf (dict: PDFDict): number {
  const size = dict.get(PDFName.of('Size'))
  if (!(size instanceof PDFNumber)) throw new Error('trailer without /Size')
  return size.asNumber()
}

/**
 * pdf-lib looks for the end of a stream that has no `endstream` by reading on to the
 * end of the file, once per such stream: a few thousand of them in a few hundred KB
 * held a thread for the whole signing deadline. A damaged file may lack one or two.
 */
const MAX_UNTERMINATED_STREAMS = 16

/**
 * Streams whose start keyword (`>>`, white space, `stream`, end of line) is not followed
 * by an `endstream` before the next start, in file order: the ones pdf-lib would look
 * for to the end of the file. (Counting both kinds over the whole file would let
 * `endstream` words placed before the streams hide them.)
 */
function unterminatedStreams (bytes: Uint8Array): number {
  const data = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  let unterminated = 0
  let open = false
  for (let i = data.indexOf('stream'); i !== -1; i = data.indexOf('stream', i + 6)) {
    if (i >= 3 && data[i - 3] === 0x65 && data[i - 2] === 0x6e && data[i - 1] === 0x64) {
      open = false
      continue
    }
    let j = i - 1
    while (j >= 0 && (data[j] === 0x20 || data[j] === 0x0a || data[j] === 0x0d || data[j] === 0x09 || data[j] === 0x0c || data[j] === 0x00)) j--
    const next = data[i + 6]
    if (j >= 1 && data[j] === 0x3e && data[j - 1] === 0x3e && (next === 0x0a || next === 0x0d)) {
      if (open) unterminated++
      open = true
    }
  }
  return open ? unterminated + 1 : unterminated
}

/** Readers look for the header in the first 1,024 bytes (ISO 32000-1 Annex H, note 13). */
const HEADER_WINDOW = 1024

/**
 * Where `%PDF-` starts. Bytes before it (a mail gateway's or an HTTP layer's leftovers)
 * are not part of the PDF: every offset in the file counts from the header, as poppler,
 * pdf.js and qpdf read it.
 */
function headerOffset (bytes: Uint8Array): number {
  const data = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  const at = data.subarray(0, HEADER_WINDOW + 4).indexOf('%PDF-')
  if (at >= 0 && at < HEADER_WINDOW) return at
  const later = data.subarray(0, 64 * 1024).indexOf('%PDF-')
  if (later >= 0) invalid(`The PDF header (%PDF-) comes after ${later} bytes of other data; readers accept at most ${HEADER_WINDOW} bytes before it. Remove the leading bytes and send the file again.`)
  return invalid('The content is not a PDF (no %PDF- header).')
}

/**
 * Parses the PDF for an update; not a PDF, truncated, unreadable or without pages is
 * SIGN_PDF_INVALID. Leading bytes before the header are dropped (the signed file starts
 * at `%PDF-`, so that every reader agrees on the offsets the signature's /ByteRange
 * names). A file whose cross-reference data is damaged is rebuilt from its objects when
 * it holds no signature, and refused when it does. Counts and sizes the file declares
 * beyond what it holds (declared-sizes.ts) are refused before pdf-lib allocates for them.
 */
export async function openPdf (input: Uint8Array): Promise<OpenedPdf> {
  const header = headerOffset(input)
  const bytes = input.subarray(header)
  const fault = declaredSizeFault(bytes)
  if (fault !== undefined) invalid(`The PDF declares more than it holds: ${fault}. The file is damaged or crafted.`)
  const warnings = header === 0 ? [] : [`The ${header} bytes before the PDF header (%PDF-) are not part of the PDF and were removed; the signed file starts at the header.`]
  try {
    return await openUpdatable(bytes, warnings)
  } catch (err) {
    if (!(err instanceof DamagedCrossReference)) throw err
    return await openRebuilt(bytes, warnings, err.reason)
  }
}

/**
 * Opens a file whose cross-reference chain an update can extend; throws DamagedCrossReference
 * otherwise. The chain is read before pdf-lib parses anything: it locates an encrypted
 * file's encryption dictionary, so that such a file is parsed once, already decrypting.
 */
async function openUpdatable (bytes: Uint8Array, warnings: string[]): Promise<OpenedPdf> {
  const { startXref, end } = findFileEnd(bytes)
  const body = bytes.subarray(0, end)
  const unterminated = unterminatedStreams(body)
  if (unterminated > MAX_UNTERMINATED_STREAMS) invalid(`The PDF is damaged: ${unterminated} of its streams have no endstream.`)
  const scratch = PDFContext.create()
  const last = readLastSection(scratch, body, startXref)
  const chain = checkCrossReferences(body, startXref, scratch)
  const encryption = chain.encrypt === undefined ? undefined : encryptionOf(chain.encrypt, chain.id, (ref) => objectAt(scratch, body, chain.offsets.get(ref.objectNumber)))
  const doc = encryption === undefined
    ? await loadQuietly(() => PDFDocument.load(body, { ignoreEncryption: true, updateMetadata: false, parseSpeed: ParseSpeeds.Fastest, throwOnInvalidObject: false }))
    : await decrypted(body, encryption)
  if (!(doc.catalog instanceof PDFDict)) invalid('The PDF has no document catalog.')
  // ISO 32000-1 Annex C: 8,388,607 indirect objects at most. A larger /Size makes our new
  // objects' numbers, and the reader's tables sized from /Size, absurd.
  const highest = Math.max(last.size - 1, doc.context.largestObjectNumber)
  if (highest > MAX_OBJECTS) invalid(`The PDF numbers its objects up to ${highest}, beyond the ${MAX_OBJECTS} a PDF may hold.`)
  return finish({ doc, bytes, last, certification: undefined, encryption, warnings })
}

/** The object whose `N G obj` header is at `offset`, parsed on its own. */
function objectAt (context: PDFContext, bytes: Uint8Array, offset: number | undefined): PDFObject | undefined {
  if (offset === undefined) return undefined
  const header = /^\s*\d+\s+\d+\s+obj\b/.exec(latin1(bytes, offset, Math.min(bytes.length, offset + 64)))
  if (header === null) return undefined
  try {
    return PDFObjectParser.forBytes(bytes.subarray(offset + header[0].length), context).parseObject()
  } catch {
    return undefined
  }
}

/**
 * Rebuilds a file whose cross-reference data is damaged, if it holds no signature, and
 * opens the rebuilt bytes for the update. The whole file is parsed again: nothing of the
 * damaged one may leak into the update's offsets.
 */
async function openRebuilt (bytes: Uint8Array, warnings: string[], reason: string): Promise<OpenedPdf> {
  // As for a sound file, what follows the final %%EOF is not read.
  const tailStart = Math.max(0, bytes.length - 2048)
  const eof = latin1(bytes, tailStart, bytes.length).lastIndexOf('%%EOF')
  if (eof < 0) invalid('The PDF is truncated or followed by other data: there is no %%EOF in its last 2 KiB.')
  const body = bytes.subarray(0, tailStart + eof + 5)
  const unterminated = unterminatedStreams(body)
  if (unterminated > MAX_UNTERMINATED_STREAMS) invalid(`The PDF is damaged: ${unterminated} of its streams have no endstream.`)
  let doc = await loadQuietly(() => PDFDocument.load(body, { ignoreEncryption: true, updateMetadata: false, parseSpeed: ParseSpeeds.Fastest, throwOnInvalidObject: false }))
  const refuseSigned = (): void => {
    if (holdsSignature(doc, body)) unsupported(`The PDF's cross-reference data is damaged (${reason}) and the file holds a digital signature. Signing it would mean rebuilding the file, which invalidates that signature; ask the sender for an undamaged copy.`)
  }
  refuseSigned()
  if (doc.context.largestObjectNumber > MAX_OBJECTS) invalid(`The PDF numbers its objects up to ${doc.context.largestObjectNumber}, beyond the ${MAX_OBJECTS} a PDF may hold.`)
  const { Encrypt, ID } = doc.context.trailerInfo
  const encryption = Encrypt === undefined ? undefined : encryptionOf(Encrypt, ID, (ref) => doc.context.lookup(ref))
  if (encryption !== undefined) {
    doc = await decrypted(body, encryption)
    // Object streams opened only now: a signature field may have been inside one.
    refuseSigned()
  }
  if (!(doc.catalog instanceof PDFDict)) invalid('The PDF has no document catalog.')
  const rebuilt = rebuildPdf(doc, encryption)
  let opened: OpenedPdf
  try {
    opened = await openUpdatable(rebuilt, [])
  } catch (err) {
    if (err instanceof DamagedCrossReference) invalid('The PDF is damaged and could not be rebuilt.', err)
    throw err
  }
  return { ...opened, warnings: [...warnings, `The PDF's cross-reference data was damaged (${reason}); the file was rebuilt from its objects before signing, so the signed file is a repaired copy of it.`] }
}

/** The second parse of an encrypted file, with every object decrypted as it is read. */
async function decrypted (bytes: Uint8Array, encryption: Encryption): Promise<PDFDocument> {
  const { handler, entry } = encryption
  const doc = await loadQuietly(async () => await loadDecrypted(bytes, handler, entry instanceof PDFRef ? entry : undefined))
  if (!(doc.catalog instanceof PDFDict)) invalid('The PDF has no document catalog.')
  return doc
}

/** Checks common to every opened file: pages exist, and no certification forbids a change. */
function finish (opened: OpenedPdf): OpenedPdf {
  const { doc } = opened
  let pages = 0
  try { pages = doc.getPageCount() } catch (err) { invalid('The PDF\'s page tree cannot be read.', err) }
  if (pages === 0) invalid('The PDF has no pages.')
  const certification = certificationLevel(doc)
  if (certification === 1) unsupported('The PDF carries a certification signature that allows no changes (DocMDP P=1); another signature would invalidate it.')
  return { ...opened, certification, signed: hasSignedField(doc) }
}

/** Fields deeper than this are not looked at (a form is a shallow tree; a loop must not hang us). */
const MAX_FIELD_DEPTH = 16

/** Whether the form (the catalog's /AcroForm /Fields, and their /Kids) holds a signature field with a value. */
function hasSignedField (doc: PDFDocument): boolean {
  const lookup = (o: PDFObject | undefined): PDFObject | undefined => o instanceof PDFRef ? doc.context.lookup(o) : o
  const form = lookup(doc.catalog.get(PDFName.of('AcroForm')))
  const fields = form instanceof PDFDict ? lookup(form.get(PDFName.of('Fields'))) : undefined
  const seen = new Set<PDFObject>()
  const signed = (items: PDFObject | undefined, depth: number): boolean => {
    if (!(items instanceof PDFArray) || depth > MAX_FIELD_DEPTH) return false
    for (const item of items.asArray()) {
      const field = lookup(item)
      if (!(field instanceof PDFDict) || seen.has(field)) continue
      seen.add(field)
      if (lookup(field.get(PDFName.of('FT'))) === PDFName.of('Sig') && lookup(field.get(PDFName.of('V'))) instanceof PDFDict) return true
      if (signed(lookup(field.get(PDFName.of('Kids'))), depth + 1)) return true
    }
    return false
  }
  return signed(fields, 0)
}

/**
 * Whether a damaged file holds a signature: a /ByteRange anywhere in its bytes or in
 * an object pdf-lib read (object streams included), or a signature field with a value.
 */
function holdsSignature (doc: PDFDocument, bytes: Uint8Array): boolean {
  if (Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).includes('/ByteRange')) return true
  for (const [, object] of doc.context.enumerateIndirectObjects()) {
    if (!(object instanceof PDFDict)) continue
    if (object.has(PDFName.of('ByteRange'))) return true
    if (object.get(PDFName.of('FT')) === PDFName.of('Sig') && object.has(PDFName.of('V'))) return true
  }
  return false
}

/**
 * pdf-lib reports each invalid object it skips with console.warn: two unstructured lines
 * per object on the service's stderr, outside its logs (20,000 lines for a 249 KB file).
 * Silenced for the load only; a pool thread signs one file at a time.
 */
async function loadQuietly (load: () => Promise<PDFDocument>): Promise<PDFDocument> {
  const warn = globalThis.console.warn
  globalThis.console.warn = () => undefined
  try {
    return await load()
  } catch (err) {
    return invalid('The PDF could not be parsed.', err)
  } finally {
    globalThis.console.warn = warn
  }
}

/**
 * The security handler of an encrypted file, opened with the empty user password, from the
 * trailer's /Encrypt (`entry`) and /ID; `resolve` finds the dictionary when it is indirect.
 */
function encryptionOf (entry: PDFObject, id: PDFObject | undefined, resolve: (ref: PDFRef) => PDFObject | undefined): Encryption {
  const encrypt = entry instanceof PDFRef ? resolve(entry) : entry
  if (!(encrypt instanceof PDFDict)) invalid('The PDF is encrypted but its encryption dictionary cannot be read.')
  return { handler: openSecurity(encrypt, firstId(id)), entry, id: id instanceof PDFArray ? id : undefined }
}

/**
 * The DocMDP permission of a certification signature (ISO 32000-1 §12.8.2.2): 1 no change
 * at all (refused here, a new signature included), 2 form filling and signing, 3 also
 * annotations. Undefined when the document is not certified.
 */
function certificationLevel (doc: PDFDocument): 1 | 2 | 3 | undefined {
  const lookup = <T extends PDFObject>(o: PDFObject | undefined): T | undefined => (o instanceof PDFRef ? doc.context.lookup(o) : o) as T | undefined
  const perms = lookup<PDFDict>(doc.catalog.get(PDFName.of('Perms')))
  const docMdp = perms instanceof PDFDict ? lookup<PDFDict>(perms.get(PDFName.of('DocMDP'))) : undefined
  const refs = docMdp instanceof PDFDict ? lookup<PDFArray>(docMdp.get(PDFName.of('Reference'))) : undefined
  if (!(refs instanceof PDFArray)) return
  for (const item of refs.asArray()) {
    const ref = lookup<PDFDict>(item)
    const params = ref instanceof PDFDict ? lookup<PDFDict>(ref.get(PDFName.of('TransformParams'))) : undefined
    if (params instanceof PDFDict) {
      const p = params.get(PDFName.of('P'))
      // P defaults to 2 when absent (Table 254).
      const level = p instanceof PDFNumber ? p.asNumber() : 2
      return level === 1 || level === 3 ? level : 2
    }
  }
  return undefined
}
