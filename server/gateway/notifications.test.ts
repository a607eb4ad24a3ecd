/**
 * Notifications end to end (issue 35, item 4): documents stored with storeDocuments on a real
 * PostgreSQL, delivered by the pg-boss worker to real HTTP receivers on loopback that check
 * the signature; the admin API of endpoints and log; the admin event stream over a real
 * listener, read as a browser's EventSource would.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto'
import { createServer } from 'node:http'
import type { IncomingMessage, Server, ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freshDatabase } from '../../fixtures/db/test-database.js'
import type { TestDatabase } from '../../fixtures/db/test-database.js'
import { makeNfeDocuments, makeNfeEventDocument } from '../../fixtures/gateway/documents.js'
import { WebhookDelivery, ensureApiKey, openNfeDocument, parseMasterKey, setFeedOptions, storeDocuments } from '../../core/gateway/index.js'
import type { ReceivedDocument } from '../../core/gateway/index.js'
import { loadConfig } from '../config.js'
import { buildGatewayApp } from './app.js'
import { loadGatewayConfig } from './config.js'

const ADMIN = `admin-${randomBytes(16).toString('hex')}`
const MASTER = parseMasterKey(randomBytes(32).toString('hex'))!
const HEAD = '11222333000181'
const OTHER = '99999090910270'
let db: TestDatabase
let app: FastifyInstance
let base: string
const workers: WebhookDelivery[] = []
const logged: string[] = []

interface Received { eventId: string, tipo: string, attempt: number, body: Record<string, any>, signed: boolean }

/** A receiver that checks the signature as docs/gateway.md tells receivers to. */
class Receiver {
  readonly got: Received[] = []
  private server: Server | undefined
  private waiters: Array<() => void> = []
  url = ''
  constructor (readonly secret: string, private readonly answer: (attemptOfEvent: number) => number = () => 204) {}

  async start (): Promise<this> {
    this.server = createServer((req: IncomingMessage, res: ServerResponse) => {
      const chunks: Buffer[] = []
      req.on('data', (c: Buffer) => chunks.push(c))
      req.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8')
        const header = String(req.headers['x-razao-assinatura'] ?? '')
        const match = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(header)
        const expected = match === null ? '' : createHmac('sha256', this.secret).update(`${match[1]}.${raw}`).digest('hex')
        const fresh = match !== null && Math.abs(Date.now() / 1000 - Number(match[1])) <= 300
        const signed = match !== null && fresh && timingSafeEqual(Buffer.from(expected, 'hex'), Buffer.from(match[2]!, 'hex'))
        this.got.push({ eventId: String(req.headers['x-razao-evento-id']), tipo: String(req.headers['x-razao-evento']), attempt: Number(req.headers['x-razao-tentativa']), body: JSON.parse(raw), signed })
        const eventId = String(req.headers['x-razao-evento-id'])
        res.statusCode = signed ? this.answer(this.got.filter((g) => g.eventId === eventId).length) : 401
        res.end()
        for (const w of this.waiters.splice(0)) w()
      })
    })
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve))
    this.url = `http://127.0.0.1:${(this.server!.address() as AddressInfo).port}/hook`
    return this
  }

  async waitFor (count: number): Promise<void> {
    while (this.got.length < count) await new Promise<void>((resolve) => this.waiters.push(resolve))
  }

  async stop (): Promise<void> {
    await new Promise<void>((resolve) => this.server?.close(() => { resolve() }) ?? resolve())
  }
}

const received = (d: { nsu: string, schema: string, docZip: string }): ReceivedDocument =>
  ({ nsu: d.nsu, esquema: d.schema.split('_v')[0]!, opened: openNfeDocument(d.docZip, d.schema) })

async function admin (method: 'GET' | 'POST' | 'DELETE', url: string, payload?: unknown): Promise<{ status: number, body: any, headers: Record<string, unknown> }> {
  const res = await app.inject({ method, url, headers: { authorization: `Bearer ${ADMIN}` }, ...(payload === undefined ? {} : { payload: payload as object }) })
  return { status: res.statusCode, body: res.body === '' ? null : res.json(), headers: res.headers }
}

