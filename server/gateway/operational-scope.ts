/**
 * The scope every operational route of the gateway lives in (the queries, the documents kept,
 * the manifestação): the operational key checked before anything else (the app's hook checks
 * it too; a test app may mount the routes without that hook), JSON bodies only, and the
 * gateway's refusals answered in its error shape. Written once here; each route file gives
 * its routes and what its body limit means in words.
 */
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { isGatewayError } from '../../core/gateway/index.js'
import { GATEWAY_KEY_HELP } from './errors.js'

export interface OperationalScopeOptions {
  checkApiKey: (request: FastifyRequest) => boolean | Promise<boolean>
  /** What a body over the route's limit is, for the 413 (e.g. "larger than a query needs"). */
  tooLarge?: string | undefined
}

/** Fastify's own refusals on these routes, in our words. */
function frameworkRefusals (tooLarge: string): Record<string, { status: number, detail: string }> {
  return {
    FST_ERR_CTP_INVALID_MEDIA_TYPE: { status: 400, detail: 'The request body must be JSON (Content-Type: application/json).' },
    FST_ERR_CTP_INVALID_JSON_BODY: { status: 400, detail: 'The request body is not valid JSON.' },
    FST_ERR_CTP_EMPTY_JSON_BODY: { status: 400, detail: 'The request body is empty; send a JSON object.' },
    FST_ERR_CTP_INVALID_CONTENT_LENGTH: { status: 400, detail: 'The request body does not match its Content-Length.' },
    FST_ERR_CTP_BODY_TOO_LARGE: { status: 413, detail: `The request body is ${tooLarge}.` }
  }
}

export async function registerOperationalScope (app: FastifyInstance, options: OperationalScopeOptions, routes: (scope: FastifyInstance) => void | Promise<void>): Promise<void> {
  const framework = frameworkRefusals(options.tooLarge ?? 'larger than this route accepts')
  await app.register(async (scope) => {
    scope.removeContentTypeParser('text/plain')
    scope.addHook('onRequest', async (request, reply) => {
      if (await options.checkApiKey(request)) return
      request.log.info({ code: 'UNAUTHORIZED' }, 'request refused')
      return reply.code(401).header('connection', 'close').send({ detail: GATEWAY_KEY_HELP, code: 'UNAUTHORIZED' })
    })
    scope.setErrorHandler((error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
      if (isGatewayError(error)) {
        if (error.retryAfterS !== undefined) void reply.header('retry-after', String(error.retryAfterS))
        const level = error.status >= 500 ? 'warn' : 'info'
        request.log[level]({ code: error.code, status: error.status, err: error.status >= 500 ? error : undefined }, 'request refused')
        return reply.code(error.status).send({ detail: error.detail, code: error.code, ...(error.body ?? {}) })
      }
      const known = typeof error.code === 'string' ? framework[error.code] : undefined
      if (known !== undefined) {
        request.log.info({ code: error.code, status: known.status }, 'request refused')
        return reply.code(known.status).send({ detail: known.detail, code: known.status === 413 ? 'REQUEST_TOO_LARGE' : 'GATEWAY_INVALID_REQUEST' })
      }
      // Not ours (the certificate store's EngineErrors, anything unexpected): the app's own
      // error handler maps it, so one code gets one status everywhere.
      throw error
    })
    await routes(scope)
  })
}
