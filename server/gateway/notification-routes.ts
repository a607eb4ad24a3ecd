/**
 * The notifications' admin routes (issue 35, item 4): webhook endpoints and their delivery
 * log, and the admin screen's event stream (GET /admin/eventos, Server-Sent Events).
 *
 * The stream's credential: EventSource sends no headers, so the screen first calls
 * POST /admin/eventos/sessao with its Bearer token and receives an HttpOnly cookie
 * (`razao_eventos`, Path=/admin/eventos, SameSite=Strict) worth five minutes. Its value is
 * an expiry and an HMAC of it keyed by the admin token: any instance sharing the token
 * accepts it, nothing is stored, and it never shows in a URL (nor in a log line). It only
 * opens the stream; an open stream goes on past it. Programs may send the Bearer header.
 */
import { createHmac } from 'node:crypto'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { Pool } from 'pg'
import { EngineError } from '../../core/errors.js'
import { createWebhookEndpoint, deleteWebhookEndpoint, listWebhookDeliveries, listWebhookEndpoints, setWebhookActive } from '../../core/gateway/index.js'
import type { AdminEvent, AdminEventHub, MasterKey } from '../../core/gateway/index.js'
import { openEventStream } from '../event-stream.js'
import { keyMatches } from '../secrets.js'
import { withDatabase } from './admin-routes.js'
import { createWebhookSchema, deleteWebhookSchema, eventSessionSchema, eventStreamSchema, listDeliveriesSchema, listWebhooksSchema, updateWebhookSchema } from './schemas.js'
import { parseNewWebhook, parseWebhookChanges, toWireDelivery, toWireDocumentEvent, toWireFeed, toWireWebhook } from './wire.js'

export const EVENTS_COOKIE = 'razao_eventos'
export const EVENTS_SESSION_MS = 5 * 60_000
const HEARTBEAT_MS = 15_000
/** Streams one instance keeps open; past it, 503. Each costs a socket, not a query: one poller serves all. */
export const MAX_EVENT_STREAMS = 100
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

export interface NotificationRouteDeps {
  pool: Pool
  masterKey: MasterKey
  adminToken: string
  hub: AdminEventHub
}

const sessionMac = (adminToken: string, expires: number): string => createHmac('sha256', adminToken).update(`admin-eventos:${expires}`).digest('base64url')

/** Whether the request carries a valid, unexpired `razao_eventos` cookie. */
export function hasEventSession (request: FastifyRequest, adminToken: string, now = Date.now()): boolean {
  const header = request.headers.cookie
  if (typeof header !== 'string') return false
  for (const part of header.split(';')) {
    const [name, value] = part.trim().split('=', 2)
    if (name !== EVENTS_COOKIE || value === undefined) continue
    const match = /^(\d{13})\.([A-Za-z0-9_-]{43})$/.exec(value)
    if (match === null || Number(match[1]) < now) continue
    if (keyMatches(sessionMac(adminToken, Number(match[1])), match[2])) return true
  }
  return false
}

function uuidOrRefuse (value: string | undefined, field: string): string | undefined {
  if (value === undefined || value === '') return undefined
  if (!UUID.test(value)) throw new EngineError('REQUEST_INVALID', `The parameter "${field}" must be an endpoint id (a UUID).`)
  return value
}

