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
import { drainUnreadBodies } from '../early-answer.js'
import { BODY_STALL_MS, Gate } from '../gate.js'
import { keyHelp, keyMatches } from '../secrets.js'
import { ensurePrivateDir, receiveUpload, sweepStaleUploads } from '../upload.js'
import type { Upload } from '../upload.js'
import { EngineError } from '../../core/errors.js'
import type { Code } from '../../core/errors.js'
import type { WorkerPool } from '../../workers/pool.js'
import type { parserDescriptions } from '../../workers/extract-document.js'
import { receiveBatch } from './batch-upload.js'
import type { BatchUpload } from './batch-upload.js'
import type { ExtractConfig } from './config.js'
import { EXTRACT_STATUSES, FRAMEWORK_ERRORS } from './errors.js'
import { errorBody, failure, toResponse } from './wire.js'
import { clientErrorHandler } from '../http-errors.js'
import { extractStoredFile, warmPool } from './run.js'
import type { PoolWarmUp } from './run.js'
import { ExtractMetrics } from './metrics.js'
import { apiKeyScheme, keyWhereabouts, registerOpenApi } from '../openapi.js'
import { dataComponents, diagnosticsSchema, extractBatchSchema, extractSchema, healthSchema, infoSchema, useDataSchemas } from './schemas.js'

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

/** Files one batch request may carry (spec 3 §8 B). */
export const MAX_BATCH_FILES = 10
const METRICS_WARNING = 'The metrics are kept in memory since this process started and restart at zero with the service.'

/**
 * The app; `warmUp` settles when EXTRACT_WARM's start-up is over: what each thread did, or
 * undefined (EXTRACT_WARM off, or the warm-up failed, which the log says; requests are
 * served either way).
 */
export type ExtractApp = FastifyInstance & { warmUp: Promise<PoolWarmUp | undefined> }

