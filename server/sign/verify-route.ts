/**
 * POST /api/v1/verify: checks the signatures of a PDF (core/sign/verify, run in the worker
 * pool). The PDF comes as a multipart file part (any field name; `file` by convention) or
 * in the sign request's JSON shape (`pdfBase64`). The answer is 200 whatever the verdict:
 * the verdict is data (`data.verdict`), the refusals (4xx/5xx) are about the request.
 */
import multipart from '@fastify/multipart'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { isoWithOffset } from '../../core/sign/index.js'
import type { VerificationReport } from '../../core/sign/verify/index.js'
import { runTask } from '../../workers/pool.js'
import type { WorkerPool } from '../../workers/pool.js'
import { transferVerifyPdf } from '../../workers/verify-pdf.js'
import type { VerifyPdfInput, VerifyPdfOutput } from '../../workers/verify-pdf.js'
import type { SignConfig } from './config.js'
import { HttpRefusal, SIGN_ERRORS } from './errors.js'
import type { PublicCode } from './errors.js'
import { verifySchema } from './schemas.js'
import { cleanFileName, parseSignRequest } from './wire.js'

export interface VerifyRouteOptions {
  config: SignConfig
  pool: WorkerPool
  /** The trust store, DER of each anchor and the file it came from. */
  anchors: VerifyPdfInput['anchors']
  /** What the trust store is, for the answer (`ICP-Brasil roots shipped with razao`, or the folder). */
  trustStore: string
  send: (request: FastifyRequest, reply: FastifyReply, status: number, code: PublicCode, message: string, field?: string | null) => FastifyReply
}

const SENTENCES: Record<VerificationReport['verdict'], string> = {
  VALID: 'Every signature is valid.',
  INDETERMINATE: 'The signatures are intact, but not every one could be shown trustworthy: see each signature\'s problems.',
  INVALID: 'At least one signature is invalid: see each signature\'s problems.',
  UNSIGNED: 'The PDF has no signature.'
}

export function verdictSentence (verdict: VerificationReport['verdict']): string {
  return SENTENCES[verdict]
}

/** The report with every date written as ISO 8601 with the offset of `timeZone`. */
export function reportToWire (report: VerificationReport, timeZone: string): Record<string, unknown> {
  const convert = (value: unknown): unknown => {
    if (value instanceof Date) return isoWithOffset(value, timeZone)
    if (Array.isArray(value)) return value.map(convert)
    if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, convert(v)]))
    return value
  }
  return convert(report) as Record<string, unknown>
}

async function readPdf (request: FastifyRequest, maxPdfBytes: number): Promise<{ pdf: Buffer, fileName: string | undefined }> {
  if (!request.isMultipart()) {
    const parsed = parseSignRequest(request.body, maxPdfBytes)
    return { pdf: parsed.pdf, fileName: parsed.originalFileName }
  }
  let found: { pdf: Buffer, fileName: string | undefined } | undefined
  try {
    for await (const part of request.parts()) {
      if (part.type !== 'file') continue
      if (found !== undefined) throw new HttpRefusal(400, 'VALIDATION_ERROR', 'Send one PDF per request: the body has more than one file part.', part.fieldname)
      found = { pdf: await part.toBuffer(), fileName: part.filename === '' ? undefined : part.filename }
    }
  } catch (err) {
    if (err instanceof HttpRefusal) throw err
    const code = (err as { code?: string }).code
    if (code === 'FST_REQ_FILE_TOO_LARGE') throw new HttpRefusal(413, 'FILE_TOO_LARGE', `The PDF is larger than this service accepts (${maxPdfBytes} bytes, SIGN_MAX_PDF_BYTES).`, 'file')
    if (code === 'FST_FILES_LIMIT' || code === 'FST_PARTS_LIMIT' || code === 'FST_FIELDS_LIMIT') throw new HttpRefusal(400, 'VALIDATION_ERROR', 'Send one PDF per request, with at most a few text fields.', null)
    throw new HttpRefusal(400, 'MULTIPART_ERROR', 'The multipart body cannot be read: it is cut short or malformed.', null)
  }
  if (found === undefined) throw new HttpRefusal(400, 'VALIDATION_ERROR', 'The request has no file: send the PDF as a multipart file part named "file".', 'file')
  if (found.pdf.length === 0) throw new HttpRefusal(400, 'INVALID_PDF', 'The file part is empty.', 'file')
  return found
}

export async function verifyRoutes (app: FastifyInstance, options: VerifyRouteOptions): Promise<void> {
  const { config, pool, anchors, send } = options
  // Registered once for the whole app when another route already uses it (it decorates the request).
  if (!app.hasContentTypeParser('multipart/form-data')) {
    await app.register(multipart, {
      limits: { fileSize: config.maxPdfBytes, files: 1, fields: 10, fieldSize: 1024, parts: 20, headerPairs: 200 },
      throwFileSizeLimit: true
    })
  }

  app.post('/api/v1/verify', { schema: verifySchema }, async (request, reply) => {
    const { pdf, fileName } = await readPdf(request, config.maxPdfBytes)
    const sizeBytes = pdf.length
    const controller = new AbortController()
    const onClose = (): void => { if (!reply.raw.writableFinished) controller.abort() }
    reply.raw.on('close', onClose)
    let timedOut = false
    const timer = setTimeout(() => { timedOut = true; controller.abort() }, config.taskTimeoutMs)
    timer.unref()
    let out: VerifyPdfOutput
    try {
      out = await runTask<VerifyPdfInput, VerifyPdfOutput>(pool, 'verify-pdf', transferVerifyPdf({ pdf, anchors }), controller.signal)
    } catch (err) {
      if (!timedOut) throw err
      request.log.error({ code: 'TASK_TIMEOUT', limitMs: config.taskTimeoutMs }, 'verification stopped at the time limit')
      return send(request, reply, 500, 'INTERNAL_ERROR', `The verification did not finish within ${config.taskTimeoutMs} ms (SIGN_TASK_TIMEOUT_MS) and was stopped; the PDF may be too large or too complex.`)
    } finally {
      clearTimeout(timer)
      reply.raw.off('close', onClose)
    }
    if (out.outcome === 'refused') {
      const mapped = SIGN_ERRORS[out.code]
      request.log.info({ code: out.code, status: mapped.status }, 'verification refused')
      return send(request, reply, mapped.status, mapped.code, out.message, request.isMultipart() ? 'file' : out.field)
    }
    const { report } = out
    request.log.info({ verdict: report.verdict, signatures: report.signatures.length, sizeBytes }, 'pdf verified')
    return {
      success: true,
      message: verdictSentence(report.verdict),
      requestId: request.id,
      data: {
        ...(fileName === undefined ? {} : { fileName: cleanFileName(fileName) }),
        sizeBytes,
        trustStore: { description: options.trustStore, anchors: anchors.map((a) => a.source) },
        ...reportToWire(report, config.timeZone)
      },
      errors: [],
      warnings: []
    }
  })
}
