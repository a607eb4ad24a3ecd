/**
 * One signature, start to finish: open the PDF, draw the configured appearance (page
 * stamps as annotations, the final manifest page), add the signature field, write our
 * incremental update with placeholders, then let @signpdf/signpdf fill the ByteRange
 * and call our CAdES signer (which, for B-T, asks the timestamp authority).
 */
import { createHash } from 'node:crypto'
import { SignPdf, SignPdfError } from '@signpdf/signpdf'
import { StandardFonts } from 'pdf-lib'
import { addSignatureField, appendFinalPage, missingPermissions, openPdf, stampPages, stampWarnings, track, writeUpdate } from '../pdf/index.js'
import type { TextReadingBudget } from '../pdf/index.js'
import type { SigningMaterial } from './certificate.js'
import { assertSigningKeyUsage, assertValidAt } from './certificate.js'
import { CadesSigner, cmsSizeBudget } from './cms.js'
import type { SignaturePolicy } from './cms.js'
import { SignError } from './errors.js'
import { formatDocument, stampLines, finalPageContent } from './wording.js'
import { displayDate, pdfDate } from './time.js'
import { requestTimestamp } from './tsa.js'
import type { TsaOptions } from './tsa.js'

export const VISUAL_MODES = ['NONE', 'STAMP_ONLY', 'PAGE_ONLY', 'STAMP_AND_PAGE'] as const
export type VisualMode = typeof VISUAL_MODES[number]

export interface SignPdfOptions {
  material: SigningMaterial
  visualMode: VisualMode
  /** Set: PAdES-T with a token from this authority. */
  tsa?: TsaOptions | undefined
  policy?: SignaturePolicy | undefined
  validatorUrl: string
  timeZone: string
  documentIdentifier: string
  signedAt: Date
  /** Bytes reserved for the CMS; default an estimate from the chain (cmsSizeBudget). */
  reserveBytes?: number | undefined
  /** Bounds on reading page text to place the stamps; defaults in core/pdf/stamp-pages.ts. */
  textBudget?: Partial<TextReadingBudget> | undefined
}

export interface SignedPdf {
  pdf: Buffer
  sha256: string
  standard: 'PAdES-B' | 'PAdES-T'
  timestampApplied: boolean
  /** The authority's time for B-T (the trusted time; `signedAt` is the claimed one). */
  timestampTime: Date | undefined
  originalPages: number
  /**
   * Non-fatal remarks for the response: what was done to the input before signing (leading
   * bytes removed, a damaged file rebuilt), then pages left without a stamp or stamped over content.
   */
  warnings: string[]
}

const signpdf = new SignPdf()

/** Thrown by one attempt when the CMS came out larger than the room reserved for it. */
class PlaceholderTooSmall extends Error {
  constructor (readonly neededBytes: number) { super(`signature needs ${neededBytes} bytes`) }
}

/**
 * Signs `input`. The room reserved for the CMS is an estimate (the timestamp token's
 * size is only known once it arrives); if it proves too small, the whole signature is
 * made once more with the measured size, from the original bytes.
 */
export async function signPdf (input: Uint8Array, options: SignPdfOptions): Promise<SignedPdf> {
  assertValidAt(options.material, options.signedAt)
  assertSigningKeyUsage(options.material)
  try {
    return await signOnce(input, options, options.reserveBytes ?? cmsSizeBudget(options.material, options.tsa !== undefined, options.policy))
  } catch (err) {
    if (!(err instanceof PlaceholderTooSmall)) throw err
    return await signOnce(input, options, err.neededBytes + 4096)
  }
}

/**
 * pdf-lib throws plain errors (a TypeError, a stack overflow) when a page tree or an
 * inherited attribute is not what ISO 32000 requires: a /Parent loop, a missing MediaBox,
 * a string where a number belongs. Those are the file's faults, so they become
 * SIGN_PDF_INVALID with a fixed message; pdf-lib's own text is not passed on, since
 * some of its messages quote bytes of the document.
 */
function damaged (err: unknown): SignError {
  const loop = err instanceof RangeError
  return new SignError('SIGN_PDF_INVALID', loop
    ? 'The PDF\'s objects refer to each other in a loop or nest too deeply to be processed.'
    : 'The PDF\'s structure is damaged: a page or form object is missing an entry the format requires or has one of the wrong type.', 'pdfBase64', { cause: err })
}

interface PreparedUpdate {
  /** The original bytes plus our update, with the ByteRange and /Contents placeholders. */
  bytes: Buffer
  originalPages: number
  warnings: string[]
}