export async function buildExtractApp (options: ExtractAppOptions): Promise<ExtractApp> {
  const { shared, config, apiKey, pool } = options
  const metrics = new ExtractMetrics()
  /** Seconds a client told SERVICE_BUSY should wait: one document's longest time. */
  const retryAfter = Math.max(1, Math.ceil(config.documentTimeoutMs / 1000))
  const app = Fastify({
    logger: options.logger === false ? false : { ...loggerOptions(shared.logLevel), ...(options.logStream === undefined ? {} : { stream: options.logStream }) },
    requestIdHeader: false,
    genReqId: requestIdOf,
    bodyLimit: 1024 * 1024,
    // A client that stops sending mid-upload must not hold a place of the gate below for ever.
    requestTimeout: config.requestTimeoutMs,
    clientErrorHandler: clientErrorHandler((status, message, id) => failure(id, status === 431 ? 'REQUEST_TOO_LARGE' : status === 408 ? 'REQUEST_TIMEOUT' : 'REQUEST_INVALID', message)),
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
      // Connection: close, so that no more of an unauthenticated body is read than
      // drainUnreadBodies (below) reads to let the client see this answer.
      return reply.code(401).header('connection', 'close').send(failure(request.id, 'UNAUTHORIZED', `API key missing or invalid. ${keyHelp('X-API-Key', 'EXTRACT_API_KEY', 'extract')}`))
    }
  })

  // Extraction requests beyond the gate wait here, after the key check and before their
  // bodies are read (TCP holds the rest back). Uploads go to disk, not memory, and the
  // pool bounds the documents in memory at once; the gate bounds what waits on disk:
  // at most maxInFlight × 10 files × EXTRACT_MAX_FILE_BYTES. An upload that stops sending
  // yields its place while others wait, and is cut (408) after EXTRACT_BODY_TIMEOUT_MS.
  const gate = new Gate(config.maxInFlight > 0 ? config.maxInFlight : Math.max(2, 2 * shared.poolSize))
  const bodyWatch = {
    stallMs: BODY_STALL_MS,
    idleTimeoutMs: config.bodyTimeoutMs,
    timeoutError: () => new EngineError('REQUEST_TIMEOUT', `The upload sent nothing for ${config.bodyTimeoutMs} ms (EXTRACT_BODY_TIMEOUT_MS) and was cut; send the file again.`)
  }
  app.addHook('onRequest', async (request, reply) => {
    const path = request.routeOptions.url
    if (path !== '/api/v1/pdf/extract' && path !== '/api/v1/pdf/extract-batch') return
    await gate.holdFor(request.raw, reply.raw, bodyWatch)
  })
  drainUnreadBodies(app, MAX_BATCH_FILES * config.maxFileBytes, shared.drainMaxMs)

  app.addHook('onReady', async () => {
    await ensurePrivateDir(shared.tmpDir)
    await sweepStaleUploads(shared.tmpDir)
  })

  // Not awaited: the service answers at once, and a document arriving during the warm-up
  // waits for a thread as any document waits for a busy one.
  const warmUp = config.warm ? warmThreads(app, pool, config) : Promise.resolve(undefined)
  app.decorate('warmUp', warmUp)

  app.setNotFoundHandler((request, reply) => {
    void reply.code(404).send(failure(request.id, 'NOT_FOUND', `No route ${request.method} ${request.url.split('?')[0]}.`))
  })

  app.setErrorHandler((error: FastifyError, request, reply) => {
    const { status, body } = errorAnswer(request, error)
    return reply.code(status).send(body)
  })

  await registerOpenApi(app, {
    title: 'razao document-extraction service',
    version: EXTRACT_API_VERSION,
    description: 'Identifies the type of a PDF, extracts its fields and reports the confidence; the engine version and the active parsers are at /api/v1/info. Every answer carries requestId, also in the X-Request-Id header.',
    securitySchemes: { apiKey: apiKeyScheme('X-API-Key', keyWhereabouts('X-API-Key', 'extract-api-key', 'EXTRACT_API_KEY')) },
    schemas: dataComponents
  })
  // The description types `data` with each plugin's schema: the registry is loaded first.
  app.addHook('onRequest', async (request) => {
    if (request.routeOptions.url === '/openapi.json' || request.routeOptions.url === '/docs/plain') await catalog()
  })

  app.get('/api/v1/health', { schema: healthSchema }, async (request) => ({ status: 'UP', service: EXTRACT_SERVICE_NAME, version: EXTRACT_API_VERSION, environment: shared.environment, requestId: request.id }))

  app.get('/api/v1/info', { schema: infoSchema }, async (request) => {
    const { engineVersion, parsers } = await catalog()
    return {
      service: EXTRACT_SERVICE_NAME,
      version: EXTRACT_API_VERSION,
      engineVersion,
      environment: shared.environment,
      limits: { maxFileBytes: config.maxFileBytes, maxPages: config.maxPages, maxBatchFiles: MAX_BATCH_FILES },
      parsers: parsers.filter((p) => p.status === 'active'),
      requestId: request.id
    }
  })

  /**
   * One stored file through the pool: the single-extraction response and its status,
   * never a throw (a batch answers each file on its own). Metrics are counted here.
   */
  const extractStored = async (request: FastifyRequest, gone: AbortSignal, path: string, evidence: boolean): Promise<{ status: number, body: Record<string, unknown> }> => {
    const started = performance.now()
    try {
      const result = await extractStoredFile(pool, path, config, gone)
      metrics.recordResult(result, performance.now() - started)
      request.log.info({ documentType: result.documentType, success: result.success, parser: result.engine.parser, confidence: result.engine.confidence }, 'document extracted')
      return { status: 200, body: toResponse(result, request.id, evidence) }
    } catch (err) {
      const answer = errorAnswer(request, err)
      if (answer.code !== 'ABORTED') metrics.recordFailure(answer.code, performance.now() - started)
      return { status: answer.status, body: answer.body }
    }
  }

  app.post('/api/v1/pdf/extract', { schema: extractSchema }, async (request: FastifyRequest<{ Querystring: { evidence?: string } }>, reply) => {
    let upload: Upload
    try {
      upload = await receiveUpload(request, shared.tmpDir, 'file')
    } catch (err) {
      countRejection(err)
      throw err
    }
    const gone = clientGone(reply)
    try {
      if (upload.path === undefined) {
        metrics.recordRejected()
        throw new EngineError('REQUEST_INCOMPLETE', 'The request has no file: send the PDF in the multipart field "file".')
      }
      const { status, body } = await extractStored(request, gone.signal, upload.path, request.query.evidence === 'true')
      if (status === EXTRACT_STATUSES.SERVICE_BUSY) void reply.header('retry-after', String(retryAfter))
      // The status is one of the schema's; the route types only know them as literals.
      return await (reply as FastifyReply).code(status).send(body)
    } finally {
      gone.dispose()
      await upload.remove()
    }
  })

  app.post('/api/v1/pdf/extract-batch', { schema: extractBatchSchema }, async (request: FastifyRequest<{ Querystring: { evidence?: string } }>, reply) => {
    let batch: BatchUpload
    try {
      batch = await receiveBatch(request, shared.tmpDir, 'files', MAX_BATCH_FILES, config.maxFileBytes)
    } catch (err) {
      countRejection(err)
      throw err
    }
    const gone = clientGone(reply)
    try {
      if (batch.files.length === 0) {
        metrics.recordRejected()
        throw new EngineError('REQUEST_INCOMPLETE', `The request has no file: send up to ${MAX_BATCH_FILES} PDFs in the multipart field "files", one part each.`)
      }
      const evidence = request.query.evidence === 'true'
      // Every file goes to the pool at once; the pool's threads take them in turn.
      const results = await Promise.all(batch.files.map(async (file): Promise<Record<string, unknown>> => {
        if (file.path === undefined) {
          metrics.recordRejected()
          const { status, body } = refusal(request.id, 'REQUEST_TOO_LARGE', `The file is larger than this service accepts (EXTRACT_MAX_FILE_BYTES, ${config.maxFileBytes} bytes).`)
          return { fileName: file.fileName, status, ...body }
        }
        const { status, body } = await extractStored(request, gone.signal, file.path, evidence)
        return { fileName: file.fileName, status, ...body }
      }))
      const succeeded = results.filter((r) => r.success === true).length
      if (results.some((r) => r.status === EXTRACT_STATUSES.SERVICE_BUSY)) void reply.header('retry-after', String(retryAfter))
      return {
        success: succeeded === results.length,
        requestId: request.id,
        total: results.length,
        succeeded,
        failed: results.length - succeeded,
        results
      }
    } finally {
      gone.dispose()
      await batch.remove()
    }
  })

  app.get('/api/v1/diagnostics', { schema: diagnosticsSchema }, async (request) => {
    const { engineVersion, parsers: counts } = await catalog()
    const active = counts.filter((p) => p.status === 'active').length
    return {
      success: true,
      message: 'Diagnostics of the extraction service.',
      requestId: request.id,
      data: {
        service: EXTRACT_SERVICE_NAME,
        environment: shared.environment,
        engineVersion,
        ...metrics.snapshot(),
        parsers: { total: counts.length, active, inactive: counts.length - active }
      },
      errors: [],
      warnings: [METRICS_WARNING]
    }
  })

  /** An upload refused while it was received (too large, too many files, malformed). */
  function countRejection (err: unknown): void {
    const code = (err as { code?: unknown }).code
    const mapped = typeof code === 'string' ? (FRAMEWORK_ERRORS[code]?.code ?? code) : ''
    if (ExtractMetrics.isRejection(mapped)) metrics.recordRejected()
  }

  // Decorated above; Fastify's types do not follow decorate().
  return app as unknown as ExtractApp
}

