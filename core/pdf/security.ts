/**
 * The standard security handler (ISO 32000-1 §7.6.3, ISO 32000-2 §7.6.4) for files that
 * open without a password: an owner password only, the user password empty. We
 * authenticate the empty user password, derive the file key and encrypt and decrypt
 * strings and streams with it; the owner password is never tried or needed.
 *
 * RC4 is written here: OpenSSL 3 keeps it in the legacy provider, which Node 20 does not
 * load, so `createCipheriv('rc4')` throws "unsupported" (checked on Node 20.20 / OpenSSL
 * 3.0.19). AES comes from node:crypto.
 */
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto'
import { PDFArray, PDFBool, PDFDict, PDFHexString, PDFName, PDFNumber, PDFString } from 'pdf-lib'
import type { PDFObject, PDFRef } from 'pdf-lib'
import { SignError } from '../sign/errors.js'

/** How one kind of data (strings or streams) is encrypted. */
export type CryptMethod = 'none' | 'rc4' | 'aesv2' | 'aesv3'

export interface SecurityHandler {
  /** /R of the encryption dictionary: 2 to 6. */
  revision: number
  /** /P, the user access permissions (Table 22), as a signed 32-bit integer. */
  permissions: number
  strings: CryptMethod
  streams: CryptMethod
  /** /EncryptMetadata: false leaves the catalog's XMP stream in clear (V 4 and 5). */
  encryptMetadata: boolean
  fileKey: Buffer
  /** For messages and logs, e.g. "AES-256 (revision 6)". */
  label: string
}

/** Padding string of Algorithm 2, step a. */
const PADDING = Buffer.from('28bf4e5e4e758a4164004e56fffa01082e2e00b6d0683e802f0ca9fe6453697a', 'hex')

function unsupported (message: string): never {
  throw new SignError('SIGN_PDF_UNSUPPORTED', message)
}

function bytesOf (object: PDFObject | undefined): Buffer | undefined {
  return object instanceof PDFString || object instanceof PDFHexString ? Buffer.from(object.asBytes()) : undefined
}

const md5 = (...parts: Uint8Array[]): Buffer => createHash('md5').update(Buffer.concat(parts)).digest()

/** RC4 (the "V2" and 40-bit methods of §7.6.2); encryption and decryption are the same. */
export function rc4 (key: Uint8Array, data: Uint8Array): Buffer {
  const s = new Uint8Array(256)
  for (let i = 0; i < 256; i++) s[i] = i
  for (let i = 0, j = 0; i < 256; i++) {
    j = (j + s[i]! + key[i % key.length]!) & 255
    const t = s[i]!; s[i] = s[j]!; s[j] = t
  }
  const out = Buffer.alloc(data.length)
  for (let n = 0, i = 0, j = 0; n < data.length; n++) {
    i = (i + 1) & 255
    j = (j + s[i]!) & 255
    const t = s[i]!; s[i] = s[j]!; s[j] = t
    out[n] = data[n]! ^ s[(s[i]! + s[j]!) & 255]!
  }
  return out
}

function crypted (method: string | undefined, where: string): CryptMethod {
  switch (method) {
    case 'None': return 'none'
    case 'V2': return 'rc4'
    case 'AESV2': return 'aesv2'
    case 'AESV3': return 'aesv3'
    default: return unsupported(`The PDF is encrypted with a method this service does not know (${where} ${method ?? 'missing'}).`)
  }
}

/** The method a crypt filter name stands for (§7.6.5): Identity is none, others come from /CF. */
function filterMethod (encrypt: PDFDict, name: PDFObject | undefined, where: string): CryptMethod {
  if (!(name instanceof PDFName) || name === PDFName.of('Identity')) return 'none'
  const filters = encrypt.lookup(PDFName.of('CF'))
  const filter = filters instanceof PDFDict ? filters.lookup(name) : undefined
  if (!(filter instanceof PDFDict)) unsupported(`The PDF's encryption names a crypt filter it does not define (${where}).`)
  const cfm = filter.lookup(PDFName.of('CFM'))
  return crypted(cfm instanceof PDFName ? cfm.decodeText() : 'None', where)
}

/** Algorithm 2 (revisions 2 to 4) with the empty password. */
function legacyKey (encrypt: { o: Buffer, p: number, revision: number, keyBytes: number, encryptMetadata: boolean }, id0: Buffer): Buffer {
  const p = Buffer.alloc(4)
  p.writeInt32LE(encrypt.p)
  const parts = [PADDING, encrypt.o.subarray(0, 32), p, id0]
  if (encrypt.revision >= 4 && !encrypt.encryptMetadata) parts.push(Buffer.from([255, 255, 255, 255]))
  let key = md5(...parts)
  if (encrypt.revision >= 3) {
    for (let i = 0; i < 50; i++) key = md5(key.subarray(0, encrypt.keyBytes))
  }
  return key.subarray(0, encrypt.keyBytes)
}

