/**
 * One signature, start to finish: open the PDF, draw the configured appearance (page
 * stamps as annotations, the final manifest page), add the signature field, write our
 * incremental update with placeholders, then let @signpdf/signpdf fill the ByteRange
 * and call our CAdES signer (which, for B-T, asks the timestamp authority). For B-LT
 * the chains' revocation data is fetched and added as a DSS in a second update, and for
 * B-LTA a document timestamp in a third (long-term.ts).
 */
import { createHash } from 'node:crypto'
import { SignPdf, SignPdfError } from '@signpdf/signpdf'
import { PDFName, PDFRef, StandardFonts } from 'pdf-lib'
import { addSignatureField, appendFinalPage, missingPermissions, openPdf, stampPages, stampWarnings, track, trackAfter, writeUpdate } from '../pdf/index.js'
import type { TextReadingBudget, Tracked } from '../pdf/index.js'
import type { SigningMaterial } from './certificate.js'
import { assertSigningKeyUsage, assertValidAt } from './certificate.js'
import { CadesSigner, cmsSizeBudget } from './cms.js'
import type { SignaturePolicy } from './cms.js'
import { SignError } from './errors.js'
import { formatDocument, stampLines, finalPageContent } from './wording.js'
import { displayDate, pdfDate } from './time.js'
import { requestTimestamp, tokenCertificates } from './tsa.js'
import type { TsaOptions } from './tsa.js'
import { addDocumentTimestamp, addDss, documentTimestampBudget } from './long-term.js'
import { collectValidationData } from './revocation.js'
import type { RevocationOptions } from './revocation.js'

export const VISUAL_MODES = ['NONE', 'STAMP_ONLY', 'PAGE_ONLY', 'STAMP_AND_PAGE'] as const
export type VisualMode = typeof VISUAL_MODES[number]

/** PAdES baseline levels (ETSI EN 319 142-1): B-B, B-T, B-LT, B-LTA. */
export const SIGNATURE_LEVELS = ['B', 'T', 'LT', 'LTA'] as const
export type SignatureLevel = typeof SIGNATURE_LEVELS[number]
export type SignatureStandard = 'PAdES-B' | 'PAdES-T' | 'PAdES-LT' | 'PAdES-LTA'

/** Fetch bounds when the caller gives none: 15 s a fetch, 32 MiB an answer. */
export const DEFAULT_REVOCATION: RevocationOptions = { timeoutMs: 15_000, maxBytes: 32 * 1024 * 1024 }

export interface SignPdfOptions {
  material: SigningMaterial
  visualMode: VisualMode
  /** The timestamp authority: needed by levels T, LT and LTA. */
  tsa?: TsaOptions | undefined
  /** Default: T when `tsa` is set, B otherwise (the behaviour before levels existed). */
  level?: SignatureLevel | undefined
  /** Bounds on each OCSP or CRL fetch for LT and LTA; default DEFAULT_REVOCATION. */
  revocation?: RevocationOptions | undefined
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
  standard: SignatureStandard
  level: SignatureLevel
  timestampApplied: boolean
  /** The authority's time for B-T (the trusted time; `signedAt` is the claimed one). */
  timestampTime: Date | undefined
  originalPages: number
  /**
   * LT and LTA: wall time of the revocation fetches and their checks, and of the updates that
   * follow (DSS, document timestamp with its request to the authority), ms.
   */
  longTerm?: { revocationMs: number, dssMs: number, documentTimestampMs: number } | undefined
  /**
   * Non-fatal remarks for the response: what was done to the input before signing (leading
   * bytes removed, a damaged file rebuilt), then pages left without a stamp or stamped over content.
   */
  warnings: string[]
}

const signpdf = new SignPdf()

/** The level `options` ask for, checked against the authority they give. */
export function levelOf (options: Pick<SignPdfOptions, 'level' | 'tsa'>): SignatureLevel {
  const level = options.level ?? (options.tsa === undefined ? 'B' : 'T')
  if (level !== 'B' && options.tsa === undefined) throw new RangeError(`PAdES level ${level} needs a timestamp authority`)
  return level
}

