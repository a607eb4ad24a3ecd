/**
 * The signature-related structure of a signed PDF, read with pdf-lib: every signature
 * field's value dictionary (/Sig or /DocTimeStamp: SubFilter, ByteRange, the claimed
 * time /M, a certification's DocMDP /Reference), the catalog's /Perms /DocMDP and the
 * Document Security Store (/DSS: ISO 32000-2 §12.8.4.3, ETSI EN 319 142-1 §5.4.2).
 * The /Contents bytes are cut from the file at the ByteRange gap, never taken from the
 * parser: the gap is what the signature's ByteRange leaves out.
 */
import { PDFArray, PDFDict, PDFDocument, PDFHexString, PDFName, PDFNumber, PDFRawStream, PDFRef, PDFString, ParseSpeeds, decodePDFRawStream } from 'pdf-lib'
import type { PDFObject } from 'pdf-lib'

export interface SignatureDictionary {
  fieldName: string | null
  kind: 'signature' | 'document-timestamp'
  filter: string | null
  subFilter: string | null
  byteRange: number[]
  /** The DER value of /Contents, cut from the file (zero padding included). */
  contents: Buffer | undefined
  /** /M as written (a claim of the signing application, not a proof). */
  claimedTime: Date | null
  reason: string | null
  location: string | null
  name: string | null
  /** DocMDP /P of a certification signature (its /Reference), else null. */
  docMdp: 1 | 2 | 3 | null
  /** True when the catalog's /Perms /DocMDP points at this dictionary. */
  certifies: boolean
  problems: string[]
}

export interface SecurityStore {
  certs: Buffer[]
  ocsps: Buffer[]
  crls: Buffer[]
  vriCount: number
}

export interface PdfSignatureStructure {
  signatures: SignatureDictionary[]
  dss: SecurityStore | null
  pageCount: number
  /** Offsets just past each `%%EOF` (with its end-of-line): where each revision ends. */
  revisionEnds: number[]
}

export async function readStructure (bytes: Uint8Array): Promise<PdfSignatureStructure> {
  const doc = await PDFDocument.load(bytes, { ignoreEncryption: true, updateMetadata: false, parseSpeed: ParseSpeeds.Fastest, throwOnInvalidObject: false })
  const { context } = doc
  const catalog = doc.catalog
  const lookup = (value: PDFObject | undefined): PDFObject | undefined => value instanceof PDFRef ? context.lookup(value) : value
  const dictOf = (value: PDFObject | undefined): PDFDict | undefined => { const v = lookup(value); return v instanceof PDFDict ? v : undefined }
  const arrayOf = (value: PDFObject | undefined): PDFObject[] => { const v = lookup(value); return v instanceof PDFArray ? v.asArray() : [] }

  const perms = dictOf(catalog.get(PDFName.of('Perms')))
  const docMdpRef = perms?.get(PDFName.of('DocMDP'))
  const docMdpDict = dictOf(docMdpRef)

  const signatures: SignatureDictionary[] = []
  const seen = new Set<PDFDict>()
  const visit = (fieldRef: PDFObject, parentName: string | null, inheritedFt: string | null, depth: number): void => {
    const field = dictOf(fieldRef)
    if (field === undefined || seen.has(field) || depth > 32) return
    seen.add(field)
    const partial = textOf(lookup(field.get(PDFName.of('T'))))
    const name = partial === null ? parentName : parentName === null ? partial : `${parentName}.${partial}`
    const ft = nameOf(lookup(field.get(PDFName.of('FT')))) ?? inheritedFt
    const kids = arrayOf(field.get(PDFName.of('Kids')))
    for (const kid of kids) visit(kid, name, ft, depth + 1)
    if (ft !== 'Sig') return
    const value = dictOf(field.get(PDFName.of('V')))
    if (value === undefined || seen.has(value)) return
    seen.add(value)
    signatures.push(readSignature(value, name, bytes, lookup, value === docMdpDict))
  }
  for (const field of arrayOf(dictOf(catalog.get(PDFName.of('AcroForm')))?.get(PDFName.of('Fields')))) visit(field, null, null, 0)
  // Oldest first: the order of the revisions they sign.
  signatures.sort((x, y) => (x.byteRange[2] ?? 0) + (x.byteRange[3] ?? 0) - ((y.byteRange[2] ?? 0) + (y.byteRange[3] ?? 0)))

  let dss: SecurityStore | null = null
  const dssDict = dictOf(catalog.get(PDFName.of('DSS')))
  if (dssDict !== undefined) {
    const streams = (key: string): Buffer[] => arrayOf(dssDict.get(PDFName.of(key))).flatMap((ref) => {
      const stream = lookup(ref)
      if (!(stream instanceof PDFRawStream)) return []
      try { return [Buffer.from(decodePDFRawStream(stream).decode())] } catch { return [] }
    })
    const vri = dictOf(dssDict.get(PDFName.of('VRI')))
    dss = { certs: streams('Certs'), ocsps: streams('OCSPs'), crls: streams('CRLs'), vriCount: vri === undefined ? 0 : vri.keys().length }
  }
  return { signatures, dss, pageCount: doc.getPageCount(), revisionEnds: revisionEnds(bytes) }
}

