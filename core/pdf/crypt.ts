/**
 * Strings and streams of an encrypted file, object by object (ISO 32000-1 §7.6.2). pdf-lib
 * does not decrypt: with `ignoreEncryption` it loads the ciphertext as if it were data,
 * cannot open object streams (their Flate data is encrypted), and would write a clear
 * object into an encrypted file. So an encrypted file is parsed a second time with the
 * objects decrypted as they are read (`loadDecrypted`), pdf-lib works on clear objects,
 * and the writer encrypts each object it writes with that object's own key
 * (`encryptObject`), new objects and rewritten old ones alike.
 *
 * What is never encrypted and so never touched here (§7.6.1, ISO 32000-2 §7.6.2): the
 * encryption dictionary, the trailer and the cross-reference streams (whose dictionaries
 * hold /ID), the objects inside an object stream (the stream is encrypted as a whole),
 * the catalog's XMP stream when /EncryptMetadata is false, streams whose own /Crypt
 * filter is Identity, and the /Contents of a signature dictionary (§12.8.1: its byte
 * range must be hashed as written).
 */
import { PDFArray, PDFDict, PDFDocument, PDFHexString, PDFName, PDFObjectStreamParser, PDFParser, PDFRawStream, PDFStream, PDFString, PDFXRefStreamParser } from 'pdf-lib'
import type { PDFContext, PDFObject, PDFRef } from 'pdf-lib'
import { decryptBytes, encryptBytes } from './security.js'
import type { CryptMethod, SecurityHandler } from './security.js'

/** Nesting beyond which an object is left as it is (pdf-lib's own parser gives up well before). */
const MAX_DEPTH = 256

const name = (dict: PDFDict, key: string): PDFName | undefined => {
  const value = dict.get(PDFName.of(key))
  return value instanceof PDFName ? value : undefined
}

/** A signature or document timestamp dictionary, whose /Contents stays in clear. */
function isSignatureDictionary (dict: PDFDict): boolean {
  const type = name(dict, 'Type')
  return type === PDFName.of('Sig') || type === PDFName.of('DocTimeStamp') || dict.has(PDFName.of('ByteRange'))
}

/** The method for this stream's data, or 'none' when it is one of the clear kinds. */
function streamMethod (handler: SecurityHandler, dict: PDFDict): CryptMethod {
  const type = name(dict, 'Type')
  if (type === PDFName.of('XRef')) return 'none'
  if (type === PDFName.of('Metadata') && !handler.encryptMetadata) return 'none'
  const filter = dict.get(PDFName.of('Filter'))
  const first = filter instanceof PDFArray ? filter.get(0) : filter
  if (first === PDFName.of('Crypt')) {
    // §7.4.10: a /Crypt filter names its crypt filter in /DecodeParms /Name; Identity by default.
    const params = dict.get(PDFName.of('DecodeParms'))
    const own = params instanceof PDFArray ? params.get(0) : params
    const filterName = own instanceof PDFDict ? name(own, 'Name') : undefined
    if (filterName === undefined || filterName === PDFName.of('Identity')) return 'none'
  }
  return handler.streams
}

type Transform = (data: Uint8Array, method: CryptMethod) => Uint8Array

const hexOf = (data: Uint8Array): PDFHexString => PDFHexString.of(Buffer.from(data).toString('hex').toUpperCase())

/**
 * A copy of `object` with every string and stream passed through `transform`, for
 * writing: pdf-lib's own objects keep their clear values for the rest of the signature.
 */
function mapObject (object: PDFObject, context: PDFContext, transform: Transform, handler: SecurityHandler, depth: number): PDFObject {
  if (depth > MAX_DEPTH) return object
  if (object instanceof PDFString || object instanceof PDFHexString) return hexOf(transform(object.asBytes(), handler.strings))
  if (object instanceof PDFArray) {
    const copy = PDFArray.withContext(context)
    for (const item of object.asArray()) copy.push(mapObject(item, context, transform, handler, depth + 1))
    return copy
  }
  if (object instanceof PDFDict) {
    const copy = PDFDict.withContext(context)
    const signature = isSignatureDictionary(object)
    for (const [key, value] of object.entries()) {
      copy.set(key, signature && key === PDFName.of('Contents') ? value : mapObject(value, context, transform, handler, depth + 1))
    }
    return copy
  }
  if (object instanceof PDFStream) {
    // Content and flate streams compute their data and /Filter on demand.
    object.updateDict()
    const dict = mapObject(object.dict, context, transform, handler, depth) as PDFDict
    return PDFRawStream.of(dict, transform(object.getContents(), streamMethod(handler, object.dict)))
  }
  return object
}

