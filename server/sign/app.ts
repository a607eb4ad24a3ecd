/**
 * The signature service's Fastify app (spec 2). The HTTP thread only checks the key,
 * parses and validates the JSON, decodes the Base64 and encodes the answer; opening
 * the certificate and signing run in the shared worker pool. Request bodies are never
 * logged (Fastify logs method, URL and status only), so the Base64 never reaches a log.
 */
import { readFileSync } from 'node:fs'
import multipart from '@fastify/multipart'
import Fastify from 'fastify'
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { isoWithOffset } from '../../core/sign/index.js'
import type { SharedConfig } from '../config.js'
import { loggerOptions, requestIdOf } from '../logging.js'
import { drainUnreadBodies } from '../early-answer.js'
import { BODY_STALL_MS, Gate } from '../gate.js'
import { SUPPORTED_NODE_LINES, unsupportedLineWarning } from '../runtime.js'
import { keyHelp, keyMatches } from '../secrets.js'
import { runTask } from '../../workers/pool.js'
import type { WorkerPool } from '../../workers/pool.js'
import { transferPdf } from '../../workers/sign-pdf.js'
import type { SignPdfInput, SignPdfOutput } from '../../workers/sign-pdf.js'
import type { SignConfig } from './config.js'
import { ensureDevCertificate } from './dev-certificate.js'
import { loadVerifyTrustStore } from './trust.js'
import { verifyRoutes } from './verify-route.js'
import { ENGINE_ERRORS, HttpRefusal, SIGN_ERRORS, errorEnvelope } from './errors.js'
import { clientErrorHandler } from '../http-errors.js'
import type { PublicCode } from './errors.js'
import { CertificateWatch } from './health.js'
import { cleanFileName, parseSignRequest, parseSignUpload, signatureLevel, signedFileName } from './wire.js'
import { multipartLimits, readSignUpload, wantsPdf } from './multipart.js'
import { ConfigError } from '../config.js'
import { actuatorHealthSchema, actuatorInfoSchema, healthSchema, signSchema } from './schemas.js'
import { apiKeyScheme, keyWhereabouts, registerOpenApi } from '../openapi.js'

export interface SignAppOptions {
  shared: SharedConfig
  config: SignConfig
  apiKey: string
  pool: WorkerPool
  /** Pino logger on (the default) or off. */
  logger?: boolean
  /** Where log lines go (default stdout); tests pass a stream to read them. */
  logStream?: NodeJS.WritableStream
}

export const SIGN_SERVICE_NAME = 'razao-sign'
/** The API contract version the health response reports (spec 2 §9). */
export const SIGN_API_VERSION = '1.0.0'


/** Framework errors answered with the spec's codes. */
const FRAMEWORK_ERRORS: Record<string, { status: number, code: PublicCode, message: string }> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: { status: 415, code: 'UNSUPPORTED_MEDIA_TYPE', message: 'Send the request as Content-Type: application/json (the PDF in Base64) or multipart/form-data (the PDF as the file part "file").' },
  FST_ERR_CTP_BODY_TOO_LARGE: { status: 413, code: 'FILE_TOO_LARGE', message: 'The request body is larger than this service accepts.' },
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: { status: 400, code: 'INVALID_REQUEST', message: 'The Content-Length header does not match the body.' },
  FST_ERR_CTP_EMPTY_JSON_BODY: { status: 400, code: 'INVALID_JSON', message: 'The body is empty; send a JSON object.' },
  FST_ERR_CTP_INVALID_JSON_BODY: { status: 400, code: 'INVALID_JSON', message: 'The body is not valid JSON.' }
}

function packageVersion (): string {
  for (const rel of ['../../package.json', '../../../package.json']) {
    try {
      const pkg = JSON.parse(readFileSync(new URL(rel, import.meta.url), 'utf8')) as { name?: string, version?: string }
      if (pkg.name === 'razao' && typeof pkg.version === 'string') return pkg.version
    } catch { /* try the next layout (sources or dist/) */ }
  }
  return 'unknown'
}