function readSignature (dict: PDFDict, fieldName: string | null, bytes: Uint8Array, lookup: (v: PDFObject | undefined) => PDFObject | undefined, certifies: boolean): SignatureDictionary {
  const get = (key: string): PDFObject | undefined => lookup(dict.get(PDFName.of(key)))
  const problems: string[] = []
  const type = nameOf(get('Type'))
  const subFilter = nameOf(get('SubFilter'))
  const kind = type === 'DocTimeStamp' || subFilter === 'ETSI.RFC3161' ? 'document-timestamp' : 'signature'
  const rangeValue = get('ByteRange')
  const byteRange = rangeValue instanceof PDFArray ? rangeValue.asArray().map((n) => { const v = lookup(n); return v instanceof PDFNumber ? v.asNumber() : Number.NaN }) : []
  let contents: Buffer | undefined
  const [a, l1, s2, l2] = byteRange
  if (byteRange.length !== 4 || !byteRange.every((n) => Number.isInteger(n) && n >= 0)) {
    problems.push('The signature\'s /ByteRange is not four non-negative integers.')
  } else if (a !== 0 || l1! >= s2! || s2! + l2! > bytes.length) {
    problems.push(`The signature's /ByteRange [${byteRange.join(' ')}] does not start at 0 or runs past the end of the file (${bytes.length} bytes).`)
  } else if (bytes[l1!] !== 0x3c || bytes[s2! - 1] !== 0x3e) {
    problems.push('The gap the /ByteRange leaves out is not exactly the /Contents hexadecimal string.')
  } else {
    const hex = Buffer.from(bytes.buffer, bytes.byteOffset + l1! + 1, s2! - l1! - 2).toString('latin1').replace(/[\s\0]/g, '')
    if (!/^[0-9a-fA-F]*$/.test(hex)) problems.push('The signature\'s /Contents is not a hexadecimal string.')
    else contents = Buffer.from(hex.length % 2 === 0 ? hex : `${hex}0`, 'hex')
  }
  let docMdp: 1 | 2 | 3 | null = null
  const reference = get('Reference')
  for (const item of reference instanceof PDFArray ? reference.asArray() : []) {
    const ref = lookup(item)
    if (!(ref instanceof PDFDict) || nameOf(lookup(ref.get(PDFName.of('TransformMethod')))) !== 'DocMDP') continue
    const params = lookup(ref.get(PDFName.of('TransformParams')))
    const p = params instanceof PDFDict ? lookup(params.get(PDFName.of('P'))) : undefined
    const value = p instanceof PDFNumber ? p.asNumber() : 2
    docMdp = value === 1 || value === 3 ? value : 2
  }
  return {
    fieldName,
    kind,
    filter: nameOf(get('Filter')),
    subFilter,
    byteRange,
    contents,
    claimedTime: parsePdfDate(textOf(get('M'))),
    reason: textOf(get('Reason')),
    location: textOf(get('Location')),
    name: textOf(get('Name')),
    docMdp,
    certifies,
    problems
  }
}

function nameOf (value: PDFObject | undefined): string | null {
  return value instanceof PDFName ? value.decodeText() : null
}

function textOf (value: PDFObject | undefined): string | null {
  if (value instanceof PDFString || value instanceof PDFHexString) {
    try { return value.decodeText() } catch { return null }
  }
  return null
}

/** ISO 32000-1 §7.9.4: D:YYYYMMDDHHmmSSOHH'mm (every part after the year optional; no zone means UTC here). */
export function parsePdfDate (text: string | null): Date | null {
  if (text === null) return null
  const m = /^(?:D:)?(\d{4})(\d{2})?(\d{2})?(\d{2})?(\d{2})?(\d{2})?(?:([Zz+-])(\d{2})?'?(\d{2})?'?)?/.exec(text.trim())
  if (m === null) return null
  const [, y, mo = '01', d = '01', h = '00', mi = '00', s = '00', sign, oh = '00', om = '00'] = m
  const utc = Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s))
  const offset = (sign === '+' || sign === '-') ? (sign === '-' ? -1 : 1) * (Number(oh) * 60 + Number(om)) * 60_000 : 0
  const date = new Date(utc - offset)
  return Number.isNaN(date.getTime()) ? null : date
}

/** Offsets just past each `%%EOF` marker and the end-of-line that follows it. */
export function revisionEnds (bytes: Uint8Array): number[] {
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1')
  const out: number[] = []
  for (let at = text.indexOf('%%EOF'); at >= 0; at = text.indexOf('%%EOF', at + 5)) {
    let end = at + 5
    if (text[end] === '\r') end++
    if (text[end] === '\n') end++
    out.push(end)
  }
  return out
}
