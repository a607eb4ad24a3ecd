/**
 * The sign request as multipart/form-data (issue 34): the PDF as the file part "file", the
 * options as text fields beside it, in any order. The PDF is read into memory as it arrives
 * (the signature works on it in memory anyway), never past SIGN_MAX_PDF_BYTES; no temporary
 * file is written. Whether the answer is JSON or the PDF itself is the Accept header's choice
 * (wantsPdf).
 */
import type { FastifyRequest } from 'fastify'
import { HttpRefusal } from './errors.js'

export const FILE_FIELD = 'file'

export interface SignUpload {
  pdf: Buffer
  /** The file part's own name, when the client gave one. */
  fileName: string | undefined
  /** The text fields, by name (the last of a repeated one). */
  fields: Record<string, string>
}

/** Limits handed to @fastify/multipart: one file, a few short fields. */
export function multipartLimits (maxPdfBytes: number): Record<string, number> {
  return { fileSize: maxPdfBytes, files: 1, fields: 10, fieldSize: 1024, parts: 12, headerPairs: 200 }
}

function multipartError (message: string, field: string | null = null): HttpRefusal {
  return new HttpRefusal(400, 'MULTIPART_ERROR', message, field)
}

/** Refusals for @fastify/multipart's and busboy's errors; anything else (a client that hung up) as it is. */
function asRefusal (err: unknown, maxPdfBytes: number): unknown {
  if (err instanceof HttpRefusal) return err
  const code = (err as { code?: unknown } | undefined)?.code
  if (code === 'FST_REQ_FILE_TOO_LARGE') return new HttpRefusal(413, 'FILE_TOO_LARGE', `The PDF is larger than this service accepts (${maxPdfBytes} bytes).`, FILE_FIELD)
  if (code === 'FST_FILES_LIMIT') return multipartError(`Send one file only, the PDF in the form field "${FILE_FIELD}".`, FILE_FIELD)
  if (code === 'FST_PARTS_LIMIT' || code === 'FST_FIELDS_LIMIT') return multipartError('The form has more parts than a sign request takes: the PDF in "file" and the options (originalFileName, level).')
  // busboy's parse errors are plain Errors without a code: the body's fault.
  if (err instanceof Error && err.constructor === Error && code === undefined) {
    return multipartError('The multipart body is malformed: send the PDF as multipart/form-data, with the boundary in the Content-Type header.')
  }
  return err
}

export async function readSignUpload (request: FastifyRequest, maxPdfBytes: number): Promise<SignUpload> {
  const upload: SignUpload = { pdf: Buffer.alloc(0), fileName: undefined, fields: {} }
  let seenFile = false
  try {
    for await (const part of request.parts()) {
      if (part.type === 'field') {
        if (typeof part.value !== 'string' || part.valueTruncated) {
          throw multipartError(`The form field "${part.fieldname}" is longer than 1,024 bytes or not text.`, part.fieldname)
        }
        upload.fields[part.fieldname] = part.value
        continue
      }
      if (part.fieldname !== FILE_FIELD) {
        part.file.resume()
        throw multipartError(`The PDF goes in the form field "${FILE_FIELD}", not "${part.fieldname}".`, part.fieldname)
      }
      seenFile = true
      upload.pdf = await part.toBuffer()
      upload.fileName = part.filename === '' ? undefined : part.filename
    }
  } catch (err) {
    throw asRefusal(err, maxPdfBytes)
  }
  if (!seenFile) throw multipartError(`The form has no file: send the PDF in the form field "${FILE_FIELD}".`, FILE_FIELD)
  if (upload.pdf.length === 0) throw new HttpRefusal(400, 'VALIDATION_ERROR', `The file in "${FILE_FIELD}" is empty.`, FILE_FIELD)
  return upload
}

/**
 * Whether the client asked for the signed PDF itself: Accept names application/pdf with a
 * weight at least that of any JSON it also names. `*\/*`, a missing header or JSON alone keep
 * the JSON answer, so existing clients see no change.
 */
export function wantsPdf (accept: string | undefined): boolean {
  if (accept === undefined) return false
  let pdf = 0
  let json = 0
  for (const range of accept.split(',')) {
    const [type, ...params] = range.trim().toLowerCase().split(';')
    const qParam = params.map((p) => p.trim()).find((p) => p.startsWith('q='))
    const q = qParam === undefined ? 1 : Number(qParam.slice(2))
    if (!Number.isFinite(q)) continue
    if (type === 'application/pdf') pdf = Math.max(pdf, q)
    else if (type === 'application/json') json = Math.max(json, q)
  }
  return pdf > 0 && pdf >= json
}