/** Polls the log until `done` holds: each read is a query, the wait is the worker's. */
async function logUntil (done: (rows: any[]) => boolean, endpointId: string): Promise<any[]> {
  for (;;) {
    const rows = (await admin('GET', `/admin/webhooks/entregas?endpoint_id=${endpointId}&limite=500`)).body as any[]
    if (done(rows)) return rows
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
}

function worker (overrides: Partial<ConstructorParameters<typeof WebhookDelivery>[0]> = {}): WebhookDelivery {
  const w = new WebhookDelivery({
    pool: db.pool, masterKey: MASTER, retryLimit: 2, retryDelaySeconds: 1, timeoutMs: 2000, concurrency: 2, pollMs: 500, keepDays: 7,
    log: { warn: (obj, msg) => { logged.push(`${msg} ${JSON.stringify(obj)}`) } },
    ...overrides
  })
  workers.push(w)
  return w
}

let companyCode: string

beforeAll(async () => {
  db = await freshDatabase()
  await ensureApiKey(db.pool, `first-${randomBytes(16).toString('hex')}`)
  const shared = loadConfig({}).shared
  app = await buildGatewayApp({
    shared, config: loadGatewayConfig({ GATEWAY_EVENTS_POLL_MS: '200' }, shared), adminToken: ADMIN, masterKey: MASTER, database: { pool: db.pool }, logger: false
  })
  base = await app.listen({ host: '127.0.0.1', port: 0 })
  const company = await admin('POST', '/admin/empresas', { razao_social: 'Matriz Notificada SA', cnpj: HEAD })
  expect(company.status).toBe(201)
  companyCode = company.body.empresa_codigo
})

afterAll(async () => {
  for (const w of workers) await w.stop()
  await app?.close()
  await db?.drop()
})

describe('webhooks', () => {
  it('adds endpoints answering the secret once, then only its hint; refuses bad ones with a clear 400 or 404', async () => {
    const made = await admin('POST', '/admin/webhooks', { url: 'https://erp.example.com.br/eventos?k=1', empresa_codigo: companyCode })
    expect(made.status).toBe(201)
    expect(made.headers['cache-control']).toBe('no-store')
    expect(made.body.segredo).toMatch(/^[A-Za-z0-9_-]{43}$/)
    expect(made.body.segredo_dica).toBe(`…${made.body.segredo.slice(-4)}`)
    const listed = await admin('GET', '/admin/webhooks')
    expect(listed.body).toEqual([expect.objectContaining({ id: made.body.id, empresa_codigo: companyCode, ativo: true })])
    expect(JSON.stringify(listed.body)).not.toContain(made.body.segredo)
    // Sealed at rest: the stored bytes do not hold it.
    const stored = (await db.pool.query<{ s: Buffer }>('SELECT segredo_cifrado AS s FROM webhook_endpoints')).rows[0]!.s
    expect(stored.includes(Buffer.from(made.body.segredo))).toBe(false)

    expect((await admin('POST', '/admin/webhooks', { url: 'ftp://x.example/a' })).body).toMatchObject({ code: 'REQUEST_INVALID', detail: expect.stringContaining('"url"') })
    expect((await admin('POST', '/admin/webhooks', { url: 'https://user:pw@x.example/a' })).body.detail).toMatch(/user or password/)
    expect((await admin('POST', '/admin/webhooks', { url: 'https://x.example/a', segredo: 'curto' })).body.detail).toMatch(/24 to 200/)
    expect((await admin('POST', '/admin/webhooks', { url: 'https://x.example/a', empresa_codigo: 'EMP0000000000' })).status).toBe(404)
    const paused = await app.inject({ method: 'PATCH', url: `/admin/webhooks/${made.body.id}`, headers: { authorization: `Bearer ${ADMIN}` }, payload: { ativo: false } })
    expect(paused.json()).toMatchObject({ id: made.body.id, ativo: false })
    expect((await app.inject({ method: 'PATCH', url: `/admin/webhooks/${made.body.id}`, headers: { authorization: `Bearer ${ADMIN}` }, payload: { url: 'x' } })).statusCode).toBe(400)
    expect((await admin('DELETE', `/admin/webhooks/${made.body.id}`)).status).toBe(204)
    expect((await admin('DELETE', `/admin/webhooks/${made.body.id}`)).body).toMatchObject({ code: 'WEBHOOK_NOT_FOUND' })
    expect((await admin('DELETE', '/admin/webhooks/nao-e-uuid')).status).toBe(400)
    expect((await app.inject({ method: 'GET', url: '/admin/webhooks' })).statusCode).toBe(401)
  })

  it('delivers signed events to a company endpoint and a global one; retries a receiver failing twice; gives up on one that is down; never twice with two workers', async () => {
    // Four receivers: a company's, a global one, one failing twice, and one that is down.
    const own = await new Receiver(`own-${randomBytes(16).toString('hex')}`).start()
    const global = await new Receiver(`global-${randomBytes(16).toString('hex')}`).start()
    const flaky = await new Receiver(`flaky-${randomBytes(16).toString('hex')}`, (n) => n <= 2 ? 503 : 200).start()
    const down = await new Receiver(`down-${randomBytes(16).toString('hex')}`).start()
    await down.stop()
    const add = async (r: Receiver, empresa: string | null): Promise<string> =>
      (await admin('POST', '/admin/webhooks', { url: r.url, empresa_codigo: empresa, segredo: r.secret })).body.id
    const ownId = await add(own, companyCode)
    const globalId = await add(global, null)
    const flakyId = await add(flaky, companyCode)
    const downId = await add(down, companyCode)

    // 20 documents for the company; then 1 of them again by another company (new to it, not
    // to the gateway: no company endpoint of its, and not again to the global one); then a
    // cancellation of one note.
    const docs = makeNfeDocuments(HEAD, 1, 20).map(received)
    await storeDocuments(db.pool, HEAD, docs)
    await storeDocuments(db.pool, OTHER, [docs[0]!])
    const cancelled = /<chNFe>(\d{44})</.exec(makeNfeDocuments(HEAD, 2, 1)[0]!.xml)![1]!
    await storeDocuments(db.pool, HEAD, [received(makeNfeEventDocument(900, cancelled, '110111', { kind: 'procEventoNFe' }))])
    // 20 documents + the event (a document too) + the note's cancellation.
    const expected = 22

    // Two workers (two instances) on the same queue.
    await Promise.all([worker().start(), worker().start()])
    await own.waitFor(expected)
    await global.waitFor(expected)
    const ownLog = await logUntil((rows) => rows.length === expected && rows.every((r) => r.status === 'entregue'), ownId)
    expect(ownLog.every((r) => r.tentativas === 1 && r.codigo_resposta === 204)).toBe(true)

    for (const r of [own, global]) {
      expect(r.got.every((g) => g.signed)).toBe(true)
      expect(new Set(r.got.map((g) => g.eventId)).size).toBe(r.got.length)
      expect(r.got.filter((g) => g.tipo === 'documento.cancelado').map((g) => g.body.documento.chave)).toEqual([cancelled])
    }
    const sample = own.got.find((g) => g.tipo === 'documento.novo' && g.body.documento.chave === docs[0]!.opened.facts.chave)!
    expect(sample.body).toMatchObject({
      id: sample.eventId, tipo: 'documento.novo', empresa: { cnpj: HEAD, empresa_codigo: companyCode },
      documento: { chave: docs[0]!.opened.facts.chave, tipo: docs[0]!.opened.facts.kind, cnpjs: [HEAD, OTHER] }
    })
    expect(sample.body.documento).not.toHaveProperty('xml')

    // Failing twice, then accepted: three attempts, the same event id each time.
    const flakyLog = await logUntil((rows) => rows.length === expected && rows.every((r) => r.status === 'entregue'), flakyId)
    const retried = flakyLog.filter((r) => r.tentativas > 1)
    expect(retried.length).toBeGreaterThan(0)
    expect(flaky.got.filter((g) => g.eventId === retried[0].evento_id).map((g) => g.attempt)).toEqual([1, 2, 3])

    // Down: 1 + 2 retries, then given up, the log saying why.
    const downLog = await logUntil((rows) => rows.length === expected && rows.every((r) => r.status === 'falhou'), downId)
    expect(downLog[0]).toMatchObject({ tentativas: 3, codigo_resposta: null, ultimo_erro: expect.stringMatching(/^Connection refused.*Gave up after 3 attempt\(s\)\.$/) })
    const failed = await admin('GET', '/admin/webhooks/entregas?status=falhou&limite=500')
    expect(failed.body.length).toBe(expected)

    // No secret in the answers or in the worker's log lines.
    const everything = JSON.stringify((await admin('GET', '/admin/webhooks/entregas?limite=500')).body) + JSON.stringify((await admin('GET', '/admin/webhooks')).body) + logged.join('\n')
    for (const r of [own, global, flaky, down]) expect(everything).not.toContain(r.secret)
    expect(new Set([ownId, globalId]).size).toBe(2)
    await Promise.all([own.stop(), global.stop(), flaky.stop()])
  }, 120_000)
})

describe('webhooks across a restart', () => {
  it('keeps a delivery whose instance stopped between attempts, and another instance finishes it; an answer that never comes is a timeout', async () => {
    // The earlier instances go; the earlier endpoints too.
    for (const w of workers.splice(0)) await w.stop()
    for (const w of (await admin('GET', '/admin/webhooks')).body) await admin('DELETE', `/admin/webhooks/${w.id}`)
    // Fails each event's first attempt; a second receiver holds its answer past the timeout.
    const once = await new Receiver(`once-${randomBytes(16).toString('hex')}`, (n) => n === 1 ? 500 : 200).start()
    const silent = createServer(() => undefined)
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve))
    const onceId = (await admin('POST', '/admin/webhooks', { url: once.url, empresa_codigo: companyCode, segredo: once.secret })).body.id
    const silentId = (await admin('POST', '/admin/webhooks', { url: `http://127.0.0.1:${(silent.address() as AddressInfo).port}/`, empresa_codigo: companyCode })).body.id
    await storeDocuments(db.pool, HEAD, makeNfeDocuments(HEAD, 700, 1).map(received))

    const first = worker({ retryLimit: 1, retryDelaySeconds: 3, timeoutMs: 300 })
    await first.start()
    await logUntil((rows) => rows.length === 1 && rows[0].tentativas === 1, onceId)
    await first.stop()
    // The retry waits in the queue (PostgreSQL), not in the stopped instance's memory.
    expect((await admin('GET', `/admin/webhooks/entregas?endpoint_id=${onceId}`)).body[0]).toMatchObject({ status: 'pendente', codigo_resposta: 500 })
    await worker({ retryLimit: 1, retryDelaySeconds: 3, timeoutMs: 300 }).start()
    const [delivered] = await logUntil((rows) => rows[0]?.status === 'entregue', onceId)
    expect(delivered).toMatchObject({ tentativas: 2, codigo_resposta: 200 })
    expect(once.got.map((g) => g.attempt)).toEqual([1, 2])
    expect(new Set(once.got.map((g) => g.eventId)).size).toBe(1)
    const [timedOut] = await logUntil((rows) => rows[0]?.status === 'falhou', silentId)
    expect(timedOut).toMatchObject({ tentativas: 2, codigo_resposta: null, ultimo_erro: 'No answer within 300 ms. Gave up after 2 attempt(s).' })
    silent.closeAllConnections()
    await Promise.all([once.stop(), new Promise((resolve) => silent.close(resolve))])
  }, 60_000)
})

