/**
 * The document-extraction service's Fastify app (spec 3 part B). Routes stay thin:
 * receive the upload to a private temporary file, run the pool task (pdf.js and the
 * plugins run in the pool's threads), shape the reply. Every answer carries the request
 * id in the body and in X-Request-Id.
 */
import multipart from '@fastify/multipart'
import Fastify from 'fastify'
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { SharedConfig } from '../config.js'
import { loggerOptions, requestIdOf } from '../logging.js'
import { keyMatches } from '../secrets.js'
import { ensurePrivateDir, receiveUpload, sweepStaleUploads } from '../upload.js'
import { ENGINE_VERSION } from '../../core/extraction/index.js'
import type { ExtractionResult } from '../../core/extraction/index.js'
import { EngineError } from '../../core/errors.js'
import type { Code } from '../../core/errors.js'
import { runTask } from '../../workers/pool.js'
import type { WorkerPool } from '../../workers/pool.js'
import { parserDescriptions } from '../../workers/extract-document.js'
import type { ExtractDocumentInput, ExtractDocumentOutput } from '../../workers/extract-document.js'
import type { ExtractConfig } from './config.js'
import { EXTRACT_STATUSES, FRAMEWORK_ERRORS } from './errors.js'

export interface ExtractAppOptions {
  shared: SharedConfig
  config: ExtractConfig
  apiKey: string
  pool: WorkerPool
  logger?: boolean
  logStream?: NodeJS.WritableStream
}

export const EXTRACT_SERVICE_NAME = 'razao-extract'
/** The public contract's version (spec 3 §9 B); the engine's is ENGINE_VERSION. */
export const EXTRACT_API_VERSION = '2.0.0'

/** The single-extraction response of a request that could not be extracted at all. */
function failure (requestId: string, code: string, message: string): Record<string, unknown> {
  return { success: false, documentType: null, pages: 0, data: null, warnings: [], errors: [{ code, message }], requestId }
}