/**
 * EXTRACT_WARM: warms every thread, then each thread the pool starts in place of one that
 * ended (a document stopped at its hard limit ends its thread), for as long as the app runs.
 */
function warmThreads (app: FastifyInstance, pool: WorkerPool, config: ExtractConfig): Promise<PoolWarmUp | undefined> {
  const warm = async (threadCount?: number): Promise<PoolWarmUp | undefined> => {
    try {
      const done = await warmPool(pool, config, threadCount)
      app.log.info({ ms: Math.round(done.ms), threads: done.threads.map((t) => ({ threadId: t.threadId, ms: Math.round(t.ms), scanReads: t.scanReads })) }, `EXTRACT_WARM: ${done.threads.length} extraction thread(s) warm`)
      return done
    } catch (err) {
      app.log.warn({ errorName: (err as { name?: unknown }).name }, 'EXTRACT_WARM: the warm-up failed; documents are read on threads that start cold')
      return undefined
    }
  }
  const replaced = (): void => { void warm(1) }
  let closed = false
  // Added now: Fastify takes no hooks once it listens.
  app.addHook('onClose', async () => {
    closed = true
    pool.off('workerCreate', replaced)
  })
  return warm().then((first) => {
    if (!closed) pool.on('workerCreate', replaced)
    return first
  })
}

type ParserDescription = ReturnType<typeof parserDescriptions>[number]
let catalogLoad: Promise<{ engineVersion: string, parsers: ParserDescription[] }> | undefined

/**
 * The engine's version and the plugin registry's descriptions, loaded on first use. The
 * documents are read in the pool's threads; this thread needs the registry only for
 * /api/v1/info, /api/v1/diagnostics and the description (its typed `data`), and importing it at start cost
 * the service's main thread about 15 MB (plugins, pdf-lib, core/pdf) for nothing.
 */
async function catalog (): Promise<{ engineVersion: string, parsers: ParserDescription[] }> {
  catalogLoad ??= (async () => {
    const [{ ENGINE_VERSION }, { parserDescriptions: describe, dataSchemas }] = await Promise.all([import('../../core/extraction/index.js'), import('../../workers/extract-document.js')])
    useDataSchemas(dataSchemas())
    return { engineVersion: ENGINE_VERSION, parsers: describe() }
  })()
  return await catalogLoad
}

/** The status and body of a failure (wire.ts), logged: a 500 with the inner code only in the log. */
function errorAnswer (request: FastifyRequest, error: unknown): { status: number, code: string, body: Record<string, unknown> } {
  const answer = errorBody(error, request.id)
  if (answer.internal) request.log.error({ code: answer.logCode, errorName: (error as { name?: unknown }).name }, 'request failed')
  else request.log.info({ code: answer.code, status: answer.status }, 'request refused')
  return answer
}

function refusal (requestId: string, code: string, message: string): { status: number, body: Record<string, unknown> } {
  return { status: EXTRACT_STATUSES[code as Code], body: failure(requestId, code, message) }
}

/** Aborted when the client leaves before its answer is written; one listener per request. */
function clientGone (reply: FastifyReply): { signal: AbortSignal, dispose: () => void } {
  const controller = new AbortController()
  const onClose = (): void => { if (!reply.raw.writableFinished) controller.abort() }
  reply.raw.on('close', onClose)
  return { signal: controller.signal, dispose: () => { reply.raw.off('close', onClose) } }
}