describe('hostile receivers', () => {
  it('does not follow a redirect, and bounds an answer that never ends (delivered at its status, the socket cut at the timeout)', async () => {
    for (const w of workers.splice(0)) await w.stop()
    for (const w of (await admin('GET', '/admin/webhooks')).body) await admin('DELETE', `/admin/webhooks/${w.id}`)
    let followed = 0
    let endlessClosed!: () => void
    const closed = new Promise<void>((resolve) => { endlessClosed = resolve })
    const hostile = createServer((req, res) => {
      if (req.url === '/redirect') {
        res.writeHead(302, { location: '/followed' }).end()
      } else if (req.url === '/followed') {
        followed++
        res.writeHead(204).end()
      } else {
        // 200, then a body that never ends.
        res.writeHead(200, { 'content-type': 'text/plain' })
        const drip = setInterval(() => res.write('x'.repeat(1024)), 10)
        res.on('close', () => { clearInterval(drip); endlessClosed() })
      }
    })
    await new Promise<void>((resolve) => hostile.listen(0, '127.0.0.1', resolve))
    const at = `http://127.0.0.1:${(hostile.address() as AddressInfo).port}`
    const redirectId = (await admin('POST', '/admin/webhooks', { url: `${at}/redirect`, empresa_codigo: companyCode })).body.id
    const endlessId = (await admin('POST', '/admin/webhooks', { url: `${at}/endless`, empresa_codigo: companyCode })).body.id
    await storeDocuments(db.pool, HEAD, makeNfeDocuments(HEAD, 800, 1).map(received))
    await worker({ retryLimit: 0, timeoutMs: 500 }).start()
    const [redirected] = await logUntil((rows) => rows[0]?.status === 'falhou', redirectId)
    expect(redirected).toMatchObject({ codigo_resposta: 302, ultimo_erro: 'The receiver answered HTTP 302 (redirects are not followed). Gave up after 1 attempt(s).' })
    expect(followed).toBe(0)
    const [endless] = await logUntil((rows) => rows[0]?.status === 'entregue', endlessId)
    expect(endless).toMatchObject({ codigo_resposta: 200, tentativas: 1 })
    await closed
    hostile.closeAllConnections()
    await new Promise((resolve) => hostile.close(resolve))
  }, 60_000)
})

