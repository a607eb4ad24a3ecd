/**
 * The signature field, its widget and the signature dictionary (ISO 32000-1 §12.7.4.5,
 * §12.8.1). The dictionary is written verbatim, not through pdf-lib, because its
 * /ByteRange and /Contents are placeholders that @signpdf/signpdf fills in place: the
 * ByteRange as `[0 /********** /********** /**********]` (the form @signpdf looks for),
 * /Contents as a run of hex zeros after it. Both must keep their length.
 */
import { PDFArray, PDFDict, PDFName, PDFNumber, PDFString, PDFHexString } from 'pdf-lib'
import type { PDFPage, PDFRef } from 'pdf-lib'
import type { RawObject, Tracked } from './incremental.js'
import { appendAnnotation, rawString, resolve } from './incremental.js'

export interface SignatureFieldOptions {
  /** The page that carries the (invisible) widget. */
  page: PDFPage
  /** Bytes reserved for the DER CMS; the hex placeholder is twice as long. */
  contentsBytes: number
  /** The claimed signing time as a PDF date (`/M`). */
  pdfDate: string
  /** Entries for /Reason etc.; PAdES forbids /Reason next to a signature policy. */
  reason?: string | undefined
  /**
   * `document-timestamp`: a /DocTimeStamp dictionary (ISO 32000-2 §12.8.5, PAdES-B-LTA)
   * whose /Contents is an RFC 3161 token, with no /M nor /Reason; the field is named CarimboDoTempoN.
   */
  kind?: 'signature' | 'document-timestamp'
}

export const BYTE_RANGE_PLACEHOLDER = '/ByteRange [0 /********** /********** /**********]'

function existingFieldNames (tracked: Tracked, fields: PDFArray | undefined): Set<string> {
  const names = new Set<string>()
  for (const item of fields?.asArray() ?? []) {
    const field = resolve<PDFDict>(tracked, item)
    const t = field instanceof PDFDict ? field.get(PDFName.of('T')) : undefined
    if (t instanceof PDFString || t instanceof PDFHexString) names.add(t.decodeText())
  }
  return names
}

/**
 * Adds an invisible signature widget on `page`, registers it in the AcroForm (creating
 * one if needed, SigFlags 3: signatures exist, append only) and returns the raw
 * signature dictionary to write.
 */
export function addSignatureField (tracked: Tracked, options: SignatureFieldOptions): RawObject {
  const { doc } = tracked.opened
  const { context, catalog } = doc
  const sigRef: PDFRef = context.nextRef()

  let acroForm = resolve<PDFDict>(tracked, catalog.get(PDFName.of('AcroForm')))
  if (!(acroForm instanceof PDFDict)) {
    acroForm = context.obj({ Fields: [] })
    catalog.set(PDFName.of('AcroForm'), context.register(acroForm))
  }
  let fields = resolve<PDFArray>(tracked, acroForm.get(PDFName.of('Fields')))
  if (!(fields instanceof PDFArray)) {
    fields = context.obj([])
    acroForm.set(PDFName.of('Fields'), fields)
  }
  const taken = existingFieldNames(tracked, fields)
  const timestamp = options.kind === 'document-timestamp'
  const prefix = timestamp ? 'CarimboDoTempo' : 'Assinatura'
  let n = 1
  while (taken.has(`${prefix}${n}`)) n++

  const widget = context.register(context.obj({
    Type: 'Annot', Subtype: 'Widget', FT: 'Sig', T: PDFString.of(`${prefix}${n}`),
    V: sigRef, Rect: [0, 0, 0, 0],
    // Print + Locked: an invisible widget (zero rectangle), as for an approval signature without appearance.
    F: 4 | 128,
    P: options.page.ref
  }))
  fields.push(widget)
  acroForm.set(PDFName.of('SigFlags'), PDFNumber.of(3))
  appendAnnotation(tracked, options.page.node, widget)

  if (timestamp) {
    const body = `<< /Type /DocTimeStamp /Filter /Adobe.PPKLite /SubFilter /ETSI.RFC3161 ${BYTE_RANGE_PLACEHOLDER} /Contents <${'0'.repeat(options.contentsBytes * 2)}> >>`
    return { ref: sigRef, body: Buffer.from(body, 'latin1') }
  }
  // In an encrypted file /M and /Reason are encrypted like any string; /Contents never is (§12.8.1).
  const reason = options.reason === undefined ? '' : ` /Reason ${rawString(tracked, sigRef, PDFHexString.fromText(options.reason).asBytes())}`
  const date = tracked.opened.encryption === undefined ? `(${options.pdfDate})` : rawString(tracked, sigRef, Buffer.from(options.pdfDate, 'latin1'))
  const body = `<< /Type /Sig /Filter /Adobe.PPKLite /SubFilter /ETSI.CAdES.detached ${BYTE_RANGE_PLACEHOLDER} ` +
    `/Contents <${'0'.repeat(options.contentsBytes * 2)}> /M ${date}${reason} ` +
    '/Prop_Build << /App << /Name /razao >> >> >>'
  return { ref: sigRef, body: Buffer.from(body, 'latin1') }
}
