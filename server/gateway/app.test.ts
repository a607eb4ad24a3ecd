/**
 * The gateway app through inject(), on a real PostgreSQL and certificates made in the
 * test: every admin route and status, the separation of the admin token and the
 * operational key, rotation, the resolver as the query routes see it, and that no
 * secret reaches a response or a log line.
 */
import { createHash, randomBytes } from 'node:crypto'
import { PassThrough } from 'node:stream'
import pg from 'pg'
import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freshDatabase } from '../../fixtures/db/test-database.js'
import type { TestDatabase } from '../../fixtures/db/test-database.js'
import { ensureApiKey, parseMasterKey } from '../../core/gateway/index.js'
import type { MasterKey } from '../../core/gateway/index.js'
import { createDevChain } from '../../core/sign/index.js'
import type { DevChain } from '../../core/sign/index.js'
import { loadConfig } from '../config.js'
import { buildGatewayApp } from './app.js'
import type { GatewayAppOptions } from './app.js'
import { loadGatewayConfig } from './config.js'
import type { QueryRouteDeps } from './query-types.js'

const DAY_MS = 86_400_000
const ADMIN = `admin-${randomBytes(16).toString('hex')}`
const FIRST_KEY = `operational-${randomBytes(16).toString('hex')}`
const shared = loadConfig({ LOG_LEVEL: 'info' }).shared
const config = loadGatewayConfig({}, shared)

let db: TestDatabase
let masterKey: MasterKey
let app: FastifyInstance
let logs = ''
let matrizChain: DevChain

/** A stand-in for branch gw-query's routes: the same deps, so the key check and the resolver are exercised through HTTP. */
async function probeQueryRoutes (instance: FastifyInstance, deps: QueryRouteDeps): Promise<void> {
  instance.post<{ Body: { empresa_codigo: string } }>('/nfe/distribuicao-dfe', async (request) => {
    if (!await deps.checkApiKey(request)) throw new Error('the hook let an unauthenticated request through')
    const resolved = await deps.resolveCertificate(request.body.empresa_codigo)
    return { empresa: resolved.empresa.empresaCodigo, certificado_de: resolved.certificateCompany?.empresaCodigo, fingerprint: resolved.fingerprint, bytes: resolved.pfx.length }
  })
}

async function build (overrides: Partial<GatewayAppOptions> = {}): Promise<FastifyInstance> {
  const stream = new PassThrough()
  stream.on('data', (c: Buffer) => { logs += c.toString() })
  return await buildGatewayApp({
    shared, config, adminToken: ADMIN, masterKey, database: { pool: db.pool }, logStream: stream, registerQueryRoutes: probeQueryRoutes, ...overrides
  })
}

beforeAll(async () => {
  db = await freshDatabase()
  masterKey = parseMasterKey(randomBytes(32).toString('hex'))!
  await ensureApiKey(db.pool, FIRST_KEY)
  matrizChain = createDevChain({ document: '11222333000181', password: 'Senha-Da-Matriz-123' })
  app = await build()
})
afterAll(async () => {
  await app?.close()
  await db.drop()
})

const admin = { authorization: `Bearer ${ADMIN}` }
let apiKey = FIRST_KEY

function call (method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', url: string, payload?: unknown, headers: Record<string, string> = admin) {
  return app.inject({ method, url, headers, ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }) })
}
const query = (empresaCodigo: string, headers: Record<string, string> = { 'x-api-key': apiKey }) =>
  app.inject({ method: 'POST', url: '/nfe/distribuicao-dfe', headers, payload: { empresa_codigo: empresaCodigo } })

