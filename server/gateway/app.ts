/**
 * The tax-document gateway's Fastify app (spec 3 part A, issue 15). Three kinds of
 * route, told apart in one onRequest hook before any body is read:
 * - public: `/health`, and the admin screen's page and assets (the page asks for the token);
 * - admin: everything under `/admin/`, `Authorization: Bearer <GATEWAY_ADMIN_TOKEN>`;
 * - everything else (the query routes): the operational `X-API-Key`, checked against the
 *   stored SHA-256 hash. Default-deny: a route nobody classified needs the API key.
 * The two secrets never stand in for each other. Only main code listens; tests inject.
 */
import Fastify from 'fastify'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { Pool } from 'pg'
import type { SharedConfig } from '../config.js'
import { clientErrorHandler, detailBody, registerErrorHandler } from '../http-errors.js'
import { loggerOptions, requestIdOf } from '../logging.js'
import { keyMatches } from '../secrets.js'
import { AdminEventHub, ApiKeyHashCache, CertificateStore, DEFAULT_CACHE_MS, ResolvedCertificateCache, WebhookDelivery, apiKeyMatchesHash, autoCiencia, readApiKeyHash } from '../../core/gateway/index.js'
import type { FeedCompany, MasterKey } from '../../core/gateway/index.js'
import { registerAdminRoutes, withDatabase } from './admin-routes.js'
import { ADMIN_CSS, ADMIN_HTML, ADMIN_JS, ADMIN_PAGE_CSP } from './admin-page.js'
import type { GatewayConfig } from './config.js'
import type { QueryRouteDeps } from './query-types.js'
import { GATEWAY_KEY_HELP, GATEWAY_STATUSES } from './errors.js'
import { registerQueryRoutes } from './query-routes.js'
import { registerDocumentRoutes } from './document-routes.js'
import { manifestSenderFor, registerManifestacaoRoutes } from './manifestacao-routes.js'
import { createAgentCache } from './usable-certificate.js'
import { registerFeed } from './feed-routes.js'
import type { FeedDeps } from './feed-routes.js'
import { hasEventSession, registerNotificationRoutes } from './notification-routes.js'
import { drainUnreadBodies } from '../early-answer.js'
import { healthSchema } from './schemas.js'
import { HIDDEN, apiKeyScheme, registerOpenApi } from '../openapi.js'
import { openPkcs12Isolated } from '../../workers/pkcs12-isolate.js'

export const GATEWAY_SERVICE_NAME = 'razao-gateway'
/** The spec gives the gateway no version; /openapi.json needs one: this contract's first. */
export const GATEWAY_API_VERSION = '1.0.0'

export interface GatewayAppOptions {
  shared: SharedConfig
  config: GatewayConfig
  /** The resolved admin token (configured or generated); never logged. */
  adminToken: string
  masterKey: MasterKey
  database: { pool: Pool }
  /** Pino logger on (the default) or off. */
  logger?: boolean
  /** Where log lines go (default stdout); tests pass a stream to read them. */
  logStream?: NodeJS.WritableStream
  /** The clock for certificate expiry (tests move it). */
  now?: () => Date
  /**
   * How long a read of the stored API key hash is reused, ms (default 5 s); a rotation
   * through this instance applies at once, through another within this bound.
   */
  apiKeyCacheMs?: number
  /** How long a company's resolved certificate is reused, ms (default 5 s); admin changes through this instance clear it. */
  certificateCacheMs?: number
  /**
   * Dispatch and deliver webhooks from this instance (issue 35): `razao serve gateway` passes
   * GATEWAY_WEBHOOKS; default off, so that tests of other routes start no queue.
   */
  deliverWebhooks?: boolean
  /** Registers the query routes; default query-routes.ts. Tests pass their own to exercise the key check. */
  registerQueryRoutes?: (app: FastifyInstance, deps: QueryRouteDeps) => Promise<void>
  /**
   * The managed feed (feed-routes.ts): `run` starts its scheduler when the app is ready (start.ts
   * passes GATEWAY_FEED; default off, so tests that build the app poll nothing). Without
   * `onSummariesStored` the app sends the automatic Ciência (autoCiencia) itself.
   */
  feed?: Pick<FeedDeps, 'onFeedChanged' | 'onSummariesStored'> & { run: boolean }
}

const PUBLIC_ROUTES = new Set(['/health', '/admin', '/admin-ui/app.js', '/admin-ui/app.css', '/favicon.ico', '/openapi.json', '/docs', '/docs/:asset', '/docs/plain'])

function bearerToken (request: FastifyRequest): string | undefined {
  const header = request.headers.authorization
  if (typeof header !== 'string') return undefined
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header)
  return match?.[1]
}

