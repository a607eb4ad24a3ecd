/**
 * Turning thrown errors into the `{ "detail": ... }` bodies every service spec uses.
 * Engine errors map by code through the service's table; Fastify's own errors (body
 * parsing, multipart limits) by their code; anything else is a 500 whose body says
 * only that something failed and which request id to quote.
 */
import type { FastifyError, FastifyInstance } from 'fastify'
import type { Code } from '../core/errors.js'

/** Per-service mapping of every catalog code to an HTTP status (the compiler flags a missing one). */
export type StatusTable = Record<Code, number>

/** Fastify / @fastify/multipart error codes we answer with our own words. */
const FRAMEWORK_ERRORS: Record<string, { status: number, detail: string }> = {
  FST_REQ_FILE_TOO_LARGE: { status: 413, detail: 'The uploaded file is larger than this service accepts.' },
  // Too many parts or fields is a malformed request (400); 413 is for a file above the size limit (spec 1, section 7).
  FST_PARTS_LIMIT: { status: 400, detail: 'The request has too many multipart parts.' },
  FST_FILES_LIMIT: { status: 400, detail: 'Send exactly one file, in the field "file".' },
  FST_FIELDS_LIMIT: { status: 400, detail: 'The request has too many form fields.' },
  FST_INVALID_MULTIPART_CONTENT_TYPE: { status: 400, detail: 'The request body must be multipart/form-data.' },
  FST_MP_PREMATURE_CLOSE: { status: 400, detail: 'The upload ended before the multipart body was complete.' },
  FST_PROTO_VIOLATION: { status: 400, detail: 'A form field name is not allowed.' },
  FST_ERR_CTP_INVALID_MEDIA_TYPE: { status: 400, detail: 'Unsupported content type for this endpoint.' },
  FST_ERR_CTP_BODY_TOO_LARGE: { status: 413, detail: 'The request body is larger than this service accepts.' }
}

export function registerErrorHandler (app: FastifyInstance, statuses: StatusTable): void {
  app.setNotFoundHandler((request, reply) => {
    void reply.code(404).send({ detail: `No route ${request.method} ${request.url.split('?')[0]}.` })
  })
  app.setErrorHandler((error: FastifyError & { details?: unknown }, request, reply) => {
    const code = error.code
    if (request.raw.destroyed && (code === 'ECONNRESET' || code === 'ABORTED' || code === 'FST_MP_PREMATURE_CLOSE')) {
      // The client hung up: nobody is listening for a body, and it is not our failure.
      request.log.info({ code }, 'client went away')
      return reply.code(499).send({ detail: 'client closed the request' })
    }
    if (typeof code === 'string' && code in statuses) {
      const status = statuses[code as Code]
      if (status >= 500) {
        request.log.error({ err: error }, 'request failed')
        // INTERNAL messages are ours to read, not the client's; other 5xx codes carry
        // messages written for people (and never holding secrets).
        const what = code === 'INTERNAL' ? 'Internal error' : error.message.replace(/\.$/, '')
        return reply.code(status).send({ detail: `${what}; quote request id ${request.id} when reporting it.` })
      }
      request.log.info({ code, status }, 'request refused')
      return reply.code(status).send({ detail: error.message })
    }
    const framework = typeof code === 'string' ? FRAMEWORK_ERRORS[code] : undefined
    if (framework !== undefined) {
      request.log.info({ code, status: framework.status }, 'request refused')
      return reply.code(framework.status).send({ detail: framework.detail })
    }
    if (error.validation !== undefined) {
      return reply.code(422).send({ detail: error.message })
    }
    if (typeof error.statusCode === 'number' && error.statusCode >= 400 && error.statusCode < 500) {
      return reply.code(error.statusCode).send({ detail: error.message })
    }
    request.log.error({ err: error }, 'request failed')
    return reply.code(500).send({ detail: `Internal error; quote request id ${request.id} when reporting it.` })
  })
}
