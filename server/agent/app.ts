/**
 * The local automation agent's Fastify app (spec 3 part C). Routes are thin: the
 * queue, the runner and the file index live in core/agent. Unknown routes are answered
 * 404 first, without a key, as the spec's rule 3 reads; a known /api/v1 route without
 * the right X-AGENT-API-KEY gets 401 before its body is read.
 */
import type { Socket } from 'node:net'
import Fastify from 'fastify'
import type { FastifyError, FastifyInstance, FastifyReply } from 'fastify'
import { Agent, QueueFullError } from '../../core/agent/index.js'
import type { AgentOptions } from '../../core/agent/index.js'
import type { SharedConfig } from '../config.js'
import { loggerOptions, requestIdOf } from '../logging.js'
import { keyHelp, keyMatches } from '../secrets.js'
import type { AgentConfig } from './config.js'
import { clientErrorHandler, codeForStatus, stampErrorBodies } from '../http-errors.js'
import { contentDisposition, errorCodeOf, HttpRefusal, MESSAGES, parseLimit, parseRunBody, QUEUE_FULL_RETRY_AFTER_S, parseLogStream, serializeJobList, toPackageDetail, toPackageList } from './wire.js'
import {
  automationSchema, automationsSchema, cancelSchema, fileSchema, healthSchema, jobByRequestSchema, jobFilesSchema, jobLogSchema, jobSchema, jobsSchema, reloadSchema, runSchema
} from './schemas.js'
import { apiKeyScheme, keyWhereabouts, registerOpenApi } from '../openapi.js'

export interface AgentAppOptions {
  shared: SharedConfig
  config: AgentConfig
  /** Undefined: every /api/v1 route refuses every caller (AGENT_API_KEY set but empty). */
  apiKey: string | undefined
  /** The environment packages pick their allowed and declared variables from (default: this process's). */
  env?: NodeJS.ProcessEnv
  logger?: boolean
  logStream?: NodeJS.WritableStream
  /** Internals tests and the benchmark tune (job cap, kill grace, log cap, sweep interval, clock). */
  tuning?: Pick<AgentOptions, 'maxJobsInMemory' | 'maxJobBytesInMemory' | 'killGraceMs' | 'maxLogBytes' | 'sweepIntervalMs' | 'straySweepDelayMs' | 'now'>
}

export type AgentApp = FastifyInstance & { agent: Agent }

export const AGENT_SERVICE_NAME = 'razao-agent'
/** Spec 3 §9 C. */
export const AGENT_API_VERSION = '1.1.0'

/** How long answers in flight may take to finish once the agent is closing. */
const CLOSE_GRACE_MS = 1000

const FRAMEWORK_ERRORS: Record<string, { status: number, message: string }> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: { status: 415, message: 'Send the request body as Content-Type: application/json.' },
  FST_ERR_CTP_BODY_TOO_LARGE: { status: 413, message: 'The request body is larger than this agent accepts (JSON_LIMIT; for a run, also twice AGENT_MAX_INPUT_BYTES).' },
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: { status: 400, message: 'The Content-Length header does not match the body.' }
}

