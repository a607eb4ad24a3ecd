/**
 * A whole new file from a damaged one's objects, for files whose cross-reference data
 * cannot carry an incremental update (xref-check.ts) and that hold no signature. pdf-lib
 * has already read every object in file order, later ones replacing earlier ones (what
 * poppler and pdf.js do when they reconstruct a table), so the rebuilt file holds what
 * those readers show. It is written here rather than by pdf-lib's `save` because an
 * encrypted file's objects are held decrypted and must be encrypted again, each with its
 * own key, and its /Encrypt and /ID kept.
 *
 * Objects pdf-lib could not parse are written back as the bytes they were; object and
 * cross-reference streams are not (pdf-lib unpacked the former, and the new table
 * replaces the latter).
 */
import { randomBytes } from 'node:crypto'
import { PDFArray, PDFInvalidObject, PDFName, PDFRawStream, PDFRef } from 'pdf-lib'
import type { PDFDocument, PDFObject } from 'pdf-lib'
import { encryptObject } from './crypt.js'
import type { Encryption } from './open.js'

function serialized (object: PDFObject): Buffer {
  const body = Buffer.alloc(object.sizeInBytes())
  object.copyBytesInto(body, 0)
  return body
}

/** The rebuilt file: header, every object, a classic table with one subsection, trailer. */
export function rebuildPdf (doc: PDFDocument, encryption: Encryption | undefined): Buffer {
  const { context } = doc
  const version = context.header.toString().match(/%PDF-(\d\.\d)/)?.[1] ?? '1.7'
  const chunks: Buffer[] = [Buffer.from(`%PDF-${version}\n%\xe2\xe3\xcf\xd3\n`, 'latin1')]
  let position = chunks[0]!.length
  const offsets = new Map<number, { offset: number, generation: number }>()
  const encryptRef = encryption?.entry instanceof PDFRef ? encryption.entry : undefined
  const objects = context.enumerateIndirectObjects().sort(([a], [b]) => a.objectNumber - b.objectNumber)
  for (const [ref, object] of objects) {
    const type = object instanceof PDFRawStream ? object.dict.get(PDFName.of('Type')) : undefined
    if (type === PDFName.of('XRef') || type === PDFName.of('ObjStm') || ref.objectNumber === 0) continue
    const clear = encryption === undefined || ref === encryptRef || object instanceof PDFInvalidObject
    const body = serialized(clear ? object : encryptObject(encryption.handler, ref, object, context))
    const chunk = Buffer.concat([Buffer.from(`${ref.objectNumber} ${ref.generationNumber} obj\n`, 'latin1'), body, Buffer.from('\nendobj\n', 'latin1')])
    offsets.set(ref.objectNumber, { offset: position, generation: ref.generationNumber })
    chunks.push(chunk)
    position += chunk.length
  }
  const size = objects.reduce((n, [ref]) => Math.max(n, ref.objectNumber), 0) + 1
  const row = (n: number): string => {
    const entry = offsets.get(n)
    return entry === undefined
      ? `0000000000 ${n === 0 ? '65535' : '00000'} f\r\n`
      : `${String(entry.offset).padStart(10, '0')} ${String(entry.generation).padStart(5, '0')} n\r\n`
  }
  // One subsection from 0, as ISO 32000-1 §7.5.4 asks of a file never updated, unless the
  // numbers are so sparse that the free rows would dwarf the file (one object numbered
  // 8,000,000 would cost 160 MB of rows): then entry 0 and one subsection per run.
  let table = ''
  if (size <= 2 * offsets.size + 1024) {
    table = `0 ${size}\n`
    for (let n = 0; n < size; n++) table += row(n)
  } else {
    table = `0 1\n${row(0)}`
    const numbers = [...offsets.keys()].sort((a, b) => a - b)
    for (let i = 0; i < numbers.length;) {
      let j = i
      while (j + 1 < numbers.length && numbers[j + 1] === numbers[j]! + 1) j++
      table += `${numbers[i]} ${j - i + 1}\n`
      for (let k = i; k <= j; k++) table += row(numbers[k]!)
      i = j + 1
    }
  }
  const { Root, Info, ID } = context.trailerInfo
  const trailer = [`/Size ${size}`, `/Root ${String(Root)}`]
  if (Info instanceof PDFRef) trailer.push(`/Info ${Info.toString()}`)
  if (encryption !== undefined) trailer.push(`/Encrypt ${encryption.entry.toString()}`)
  // An encrypted file keeps its identifier (revisions 2 to 4 key on it); another gets one if it had none.
  if (ID instanceof PDFArray) trailer.push(`/ID ${ID.toString()}`)
  else if (encryption === undefined) {
    const fresh = randomBytes(16).toString('hex').toUpperCase()
    trailer.push(`/ID [<${fresh}> <${fresh}>]`)
  }
  chunks.push(Buffer.from(`xref\n${table}trailer\n<< ${trailer.join(' ')} >>\nstartxref\n${position}\n%%EOF\n`, 'latin1'))
  return Buffer.concat(chunks)
}