describe('the admin event stream', () => {
  /** Reads a stream's events as EventSource parses them. */
  async function openStream (headers: Record<string, string>): Promise<{ status: number, next: (event: string, test?: (data: any) => boolean) => Promise<any>, close: () => void }> {
    const controller = new AbortController()
    const res = await fetch(`${base}/admin/eventos`, { headers, signal: controller.signal })
    if (res.status !== 200) {
      await res.text()
      return { status: res.status, next: async () => undefined, close: () => undefined }
    }
    const reader = res.body!.getReader()
    const decoder = new TextDecoder()
    let buffer = ''
    const next = async (event: string, test: (data: any) => boolean = () => true): Promise<any> => {
      for (;;) {
        let cut: number
        while ((cut = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, cut)
          buffer = buffer.slice(cut + 2)
          const name = /^event: (.*)$/m.exec(block)?.[1]
          const data = /^data: (.*)$/m.exec(block)?.[1]
          if (name === event && data !== undefined && test(JSON.parse(data))) return JSON.parse(data)
        }
        const { value, done } = await reader.read()
        if (done) throw new Error('stream ended')
        buffer += decoder.decode(value, { stream: true })
      }
    }
    return { status: 200, next, close: () => { void reader.cancel().catch(() => undefined); controller.abort() } }
  }

  it('opens with the session cookie (or the Bearer header), refuses without, and streams documents and feed changes', async () => {
    expect((await openStream({})).status).toBe(401)
    expect((await openStream({ cookie: 'razao_eventos=1999999999999.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' })).status).toBe(401)
    const session = await admin('POST', '/admin/eventos/sessao')
    const cookie = String(session.headers['set-cookie'])
    expect(cookie).toMatch(/^razao_eventos=\d{13}\.[A-Za-z0-9_-]{43}; Path=\/admin\/eventos; Max-Age=300; HttpOnly; SameSite=Strict$/)
    const stream = await openStream({ cookie: cookie.split(';')[0]! })
    expect(stream.status).toBe(200)
    await stream.next('pronto')
    const bearer = await openStream({ authorization: `Bearer ${ADMIN}` })
    await bearer.next('pronto')
    bearer.close()

    // A document stored (by any instance: here, straight into the database).
    const doc = received(makeNfeDocuments(HEAD, 500, 1)[0]!)
    // "pronto" came: what is stored from now on is shown.
    const [seen] = await Promise.all([
      stream.next('documento', (d) => d.documento.chave === doc.opened.facts.chave),
      storeDocuments(db.pool, HEAD, [doc])
    ])
    expect(seen).toMatchObject({ tipo: 'documento.novo', empresa_codigo: companyCode, cnpj: HEAD, documento: { situacao: 'autorizada' } })

    // A feed turned on, then its cursor moved by the scheduler (an SQL update here).
    await setFeedOptions(db.pool, companyCode, 'nfe', { ativo: true })
    const on = await stream.next('feed', (f) => f.empresa_codigo === companyCode && f.ativo === true)
    expect(on).toMatchObject({ servico: 'nfe', ult_nsu: '0' })
    await db.pool.query("UPDATE feed_empresas SET ult_nsu = 42, max_nsu = 50, ultimo_erro = 'Rejeição 656', ultimo_erro_codigo = '656', ultimo_erro_em = now()")
    const moved = await stream.next('feed', (f) => f.ult_nsu === '42')
    expect(moved).toMatchObject({ max_nsu: '50', ultimo_erro: { codigo: '656', mensagem: 'Rejeição 656' } })
    stream.close()
  }, 60_000)
})