export async function buildGatewayApp (options: GatewayAppOptions): Promise<FastifyInstance> {
  const { shared, config, adminToken, masterKey } = options
  const pool = options.database.pool
  const now = options.now ?? (() => new Date())
  const app = Fastify({
    logger: options.logger === false ? false : { ...loggerOptions(shared.logLevel), ...(options.logStream === undefined ? {} : { stream: options.logStream }) },
    requestIdHeader: false,
    genReqId: requestIdOf,
    // Certificates travel as base64 in JSON: a few KiB each; 1 MiB leaves room and no more.
    bodyLimit: 1024 * 1024,
    clientErrorHandler: clientErrorHandler(detailBody),
    frameworkErrors: (error, request, reply) => {
      request.log.info({ code: error.code }, 'request refused')
      void (reply as FastifyReply).code(400).header('x-request-id', request.id).send({ detail: 'The request URL is malformed.', code: 'REQUEST_INVALID', requestId: request.id })
    }
  })
  registerErrorHandler(app, GATEWAY_STATUSES)
  drainUnreadBodies(app, 1024 * 1024, shared.drainMaxMs)

  const store = new CertificateStore({ pool, masterKey, now, openPkcs12: openPkcs12Isolated })
  const apiKeyHash = new ApiKeyHashCache(() => withDatabase(() => readApiKeyHash(pool)), options.apiKeyCacheMs ?? DEFAULT_CACHE_MS)
  const certificates = new ResolvedCertificateCache((empresaCodigo) => store.resolveCertificate(empresaCodigo), options.certificateCacheMs ?? DEFAULT_CACHE_MS)
  const checkApiKey = async (request: FastifyRequest): Promise<boolean> => {
    const given = request.headers['x-api-key']
    const hash = await apiKeyHash.current()
    return hash !== undefined && apiKeyMatchesHash(hash, typeof given === 'string' ? given : undefined)
  }

  app.addHook('onRequest', async (request, reply) => {
    void reply.header('x-request-id', request.id)
    const route = request.routeOptions.url
    // No route: answered before a body nobody wants is read.
    if (route === undefined) {
      return reply.code(404).header('connection', 'close').send({ detail: `No route ${request.method} ${request.url.split('?')[0]}.`, code: 'ROUTE_NOT_FOUND' })
    }
    if (PUBLIC_ROUTES.has(route)) return
    if (route.startsWith('/admin/')) {
      // EventSource sends no header: the stream also takes its session cookie (notification-routes.ts).
      if (route === '/admin/eventos' && request.method === 'GET' && hasEventSession(request, adminToken)) return
      if (!keyMatches(adminToken, bearerToken(request))) {
        request.log.info({ code: 'UNAUTHORIZED' }, 'admin request refused')
        return reply.code(401).header('www-authenticate', 'Bearer').header('connection', 'close')
          .send({ detail: 'Invalid or missing admin token. Send it as Authorization: Bearer <token>. The token is the value of GATEWAY_ADMIN_TOKEN where the gateway runs or, when that is not set, the one generated in .data/gateway-admin-api-key (in RAZAO_DATA_DIR when that is set).', code: 'UNAUTHORIZED' })
      }
      return
    }
    if (!await checkApiKey(request)) {
      request.log.info({ code: 'UNAUTHORIZED' }, 'request refused')
      return reply.code(401).header('connection', 'close').send({ detail: GATEWAY_KEY_HELP, code: 'UNAUTHORIZED' })
    }
  })

  // The description and its pages are public: they hold no data, as the admin screen.
  await registerOpenApi(app, {
    title: 'razao tax-document gateway',
    version: GATEWAY_API_VERSION,
    description: 'Queries the NF-e distribution (SEFAZ) and the NFS-e national distribution (ADN) with each company\'s A1 certificate over mutual TLS, and keeps the companies and their certificates (the admin API). Failures answer { "detail": "...", "code": "...", "requestId": "..." }.',
    securitySchemes: {
      apiKey: apiKeyScheme('X-API-Key', 'The operational key, for the query routes: send it in the `X-API-Key` header. Its value: the key the gateway printed once on its first start, ' +
        'or `GATEWAY_API_KEY` when that was set then. Only its hash is stored, so no file holds it: lost, get a new one with POST /admin/api-key/rotate (it answers the new key once).'),
      adminToken: {
        type: 'http',
        scheme: 'bearer',
        description: 'The admin token, for /admin/*: sent as `Authorization: Bearer <token>` (paste only the token here). Its value: the content of the file `.data/gateway-admin-api-key`, ' +
          'generated on the first start (`cat .data/gateway-admin-api-key` in the repository folder; `RAZAO_DATA_DIR` moves `.data/`), or, when the variable `GATEWAY_ADMIN_TOKEN` is set, that value.'
      }
    }
  })

  // Availability only: no configuration values, keys, company or certificate data.
  app.get('/health', { schema: healthSchema }, async (_request, reply) => {
    const database = await pool.query('SELECT 1').then(() => 'UP' as const, () => 'DOWN' as const)
    return reply.code(database === 'UP' ? 200 : 503).send({
      status: database === 'UP' ? 'UP' : 'DOWN',
      service: GATEWAY_SERVICE_NAME,
      environment: shared.environment,
      ambiente: config.tpAmb === 1 ? 'producao' : 'homologacao',
      database,
      timestamp: new Date().toISOString()
    })
  })

  // The admin screen: static, public (it holds no data; it asks for the token and sends
  // it as a Bearer header on every call). Scripts only from here, no inline code, no framing.
  const page = (body: string, type: string) => async (_request: FastifyRequest, reply: FastifyReply) =>
    reply.type(type).header('content-security-policy', ADMIN_PAGE_CSP).header('x-frame-options', 'DENY')
      .header('x-content-type-options', 'nosniff').header('referrer-policy', 'no-referrer').header('cache-control', 'no-cache').send(body)
  app.get('/admin', { schema: HIDDEN }, page(ADMIN_HTML, 'text/html; charset=utf-8'))
  app.get('/admin-ui/app.js', { schema: HIDDEN }, page(ADMIN_JS, 'text/javascript; charset=utf-8'))
  app.get('/admin-ui/app.css', { schema: HIDDEN }, page(ADMIN_CSS, 'text/css; charset=utf-8'))
  // Browsers ask for it on their own; no icon, and no 404 in the console.
  app.get('/favicon.ico', { schema: HIDDEN }, async (_request, reply) => reply.code(204).send())

  await registerAdminRoutes(app, { pool, store, now, onRotated: (hash) => apiKeyHash.set(hash) })
  // Any admin write (a company or certificate changed, added or removed) forgets the cached
  // certificates before its answer leaves, so the next query through this instance sees it.
  app.addHook('onSend', async (request) => {
    if (request.method !== 'GET' && request.routeOptions.url?.startsWith('/admin/') === true) certificates.clear()
  })

  // Notifications (issue 35): webhook endpoints, their log, the admin screen's event stream.
  const notifications = config.notifications
  const hub = new AdminEventHub(pool, notifications.eventsPollMs, (err) => { app.log.warn({ err }, 'admin events: the database could not be read') })
  app.addHook('onClose', async () => { hub.stop() })
  await registerNotificationRoutes(app, { pool, masterKey, adminToken, hub })
  if (options.deliverWebhooks === true) startWebhookDelivery(app, new WebhookDelivery({ pool, masterKey, ...notifications, log: app.log }))

  // The query routes (query-routes.ts): their own scope, JSON only, the same key check.
  // One cache of mutual-TLS agents for the queries, the manifestação and the feed.
  const agents = await createAgentCache(config)
  app.addHook('onClose', async () => { agents.close() })
  const deps: QueryRouteDeps = { config, pool, resolveCertificate: (empresaCodigo) => certificates.get(empresaCodigo), checkApiKey, agents }
  await (options.registerQueryRoutes ?? registerQueryRoutes)(app, deps)
  // The documents the query routes keep (issue 35): same key.
  await registerDocumentRoutes(app, { pool, checkApiKey })
  // The manifestação do destinatário (issue 35, item 3): same key, same resolver.
  await registerManifestacaoRoutes(app, deps)
  // The managed feed (issue 35): its scheduler, and POST /v1/documents/{chave}/buscar.
  // New summaries of a company with automatic Ciência on get their Ciência da Operação (item 3).
  const sender = manifestSenderFor(deps, agents, app.log)
  const ciencia = async (db: Pool, company: FeedCompany, keys: string[]): Promise<void> => {
    const outcome = await autoCiencia(db, company, keys, sender)
    const log = outcome.erro === null ? 'info' : 'warn'
    app.log[log]({ empresa_codigo: company.empresaCodigo, registradas: outcome.registradas, rejeitadas: outcome.rejeitadas, erro: outcome.erro }, 'automatic ciência')
  }
  await registerFeed(app, { pool, config, resolveCertificate: (empresaCodigo) => certificates.get(empresaCodigo), checkApiKey, runScheduler: options.feed?.run ?? false, agents,
    ...(options.feed?.onFeedChanged === undefined ? {} : { onFeedChanged: options.feed.onFeedChanged }),
    onSummariesStored: options.feed?.onSummariesStored ?? ciencia })

  return app
}

/**
 * Starts the delivery in the background (pg-boss makes its schema on the first start): a
 * database not reachable yet is retried every 10 s instead of stopping the gateway.
 */
function startWebhookDelivery (app: FastifyInstance, delivery: WebhookDelivery): void {
  let closing = false
  let retry: NodeJS.Timeout | undefined
  let settle: (started: boolean) => void = () => undefined
  const started = new Promise<boolean>((resolve) => { settle = resolve })
  const attempt = (): void => {
    retry = undefined
    delivery.start().then(() => { settle(true) }, (err: unknown) => {
      app.log.warn({ err }, 'webhook delivery could not start; retrying in 10 s')
      if (closing) settle(false)
      else retry = setTimeout(attempt, 10_000)
    })
  }
  attempt()
  app.addHook('onClose', async () => {
    closing = true
    if (retry !== undefined) {
      clearTimeout(retry)
      settle(false)
    }
    if (await started) await delivery.stop()
  })
}