/** Algorithms 4 and 5: the /U the empty user password would produce, compared with the file's. */
function legacyUserMatches (key: Buffer, u: Buffer, revision: number, id0: Buffer): boolean {
  if (revision === 2) return rc4(key, PADDING).equals(u.subarray(0, 32))
  let value = rc4(key, md5(PADDING, id0))
  for (let i = 1; i <= 19; i++) value = rc4(key.map((b) => b ^ i), value)
  return value.equals(u.subarray(0, 16))
}

/** Algorithm 2.B (ISO 32000-2): the SHA-256/384/512 loop of revision 6; revision 5 is one SHA-256. */
function hardenedHash (password: Buffer, salt: Buffer, revision: number): Buffer {
  let k = createHash('sha256').update(Buffer.concat([password, salt])).digest()
  if (revision === 5) return k
  let round = 0
  let last = 0
  while (round < 64 || last > round - 32) {
    const block = Buffer.concat([password, k])
    const k1 = Buffer.alloc(block.length * 64)
    for (let i = 0; i < 64; i++) block.copy(k1, i * block.length)
    const cipher = createCipheriv('aes-128-cbc', k.subarray(0, 16), k.subarray(16, 32)).setAutoPadding(false)
    const e = Buffer.concat([cipher.update(k1), cipher.final()])
    // The first 16 bytes as a big number, modulo 3: since 256 ≡ 1 (mod 3), the sum of the bytes.
    let sum = 0
    for (let i = 0; i < 16; i++) sum += e[i]!
    k = createHash(['sha256', 'sha384', 'sha512'][sum % 3]!).update(e).digest()
    last = e[e.length - 1]!
    round++
  }
  return k.subarray(0, 32)
}

/** Algorithm 2.A with the empty password: validate /U, then unwrap /UE into the file key. */
function modernKey (u: Buffer, ue: Buffer, revision: number): Buffer | undefined {
  if (u.length < 48 || ue.length < 32) return undefined
  const empty = Buffer.alloc(0)
  if (!hardenedHash(empty, u.subarray(32, 40), revision).equals(u.subarray(0, 32))) return undefined
  const intermediate = hardenedHash(empty, u.subarray(40, 48), revision)
  const decipher = createDecipheriv('aes-256-cbc', intermediate, Buffer.alloc(16)).setAutoPadding(false)
  return Buffer.concat([decipher.update(ue.subarray(0, 32)), decipher.final()])
}

/**
 * Opens the standard security handler of `encrypt` with the empty user password.
 * `id0` is the first element of the trailer's /ID (revisions 2 to 4 mix it into the key).
 * A file that needs a real password, another handler (certificates) or an unknown
 * method is SIGN_PDF_UNSUPPORTED.
 */
export function openSecurity (encrypt: PDFDict, id0: Buffer): SecurityHandler {
  const name = (key: string): string | undefined => { const v = encrypt.lookup(PDFName.of(key)); return v instanceof PDFName ? v.decodeText() : undefined }
  const number = (key: string): number | undefined => { const v = encrypt.lookup(PDFName.of(key)); return v instanceof PDFNumber ? v.asNumber() : undefined }
  const filter = name('Filter')
  if (filter !== 'Standard') {
    unsupported(`The PDF is encrypted for specific recipients (security handler ${filter ?? 'unnamed'}); only the recipients' certificates can open it, so it cannot be signed here.`)
  }
  const v = number('V') ?? 0
  const revision = number('R') ?? 0
  // Some writers store /P unsigned (4294967292 for -4); the algorithms use its 32-bit two's complement.
  const p = (number('P') ?? 0) | 0
  const o = bytesOf(encrypt.lookup(PDFName.of('O')))
  const u = bytesOf(encrypt.lookup(PDFName.of('U')))
  const metadata = encrypt.lookup(PDFName.of('EncryptMetadata'))
  const encryptMetadata = !(metadata instanceof PDFBool) || metadata.asBoolean()
  if (o === undefined || u === undefined || revision < 2 || revision > 6) unsupported(`The PDF's encryption dictionary is incomplete or of an unknown revision (R ${revision}).`)

  let strings: CryptMethod
  let streams: CryptMethod
  let fileKey: Buffer | undefined
  let label: string
  if (v === 1 || v === 2) {
    const keyBits = v === 1 ? 40 : number('Length') ?? 40
    if (keyBits % 8 !== 0 || keyBits < 40 || keyBits > 128) unsupported(`The PDF's RC4 key length (${keyBits} bits) is not one ISO 32000 allows.`)
    strings = streams = 'rc4'
    fileKey = legacyKey({ o, p, revision, keyBytes: keyBits / 8, encryptMetadata }, id0)
    if (!legacyUserMatches(fileKey, u, revision, id0)) fileKey = undefined
    label = `RC4 ${keyBits}-bit (revision ${revision})`
  } else if (v === 4 || v === 5) {
    strings = filterMethod(encrypt, encrypt.lookup(PDFName.of('StrF')), 'StrF')
    streams = filterMethod(encrypt, encrypt.lookup(PDFName.of('StmF')), 'StmF')
    if (v === 4) {
      if ([strings, streams].includes('aesv3')) unsupported('The PDF\'s encryption mixes AES-256 into a V 4 handler.')
      fileKey = legacyKey({ o, p, revision, keyBytes: 16, encryptMetadata }, id0)
      if (!legacyUserMatches(fileKey, u, revision, id0)) fileKey = undefined
    } else {
      const ue = bytesOf(encrypt.lookup(PDFName.of('UE')))
      fileKey = ue === undefined ? undefined : modernKey(u, ue, revision)
    }
    const method = streams === 'none' ? strings : streams
    label = `${method === 'aesv3' ? 'AES-256' : method === 'aesv2' ? 'AES-128' : method === 'rc4' ? 'RC4 128-bit' : 'no cipher'} (revision ${revision})`
  } else {
    return unsupported(`The PDF is encrypted with an algorithm this service does not know (V ${v}).`)
  }
  if (fileKey === undefined) {
    unsupported('The PDF needs a password to be opened; this service signs only files that open without one. Remove the password (or send a copy without it) and send the file again.')
  }
  return { revision, permissions: p, strings, streams, encryptMetadata, fileKey, label }
}