/** Opens the PDF and writes the appearance and the signature field as an incremental update. */
async function prepareUpdate (input: Uint8Array, options: SignPdfOptions, contentsBytes: number): Promise<PreparedUpdate> {
  const { material, signedAt } = options
  const opened = await openPdf(input)
  const standard = options.tsa === undefined ? 'PAdES-B' : 'PAdES-T'
  const withStamp = options.visualMode === 'STAMP_ONLY' || options.visualMode === 'STAMP_AND_PAGE'
  const withPage = options.visualMode === 'PAGE_ONLY' || options.visualMode === 'STAMP_AND_PAGE'
  // A certified document allows only what its DocMDP level allows after it (§12.8.2.2):
  // level 2 no annotations, so no stamp; neither level a new page.
  if ((opened.certification === 2 && withStamp) || (opened.certification !== undefined && withPage)) {
    throw new SignError('SIGN_PDF_UNSUPPORTED', `The PDF is certified with DocMDP permission ${opened.certification}, which forbids ${withPage ? 'adding a page' : 'adding stamp annotations'}; signing it with the visual mode ${options.visualMode} would invalidate the certification.`)
  }
  // An owner's restrictions (ISO 32000-1 Table 22) bind us like a certification does.
  const { encryption } = opened
  const missing = encryption === undefined ? [] : missingPermissions(encryption.handler, { stamps: withStamp, page: withPage })
  if (encryption !== undefined && missing.length > 0) {
    throw new SignError('SIGN_PDF_UNSUPPORTED', `The PDF is encrypted (${encryption.handler.label}) but opens without a password; its owner's permissions do not allow ${missing.join(', nor ')}, which this service's signature (visual mode ${options.visualMode}) needs. Ask the sender for a copy without these restrictions.`)
  }
  try {
    const tracked = track(opened)
    const { doc } = opened
    const pages = doc.getPages()
    const facts = {
      identity: material.identity,
      document: formatDocument(material.identity),
      when: displayDate(signedAt, options.timeZone),
      standard,
      documentIdentifier: options.documentIdentifier,
      validatorUrl: options.validatorUrl,
      originalPages: pages.length,
      totalPages: pages.length + (withPage ? 1 : 0),
      chainKind: material.chainKind
    } as const

    const fonts = withStamp || withPage
      ? { regular: await doc.embedFont(StandardFonts.Helvetica), bold: await doc.embedFont(StandardFonts.HelveticaBold) }
      : undefined
    const warnings = withStamp && fonts !== undefined
      ? stampWarnings(await stampPages(tracked, pages, { font: fonts.regular, linesFor: (i) => stampLines(facts, i + 1), nameFor: (i) => `${options.documentIdentifier}-${i + 1}`, budget: options.textBudget }))
      : []
    const finalPage = withPage && fonts !== undefined ? appendFinalPage(tracked, fonts, finalPageContent(facts)) : undefined
    if (fonts !== undefined) {
      await fonts.regular.embed()
      await fonts.bold.embed()
    }
    const sigDict = addSignatureField(tracked, {
      page: finalPage ?? pages[0]!,
      contentsBytes,
      pdfDate: pdfDate(signedAt, options.timeZone),
      reason: options.policy === undefined ? `Assinado digitalmente (${standard})` : undefined
    })
    return { bytes: writeUpdate(tracked, [sigDict]), originalPages: pages.length, warnings: [...opened.warnings, ...warnings] }
  } catch (err) {
    if (err instanceof SignError) throw err
    throw damaged(err)
  }
}

async function signOnce (input: Uint8Array, options: SignPdfOptions, contentsBytes: number): Promise<SignedPdf> {
  const { material } = options
  const standard = options.tsa === undefined ? 'PAdES-B' : 'PAdES-T'
  const { bytes: prepared, originalPages, warnings } = await prepareUpdate(input, options, contentsBytes)

  let timestampTime: Date | undefined
  const tsa = options.tsa
  const signer = new CadesSigner({
    material,
    policy: options.policy,
    timestamp: tsa === undefined
      ? undefined
      : async (digest) => {
        const result = await requestTimestamp(digest, tsa)
        timestampTime = result.genTime
        return result.token
      }
  })
  let pdf: Buffer
  try {
    pdf = await signpdf.sign(prepared, signer)
  } catch (err) {
    if (err instanceof SignError) throw err
    const exceeded = err instanceof SignPdfError ? /exceeds placeholder length: (\d+) >/.exec(err.message) : null
    if (exceeded !== null) throw new PlaceholderTooSmall(Number(exceeded[1]) / 2)
    // Another tool's prepared but never signed field: @signpdf cannot tell it from ours.
    if (err instanceof SignPdfError && /multiple ByteRange placeholders/.test(err.message)) {
      throw new SignError('SIGN_PDF_UNSUPPORTED', 'The PDF already holds an unfilled signature placeholder (a /ByteRange of asterisks) left by another tool; sign or remove that field first.')
    }
    if (err instanceof SignPdfError) throw new Error(`placing the signature failed: ${err.message}`, { cause: err })
    throw err
  }
  if (timestampTime !== undefined && timestampTime.getTime() > material.identity.validUntil.getTime()) {
    throw new SignError('TSA_FAILED', 'The timestamp is later than the signing certificate\'s expiry.')
  }
  return {
    pdf,
    sha256: createHash('sha256').update(pdf).digest('hex'),
    standard,
    timestampApplied: options.tsa !== undefined,
    timestampTime,
    originalPages,
    warnings
  }
}