/** What signOnce produced, with what the long-term updates build on. */
interface FirstSignature {
  signed: SignedPdf
  tracked: Tracked
  /** The signature-time-stamp token, for levels T and above. */
  token: Buffer | undefined
}

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
  const level = levelOf(options)
  const first = await signWithRoom(input, { ...options, tsa: level === 'B' ? undefined : options.tsa }, level)
  if (level !== 'LT' && level !== 'LTA') return first.signed
  const tsa = options.tsa!
  const fetchStart = performance.now()
  // Fetched after the signature, so that every answer is newer than its timestamp.
  const data = await collectValidationData(
    [options.material.chain, ...(first.token === undefined ? [] : [tokenCertificates(first.token)])],
    options.revocation ?? DEFAULT_REVOCATION
  )
  // Without a DSS yet, only the catalog changes (it gains /DSS): the snapshot can skip the rest.
  const { doc } = first.tracked.opened
  const catalog = doc.context.trailerInfo.Root
  const watch = catalog instanceof PDFRef && !doc.catalog.has(PDFName.of('DSS')) ? [catalog] : undefined
  const dssStart = performance.now()
  const withDss = addDss(trackAfter(first.tracked, first.signed.pdf, watch), data)
  const stampStart = performance.now()
  const pdf = level === 'LTA'
    ? (await addDocumentTimestamp(trackAfter(first.tracked, withDss), tsa, documentTimestampBudget(first.token?.length))).pdf
    : withDss
  const end = performance.now()
  const longTerm = { revocationMs: dssStart - fetchStart, dssMs: stampStart - dssStart, documentTimestampMs: end - stampStart }
  return { ...first.signed, pdf, sha256: createHash('sha256').update(pdf).digest('hex'), longTerm }
}

async function signWithRoom (input: Uint8Array, options: SignPdfOptions, level: SignatureLevel): Promise<FirstSignature> {
  try {
    return await signOnce(input, options, level, options.reserveBytes ?? cmsSizeBudget(options.material, options.tsa !== undefined, options.policy))
  } catch (err) {
    if (!(err instanceof PlaceholderTooSmall)) throw err
    return await signOnce(input, options, level, err.neededBytes + 4096)
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
  /** The document as written, for the updates of levels LT and LTA. */
  tracked: Tracked
  originalPages: number
  warnings: string[]
}

/** Opens the PDF and writes the appearance and the signature field as an incremental update. */
async function prepareUpdate (input: Uint8Array, options: SignPdfOptions, standard: SignatureStandard, contentsBytes: number): Promise<PreparedUpdate> {
  const { material, signedAt } = options
  const opened = await openPdf(input)
  const withStamp = options.visualMode === 'STAMP_ONLY' || options.visualMode === 'STAMP_AND_PAGE'
  const pageAsked = options.visualMode === 'PAGE_ONLY' || options.visualMode === 'STAMP_AND_PAGE'
  // A page added after a signature invalidates it for validators (Adobe, pyHanko, our own
  // verification): a PDF already signed gets no signature page, and the answer says why.
  const withPage = pageAsked && opened.signed !== true
  const notes = pageAsked && !withPage
    ? [`The PDF is already signed: a page added after a signature invalidates it for validators, so no signature page was added (visual mode ${options.visualMode}); ${withStamp ? 'the stamps show this signature' : 'this signature has no visible appearance'}.`]
    : []
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
    return { bytes: writeUpdate(tracked, [sigDict]), tracked, originalPages: pages.length, warnings: [...opened.warnings, ...notes, ...warnings] }
  } catch (err) {
    if (err instanceof SignError) throw err
    throw damaged(err)
  }
}

async function signOnce (input: Uint8Array, options: SignPdfOptions, level: SignatureLevel, contentsBytes: number): Promise<FirstSignature> {
  const { material } = options
  const standard: SignatureStandard = `PAdES-${level}`
  const { bytes: prepared, tracked, originalPages, warnings } = await prepareUpdate(input, options, standard, contentsBytes)

  let timestampTime: Date | undefined
  let token: Buffer | undefined
  const tsa = options.tsa
  const signer = new CadesSigner({
    material,
    policy: options.policy,
    timestamp: tsa === undefined
      ? undefined
      : async (digest) => {
        const result = await requestTimestamp(digest, tsa)
        timestampTime = result.genTime
        token = result.token
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
    signed: {
      pdf,
      sha256: createHash('sha256').update(pdf).digest('hex'),
      standard,
      level,
      timestampApplied: options.tsa !== undefined,
      timestampTime,
      originalPages,
      warnings
    },
    tracked,
    token
  }
}