/** Algorithm 1: the key of one object for RC4 and AES-128; AES-256 uses the file key itself. */
function objectKey (handler: SecurityHandler, method: CryptMethod, ref: PDFRef): Buffer {
  if (method === 'aesv3') return handler.fileKey
  const n = ref.objectNumber
  const g = ref.generationNumber
  const extra = [n & 255, (n >> 8) & 255, (n >> 16) & 255, g & 255, (g >> 8) & 255]
  const salt = method === 'aesv2' ? Buffer.from('sAlT', 'latin1') : Buffer.alloc(0)
  return md5(handler.fileKey, Buffer.from(extra), salt).subarray(0, Math.min(handler.fileKey.length + 5, 16))
}

/** Encrypts the bytes of a string or stream of object `ref`. AES gets a fresh random IV each time (§7.6.3). */
export function encryptBytes (handler: SecurityHandler, method: CryptMethod, ref: PDFRef, data: Uint8Array): Buffer {
  if (method === 'none') return Buffer.from(data)
  const key = objectKey(handler, method, ref)
  if (method === 'rc4') return rc4(key, data)
  const iv = randomBytes(16)
  const cipher = createCipheriv(method === 'aesv3' ? 'aes-256-cbc' : 'aes-128-cbc', key, iv)
  return Buffer.concat([iv, cipher.update(data), cipher.final()])
}

/**
 * Decrypts the bytes of a string or stream of object `ref`. Data that is not valid
 * ciphertext (an AES string shorter than its IV, a broken padding, as some writers
 * leave in strings they forgot to encrypt) comes back unchanged rather than failing the file.
 */
export function decryptBytes (handler: SecurityHandler, method: CryptMethod, ref: PDFRef, data: Uint8Array): Buffer {
  if (method === 'none') return Buffer.from(data)
  const key = objectKey(handler, method, ref)
  if (method === 'rc4') return rc4(key, data)
  if (data.length < 32 || data.length % 16 !== 0) return Buffer.from(data)
  try {
    const decipher = createDecipheriv(method === 'aesv3' ? 'aes-256-cbc' : 'aes-128-cbc', key, data.subarray(0, 16))
    return Buffer.concat([decipher.update(data.subarray(16)), decipher.final()])
  } catch {
    return Buffer.from(data)
  }
}

/** What a signature adds to the document, for the permission check. */
export interface Additions {
  stamps: boolean
  page: boolean
}

/**
 * The permissions (/P, ISO 32000-1 §7.6.3.2 Table 22) the additions need and the file
 * withholds, as phrases for a message; empty when signing is allowed. Every signature
 * creates a new signature field: bit 6 allows filling fields, and creating one needs bit
 * 4 as well ("if bit 4 is also set, create or modify interactive form fields (including
 * signature fields)"); bit 9 only lets a user fill fields that already exist, which we
 * never do. Stamps are annotations: bit 6. A page is document assembly: bit 11 from
 * revision 3 on (bit 4 does not cover it there), bit 4 in revision 2.
 */
export function missingPermissions (handler: SecurityHandler, adds: Additions): string[] {
  const has = (bit: number): boolean => (handler.permissions & (1 << (bit - 1))) !== 0
  const missing: string[] = []
  if (!has(6)) missing.push(`adding annotations and form fields${adds.stamps ? ' (the stamp and the signature field)' : ' (the signature field)'}: permission bit 6`)
  if (!has(4)) missing.push('creating a new form field, which the signature field is: permission bit 4 "modify the document", required with bit 6 for that')
  // Revision 2 has no bit 11: assembly falls under bit 4, which every signature needs anyway.
  if (adds.page && handler.revision >= 3 && !has(11)) missing.push('inserting a page (the final page): permission bit 11 "assemble the document"')
  return missing
}

/** The bytes of a text or byte string of the trailer's /ID, first element. */
export function firstId (id: PDFObject | undefined): Buffer {
  const first = id instanceof PDFArray ? id.get(0) : undefined
  return bytesOf(first) ?? Buffer.alloc(0)
}