export async function registerNotificationRoutes (app: FastifyInstance, deps: NotificationRouteDeps): Promise<void> {
  const { pool, masterKey, adminToken, hub } = deps
  const streams = new Set<() => void>()
  app.addHook('preClose', async () => { for (const end of [...streams]) end() })

  app.get('/admin/webhooks', { schema: listWebhooksSchema }, async () => withDatabase(async () => (await listWebhookEndpoints(pool)).map(toWireWebhook)))

  app.post('/admin/webhooks', { schema: createWebhookSchema }, async (request, reply) => {
    const input = parseNewWebhook(request.body)
    const { endpoint, segredo } = await withDatabase(() => createWebhookEndpoint(pool, masterKey, input))
    // The URL's query may hold a token of the receiver's: the log names the host only.
    request.log.info({ webhookId: endpoint.id, host: new URL(endpoint.url).host, empresaCodigo: endpoint.empresaCodigo }, 'webhook endpoint added')
    return reply.code(201).header('cache-control', 'no-store').send({ ...toWireWebhook(endpoint), segredo })
  })

  app.delete<{ Params: { id: string } }>('/admin/webhooks/:id', { schema: deleteWebhookSchema }, async (request, reply) => {
    const id = uuidOrRefuse(request.params.id, 'id')
    if (id === undefined) throw new EngineError('REQUEST_INVALID', 'The endpoint id is missing.')
    await withDatabase(() => deleteWebhookEndpoint(pool, id))
    request.log.info({ webhookId: id }, 'webhook endpoint removed')
    return reply.code(204).send()
  })

  app.patch<{ Params: { id: string } }>('/admin/webhooks/:id', { schema: updateWebhookSchema }, async (request) => {
    const id = uuidOrRefuse(request.params.id, 'id')
    if (id === undefined) throw new EngineError('REQUEST_INVALID', 'The endpoint id is missing.')
    const { ativo } = parseWebhookChanges(request.body)
    const endpoint = await withDatabase(() => setWebhookActive(pool, id, ativo))
    request.log.info({ webhookId: id, ativo }, 'webhook endpoint changed')
    return toWireWebhook(endpoint)
  })

  app.get<{ Querystring: Record<string, string | undefined> }>('/admin/webhooks/entregas', { schema: listDeliveriesSchema }, async (request) => {
    const q = request.query
    const endpointId = uuidOrRefuse(q.endpoint_id, 'endpoint_id')
    const status = q.status === undefined || q.status === '' ? undefined : q.status
    if (status !== undefined && !['pendente', 'entregue', 'falhou'].includes(status)) throw new EngineError('REQUEST_INVALID', 'The parameter "status" must be pendente, entregue or falhou.')
    const limite = q.limite === undefined || q.limite === '' ? 50 : Number(q.limite)
    if (!Number.isInteger(limite) || limite < 1 || limite > 500) throw new EngineError('REQUEST_INVALID', 'The parameter "limite" must be a whole number from 1 to 500.')
    return await withDatabase(async () => (await listWebhookDeliveries(pool, { endpointId, status, limite })).map(toWireDelivery))
  })

  app.post('/admin/eventos/sessao', { schema: eventSessionSchema }, async (request, reply) => {
    const expires = Date.now() + EVENTS_SESSION_MS
    const secure = request.protocol === 'https' ? '; Secure' : ''
    return reply.header('set-cookie', `${EVENTS_COOKIE}=${expires}.${sessionMac(adminToken, expires)}; Path=/admin/eventos; Max-Age=${EVENTS_SESSION_MS / 1000}; HttpOnly; SameSite=Strict${secure}`)
      .header('cache-control', 'no-store').send({ expira_em: new Date(expires).toISOString() })
  })

  app.get('/admin/eventos', { schema: eventStreamSchema }, async (request, reply) => {
    if (streams.size >= MAX_EVENT_STREAMS) {
      return (reply as FastifyReply).code(503).send({ detail: `This instance already serves ${MAX_EVENT_STREAMS} event streams; try again shortly.`, code: 'SERVICE_BUSY', requestId: request.id })
    }
    streamAdminEvents(request, reply, hub, streams)
  })
}

function streamAdminEvents (request: FastifyRequest, reply: FastifyReply, hub: AdminEventHub, streams: Set<() => void>): void {
  const raw = reply.raw
  const write = openEventStream(request, reply, { closeConnection: true })
  const send = (event: string, data: unknown): void => { write(event, JSON.stringify(data)) }
  const listener = (e: AdminEvent): void => {
    if (e.kind === 'documento') send('documento', toWireDocumentEvent(e.event))
    else send('feed', toWireFeed(e.state))
  }
  // "pronto" once the hub has its starting point: anything stored after it is shown.
  const unsubscribe = hub.subscribe(listener, () => { send('pronto', { conectado_em: new Date().toISOString() }) })
  const heartbeat = setInterval(() => { raw.write(': keepalive\n\n') }, HEARTBEAT_MS)
  const end = (): void => {
    if (!streams.delete(end)) return
    clearInterval(heartbeat)
    unsubscribe()
    raw.off('close', end)
    if (!raw.writableEnded) raw.end()
  }
  streams.add(end)
  raw.on('close', end)
  // EventSource reconnects after this; the screen renews its cookie first when refused.
  raw.write('retry: 3000\n\n')
}
