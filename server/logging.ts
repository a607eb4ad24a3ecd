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