export async function buildExtractApp (options: ExtractAppOptions): Promise<FastifyInstance> {
  const { shared, config, apiKey, pool } = options
  const app = Fastify({
    logger: options.logger === false ? false : { ...loggerOptions(shared.logLevel), ...(options.logStream === undefined ? {} : { stream: options.logStream }) },
    requestIdHeader: false,
    genReqId: requestIdOf,
    bodyLimit: 1024 * 1024,
    frameworkErrors: (error, request, reply) => {
      request.log.info({ code: error.code }, 'request refused')
      void (reply as FastifyReply).code(400).header('x-request-id', request.id).send(failure(request.id, 'REQUEST_INVALID', 'The request URL is malformed.'))
    }
  })
  await app.register(multipart, {
    limits: { fileSize: config.maxFileBytes, files: 1, fields: 10, fieldSize: 1024, parts: 20, headerPairs: 200 },
    throwFileSizeLimit: true
  })

  app.addHook('onRequest', async (request, reply) => {
    void reply.header('x-request-id', request.id)
    if (request.routeOptions.url === undefined) {
      return reply.code(404).header('connection', 'close').send(failure(request.id, 'NOT_FOUND', `No route ${request.method} ${request.url.split('?')[0]}.`))
    }
    const path = request.routeOptions.url
    if (!path.startsWith('/api/v1/pdf/') && path !== '/api/v1/diagnostics') return
    const given = request.headers['x-api-key']
    if (!keyMatches(apiKey, typeof given === 'string' ? given : undefined)) {
      request.log.info({ code: 'UNAUTHORIZED' }, 'request refused')
      // Connection: close, so an unauthenticated body is not read.
      return reply.code(401).header('connection', 'close').send(failure(request.id, 'UNAUTHORIZED', 'API key missing or invalid: send it in the X-API-Key header.'))
    }
  })

  app.addHook('onReady', async () => {
    await ensurePrivateDir(shared.tmpDir)
    await sweepStaleUploads(shared.tmpDir)
  })

  app.setNotFoundHandler((request, reply) => {
    void reply.code(404).send(failure(request.id, 'NOT_FOUND', `No route ${request.method} ${request.url.split('?')[0]}.`))
  })

  app.setErrorHandler((error: FastifyError, request, reply) => {
    const code = typeof error.code === 'string' ? error.code : ''
    if (code in EXTRACT_STATUSES) {
      const status = EXTRACT_STATUSES[code as Code]
      if (status >= 500) {
        request.log.error({ code, errorName: error.name }, 'request failed')
        return reply.code(status).send(failure(request.id, 'INTERNAL', `Internal error; quote requestId ${request.id} when reporting it.`))
      }
      request.log.info({ code, status }, 'request refused')
      return reply.code(status).send(failure(request.id, code, error.message))
    }
    const framework = FRAMEWORK_ERRORS[code]
    if (framework !== undefined) {
      request.log.info({ code: framework.code, status: framework.status }, 'request refused')
      return reply.code(framework.status).send(failure(request.id, framework.code, framework.message))
    }
    if (typeof error.statusCode === 'number' && error.statusCode >= 400 && error.statusCode < 500) {
      return reply.code(error.statusCode).send(failure(request.id, 'REQUEST_INVALID', error.message))
    }
    request.log.error({ code: code === '' ? 'INTERNAL' : code, errorName: error.name }, 'request failed')
    return reply.code(500).send(failure(request.id, 'INTERNAL', `Internal error; quote requestId ${request.id} when reporting it.`))
  })

  app.get('/api/v1/health', async (request) => ({ status: 'UP', service: EXTRACT_SERVICE_NAME, version: EXTRACT_API_VERSION, environment: shared.environment, requestId: request.id }))

  app.get('/api/v1/info', async (request) => ({
    service: EXTRACT_SERVICE_NAME,
    version: EXTRACT_API_VERSION,
    engineVersion: ENGINE_VERSION,
    environment: shared.environment,
    limits: { maxFileBytes: config.maxFileBytes, maxPages: config.maxPages, maxBatchFiles: 10 },
    parsers: parserDescriptions().filter((p) => p.status === 'active'),
    requestId: request.id
  }))

  app.post('/api/v1/pdf/extract', async (request: FastifyRequest<{ Querystring: { evidence?: string } }>, reply) => {
    const upload = await receiveUpload(request, shared.tmpDir, 'file')
    const task = taskSignal(reply, config.documentTimeoutMs + 5_000)
    try {
      if (upload.path === undefined) throw new EngineError('REQUEST_INCOMPLETE', 'The request has no file: send the PDF in the multipart field "file".')
      const input: ExtractDocumentInput = { path: upload.path, limits: { maxPages: config.maxPages, deadlineMs: config.documentTimeoutMs, maxRunsPerPage: 50_000 } }
      let result: ExtractionResult
      try {
        result = await runTask<ExtractDocumentInput, ExtractDocumentOutput>(pool, 'extract-document', input, task.signal)
      } catch (err) {
        // Past the hard limit the pool stopped the thread: the cooperative deadline never came (a page that yields nothing).
        if (task.timedOut()) throw new EngineError('PDF_TIMEOUT', `Reading the PDF took longer than ${config.documentTimeoutMs} ms and was stopped; the file may be damaged or crafted.`)
        throw err
      }
      request.log.info({ documentType: result.documentType, success: result.success, parser: result.engine.parser, confidence: result.engine.confidence }, 'document extracted')
      return toResponse(result, request.id, request.query.evidence === 'true')
    } finally {
      task.dispose()
      await upload.remove()
    }
  })

  return app
}

/** The spec's single-extraction response; `evidence` (beyond the spec) only when asked for. */
export function toResponse (result: ExtractionResult, requestId: string, evidence: boolean): Record<string, unknown> {
  const body: Record<string, unknown> = {
    success: result.success,
    documentType: result.documentType,
    pages: result.pages,
    data: result.data,
    warnings: result.warnings,
    errors: result.errors,
    requestId,
    engine: result.engine
  }
  if (evidence) body.evidence = result.evidence
  return body
}

/** The pool task's signal: aborted when the client leaves, or at `timeoutMs` (then `timedOut()`). */
function taskSignal (reply: FastifyReply, timeoutMs: number): { signal: AbortSignal, timedOut: () => boolean, dispose: () => void } {
  const controller = new AbortController()
  let timedOut = false
  const onClose = (): void => { if (!reply.raw.writableFinished) controller.abort() }
  const timer = setTimeout(() => { timedOut = true; controller.abort() }, timeoutMs)
  timer.unref()
  reply.raw.on('close', onClose)
  return { signal: controller.signal, timedOut: () => timedOut, dispose: () => { clearTimeout(timer); reply.raw.off('close', onClose) } }
}