/**
 * Decrypts the strings inside `object` where they are, so that pdf-lib's typed
 * dictionaries (catalog, page tree, pages) keep their classes; returns the object to
 * store, a new one only for a string or a stream.
 */
function decryptInPlace (object: PDFObject, handler: SecurityHandler, ref: PDFRef, depth: number): PDFObject {
  if (depth > MAX_DEPTH) return object
  if (object instanceof PDFString || object instanceof PDFHexString) return hexOf(decryptBytes(handler, handler.strings, ref, object.asBytes()))
  if (object instanceof PDFArray) {
    for (let i = 0; i < object.size(); i++) object.set(i, decryptInPlace(object.get(i), handler, ref, depth + 1))
  } else if (object instanceof PDFDict) {
    const signature = isSignatureDictionary(object)
    for (const [key, value] of object.entries()) {
      if (!(signature && key === PDFName.of('Contents'))) object.set(key, decryptInPlace(value, handler, ref, depth + 1))
    }
  } else if (object instanceof PDFRawStream) {
    decryptInPlace(object.dict, handler, ref, depth)
    return PDFRawStream.of(object.dict, decryptBytes(handler, streamMethod(handler, object.dict), ref, object.contents))
  }
  return object
}

/** `object` (the value of indirect object `ref`) as it must be written into the encrypted file. */
export function encryptObject (handler: SecurityHandler, ref: PDFRef, object: PDFObject, context: PDFContext): PDFObject {
  return mapObject(object, context, (data, method) => encryptBytes(handler, method, ref, data), handler, 0)
}

/** The parts of pdf-lib's PDFParser that the decrypting parse replaces or calls (private in its typings). */
interface ParserInternals {
  context: PDFContext
  parseIndirectObject: () => Promise<PDFRef>
  parseIndirectObjectHeader: () => PDFRef
  skipWhitespaceAndComments: () => void
  parseObject: () => PDFObject
  matchKeyword: (keyword: number[]) => boolean
  shouldWaitForTick: () => boolean
}

const ENDOBJ = [...'endobj'].map((c) => c.charCodeAt(0))

/**
 * Parses `bytes` as PDFDocument.load does (pdf-lib 1.17: every object in file order, later
 * ones replacing earlier ones), with each top-level object decrypted right after it is
 * read and before an object stream is unpacked. `encryptRef` (the encryption dictionary)
 * is kept as it is. The replaced method mirrors pdf-lib's own `parseIndirectObject`;
 * the encrypted-file tests, which need object streams unpacked, fail if it drifts.
 */
export async function loadDecrypted (bytes: Uint8Array, handler: SecurityHandler, encryptRef: PDFRef | undefined): Promise<PDFDocument> {
  const parser = PDFParser.forBytesWithOptions(bytes, Infinity, false, false)
  const inner = parser as unknown as ParserInternals
  inner.parseIndirectObject = async function parseIndirectObject (this: ParserInternals): Promise<PDFRef> {
    const ref = this.parseIndirectObjectHeader()
    this.skipWhitespaceAndComments()
    let object = this.parseObject()
    this.skipWhitespaceAndComments()
    this.matchKeyword(ENDOBJ)
    const type = object instanceof PDFRawStream ? object.dict.lookup(PDFName.of('Type')) : undefined
    // A cross-reference stream is never encrypted, its dictionary's /ID included.
    if (ref !== encryptRef && type !== PDFName.of('XRef')) object = decryptInPlace(object, handler, ref, 0)
    if (object instanceof PDFRawStream && type === PDFName.of('ObjStm')) {
      await PDFObjectStreamParser.forStream(object, this.shouldWaitForTick).parseIntoContext()
    } else if (object instanceof PDFRawStream && type === PDFName.of('XRef')) {
      PDFXRefStreamParser.forStream(object).parseIntoContext()
    } else {
      this.context.assign(ref, object)
    }
    return ref
  }
  const context = await parser.parseDocument()
  // PDFDocument.load does exactly this after parsing; the constructor is private in the typings.
  const Document = PDFDocument as unknown as new (context: PDFContext, ignoreEncryption: boolean, updateMetadata: boolean) => PDFDocument
  return new Document(context, true, false)
}