describe('public routes', () => {
  it('answers /health without a key and reveals no secret', async () => {
    const res = await app.inject({ method: 'GET', url: '/health' })
    expect(res.statusCode).toBe(200)
    expect(res.json()).toMatchObject({ status: 'UP', service: 'razao-gateway', ambiente: 'homologacao', database: 'UP' })
    expect(res.headers['x-request-id']).toEqual(expect.any(String))
    for (const secret of [ADMIN, FIRST_KEY, masterKey.key.toString('hex'), masterKey.id]) expect(res.body).not.toContain(secret)
  })

  it('serves the admin page without the token, locked down by its headers', async () => {
    const res = await app.inject({ method: 'GET', url: '/admin' })
    expect(res.statusCode).toBe(200)
    expect(res.headers['content-type']).toMatch(/text\/html/)
    expect(res.headers['content-security-policy']).toMatch(/script-src 'self'/)
    expect(res.body).toContain('/admin-ui/app.js')
    expect((await app.inject({ method: 'GET', url: '/admin-ui/app.js' })).statusCode).toBe(200)
  })

  it('answers an unknown route 404 in the JSON error shape, key or not', async () => {
    const res = await app.inject({ method: 'GET', url: '/nope' })
    expect(res.statusCode).toBe(404)
    expect(res.json()).toEqual({ detail: 'No route GET /nope.', code: 'ROUTE_NOT_FOUND', requestId: res.headers['x-request-id'] })
    expect((await call('GET', '/admin/nope')).statusCode).toBe(404)
  })
})

describe('authentication', () => {
  it('opens the admin API only with the Bearer admin token; the operational key never opens it', async () => {
    expect((await call('GET', '/admin/empresas', undefined, {})).statusCode).toBe(401)
    expect((await call('GET', '/admin/empresas', undefined, { authorization: 'Bearer wrong-token-value' })).statusCode).toBe(401)
    expect((await call('GET', '/admin/empresas', undefined, { authorization: ADMIN })).statusCode).toBe(401)
    expect((await call('GET', '/admin/empresas', undefined, { 'x-api-key': apiKey })).statusCode).toBe(401)
    expect((await call('GET', '/admin/empresas', undefined, { authorization: `Bearer ${apiKey}` })).statusCode).toBe(401)
    expect((await call('GET', '/admin/empresas', undefined, { 'x-api-key': ADMIN })).statusCode).toBe(401)
    const refused = await call('POST', '/admin/api-key/rotate', undefined, { 'x-api-key': apiKey })
    expect(refused.statusCode).toBe(401)
    expect(refused.headers['www-authenticate']).toBe('Bearer')
    expect(refused.json()).toMatchObject({ detail: expect.stringMatching(/Authorization: Bearer <token>.*GATEWAY_ADMIN_TOKEN.*\.data\/gateway-admin-api-key/), code: 'UNAUTHORIZED' })
    expect((await call('GET', '/admin/empresas')).statusCode).toBe(200)
  })

  it('opens the query routes only with the operational key; the admin token never opens them', async () => {
    expect((await query('X', {})).statusCode).toBe(401)
    expect((await query('X', { 'x-api-key': ADMIN })).statusCode).toBe(401)
    expect((await query('X', admin)).statusCode).toBe(401)
    expect((await query('X', { ...admin, 'x-api-key': 'not-the-key' })).json()).toEqual({ detail: expect.stringMatching(/^Invalid or missing API key\. .*X-API-Key header.*GATEWAY_API_KEY.*POST \/admin\/api-key\/rotate/), code: 'UNAUTHORIZED', requestId: expect.any(String) })
    // Past authentication: the company is unknown.
    expect((await query('X')).statusCode).toBe(404)
  })
})