export async function buildSignApp (options: SignAppOptions): Promise<FastifyInstance> {
  const { shared, config, apiKey, pool } = options
  // Read before anything starts: a trust store that cannot be read stops the start, naming SIGN_TRUST_DIR.
  const verifyTrust = loadVerifyTrustStore(config.trustDir)
  let certificate = { path: config.certPath ?? '', password: config.certPassword, developmentDir: undefined as string | undefined }
  if (config.certPath === undefined) {
    if (shared.environment === 'production') throw new Error('SIGN_CERT_PATH must be set when NODE_ENV=production')
    const dev = await ensureDevCertificate(shared.dataDir)
    certificate = { path: dev.path, password: dev.password, developmentDir: dev.dir }
  }
  const source = { path: certificate.path, password: certificate.password, chainPath: config.certChainPath, icpRootsPath: config.icpRootsPath }
  const version = packageVersion()
  const standard = config.tsaUrl === undefined ? 'PAdES-B' : 'PAdES-T'
  // Base64 is 4/3 of the bytes; a data URI prefix and JSON punctuation fit in the margin.
  const bodyLimit = Math.ceil(config.maxPdfBytes / 3) * 4 + 64 * 1024

  const app = Fastify({
    logger: options.logger === false ? false : { ...loggerOptions(shared.logLevel), ...(options.logStream === undefined ? {} : { stream: options.logStream }) },
    requestIdHeader: false,
    genReqId: requestIdOf,
    // A client that stops sending mid-body (a dead link) must not hold a place of the
    // gate below for ever: the whole request has to arrive within this.
    requestTimeout: config.requestTimeoutMs,
    bodyLimit,
    // Refused by Node's HTTP parser: the path only when the request line was readable.
    clientErrorHandler: clientErrorHandler((_status, message, id, path) => errorEnvelope(id, path ?? '/', 'INVALID_REQUEST', message, null, nowIso(config.timeZone))),
    // A URL the router cannot decode (a bad percent-escape) fails before any hook runs:
    // answer it in our envelope, with the request id, not in Fastify's own shape.
    frameworkErrors: (error, request, reply) => {
      void reply.header('x-request-id', request.id)
      request.log.info({ code: error.code }, 'request refused')
      void send(request, reply, 400, 'INVALID_REQUEST', 'The request URL is malformed.')
    }
  })

  // Health follows the files the signatures read (each pool thread opens them again when they
  // change), so a certificate replaced under the running service is reported as it is.
  const certificates = new CertificateWatch({
    pool,
    source,
    timeZone: config.timeZone,
    onChange: (state) => app.log.warn({ status: state.report(Date.now()).status, ...state.summary() }, 'signing certificate files changed and were read again'),
    onError: (err) => app.log.error({ code: 'INTERNAL', errorName: err instanceof Error ? err.name : typeof err }, 'signing certificate could not be opened')
  })
  const stateAtStart = await certificates.current()
  // An expired certificate can never sign again: starting with it would only answer
  // INVALID_CERTIFICATE to every request, so the start is refused, saying why (issue 34).
  // One that expires while the service runs turns health DOWN instead (a restart would not help).
  const expiredOn = stateAtStart.expiredOn(Date.now())
  if (expiredOn !== undefined) {
    throw new ConfigError('SIGN_CERT_PATH', `SIGN_CERT_PATH: the signing certificate ${certificate.developmentDir === undefined ? `in ${certificate.path} ` : ''}expired on ${expiredOn}; the signature service does not start with an expired certificate. Install the renewed A1 certificate (SIGN_CERT_PATH, SIGN_CERT_PASSWORD) and start again.`)
  }
  const atStart = stateAtStart.report(Date.now())
  if (atStart.status === 'DOWN') app.log.error({ code: 'SIGN_CERT_INVALID' }, `cannot sign: ${atStart.warnings.join(' ')}`)
  else if (atStart.warnings.length > 0) app.log.warn({ daysLeft: stateAtStart.daysLeft(Date.now()) }, atStart.warnings.join(' '))

  const send = (request: FastifyRequest, reply: FastifyReply, status: number, code: PublicCode, message: string, field: string | null = null): FastifyReply =>
    reply.code(status).send(errorEnvelope(request.id, request.url.split('?')[0]!, code, message, field, nowIso(config.timeZone)))

  // Our own JSON parser: Node's JSON.parse messages quote the input, which would put
  // document Base64 into logs and answers.
  app.removeAllContentTypeParsers()
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    try {
      done(null, JSON.parse(body as string))
    } catch {
      done(new HttpRefusal(400, 'INVALID_JSON', 'The body is not valid JSON.'), undefined)
    }
  })
  // The same request as a form: the PDF as a file part, the options as fields (issue 34).
  await app.register(multipart, { limits: multipartLimits(config.maxPdfBytes), throwFileSizeLimit: true })

  app.addHook('onRequest', async (request, reply) => {
    void reply.header('x-request-id', request.id)
    // The route that matched, not the raw URL: the router decodes percent-escapes, so
    // "/%61pi/v1/..." reaches an /api route while its raw text does not start with "/api/".
    // Without a route (a 404), the raw path decides, as nothing else will run.
    const path = request.routeOptions.url ?? request.url.split('?')[0]!
    const protectedPath = (path.startsWith('/api/') && path !== '/api/v1/health') || (path.startsWith('/actuator') && config.actuatorAuth === 'api-key')
    const given = request.headers['x-api-key']
    if (protectedPath && !keyMatches(apiKey, typeof given === 'string' ? given : undefined)) {
      request.log.info({ code: 'UNAUTHORIZED' }, 'request refused')
      // Connection: close ends the socket after the answer, rather than read an unauthenticated body.
      void reply.header('connection', 'close')
      return send(request, reply, config.unauthorizedStatus, 'UNAUTHORIZED', `API key missing or invalid. ${keyHelp('X-API-Key', 'SIGN_API_KEY', 'sign')}`)
    }
    // No route: answered here, before a body nobody wants is read (Fastify would read and
    // parse it before the not-found handler runs).
    if (request.routeOptions.url === undefined) {
      void reply.header('connection', 'close')
      return send(request, reply, 404, 'RESOURCE_NOT_FOUND', `No resource ${request.method} ${request.url.split('?')[0]}.`)
    }
  })

  // Sign requests beyond the gate wait here, after the key check and before their body is
  // read: memory stays bounded by the gate's size times the largest body. A body that stops
  // arriving yields its place while others wait, and is cut (408) after SIGN_BODY_TIMEOUT_MS.
  const gate = new Gate(config.maxInFlight > 0 ? config.maxInFlight : Math.max(2, 2 * shared.poolSize))
  const bodyWatch = {
    stallMs: BODY_STALL_MS,
    idleTimeoutMs: config.bodyTimeoutMs,
    timeoutError: () => new HttpRefusal(408, 'INVALID_REQUEST', `The request body sent nothing for ${config.bodyTimeoutMs} ms (SIGN_BODY_TIMEOUT_MS) and was cut; send the request again.`)
  }
  app.addHook('onRequest', async (request, reply) => {
    if (request.routeOptions.url !== '/api/v1/sign' && request.routeOptions.url !== '/api/v1/verify') return
    await gate.holdFor(request.raw, reply.raw, bodyWatch)
  })
  drainUnreadBodies(app, bodyLimit, shared.drainMaxMs)

  app.setNotFoundHandler((request, reply) => {
    void send(request, reply, 404, 'RESOURCE_NOT_FOUND', `No resource ${request.method} ${request.url.split('?')[0]}.`)
  })

  app.setErrorHandler((error: FastifyError, request, reply) => {
    if (error instanceof HttpRefusal) {
      request.log.info({ code: error.publicCode, status: error.status }, 'request refused')
      return send(request, reply, error.status, error.publicCode, error.message, error.field)
    }
    const code = typeof error.code === 'string' ? error.code : ''
    const framework = FRAMEWORK_ERRORS[code]
    if (framework !== undefined) {
      request.log.info({ code: framework.code, status: framework.status }, 'request refused')
      return send(request, reply, framework.status, framework.code, framework.message)
    }
    const engine = (ENGINE_ERRORS as Record<string, { code: PublicCode, status: number } | undefined>)[code]
    if (engine !== undefined && engine.status < 500) {
      request.log.info({ code }, 'request ended early')
      return send(request, reply, engine.status, engine.code, error.message)
    }
    if (engine === undefined && typeof error.statusCode === 'number' && error.statusCode >= 400 && error.statusCode < 500) {
      return send(request, reply, error.statusCode, 'INVALID_REQUEST', error.message)
    }
    // Name and code only: no stack, and no message, which for an unexpected failure inside
    // the PDF library may quote bytes of the document.
    request.log.error({ code: code === '' ? 'INTERNAL' : code, errorName: error.name }, 'request failed')
    return send(request, reply, 500, 'INTERNAL_ERROR', `Internal error while processing; quote requestId ${request.id} when reporting it.`)
  })

  const devWarning = certificate.developmentDir === undefined
    ? []
    : [`Uses the DEVELOPMENT certificate in ${certificate.developmentDir} (test chain, not ICP-Brasil, trusted nowhere). Set SIGN_CERT_PATH and SIGN_CERT_PASSWORD for real signatures.`]
  const untested = unsupportedLineWarning()
  const runtimeWarning = untested === undefined ? [] : [untested]

  await registerOpenApi(app, {
    title: 'razao PDF-signature service',
    version: SIGN_API_VERSION,
    description: 'Signs PDFs with the firm\'s certificate (PAdES-B, or PAdES-T when a timestamp authority is configured). Every answer carries requestId, also in the X-Request-Id header; failures use one envelope (success false, errors[] with code, message and field).',
    securitySchemes: { apiKey: apiKeyScheme('X-API-Key', keyWhereabouts('X-API-Key', 'sign-api-key', 'SIGN_API_KEY')) }
  })

  app.post('/api/v1/sign', { schema: signSchema }, async (request, reply) => {
    const parsed = request.isMultipart()
      ? parseSignUpload(await readSignUpload(request, config.maxPdfBytes))
      : parseSignRequest(request.body, config.maxPdfBytes)
    const input: SignPdfInput = {
      pdf: parsed.pdf,
      certificate: source,
      visualMode: config.visualMode,
      tsa: config.tsaUrl === undefined ? undefined : { url: config.tsaUrl, timeoutMs: config.tsaTimeoutMs },
      level: signatureLevel(parsed.level, config),
      revocation: { timeoutMs: config.revocationTimeoutMs, maxBytes: config.revocationMaxBytes },
      policy: config.policy === undefined ? undefined : { oid: config.policy.oid, hashHex: config.policy.hashHex, uri: config.policy.uri },
      validatorUrl: config.validatorUrl,
      timeZone: config.timeZone
    }
    // A hard limit: a PDF that sends the library into a very long loop must not hold a
    // pool thread for ever. Piscina stops the thread of an aborted task that is running.
    const task = taskSignal(reply, config.taskTimeoutMs)
    let out: SignPdfOutput
    try {
      // The decoded PDF moves to the worker instead of being copied; it is not used here afterwards.
      out = await runTask<SignPdfInput, SignPdfOutput>(pool, 'sign-pdf', transferPdf(input), task.signal)
    } catch (err) {
      if (!task.timedOut()) throw err
      request.log.error({ code: 'TASK_TIMEOUT', limitMs: config.taskTimeoutMs }, 'signature stopped at the time limit')
      return send(request, reply, 500, 'INTERNAL_ERROR', `The signature did not finish within ${config.taskTimeoutMs} ms and was stopped; the PDF may be too large or too complex to sign.`)
    } finally {
      task.dispose()
    }
    if (out.outcome === 'refused') {
      const mapped = SIGN_ERRORS[out.code]
      const log = mapped.status >= 500 ? request.log.error.bind(request.log) : request.log.info.bind(request.log)
      log({ code: out.code, status: mapped.status }, 'signature refused')
      return send(request, reply, mapped.status, mapped.code, out.message, out.field)
    }
    const pdf = Buffer.from(out.pdf.buffer, out.pdf.byteOffset, out.pdf.byteLength)
    request.log.info({ documentIdentifier: out.documentIdentifier, sizeBytes: pdf.length, standard: out.signatureStandard }, 'pdf signed')
    const document: Record<string, unknown> = {}
    if (parsed.originalFileName !== undefined) {
      document.originalFileName = cleanFileName(parsed.originalFileName)
      document.signedFileName = signedFileName(parsed.originalFileName)
    }
    const warnings = [...devWarning, ...out.warnings]
    if (wantsPdf(request.headers.accept)) {
      // The signed bytes as the body; what the JSON's data says beside them goes in headers.
      // Header values are ASCII: the warnings as a JSON array with \u escapes, the file name
      // per RFC 6266 (filename*, UTF-8).
      const name = parsed.originalFileName === undefined ? 'documento_assinado.pdf' : signedFileName(parsed.originalFileName)
      return await reply
        .type('application/pdf')
        .header('content-disposition', `attachment; filename="${name.replace(/[^\x20-\x7e]|["\\]/g, '_')}"; filename*=UTF-8''${encodeURIComponent(name)}`)
        .header('x-document-identifier', out.documentIdentifier)
        .header('x-signed-at', out.signedAt)
        .header('x-signature-standard', out.signatureStandard)
        .header('x-timestamp-applied', String(out.timestampApplied))
        .header('x-document-sha256', out.sha256)
        .header('x-signature-warnings', JSON.stringify(warnings).replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`))
        .send(pdf)
    }
    return {
      success: true,
      message: 'PDF signed successfully.',
      requestId: request.id,
      data: {
        signedPdfBase64: pdf.toString('base64'),
        documentIdentifier: out.documentIdentifier,
        signedAt: out.signedAt,
        signatureStandard: out.signatureStandard,
        signatureFormat: 'PAdES',
        timestampApplied: out.timestampApplied,
        certificate: out.certificate,
        document: { ...document, mimeType: 'application/pdf', sizeBytes: pdf.length, sha256: out.sha256 }
      },
      errors: [],
      warnings
    }
  })

  await app.register(verifyRoutes, { config, pool, send, ...verifyTrust })

  app.get('/api/v1/health', { schema: healthSchema }, async (request) => {
    const started = performance.now()
    const state = await certificates.current()
    const now = Date.now()
    const { status, warnings } = state.report(now)
    const validity = state.validity(now)
    return {
      success: true,
      message: status === 'UP' ? 'Service is up.' : 'Service is running but cannot sign: see warnings.',
      requestId: request.id,
      data: {
        service: SIGN_SERVICE_NAME,
        status,
        environment: shared.environment,
        // No Java here: the field the contract names reports the runtime that does run.
        javaVersion: `Node.js ${process.versions.node}`,
        certificateValidUntil: validity.validUntil,
        certificateDaysLeft: validity.daysLeft
      },
      warnings: [...devWarning, ...warnings, ...runtimeWarning],
      executionTimeMs: Math.round(performance.now() - started),
      timestamp: nowIso(config.timeZone),
      version: SIGN_API_VERSION
    }
  })

  app.get('/actuator/health', { schema: actuatorHealthSchema }, async (_request, reply) => {
    const certState = await certificates.current()
    const { status } = certState.report(Date.now())
    return reply.code(status === 'UP' ? 200 : 503).send({
      status,
      components: {
        certificate: { status, details: certState.details() },
        workerPool: { status: 'UP', details: { threads: pool.threads.length, queued: pool.queueSize } },
        timestampAuthority: { status: config.tsaUrl === undefined ? 'DISABLED' : 'CONFIGURED' }
      }
    })
  })

  app.get('/actuator/info', { schema: actuatorInfoSchema }, async () => ({
    app: { name: SIGN_SERVICE_NAME, version, apiVersion: SIGN_API_VERSION },
    runtime: { name: 'Node.js', version: process.versions.node, supported: runtimeWarning.length === 0, testedLines: SUPPORTED_NODE_LINES },
    signature: {
      standard,
      format: 'PAdES',
      visualMode: config.visualMode,
      policy: config.policy?.name ?? 'NONE',
      developmentCertificate: certificate.developmentDir !== undefined
    }
  }))

  return app
}

function nowIso (timeZone: string): string {
  return isoWithOffset(new Date(), timeZone)
}

/**
 * The pool task's signal: aborted when the client goes away before the reply is sent, or
 * when `timeoutMs` passes (then `timedOut()`). One controller and one timer cleared when
 * the task ends, on the HTTP thread that every request shares: AbortSignal.timeout plus
 * AbortSignal.any cost about 40 µs a request and left a timer armed for the whole limit.
 */
function taskSignal (reply: FastifyReply, timeoutMs: number): { signal: AbortSignal, timedOut: () => boolean, dispose: () => void } {
  const controller = new AbortController()
  let reason: 'disconnect' | 'timeout' | undefined
  const abort = (why: 'disconnect' | 'timeout'): void => {
    if (reason !== undefined) return
    reason = why
    controller.abort()
  }
  const onClose = (): void => { if (!reply.raw.writableFinished) abort('disconnect') }
  const timer = setTimeout(() => abort('timeout'), timeoutMs)
  // Like AbortSignal.timeout's timer, it does not keep the process alive on its own.
  timer.unref()
  reply.raw.on('close', onClose)
  return {
    signal: controller.signal,
    timedOut: () => reason === 'timeout',
    dispose: () => {
      clearTimeout(timer)
      reply.raw.off('close', onClose)
    }
  }
}
