/**
 * The import service's Fastify app (spec 1). Routes stay thin: receive the upload
 * to a temporary file, validate the form fields, run the pool task, shape the reply.
 * Only main code listens; tests call `inject()` or listen on port 0.
 */
import multipart from '@fastify/multipart'
import Fastify from 'fastify'
import type { FastifyBaseLogger, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { ImportConfig, SharedConfig } from '../config.js'
import { clientErrorHandler, detailBody, registerErrorHandler } from '../http-errors.js'
import { loggerOptions, requestIdOf } from '../logging.js'
import { runtimeReport } from '../runtime.js'
import { keyHelp, keyMatches } from '../secrets.js'
import { ensurePrivateDir, receiveUpload, sweepStaleUploads } from '../upload.js'
import { EngineError } from '../../core/errors.js'
import { runTask } from '../../workers/pool.js'
import type { WorkerPool } from '../../workers/pool.js'
import type { AnalyzeSpreadsheetInput, AnalyzeSpreadsheetOutput } from '../../workers/analyze-spreadsheet.js'
import type { ProcessSpreadsheetInput, ProcessSpreadsheetOutput } from '../../workers/process-spreadsheet.js'
import { recoverInterruptedImports } from '../../core/importer/load-state.js'
import type { Database } from '../database.js'
import { IMPORT_STATUSES } from './errors.js'
import { parseBatchSize, parseCodigoDominio, parseImportMode, parseSheet } from './params.js'
import { importErrorFields, toAnalyzeOverlap, toAnalyzeResponse, toDiagnoseResponse, toProcessResponse } from './wire.js'
import { companyNotFound, findCompany } from '../../core/db/companies.js'
import { overlapOfIds } from '../../core/importer/movement-keys.js'
import { drainUnreadBodies } from '../early-answer.js'
import { analyzeSchema, diagnoseSchema, healthSchema, processSchema } from './schemas.js'
import { HIDDEN, apiKeyScheme, keyWhereabouts, registerOpenApi } from '../openapi.js'
import { IMPORTS_CSS, IMPORTS_HTML, IMPORTS_JS, IMPORTS_PAGE_CSP } from './imports-page.js'
import type { EventsOptions } from './import-events.js'
import { ImportJobs } from './jobs.js'
import { registerImportJobRoutes } from './jobs-routes.js'

export interface ImportAppOptions {
  shared: SharedConfig
  config: ImportConfig
  apiKey: string
  pool: WorkerPool
  /** The database /v1/process writes to; without it that route answers 500 (DATABASE_UNAVAILABLE). */
  database?: Pick<Database, 'url' | 'pool'> | undefined
  /**
   * How often this instance marks as FALHOU the importations whose writer is gone (any
   * instance's: a killed one's loads are failed by the others), ms; default 5 s.
   */
  recoveryIntervalMs?: number
  /** Tests: how often the events route reads the row, and its heartbeat, ms. */
  events?: EventsOptions
  /** Tests: how often running jobs' progress is written and their cancel requests read, ms (default 1 s). */
  progressWriteMs?: number
  /** Pino logger on (the default) or off. */
  logger?: boolean
  /** Where log lines go (default stdout); tests pass a stream to read them. */
  logStream?: NodeJS.WritableStream
}

export const IMPORT_SERVICE_NAME = 'razao-import'
/** The import contract's version (spec 1 §9), as /openapi.json states it. */
export const IMPORT_API_VERSION = '1.1.0'

export const DEFAULT_RECOVERY_INTERVAL_MS = 5000

export async function buildImportApp (options: ImportAppOptions): Promise<FastifyInstance> {
  const { shared, config, apiKey, pool } = options
  const app = Fastify({
    logger: options.logger === false ? false : { ...loggerOptions(shared.logLevel), ...(options.logStream === undefined ? {} : { stream: options.logStream }) },
    requestIdHeader: false,
    genReqId: requestIdOf,
    // Uploads of hundreds of MB take a while on slow links.
    requestTimeout: 0,
    bodyLimit: 1024 * 1024,
    clientErrorHandler: clientErrorHandler(detailBody),
    // A URL the router cannot decode (a bad percent-escape) fails before any hook runs:
    // answer it as every other error, not in Fastify's own shape.
    frameworkErrors: (error, request, reply) => {
      request.log.info({ code: error.code }, 'request refused')
      void (reply as FastifyReply).code(400).send({ detail: 'The request URL is malformed.', code: 'REQUEST_INVALID', requestId: request.id })
    }
  })
  registerErrorHandler(app, IMPORT_STATUSES, importErrorFields)
  let jobs: ImportJobs | undefined
  if (options.database !== undefined) {
    watchInterruptedImports(app, options.database, options.recoveryIntervalMs ?? DEFAULT_RECOVERY_INTERVAL_MS)
    // This instance's jobs (POST /v1/imports), alive while it holds its instance lock.
    jobs = await ImportJobs.start({ pool, database: options.database, maxJobs: config.maxJobs, log: app.log, progressWriteMs: options.progressWriteMs })
    const started = jobs
    app.addHook('onClose', async () => { await started.close() })
  }
  drainUnreadBodies(app, config.maxUploadBytes, shared.drainMaxMs)
  await app.register(multipart, {
    limits: { fileSize: config.maxUploadBytes, files: 1, fields: 10, fieldSize: 1024, parts: 20, headerPairs: 200 },
    throwFileSizeLimit: true
  })

  app.addHook('onRequest', async (request, reply) => {
    // The route that matched, not the raw URL: the router decodes percent-escapes, so
    // "/%761/analyze" reaches /v1/analyze while its raw text does not start with "/v1/".
    // No route: answered here, before a body nobody wants is read (Fastify would read and
    // parse it before the not-found handler runs).
    if (request.routeOptions.url === undefined) {
      return reply.code(404).header('connection', 'close').send({ detail: `No route ${request.method} ${request.url.split('?')[0]}.`, code: 'ROUTE_NOT_FOUND' })
    }
    if (!request.routeOptions.url.startsWith('/v1/')) return
    const given = request.headers['x-api-key']
    if (!keyMatches(apiKey, typeof given === 'string' ? given : undefined)) {
      // Connection: close ends the socket after the answer (and the bounded read of the rest,
      // server/early-answer.ts): otherwise Node goes on reading the unauthenticated body (a
      // gigabyte announced, a byte now and then) for as long as it comes.
      return reply.code(401).header('connection', 'close').send({ detail: `Invalid or missing API key. ${keyHelp('X-API-Key', 'IMPORT_API_KEY', 'import')}`, code: 'UNAUTHORIZED' })
    }
  })

  // The uploads folder must be ours alone; uploads a crashed process left behind are
  // removed once, when the service starts.
  app.addHook('onReady', async () => {
    await ensurePrivateDir(shared.tmpDir)
    const removed = await sweepStaleUploads(shared.tmpDir)
    if (removed > 0) app.log.info({ removed }, 'removed uploads left by an earlier process')
  })

  // The spec's three fields, then `runtime` (beyond the spec): the Node line, whether the
  // suite runs on it, and the inflate engine the reader takes there (server/runtime.ts).
  await registerOpenApi(app, {
    title: 'razao spreadsheet-import service',
    version: IMPORT_API_VERSION,
    description: 'Analyses accounting ledgers (XLSX or legacy XLS), lists their unbalanced groups and imports them into PostgreSQL. Failures answer { "detail": "...", "code": "...", "requestId": "..." }.',
    securitySchemes: { apiKey: apiKeyScheme('X-API-Key', keyWhereabouts('X-API-Key', 'import-api-key', 'IMPORT_API_KEY')) }
  })

  app.get('/health', { schema: healthSchema }, async () => ({ success: true, service: IMPORT_SERVICE_NAME, environment: shared.environment, runtime: await runtimeReport() }))

  const analyze = async (request: FastifyRequest, reply: FastifyReply, operation: 'analyze' | 'diagnose') => {
    const upload = await receiveUpload(request, shared.tmpDir)
    const cancel = abortOnDisconnect(reply)
    try {
      const batchSize = parseBatchSize(upload.fields.batch_size)
      if (upload.fields.modo_importacao !== undefined) parseImportMode(upload.fields.modo_importacao)
      // Analyze with a company: the file's movements are checked against that company's active ones.
      const codigoDominio = operation === 'analyze' ? parseCodigoDominio(upload.fields.codigo_dominio, false) : undefined
      if (upload.path === undefined) throw new EngineError('REQUEST_INCOMPLETE', 'The request has no file: send the spreadsheet in the multipart field "file".')
      const database = options.database
      if (codigoDominio !== undefined && database === undefined) throw new EngineError('DATABASE_UNAVAILABLE', 'This service runs without a database, so it cannot compare the file with a company\'s imports.')
      const company = codigoDominio === undefined || database === undefined ? undefined : await findCompany(database.pool, codigoDominio)
      if (codigoDominio !== undefined && company === undefined) throw companyNotFound(codigoDominio)
      const input: AnalyzeSpreadsheetInput = { path: upload.path, operation, batchSize, maxInflatedBytes: config.maxInflatedBytes, withIds: company !== undefined, sheet: parseSheet(upload.fields.sheet) }
      const result = await runTask<AnalyzeSpreadsheetInput, AnalyzeSpreadsheetOutput>(pool, 'analyze-spreadsheet', input, cancel.signal)
      const file = { fileName: upload.fileName, sha256: upload.sha256 }
      if (result.operation === 'diagnose') return toDiagnoseResponse(file, result.diagnosis)
      const response = toAnalyzeResponse(file, result.analysis)
      if (company === undefined || database === undefined || codigoDominio === undefined) return response
      const overlap = await overlapOfIds(database.pool, company.id, Array.from(result.ids ?? []))
      return { ...response, sobreposicao: toAnalyzeOverlap(codigoDominio, overlap) }
    } finally {
      cancel.dispose()
      await upload.remove()
    }
  }
  app.post('/v1/analyze', { schema: analyzeSchema }, (request, reply) => analyze(request, reply, 'analyze'))
  app.post('/v1/diagnose-unbalanced', { schema: diagnoseSchema }, (request, reply) => analyze(request, reply, 'diagnose'))

  app.post('/v1/process', { schema: processSchema }, async (request, reply) => {
    const upload = await receiveUpload(request, shared.tmpDir)
    const cancel = abortOnDisconnect(reply)
    try {
      const batchSize = parseBatchSize(upload.fields.batch_size)
      const mode = parseImportMode(upload.fields.modo_importacao)
      const codigoDominio = parseCodigoDominio(upload.fields.codigo_dominio, true)!
      if (upload.fileName.includes('\u0000')) throw new EngineError('REQUEST_INVALID', 'The file name holds a NUL character; rename the file and send it again.')
      if (upload.path === undefined) throw new EngineError('REQUEST_INCOMPLETE', 'The request has no file: send the spreadsheet in the multipart field "file".')
      const database = options.database
      if (database === undefined) throw new EngineError('DATABASE_UNAVAILABLE', 'This service runs without a database, so it cannot import.')
      const input: ProcessSpreadsheetInput = {
        path: upload.path,
        fileName: upload.fileName,
        sha256: upload.sha256,
        codigoDominio,
        mode,
        batchSize,
        maxInflatedBytes: config.maxInflatedBytes,
        databaseUrl: database.url,
        sheet: parseSheet(upload.fields.sheet)
      }
      try {
        const result = await runTask<ProcessSpreadsheetInput, ProcessSpreadsheetOutput>(pool, 'process-spreadsheet', input, cancel.signal)
        return toProcessResponse({ fileName: upload.fileName, sha256: upload.sha256 }, codigoDominio, mode, result)
      } catch (err) {
        // A cancelled or crashed worker drops its connection, which rolls the load back;
        // the importation row it left PROCESSANDO is marked FALHOU once the session is gone.
        // Any failure may be one (an XLS isolate past its deadline answers SHEET_CORRUPT),
        // and recovery touches only imports whose session has ended, so it always runs.
        settleInterrupted(database, request.log)
        throw err
      }
    } finally {
      cancel.dispose()
      await upload.remove()
    }
  })

  // The imports screen (imports-page.ts): public static files; the data behind it needs the key.
  const page = (body: string, type: string) => async (_request: FastifyRequest, reply: FastifyReply) =>
    reply.type(type).header('content-security-policy', IMPORTS_PAGE_CSP).header('x-frame-options', 'DENY')
      .header('x-content-type-options', 'nosniff').header('referrer-policy', 'no-referrer').header('cache-control', 'no-cache').send(body)
  app.get('/imports', { schema: HIDDEN }, page(IMPORTS_HTML, 'text/html; charset=utf-8'))
  app.get('/imports-ui/app.js', { schema: HIDDEN }, page(IMPORTS_JS, 'text/javascript; charset=utf-8'))
  app.get('/imports-ui/app.css', { schema: HIDDEN }, page(IMPORTS_CSS, 'text/css; charset=utf-8'))
  // Browsers ask for it on their own; no icon, and no 404 in the console.
  app.get('/favicon.ico', { schema: HIDDEN }, async (_request, reply) => reply.code(204).send())

  registerImportJobRoutes(app, { shared, config, database: options.database, jobs: () => jobs, events: options.events })
  return app
}

/**
 * Recovery belongs to every live instance, not only to start-up: an instance killed
 * mid-load cannot mark its own importation, so the others do, within one interval of
 * its session ending (docs/scaling.md states the bound).
 */
function watchInterruptedImports (app: FastifyInstance, database: Pick<Database, 'pool'>, intervalMs: number): void {
  const timer = setInterval(() => {
    recoverInterruptedImports(database.pool).then(
      (n) => { if (n > 0) app.log.info({ recovered: n }, 'interrupted import marked FALHOU') },
      () => undefined)
  }, intervalMs)
  timer.unref()
  app.addHook('onClose', async () => { clearInterval(timer) })
}

/** After a failed load here: recovery a few times over the next seconds, sooner than the periodic one, until the dead session has ended. */
function settleInterrupted (database: Pick<Database, 'pool'>, log: FastifyBaseLogger): void {
  for (const delay of [250, 2000, 10_000]) {
    setTimeout(() => {
      recoverInterruptedImports(database.pool).then(
        (n) => { if (n > 0) log.info({ recovered: n }, 'interrupted import marked FALHOU') },
        () => undefined)
    }, delay).unref()
  }
}

/** Aborts the pool task when the client goes away before the reply is sent. */
function abortOnDisconnect (reply: FastifyReply): { signal: AbortSignal, dispose: () => void } {
  const controller = new AbortController()
  const onClose = (): void => { if (!reply.raw.writableFinished) controller.abort() }
  reply.raw.on('close', onClose)
  return { signal: controller.signal, dispose: () => reply.raw.off('close', onClose) }
}
