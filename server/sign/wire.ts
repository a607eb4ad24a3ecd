/**
 * The sign request as spec 2 defines it, checked field by field, and the Base64 input
 * decoded. Plain Base64 (line breaks tolerated, padding optional) or a
 * `data:application/pdf;base64,` URI; anything else in `pdfBase64` is VALIDATION_ERROR,
 * valid Base64 that is not a PDF is left to the signer (INVALID_PDF).
 */
import { SIGNATURE_LEVELS } from '../../core/sign/index.js'
import type { SignatureLevel } from '../../core/sign/index.js'
import { HttpRefusal } from './errors.js'

export interface SignRequest {
  pdf: Buffer
  originalFileName: string | undefined
  /** The PAdES level asked for; undefined: the service's default (T with SIGN_TSA_URL, B without). */
  level: SignatureLevel | undefined
}

const DATA_URI = /^data:([^;,]*)((?:;[^;,=]+=[^;,]*)*);base64,/i
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/

function invalid (message: string, field: string | null): HttpRefusal {
  return new HttpRefusal(400, 'VALIDATION_ERROR', message, field)
}

/** Decoded size of a Base64 text of `length` characters, without decoding it. */
export function decodedLength (base64: string): number {
  const pad = base64.endsWith('==') ? 2 : base64.endsWith('=') ? 1 : 0
  return Math.floor(base64.length * 3 / 4) - pad
}

export function parseSignRequest (body: unknown, maxPdfBytes: number): SignRequest {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw invalid('The body must be a JSON object with the field "pdfBase64".', null)
  const { pdfBase64 } = body as Record<string, unknown>
  if (pdfBase64 === undefined || pdfBase64 === null) throw invalid('The field "pdfBase64" is required.', 'pdfBase64')
  if (typeof pdfBase64 !== 'string') throw invalid('The field "pdfBase64" must be a string.', 'pdfBase64')
  const options = readSignOptions(body as Record<string, unknown>)
  let text = pdfBase64
  const uri = DATA_URI.exec(text)
  if (uri !== null) {
    if (uri[1]!.toLowerCase() !== 'application/pdf') throw invalid('A data URI in "pdfBase64" must be of type application/pdf.', 'pdfBase64')
    text = text.slice(uri[0].length)
  } else if (text.startsWith('data:')) {
    throw invalid('"pdfBase64" must be plain Base64 or a data:application/pdf;base64, URI.', 'pdfBase64')
  }
  text = text.replace(/[\r\n\t ]+/g, '')
  if (text === '') throw invalid('The field "pdfBase64" is empty.', 'pdfBase64')
  if (decodedLength(text) > maxPdfBytes) throw new HttpRefusal(413, 'FILE_TOO_LARGE', `The PDF is larger than this service accepts (${maxPdfBytes} bytes).`, 'pdfBase64')
  if (!BASE64.test(text) || text.length % 4 === 1) throw invalid('"pdfBase64" is not valid Base64.', 'pdfBase64')
  return { pdf: Buffer.from(text, 'base64'), ...options }
}

/**
 * The request's options, whichever way they came: JSON members or multipart text fields
 * (every option is text, so both read alike). Unknown members are ignored, as they always were.
 */
export function readSignOptions (body: Record<string, unknown>): Omit<SignRequest, 'pdf'> {
  const { originalFileName, level } = body
  if (originalFileName !== undefined && originalFileName !== null) {
    if (typeof originalFileName !== 'string') throw invalid('The field "originalFileName" must be a string.', 'originalFileName')
    if (originalFileName.length > 255 || originalFileName.trim() === '') throw invalid('The field "originalFileName" must have 1 to 255 characters.', 'originalFileName')
  }
  if (level !== undefined && level !== null && (typeof level !== 'string' || !(SIGNATURE_LEVELS as readonly string[]).includes(level))) {
    throw invalid(`The field "level" must be one of ${SIGNATURE_LEVELS.join(', ')} (PAdES baseline B-B, B-T, B-LT, B-LTA).`, 'level')
  }
  return {
    originalFileName: typeof originalFileName === 'string' ? originalFileName : undefined,
    level: typeof level === 'string' ? level as SignatureLevel : undefined
  }
}

/** A multipart request: the file part's own name stands for originalFileName when no field gives one. */
export function parseSignUpload (upload: { pdf: Buffer, fileName: string | undefined, fields: Record<string, string> }): SignRequest {
  const named = upload.fields.originalFileName === undefined && upload.fileName !== undefined && upload.fileName.trim() !== ''
    ? { ...upload.fields, originalFileName: upload.fileName.slice(0, 255) }
    : upload.fields
  return { pdf: upload.pdf, ...readSignOptions(named) }
}

/**
 * The level a request signs at: the one asked for, or T when the service has a timestamp
 * authority and B when it has none (the behaviour before the field existed). A level the
 * configuration cannot give (T and above without SIGN_TSA_URL, or one the configured
 * ICP-Brasil policy does not describe) is VALIDATION_ERROR on `level`.
 */
export function signatureLevel (asked: SignatureLevel | undefined, service: { tsaUrl: string | undefined, policy: { name: 'AD-RB' | 'AD-RT' } | undefined }): SignatureLevel {
  const level = asked ?? (service.tsaUrl === undefined ? 'B' : 'T')
  if (level !== 'B' && service.tsaUrl === undefined) {
    throw invalid(`Level ${level} needs a timestamp authority, and this service has none configured (SIGN_TSA_URL); ask for level B.`, 'level')
  }
  if (service.policy?.name === 'AD-RB' && level !== 'B') throw invalid(`This service signs under the ICP-Brasil policy AD-RB, which describes level B only; level ${level} would contradict it.`, 'level')
  if (service.policy?.name === 'AD-RT' && level === 'B') throw invalid('This service signs under the ICP-Brasil policy AD-RT, which requires a timestamp; ask for level T, LT or LTA.', 'level')
  return level
}

/** `Contrato 2024.pdf` → `Contrato 2024_assinado.pdf`; directories and control characters dropped. */
export function signedFileName (original: string): string {
  const base = original.split(/[\\/]/).pop()!.replace(/[\u0000-\u001f\u007f]/g, '').trim() || 'documento.pdf'
  const stem = base.replace(/\.pdf$/i, '')
  return `${stem || 'documento'}_assinado.pdf`
}

/** The display form of the original name (same cleaning, extension kept). */
export function cleanFileName (original: string): string {
  return original.split(/[\\/]/).pop()!.replace(/[\u0000-\u001f\u007f]/g, '').trim()
}