describe('companies', () => {
  let matriz: string
  it('registers a company: 201 with a generated empresa_codigo; bad fields are 400 naming the field', async () => {
    const res = await call('POST', '/admin/empresas', { razao_social: 'Matriz Comércio Ltda', cnpj: '11.222.333/0001-81', codigo_dominio: '501' })
    expect(res.statusCode).toBe(201)
    const body = res.json()
    expect(body).toMatchObject({
      razao_social: 'Matriz Comércio Ltda', cnpj: '11222333000181', codigo_dominio: '501', matriz_empresa_codigo: null,
      herda_certificado_matriz: false, ativo: true, certificado_status: 'AUSENTE', certificado: null
    })
    expect(body.empresa_codigo).toMatch(/^[A-Z0-9]{4,32}$/)
    matriz = body.empresa_codigo

    const alpha = await call('POST', '/admin/empresas', { razao_social: 'Alfa Nova', cnpj: '12.abc.345/01de-35' })
    expect(alpha.statusCode).toBe(201)
    expect(alpha.json().cnpj).toBe('12ABC34501DE35')

    const cases: Array<[unknown, RegExp]> = [
      [{ cnpj: '11222333000181' }, /razao_social/],
      [{ razao_social: 'X' }, /cnpj/],
      [{ razao_social: 'X', cnpj: '11222333000182' }, /cnpj .* not a valid CNPJ/],
      [{ razao_social: 'X', cnpj: 11222333000181 }, /"cnpj" must be a string/],
      [{ razao_social: 'X', cnpj: '11222333000181', nome: 'Y' }, /Unknown field "nome"/],
      [{ razao_social: 'X', cnpj: '11222333000181', herda_certificado_matriz: 'sim' }, /herda_certificado_matriz/],
      [{ razao_social: 'X', cnpj: '11222333000181', herda_certificado_matriz: true }, /needs matriz_empresa_codigo/],
      [{ razao_social: ' ', cnpj: '11222333000181' }, /razao_social/],
      [[1, 2], /JSON object/]
    ]
    for (const [payload, detail] of cases) {
      const bad = await call('POST', '/admin/empresas', payload)
      expect(bad.statusCode, JSON.stringify(payload)).toBe(400)
      expect(bad.json().detail).toMatch(detail)
    }
    const notJson = await app.inject({ method: 'POST', url: '/admin/empresas', headers: { ...admin, 'content-type': 'application/json' }, payload: '{"razao_social":' })
    expect(notJson.statusCode).toBe(400)
    expect(notJson.json()).toEqual({ detail: expect.any(String), code: 'REQUEST_INVALID', requestId: expect.any(String) })
    const duplicate = await call('POST', '/admin/empresas', { razao_social: 'Outra', cnpj: '11444777000161', codigo_dominio: '501' })
    expect(duplicate.statusCode).toBe(422)
    expect(duplicate.json().detail).toMatch(/codigo_dominio "501" is already registered/)
  })

  it('refuses a second active company with the same CNPJ (409 naming the first), however it is written, and on reactivation', async () => {
    const again = await call('POST', '/admin/empresas', { razao_social: 'Matriz de Novo', cnpj: '11222333000181' })
    expect(again.statusCode).toBe(409)
    expect(again.json().detail).toMatch(new RegExp(`CNPJ 11\\.222\\.333/0001-81 already belongs to the active company "Matriz Comércio Ltda" \\(codigo_dominio "501", empresa_codigo "${matriz}"\\)`))
    const lower = await call('POST', '/admin/empresas', { razao_social: 'Alfa de Novo', cnpj: '12.abc.345/01de-35' })
    expect(lower.statusCode).toBe(409)
    // A branch has a CNPJ of its own: same root, other order number, accepted.
    const other = await call('POST', '/admin/empresas', { razao_social: 'Outra Ltda', cnpj: '11.444.777/0001-61' })
    expect(other.statusCode).toBe(201)
    const moved = await call('PATCH', `/admin/empresas/${other.json().empresa_codigo as string}`, { cnpj: '11222333000181' })
    expect(moved.statusCode).toBe(409)
    // Deactivated, its CNPJ is free; the old company cannot come back while the new one is active.
    expect((await call('DELETE', `/admin/empresas/${other.json().empresa_codigo as string}`)).statusCode).toBe(200)
    const reuse = await call('POST', '/admin/empresas', { razao_social: 'Sucessora Ltda', cnpj: '11444777000161' })
    expect(reuse.statusCode).toBe(201)
    const back = await call('PATCH', `/admin/empresas/${other.json().empresa_codigo as string}`, { ativo: true })
    expect(back.statusCode).toBe(409)
    expect(back.json().detail).toMatch(/"Sucessora Ltda"/)
    expect((await call('DELETE', `/admin/empresas/${reuse.json().empresa_codigo as string}`)).statusCode).toBe(200)
  })

  it('lists, reads, updates and deactivates; unknown codes are 404', async () => {
    const list = await call('GET', '/admin/empresas')
    expect(list.statusCode).toBe(200)
    expect(list.json().map((c: any) => c.empresa_codigo)).toContain(matriz)
    expect((await call('GET', `/admin/empresas/${matriz}`)).json()).toMatchObject({ empresa_codigo: matriz, razao_social: 'Matriz Comércio Ltda' })
    expect((await call('GET', '/admin/empresas/EMPNADA')).statusCode).toBe(404)

    const renamed = await call('PATCH', `/admin/empresas/${matriz}`, { razao_social: 'Matriz Comércio e Serviços Ltda' })
    expect(renamed.statusCode).toBe(200)
    expect(renamed.json()).toMatchObject({ razao_social: 'Matriz Comércio e Serviços Ltda', cnpj: '11222333000181' })
    expect((await call('PATCH', `/admin/empresas/${matriz}`, {})).statusCode).toBe(400)
    expect((await call('PATCH', `/admin/empresas/${matriz}`, { ativo: 'no' })).statusCode).toBe(400)
    expect((await call('PATCH', '/admin/empresas/EMPNADA', { razao_social: 'X' })).statusCode).toBe(404)

    const extra = (await call('POST', '/admin/empresas', { razao_social: 'Para desativar', cnpj: '11444777000161' })).json().empresa_codigo
    const off = await call('DELETE', `/admin/empresas/${extra}`)
    expect(off.statusCode).toBe(200)
    expect(off.json()).toMatchObject({ empresa_codigo: extra, ativo: false })
    expect((await call('DELETE', '/admin/empresas/EMPNADA')).statusCode).toBe(404)
    const on = await call('PATCH', `/admin/empresas/${extra}`, { ativo: true })
    expect(on.json().ativo).toBe(true)
  })

  it('stores a certificate: 201 with its facts and never the file or password; bad uploads get 400/404/422', async () => {
    const pfxBase64 = matrizChain.pkcs12.toString('base64')
    const res = await call('POST', '/admin/certificados', { empresa_codigo: matriz, pfx_base64: pfxBase64, senha: matrizChain.password })
    expect(res.statusCode).toBe(201)
    const body = res.json()
    expect(body).toMatchObject({ empresa_codigo: matriz, cnpj: '11222333000181', status: 'VALIDO', fingerprint: expect.stringMatching(/^[0-9A-F]{64}$/) })
    expect(body.subject).toMatch(/CN=/)
    expect(body.days_to_expiry).toBeGreaterThan(360)
    expect(Date.parse(body.valid_until)).toBeGreaterThan(Date.parse(body.valid_from))
    expect(res.body).not.toContain(matrizChain.password)
    expect(res.body).not.toContain(pfxBase64.slice(0, 40))

    const bad = async (payload: unknown, status: number, detail: RegExp) => {
      const r = await call('POST', '/admin/certificados', payload)
      expect(r.statusCode, JSON.stringify(payload).slice(0, 80)).toBe(status)
      expect(r.json().detail).toMatch(detail)
      expect(r.body).not.toContain(matrizChain.password)
    }
    await bad({ empresa_codigo: matriz, pfx_base64: pfxBase64, senha: 'senha errada' }, 422, /password/)
    await bad({ empresa_codigo: matriz, pfx_base64: 'não é base64!', senha: 'x' }, 400, /pfx_base64/)
    await bad({ empresa_codigo: matriz, pfx_base64: randomBytes(300).toString('base64'), senha: 'x' }, 422, /not a readable PKCS#12/)
    await bad({ empresa_codigo: matriz, senha: 'x' }, 400, /pfx_base64/)
    await bad({ empresa_codigo: 'EMPNADA', pfx_base64: pfxBase64, senha: matrizChain.password }, 404, /EMPNADA/)
    const now = Date.now()
    const expired = createDevChain({ document: '11222333000181', password: 'p', signerNotBefore: new Date(now - 400 * DAY_MS), signerNotAfter: new Date(now - DAY_MS) })
    await bad({ empresa_codigo: matriz, pfx_base64: expired.pkcs12.toString('base64'), senha: 'p' }, 422, /expired/)
    const other = createDevChain({ document: '11444777000161', password: 'p' })
    await bad({ empresa_codigo: matriz, pfx_base64: other.pkcs12.toString('base64'), senha: 'p' }, 422, /CNPJ root/)

    const list = await call('GET', '/admin/certificados')
    expect(list.statusCode).toBe(200)
    expect(list.json()).toEqual([expect.objectContaining({ empresa_codigo: matriz, cnpj: '11222333000181', days_to_expiry: body.days_to_expiry })])
    expect(list.body).not.toContain(matrizChain.password)
  })

  it('resolves through the query side: a branch that inherits uses the head office certificate', async () => {
    const branch = await call('POST', '/admin/empresas', { razao_social: 'Filial Um', cnpj: '11222333000262', matriz_empresa_codigo: matriz, herda_certificado_matriz: true })
    expect(branch.statusCode).toBe(201)
    const filial = branch.json()
    expect(filial).toMatchObject({ matriz_empresa_codigo: matriz, herda_certificado_matriz: true, certificado_status: 'VALIDO', certificado: { origem: 'MATRIZ', cnpj: '11222333000181' } })
    const res = await query(filial.empresa_codigo)
    expect(res.statusCode).toBe(200)
    expect(res.json()).toMatchObject({ empresa: filial.empresa_codigo, certificado_de: matriz, bytes: matrizChain.pkcs12.length })

    const own = await call('POST', '/admin/empresas', { razao_social: 'Filial Dois', cnpj: '11222333000343', matriz_empresa_codigo: matriz })
    expect((await query(own.json().empresa_codigo)).statusCode).toBe(422)
    await call('DELETE', `/admin/empresas/${own.json().empresa_codigo}`)
    expect((await query(own.json().empresa_codigo)).statusCode).toBe(404)
    // A gateway started with another master key cannot open the store: 503, saying why.
    const otherKey = await build({ masterKey: parseMasterKey(randomBytes(32).toString('hex'))! })
    const wrong = await otherKey.inject({ method: 'POST', url: '/nfe/distribuicao-dfe', headers: { 'x-api-key': apiKey }, payload: { empresa_codigo: matriz } })
    await otherKey.close()
    expect(wrong.statusCode).toBe(503)
    expect(wrong.json().detail).toMatch(/another master key/)
  })

  it('removes a certificate: 204, then 422 (none left), 404 for an unknown company', async () => {
    const alpha = (await call('POST', '/admin/empresas', { razao_social: 'Para remover', cnpj: '11222333000424' })).json().empresa_codigo
    const chain = createDevChain({ document: '11222333000424', password: 'p' })
    expect((await call('POST', '/admin/certificados', { empresa_codigo: alpha, pfx_base64: chain.pkcs12.toString('base64'), senha: 'p' })).statusCode).toBe(201)
    expect((await query(alpha)).statusCode).toBe(200)
    const removed = await call('DELETE', `/admin/certificados/${alpha}`)
    expect(removed.statusCode).toBe(204)
    expect(removed.body).toBe('')
    expect((await call('DELETE', `/admin/certificados/${alpha}`)).statusCode).toBe(422)
    expect((await call('DELETE', '/admin/certificados/EMPNADA')).statusCode).toBe(404)
    expect((await query(alpha)).statusCode).toBe(422)
  })
})

describe('managed feed (issue 35)', () => {
  it('turns a company\'s feed on and off, lists its state with the authority\'s wait and the documents kept; bad requests are 400/404', async () => {
    const cnpj = '11444777000242'
    const code = (await call('POST', '/admin/empresas', { razao_social: 'Feed Ltda', cnpj })).json().empresa_codigo
    expect((await call('GET', '/admin/feed')).json().filter((f: any) => f.empresa_codigo === code)).toEqual([])

    const on = await call('PUT', `/admin/empresas/${code}/feed/nfe`, { ativo: true, ciencia_automatica: true })
    expect(on.statusCode).toBe(200)
    expect(on.json()).toMatchObject({ empresa_codigo: code, cnpj, servico: 'nfe', ativo: true, ciencia_automatica: true, ult_nsu: '0', max_nsu: null, lacunas: 0, ultimo_erro: null })
    // Turned on, it is due at once.
    expect(Date.parse(on.json().proxima_consulta)).toBeLessThanOrEqual(Date.now() + 60_000)

    // The authority's wait for the CNPJ counts as the next allowed call; documents are counted by kind and status.
    await db.pool.query(`INSERT INTO esperas_consulta (servico, cnpj, espera_ate, motivo, cstat) VALUES ('nfe', $1, now() + interval '1 hour', 'sem documentos', '137')`, [cnpj])
    await db.pool.query(`INSERT INTO documentos_fiscais (chave, esquema, tipo, cnpjs, situacao, xml) VALUES
      ('35261199999090910270550010000000011000000100', 'resNFe', 'resNFe', ARRAY[$1], 'autorizada', '<x/>'),
      ('35261199999090910270550010000000021000000200', 'procNFe', 'procNFe', ARRAY[$1], 'cancelada', '<x/>')`, [cnpj])
    const listed = (await call('GET', '/admin/feed')).json().find((f: any) => f.empresa_codigo === code)
    expect(Date.parse(listed.proxima_consulta)).toBeGreaterThan(Date.now() + 30 * 60_000)
    expect(listed.documentos).toEqual({ por_tipo: { resNFe: 1, procNFe: 1 }, por_situacao: { autorizada: 1, cancelada: 1 } })

    const off = await call('PUT', `/admin/empresas/${code}/feed/nfe`, { ativo: false })
    expect(off.json()).toMatchObject({ ativo: false, ciencia_automatica: true })
    expect((await call('PUT', `/admin/empresas/${code}/feed/adn`, { ciencia_automatica: true })).statusCode).toBe(400)
    expect((await call('PUT', `/admin/empresas/${code}/feed/nfe`, {})).statusCode).toBe(400)
    expect((await call('PUT', `/admin/empresas/${code}/feed/nfe`, { ativo: 'sim' })).statusCode).toBe(400)
    expect((await call('PUT', `/admin/empresas/${code}/feed/cte`, { ativo: true })).statusCode).toBe(400)
    expect((await call('PUT', '/admin/empresas/EMPNADA/feed/nfe', { ativo: true })).statusCode).toBe(404)
    expect((await call('GET', '/admin/feed', undefined, { authorization: 'Bearer wrong' })).statusCode).toBe(401)
  })
})

describe('operational key rotation', () => {
  it('shows the new key once, stores only its hash, refuses the old key at once', async () => {
    const matriz = (await call('GET', '/admin/empresas')).json().find((c: any) => c.codigo_dominio === '501').empresa_codigo
    expect((await query(matriz)).statusCode).toBe(200)
    const res = await call('POST', '/admin/api-key/rotate')
    expect(res.statusCode).toBe(201)
    expect(res.headers['cache-control']).toBe('no-store')
    const { api_key: newKey } = res.json()
    expect(newKey).toMatch(/^[A-Za-z0-9_-]{43}$/)
    expect((await query(matriz, { 'x-api-key': FIRST_KEY })).statusCode).toBe(401)
    expect((await query(matriz, { 'x-api-key': newKey })).statusCode).toBe(200)
    apiKey = newKey
    const { rows } = await db.pool.query('SELECT row_to_json(k)::text AS t FROM chaves_api k')
    expect(rows).toHaveLength(1)
    expect(rows[0].t).toContain(createHash('sha256').update(newKey).digest('hex'))
    expect(rows[0].t).not.toContain(newKey)
    // Another process on the same database (its own cache) follows the rotation too.
    const second = await build()
    expect((await second.inject({ method: 'POST', url: '/nfe/distribuicao-dfe', headers: { 'x-api-key': FIRST_KEY }, payload: { empresa_codigo: matriz } })).statusCode).toBe(401)
    await second.close()
  })
})

describe('secrets and failures', () => {
  it('never writes a secret to the log', () => {
    expect(logs).toContain('certificate stored')
    for (const secret of [ADMIN, FIRST_KEY, apiKey, matrizChain.password, matrizChain.pkcs12.toString('base64').slice(0, 40), masterKey.key.toString('hex')]) {
      expect(logs).not.toContain(secret)
    }
  })

  it('answers 503 when the database cannot be reached', async () => {
    const down = new pg.Pool({ connectionString: 'postgres://razao@127.0.0.1:1/none', connectionTimeoutMillis: 2000 })
    down.on('error', () => undefined)
    const broken = await build({ database: { pool: down } })
    try {
      expect((await broken.inject({ method: 'GET', url: '/admin/empresas', headers: admin })).statusCode).toBe(503)
      expect((await broken.inject({ method: 'GET', url: '/health' })).statusCode).toBe(503)
      const q = await broken.inject({ method: 'POST', url: '/nfe/distribuicao-dfe', headers: { 'x-api-key': apiKey }, payload: { empresa_codigo: 'X' } })
      expect(q.statusCode).toBe(503)
      expect(q.body).not.toMatch(/127\.0\.0\.1|ECONNREFUSED/)
    } finally {
      await broken.close()
      await down.end()
    }
  })
})
