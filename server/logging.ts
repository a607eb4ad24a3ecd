import { randomUUID } from 'node:crypto'
import type { IncomingMessage } from 'node:http'
import type { FastifyLoggerOptions } from 'fastify'
import type { LoggerOptions } from 'pino'

/**
 * Pino options shared by every service. Fastify's request logger puts the request
 * id (`reqId`) on every line; headers are never serialized, and the paths below are
 * redacted in case a future serializer adds them.
 */
export function loggerOptions (level: string): FastifyLoggerOptions & LoggerOptions {
  return {
    level,
    redact: {
      paths: ['req.headers["x-api-key"]', 'req.headers.authorization', 'req.headers.cookie', '*.password', '*.apiKey', '*.cnpj', '*.cpf'],
      censor: '[redacted]'
    }
  }
}

/** What a client may choose as its request id. */
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,100}$/

/**
 * Fastify's genReqId for every service (with `requestIdHeader: false`): a client's
 * X-Request-Id is kept when it is a plain token; anything else (log-line forgery,
 * megabytes of header) is replaced by our own id.
 */
export function requestIdOf (req: IncomingMessage): string {
  const given = req.headers['x-request-id']
  return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID()
}
