/**
 * PAdES-B-LT and B-LTA (ETSI EN 319 142-1 §5.4): after the signature, an incremental
 * update that adds the Document Security Store to the catalog, then for LTA one more
 * update with a document timestamp over everything before it.
 *
 * The DSS holds /Certs (the signer's chain and the timestamp authority's, plus any OCSP
 * responder certificate), /OCSPs (whole DER OCSPResponses) and /CRLs, one stream each.
 * No /VRI: it is optional in EN 319 142-1, validators (EU DSS, pyHanko) read every
 * entry of /Certs, /OCSPs and /CRLs without it, and implementations disagree on which
 * bytes its SHA-1 key is taken over, so a key that one of them computes differently
 * would point nowhere. A DSS already in the file (an earlier LT signature) keeps its
 * entries; ours are appended, leaving out what it already holds byte for byte.
 *
 * The document timestamp is a /DocTimeStamp signature dictionary, SubFilter
 * /ETSI.RFC3161, whose /Contents is the authority's TimeStampToken over the SHA-256 of
 * the bytes its ByteRange covers: the signature and the DSS.
 */
import { createHash } from 'node:crypto'
import { SignPdf, SignPdfError } from '@signpdf/signpdf'
import { Signer } from '@signpdf/utils'
import { PDFArray, PDFDict, PDFName, PDFRawStream } from 'pdf-lib'
import type { PDFRef } from 'pdf-lib'
import { addSignatureField, resolve, writeUpdate } from '../pdf/index.js'
import type { Tracked } from '../pdf/index.js'
import { SignError } from './errors.js'
import type { ValidationData } from './revocation.js'
import { requestTimestamp } from './tsa.js'
import type { TsaOptions } from './tsa.js'

const signpdf = new SignPdf()

/** `data` as a DSS in the catalog; returns the whole file with that update appended. */
export function addDss (tracked: Tracked, data: ValidationData): Buffer {
  const { context, catalog } = tracked.opened.doc
  let dss = resolve<PDFDict>(tracked, catalog.get(PDFName.of('DSS')))
  if (!(dss instanceof PDFDict)) {
    dss = context.obj({ Type: 'DSS' })
    catalog.set(PDFName.of('DSS'), context.register(dss))
  }
  const entries: Array<[string, Buffer[]]> = [['Certs', data.certificates], ['OCSPs', data.ocsps], ['CRLs', data.crls]]
  for (const [key, all] of entries) {
    const existing = resolve<PDFArray>(tracked, dss.get(PDFName.of(key)))
    const held = new Set(existing instanceof PDFArray ? existing.asArray().map((item) => unfiltered(tracked, item)).filter((b) => b !== undefined) : [])
    const items = all.filter((der) => !held.has(der.toString('base64')))
    if (items.length === 0) continue
    const refs: PDFRef[] = items.map((der) => context.register(context.stream(der)))
    if (existing instanceof PDFArray) {
      for (const ref of refs) existing.push(ref)
    } else {
      dss.set(PDFName.of(key), context.obj(refs))
    }
  }
  return writeUpdate(tracked, [])
}

/** A DSS entry's bytes (Base64, to compare) when it is a stream without filters; undefined otherwise. */
function unfiltered (tracked: Tracked, item: ReturnType<PDFArray['get']>): string | undefined {
  const stream = resolve(tracked, item)
  if (!(stream instanceof PDFRawStream) || stream.dict.has(PDFName.of('Filter'))) return undefined
  return Buffer.from(stream.getContents()).toString('base64')
}

/** Bytes reserved for the document timestamp's token: twice what the authority's signature token took, at least 16 KiB. */
export function documentTimestampBudget (signatureTokenBytes: number | undefined): number {
  return Math.max(16_384, 2 * (signatureTokenBytes ?? 0))
}

/** Turns the ByteRange bytes into the authority's token over their SHA-256. */
class DocumentTimestamper extends Signer {
  genTime: Date | undefined
  constructor (private readonly tsa: TsaOptions) { super() }

  override async sign (pdfBuffer: Buffer): Promise<Buffer> {
    const result = await requestTimestamp(createHash('sha256').update(pdfBuffer).digest(), this.tsa)
    this.genTime = result.genTime
    return result.token
  }
}

/**
 * Adds a document timestamp field (on the first page, invisible) and fills it with a token
 * from `tsa`; returns the whole file and the token's time.
 */
export async function addDocumentTimestamp (tracked: Tracked, tsa: TsaOptions, contentsBytes: number): Promise<{ pdf: Buffer, genTime: Date }> {
  const page = tracked.opened.doc.getPage(0)
  const field = addSignatureField(tracked, { page, contentsBytes, pdfDate: '', kind: 'document-timestamp' })
  const prepared = writeUpdate(tracked, [field])
  const timestamper = new DocumentTimestamper(tsa)
  let pdf: Buffer
  try {
    pdf = await signpdf.sign(prepared, timestamper)
  } catch (err) {
    if (err instanceof SignError) throw err
    if (err instanceof SignPdfError && /exceeds placeholder length/.test(err.message)) {
      throw new SignError('TSA_FAILED', `The timestamp authority's token for the document timestamp is larger than the ${contentsBytes} bytes reserved for it.`, null, { cause: err })
    }
    throw err
  }
  if (timestamper.genTime === undefined) throw new Error('the document timestamp was not requested')
  return { pdf, genTime: timestamper.genTime }
}
