/**
 * Turning thrown errors into the `{ "detail": ... }` bodies every service spec uses.
 * Engine errors map by code through the service's table; Fastify's own errors (body
 * parsing, multipart limits) by their code; anything else is a 500 whose body says
 * only that something failed and which request id to quote. Beside the spec's fields,
 * every error body carries a stable `code` and the `requestId` (stampErrorBodies).
 */
import { randomUUID } from 'node:crypto'
import { STATUS_CODES } from 'node:http'
import type { Duplex } from 'node:stream'
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

/**
 * Fields a service adds to the error body of some codes, beside the spec's (the import's
 * overlap report, for one); built from the error's details, which cross threads as plain data.
 */
export type ErrorFields = (code: Code, details: Record<string, unknown> | undefined) => Record<string, unknown> | undefined

/** The code of an error body that names none, from its status: stable, as statuses are. */
const CODE_BY_STATUS: Record<number, string> = {
  400: 'REQUEST_INVALID',
  401: 'UNAUTHORIZED',
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
  408: 'REQUEST_TIMEOUT',
  409: 'CONFLICT',
  410: 'GONE',
  413: 'REQUEST_TOO_LARGE',
  415: 'UNSUPPORTED_MEDIA_TYPE',
  422: 'REQUEST_INCOMPLETE',
  429: 'TOO_MANY_REQUESTS',
  431: 'REQUEST_HEADERS_TOO_LARGE',
  499: 'ABORTED',
  503: 'SERVICE_UNAVAILABLE'
}

export function codeForStatus (status: number): string {
  return CODE_BY_STATUS[status] ?? (status >= 500 ? 'INTERNAL' : 'REQUEST_INVALID')
}

/**
 * Adds `code` and `requestId` to every JSON error body (status 400 and up, carrying the
 * service's `field`: `detail` or `error`) the app sends that lacks them, wherever it is answered (a hook, a route, the not-found or error
 * handler): a client can branch on `code` and quote `requestId` whatever refused it.
 * `codeOf` names the code of bodies the service does not code itself; the status decides
 * otherwise. Register it before any route, so that every route's hooks include it; a
 * route's response schema must list both fields (Fastify serializes by it).
 */
export function stampErrorBodies (app: FastifyInstance, field: 'detail' | 'error', codeOf?: (status: number, body: Record<string, unknown>) => string | undefined): void {
  app.addHook('preSerialization', async (request, reply, payload: unknown) => {
    if (reply.statusCode < 400 || payload === null || typeof payload !== 'object' || Array.isArray(payload) || Buffer.isBuffer(payload)) return payload
    const body = payload as Record<string, unknown>
    // A 503 health report is an answer, not an error body: only the service's error shape is stamped.
    if (!(field in body)) return payload
    if (typeof body.code === 'string' && typeof body.requestId === 'string') return payload
    const code = typeof body.code === 'string' ? body.code : codeOf?.(reply.statusCode, body) ?? codeForStatus(reply.statusCode)
    return { ...body, code, requestId: typeof body.requestId === 'string' ? body.requestId : request.id }
  })
}

export function registerErrorHandler (app: FastifyInstance, statuses: StatusTable, errorFields?: ErrorFields): void {
  stampErrorBodies(app, 'detail')
  app.setNotFoundHandler((request, reply) => {
    void reply.code(404).send({ detail: `No route ${request.method} ${request.url.split('?')[0]}.`, code: 'ROUTE_NOT_FOUND' })
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
        return reply.code(status).send({ detail: `${what}; quote request id ${request.id} when reporting it.`, code })
      }
      request.log.info({ code, status }, 'request refused')
      const details = typeof error.details === 'object' && error.details !== null ? error.details as Record<string, unknown> : undefined
      return reply.code(status).send({ detail: error.message, code, ...errorFields?.(code as Code, details) })
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

/** A service's error body, for an answer given before any request object exists; `path` when the request line could be read. */
export type EarlyErrorBody = (status: number, message: string, requestId: string, path: string | undefined) => unknown

/** The `{ "detail": ... }` shape of the import service and the gateway, with its code and request id. */
export const detailBody: EarlyErrorBody = (status, message, requestId) => ({ detail: message, code: codeForStatus(status), requestId })

/** Node's parser errors we answer with a status of their own; any other is a malformed request (400). */
const PARSER_ERRORS: Record<string, { status: number, message: string }> = {
  HPE_HEADER_OVERFLOW: { status: 431, message: 'The request headers are larger than this service accepts (16 KiB in all).' },
  ERR_HTTP_REQUEST_TIMEOUT: { status: 408, message: 'The request did not arrive in time.' },
  ERR_HTTP_REQUEST_HEADER_TIMEOUT: { status: 408, message: 'The request headers did not arrive in time.' }
}
const MALFORMED = { status: 400, message: 'The request is not valid HTTP (malformed request line, header or body framing).' }

/**
 * Fastify's `clientErrorHandler`: what Node's HTTP parser refuses (headers over 16 KiB, a
 * malformed request line or header, a timeout) never reaches a route or an error handler,
 * and Fastify's default answers it in its own `{error, message, statusCode}` shape. This
 * answers in the service's shape instead, with a request id (there is no request to take
 * one from), and closes the connection, as the parser cannot find the next request.
 */
export function clientErrorHandler (body: EarlyErrorBody): (error: NodeJS.ErrnoException, socket: Duplex) => void {
  return function (this: FastifyInstance | undefined, error: NodeJS.ErrnoException & { rawPacket?: Buffer }, socket) {
    if (error.code === 'ECONNRESET' || socket.destroyed) return
    const { status, message } = PARSER_ERRORS[error.code ?? ''] ?? MALFORMED
    const requestId = randomUUID()
    this?.log.info({ code: error.code, status, requestId }, 'request refused by the HTTP parser')
    // A response already under way on this connection cannot be followed by another.
    const pending = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage
    if (!socket.writable || pending?.headersSent === true) {
      socket.destroy()
      return
    }
    const path = /^[A-Z]+ (\/[^\s?]*)/.exec(error.rawPacket?.subarray(0, 2048).toString('latin1') ?? '')?.[1]
    const json = JSON.stringify(body(status, message, requestId, path))
    socket.end(`HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(json)}\r\nx-request-id: ${requestId}\r\nConnection: close\r\n\r\n${json}`)
    // end() lets the answer flush; a client that never closes its side is cut shortly after.
    setTimeout(() => socket.destroy(), 1000).unref()
  }
}