export async function buildAgentApp (options: AgentAppOptions): Promise<AgentApp> {
  const { shared, config, apiKey } = options
  const app = Fastify({
    logger: options.logger === false ? false : { ...loggerOptions(shared.logLevel), ...(options.logStream === undefined ? {} : { stream: options.logStream }) },
    requestIdHeader: false,
    genReqId: requestIdOf,
    bodyLimit: config.jsonLimitBytes,
    clientErrorHandler: clientErrorHandler((status, message, requestId) => ({ error: message, code: codeForStatus(status), requestId })),
    frameworkErrors: (error, request, reply) => {
      request.log.info({ code: error.code }, 'request refused')
      void (reply as FastifyReply).code(400).header('x-request-id', request.id).send({ error: MESSAGES.badUrl, code: 'INVALID_URL', requestId: request.id })
    }
  })
  stampErrorBodies(app, 'error', errorCodeOf)
  // The spec's sentence first, then the header and where the key is.
  const unauthorized = apiKey === undefined
    ? `${MESSAGES.unauthorized} AGENT_API_KEY is set but empty where the agent runs, so every caller is refused: set it to a key (16 characters or more), or unset it for a generated one (.data/agent-api-key), and send that key in the X-AGENT-API-KEY header.`
    : `${MESSAGES.unauthorized} ${keyHelp('X-AGENT-API-KEY', 'AGENT_API_KEY', 'agent')}`
  if (apiKey === undefined) {
    app.log.warn({ code: 'AGENT_API_KEY_EMPTY' }, 'AGENT_API_KEY is set but empty: every /api/v1 route refuses every caller until a key is configured')
  }
  const agent = await Agent.start({
    automationsRoot: config.automationsRoot,
    runtimeDir: config.runtimeDir,
    logDir: config.logDir,
    fileStorageRoot: config.fileStorageRoot,
    allowedRoots: config.allowedRoots,
    retentionDays: config.retentionDays,
    maxConcurrentJobs: config.maxConcurrentJobs,
    maxQueuedJobs: config.maxQueuedJobs,
    defaultTimeoutMs: config.defaultTimeoutMs,
    env: options.env ?? process.env,
    log: app.log,
    ...options.tuning
  })
  app.decorate('agent', agent)
  // Node closes idle keep-alive sockets on close, but not every socket a client holds
  // open (fetch leaves some that Node does not count as idle), and one of those held the
  // shutdown for the 60 s keep-alive timeout. Answers in flight get a moment; then every
  // socket still open is destroyed.
  const sockets = new Set<Socket>()
  app.server.on('connection', (socket: Socket) => {
    sockets.add(socket)
    socket.once('close', () => sockets.delete(socket))
  })
  // preClose: Fastify's own onClose waits for the server to close, before ours would run.
  app.addHook('preClose', async () => {
    const cut = setTimeout(() => { for (const socket of sockets) socket.destroy() }, CLOSE_GRACE_MS)
    cut.unref()
    app.server.once('close', () => clearTimeout(cut))
  })
  app.addHook('onClose', async () => { await agent.close() })

  // Our JSON parser: Node's JSON.parse messages quote the input, which may hold passwords.
  app.removeAllContentTypeParsers()
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    if ((body as string).trim() === '') {
      done(null, undefined)
      return
    }
    try {
      done(null, JSON.parse(body as string))
    } catch {
      done(new HttpRefusal(400, 'The body is not valid JSON.'), undefined)
    }
  })

  app.addHook('onRequest', async (request, reply) => {
    void reply.header('x-request-id', request.id)
    // No route: answered here, before a body nobody wants is read.
    if (request.routeOptions.url === undefined) {
      return reply.code(404).header('connection', 'close').send({ error: MESSAGES.notFound })
    }
    // The matched route, not the raw URL (the router decodes percent-escapes).
    if (!request.routeOptions.url.startsWith('/api/v1/')) return
    const given = request.headers['x-agent-api-key']
    if (apiKey === undefined || !keyMatches(apiKey, typeof given === 'string' ? given : undefined)) {
      request.log.info({ code: 'UNAUTHORIZED' }, 'request refused')
      // Connection: close, so an unauthenticated body is not read.
      return reply.code(401).header('connection', 'close').send({ error: unauthorized, code: 'UNAUTHORIZED' })
    }
  })

  app.setNotFoundHandler((_request, reply) => {
    void reply.code(404).send({ error: MESSAGES.notFound })
  })

  app.setErrorHandler((error: FastifyError, request, reply) => {
    if (error instanceof HttpRefusal) {
      request.log.info({ status: error.status }, 'request refused')
      return reply.code(error.status).headers(error.headers).send({ error: error.message })
    }
    const framework = FRAMEWORK_ERRORS[typeof error.code === 'string' ? error.code : '']
    if (framework !== undefined) {
      request.log.info({ code: error.code, status: framework.status }, 'request refused')
      return reply.code(framework.status).send({ error: framework.message })
    }
    if (typeof error.statusCode === 'number' && error.statusCode >= 400 && error.statusCode < 500) {
      return reply.code(error.statusCode).send({ error: error.message })
    }
    request.log.error({ code: typeof error.code === 'string' ? error.code : 'INTERNAL', errorName: error.name }, 'request failed')
    return reply.code(500).send({ error: `Internal error; quote request id ${request.id} when reporting it.` })
  })

  await registerOpenApi(app, {
    title: 'razao automation agent',
    version: AGENT_API_VERSION,
    description: 'Runs the automation packages of this machine (each a folder under AUTOMATIONS_ROOT) as jobs and keeps the files they produce for download. Failures answer { "error": "...", "code": "...", "requestId": "..." }.',
    securitySchemes: { agentKey: apiKeyScheme('X-AGENT-API-KEY', keyWhereabouts('X-AGENT-API-KEY', 'agent-api-key', 'AGENT_API_KEY')) }
  })

  app.get('/health', { schema: healthSchema }, async () => {
    const now = Date.now()
    return {
      status: 'UP',
      service: AGENT_SERVICE_NAME,
      version: AGENT_API_VERSION,
      executor: config.executorId,
      environment: shared.environment,
      automationsLoaded: agent.registry.size,
      startedAt: agent.startedAt.toISOString(),
      uptimeSeconds: Math.floor((now - agent.startedAt.getTime()) / 1000),
      timestamp: new Date(now).toISOString()
    }
  })

  app.get('/api/v1/automations', { schema: automationsSchema }, async () => toPackageList(agent.registry.list()))

  app.post('/api/v1/automations/reload', { schema: reloadSchema }, async () => toPackageList(await agent.registry.reload()))

  app.get<{ Params: { id: string } }>('/api/v1/automations/:id', { schema: automationSchema }, async (request) => {
    const pkg = agent.registry.get(request.params.id)
    if (pkg === undefined) throw new HttpRefusal(404, MESSAGES.automationNotFound)
    return toPackageDetail(pkg)
  })

  // A body over twice the input cap cannot hold an acceptable input (unless padded with
  // whitespace): refused from its Content-Length, before it is read and parsed.
  const runBodyLimit = Math.min(config.jsonLimitBytes, 2 * config.maxInputBytes + 1024)
  app.post<{ Params: { id: string } }>('/api/v1/automations/:id/run', { bodyLimit: runBodyLimit, schema: runSchema }, async (request, reply) => {
    const pkg = agent.registry.get(request.params.id)
    if (pkg === undefined) throw new HttpRefusal(404, MESSAGES.automationNotFound)
    // The package exists (GET shows it, enabled false): 409, not 404, says it cannot run now.
    if (!pkg.enabled) throw new HttpRefusal(409, MESSAGES.automationDisabled)
    const body = parseRunBody(request.body, config.maxInputBytes)
    // The shape the package declares (inputSchema): a run it would refuse is not queued.
    const refused = pkg.checkInput?.(body.input)
    if (refused !== undefined) throw new HttpRefusal(400, refused)
    let job
    try {
      job = agent.submit(pkg, body.requestId, body.input, body.inputBytes)
    } catch (err) {
      if (err instanceof QueueFullError) throw new HttpRefusal(429, err.message, { 'retry-after': String(QUEUE_FULL_RETRY_AFTER_S) })
      throw err
    }
    request.log.info({ jobId: job.id, automationId: pkg.id }, 'job queued')
    return reply.code(202).send(job)
  })

  app.get<{ Querystring: { limit?: string } }>('/api/v1/jobs', { schema: jobsSchema }, async (request, reply) => {
    const items = agent.recentJobs(parseLimit(request.query.limit))
    return reply.type('application/json; charset=utf-8').send(serializeJobList(items))
  })

  app.get<{ Params: { requestId: string } }>('/api/v1/jobs/by-request/:requestId', { schema: jobByRequestSchema }, async (request) => {
    const job = agent.jobByRequest(request.params.requestId)
    if (job === undefined) throw new HttpRefusal(404, MESSAGES.jobNotFound)
    return job
  })

  app.get<{ Params: { jobId: string } }>('/api/v1/jobs/:jobId', { schema: jobSchema }, async (request) => {
    const job = agent.job(request.params.jobId)
    if (job === undefined) throw new HttpRefusal(404, MESSAGES.jobNotFound)
    return job
  })

  app.delete<{ Params: { jobId: string } }>('/api/v1/jobs/:jobId', { schema: cancelSchema }, async (request) => {
    const outcome = await agent.cancel(request.params.jobId)
    if (outcome.kind === 'missing') throw new HttpRefusal(404, MESSAGES.jobNotFound)
    if (outcome.kind === 'finished') throw new HttpRefusal(409, `The job already ended (${outcome.job.status}); there is nothing to cancel.`)
    request.log.info({ jobId: outcome.job.id, automationId: outcome.job.automationId }, 'job cancelled')
    return outcome.job
  })

  app.get<{ Params: { jobId: string }, Querystring: { stream?: string } }>('/api/v1/jobs/:jobId/log', { schema: jobLogSchema }, async (request, reply) => {
    const stream = parseLogStream(request.query.stream)
    const log = await agent.jobLog(request.params.jobId, stream)
    if (log === undefined) throw new HttpRefusal(404, MESSAGES.jobNotFound)
    return reply.type('text/plain; charset=utf-8').header('cache-control', 'no-store').send(log)
  })

  app.get<{ Params: { jobId: string } }>('/api/v1/jobs/:jobId/files', { schema: jobFilesSchema }, async (request) => {
    const { jobId } = request.params
    if (!agent.knowsJob(jobId)) throw new HttpRefusal(404, MESSAGES.jobNotFound)
    const items = agent.filesOf(jobId)
    return { jobId, count: items.length, items }
  })

  app.get<{ Params: { jobId: string, fileId: string } }>('/api/v1/jobs/:jobId/files/:fileId', { schema: fileSchema }, async (request, reply) => {
    const found = await agent.files.lookup(request.params.jobId, request.params.fileId)
    if (found.kind === 'missing') throw new HttpRefusal(404, MESSAGES.fileNotFound)
    if (found.kind === 'gone') {
      request.log.info({ jobId: found.record.jobId, fileId: found.record.fileId, reason: found.reason }, 'file no longer available')
      throw new HttpRefusal(410, MESSAGES.fileGone)
    }
    const { record, handle, sizeBytes } = found
    let body
    try {
      // The checked file itself, through its descriptor (a name could be swapped meanwhile),
      // up to the size checked: Content-Length holds even if the file grows.
      body = sizeBytes === 0 ? Buffer.alloc(0) : handle.createReadStream({ start: 0, end: sizeBytes - 1 })
      if (sizeBytes === 0) await handle.close()
      void reply
        .type(record.mimeType)
        .header('content-length', sizeBytes)
        .header('content-disposition', contentDisposition(record.fileName))
    } catch (err) {
      await handle.close().catch(() => undefined)
      throw err
    }
    // downloadedAt only once the whole file was handed to the connection: not for a HEAD,
    // nor for a download cut short (the client gone, a read error).
    const where = { jobId: record.jobId, fileId: record.fileId, sizeBytes }
    reply.raw.once('close', () => {
      if (request.method !== 'GET') return
      if (!reply.raw.writableFinished) {
        request.log.info(where, 'file download interrupted')
        return
      }
      void agent.files.markDownloaded(record.fileId)
      request.log.info(where, 'file downloaded')
    })
    return reply.send(body)
  })

  // Decorated above; Fastify's types do not follow decorate().
  return app as unknown as AgentApp
}
