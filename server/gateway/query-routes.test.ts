/**
 * The query routes end to end: the real client code (SOAP and JSON clients, keep-alive
 * TLS agents, the guard) against the loopback fakes over real mutual TLS, with a PKI and
 * PKCS#12 files made for this run.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PassThrough } from 'node:stream'
import { gunzipSync } from 'node:zlib'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import type { FastifyInstance } from 'fastify'
import { makeNfeDocuments, makeNfeEventDocument, makeNfseCancellation, makeNfseDocuments } from '../../fixtures/gateway/documents.js'
import type { FakeNfeDocument, FakeNfseDocument } from '../../fixtures/gateway/documents.js'
import { startNfeFake } from '../../fixtures/gateway/nfe-fake.js'
import type { NfeFake, NfeFakeOptions } from '../../fixtures/gateway/nfe-fake.js'
import { startAdnFake } from '../../fixtures/gateway/adn-fake.js'
import type { AdnFake } from '../../fixtures/gateway/adn-fake.js'
import { ALPHANUMERIC_CNPJ, BRANCH_CNPJ, HEAD_OFFICE_CNPJ, OTHER_ROOT_CNPJ, createGatewayPki } from '../../fixtures/gateway/pki.js'
import type { GatewayPki } from '../../fixtures/gateway/pki.js'
import { TEST_API_KEY, buildQueryApp } from '../../fixtures/gateway/query-app.js'
import type { QueryAppOptions, TestCompany } from '../../fixtures/gateway/query-app.js'
import { freshDatabase } from '../../fixtures/db/test-database.js'
import type { TestDatabase } from '../../fixtures/db/test-database.js'

let pki: GatewayPki
let dir: string
let db: TestDatabase
const open: Array<{ close: () => Promise<void> }> = []

beforeAll(async () => {
  pki = createGatewayPki()
  dir = await mkdtemp(join(tmpdir(), 'razao-gw-query-'))
  db = await freshDatabase()
})
afterEach(async () => {
  for (const o of open.splice(0)) await o.close()
  // Each test starts with no waiting period (they live in the database, shared by instances).
  await db.pool.query('DELETE FROM esperas_consulta')
  await db.pool.query('DELETE FROM documentos_fiscais')
})
afterAll(async () => {
  await db?.drop()
  await rm(dir, { recursive: true, force: true })
})

function companies (): Record<string, TestCompany> {
  return {
    MATRIZ: { cnpj: HEAD_OFFICE_CNPJ, cert: pki.client },
    FILIAL: { cnpj: BRANCH_CNPJ, cert: pki.client, inheritsFrom: 'MATRIZ' },
    // The store's own errors reach the app's error handler.
    SUMIDA: { cnpj: HEAD_OFFICE_CNPJ, cert: pki.client, engineError: 'COMPANY_NOT_FOUND' },
    ALFA: { cnpj: ALPHANUMERIC_CNPJ, cert: pki.alphanumeric },
    ESTRANHA: { cnpj: HEAD_OFFICE_CNPJ, cert: pki.stranger },
    VENCIDA: { cnpj: HEAD_OFFICE_CNPJ, cert: pki.client, incompatible: 'it expired on 2026-01-31.' },
    INATIVA: { cnpj: HEAD_OFFICE_CNPJ, cert: pki.client, ativo: false },
    // The registry says another root than the certificate holds: only the authority can tell.
    TROCADA: { cnpj: OTHER_ROOT_CNPJ, cert: pki.client }
  }
}

interface Setup { app: FastifyInstance, nfe: NfeFake, adn: AdnFake, resolved: string[] }

async function setup (o: {
  nfeDocs?: Record<string, FakeNfeDocument[]>
  adnDocs?: Record<string, FakeNfseDocument[]>
  nfe?: Partial<NfeFakeOptions>
  timeoutMs?: number
  cooldownMs?: number
  app?: Partial<QueryAppOptions>
} = {}): Promise<Setup> {
  const nfe = await startNfeFake({ pki, tpAmb: 2, documents: new Map(Object.entries(o.nfeDocs ?? {})), ...o.nfe })
  open.push(nfe)
  const adn = await startAdnFake({ pki, tpAmb: 2, documents: new Map(Object.entries(o.adnDocs ?? {})), slowMs: 5000 })
  open.push(adn)
  const resolved: string[] = []
  const app = await buildQueryApp({
    pki, dir, pool: db.pool, companies: companies(), config: { nfeUrl: nfe.url, adnUrl: adn.baseUrl, timeoutMs: o.timeoutMs ?? 5000, ...(o.cooldownMs === undefined ? {} : { cooldownMs: o.cooldownMs }) },
    onResolve: (c) => resolved.push(c), ...o.app
  })
  open.push(app)
  return { app, nfe, adn, resolved }
}

const ZERO = '0'.repeat(15)

async function nfeQuery (app: FastifyInstance, body: unknown, headers: Record<string, string> = {}): Promise<{ status: number, json: any, headers: Record<string, unknown> }> {
  const res = await app.inject({
    method: 'POST', url: '/nfe/distribuicao-dfe',
    headers: { 'x-api-key': TEST_API_KEY, 'content-type': 'application/json', ...headers },
    payload: typeof body === 'string' ? body : JSON.stringify(body)
  })
  return { status: res.statusCode, json: res.json(), headers: res.headers }
}

async function adnQuery (app: FastifyInstance, body: unknown): Promise<{ status: number, json: any, headers: Record<string, unknown> }> {
  const res = await app.inject({
    method: 'POST', url: '/adn/consultar-dfe',
    headers: { 'x-api-key': TEST_API_KEY, 'content-type': 'application/json' },
    payload: JSON.stringify(body)
  })
  return { status: res.statusCode, json: res.json(), headers: res.headers }
}

describe('POST /nfe/distribuicao-dfe', () => {
  it('returns the documents with docZip byte-identical to what the authority sent, and pages by ultNSU', async () => {
    const docs = makeNfeDocuments(HEAD_OFFICE_CNPJ, 1, 3)
    const { app, nfe } = await setup({ nfeDocs: { [HEAD_OFFICE_CNPJ]: docs }, nfe: { batchSize: 2 } })
    const first = await nfeQuery(app, { empresa_codigo: 'MATRIZ', cnpj_consulta: HEAD_OFFICE_CNPJ, ult_nsu: ZERO })
    expect(first.status).toBe(200)
    expect(first.json).toEqual({
      success: true, cStat: '138', xMotivo: 'Documento(s) localizado(s)', ultNSU: '000000000000002', maxNSU: '000000000000003',
      documentos: docs.slice(0, 2).map((d) => ({ docZip: d.docZip, nsu: d.nsu, schema: d.schema }))
    })
    expect(gunzipSync(Buffer.from(first.json.documentos[1].docZip, 'base64')).toString('utf8')).toBe(docs[1]!.xml)
    expect(nfe.answers[0]).toContain(`>${docs[0]!.docZip}</docZip>`)
    const second = await nfeQuery(app, { empresa_codigo: 'MATRIZ', cnpj_consulta: HEAD_OFFICE_CNPJ, ult_nsu: first.json.ultNSU })
    expect(second.status).toBe(200)
    expect(second.json.documentos.map((d: { nsu: string }) => d.nsu)).toEqual(['000000000000003'])
    expect(nfe.requests.map((r) => [r.cnpj, r.ultNSU, r.tpAmb, r.cStat])).toEqual([
      [HEAD_OFFICE_CNPJ, ZERO, '2', '138'], [HEAD_OFFICE_CNPJ, '000000000000002', '2', '138']
    ])
    // ultNSU reached maxNSU: the next query would earn a 656, so the gateway holds it back.
    const third = await nfeQuery(app, { empresa_codigo: 'MATRIZ', cnpj_consulta: HEAD_OFFICE_CNPJ, ult_nsu: second.json.ultNSU })
    expect(third.status).toBe(429)
    expect(nfe.requests).toHaveLength(2)
  })

  it('answers cStat 137 with no documents, then holds further queries for that CNPJ with 429 and Retry-After', async () => {
    const { app, nfe } = await setup({ cooldownMs: 3_600_000 })
    const first = await nfeQuery(app, { empresa_codigo: 'MATRIZ', cnpj_consulta: HEAD_OFFICE_CNPJ, ult_nsu: ZERO })
    expect(first.status).toBe(200)
    expect(first.json).toMatchObject({ success: true, cStat: '137', documentos: [] })
    const again = await nfeQuery(app, { empresa_codigo: 'MATRIZ', cnpj_consulta: HEAD_OFFICE_CNPJ, ult_nsu: first.json.ultNSU })
    expect(again.status).toBe(429)
    const retryAfter = Number(again.headers['retry-after'])
    expect(retryAfter).toBeGreaterThan(3500)
    expect(retryAfter).toBeLessThanOrEqual(3600)
    expect(again.json.detail).toMatch(/cStat 137/)
    expect(again.json.detail).toContain(HEAD_OFFICE_CNPJ)
    expect(nfe.requests).toHaveLength(1)
    // Another establishment has its own cursor and its own waiting period.
    const branch = await nfeQuery(app, { empresa_codigo: 'FILIAL', cnpj_consulta: BRANCH_CNPJ, ult_nsu: ZERO })
    expect(branch.status).toBe(200)
  })

  it('lets the next query through once a configured waiting period has passed', async () => {
    const { app, nfe } = await setup({ cooldownMs: 200 })
    const body = { empresa_codigo: 'MATRIZ', cnpj_consulta: HEAD_OFFICE_CNPJ, ult_nsu: ZERO }
    expect((await nfeQuery(app, body)).status).toBe(200)
    expect((await nfeQuery(app, body)).status).toBe(429)
    await new Promise((resolve) => setTimeout(resolve, 250))
    // The fake keeps the authority's own hour: it answers 656, which proves the query went out.
    const later = await nfeQuery(app, body)
    expect(later.status).toBe(422)
    expect(later.json.cStat).toBe('656')
    expect(nfe.requests).toHaveLength(2)
  })

  it('maps cStat 656 to 422 with the authority\'s fields, and answers the next query itself with 429', async () => {
    const { app, nfe } = await setup({ nfeDocs: { [HEAD_OFFICE_CNPJ]: makeNfeDocuments(HEAD_OFFICE_CNPJ, 1, 2) } })
    nfe.scenario = '656'
    const res = await nfeQuery(app, { empresa_codigo: 'MATRIZ', cnpj_consulta: HEAD_OFFICE_CNPJ, ult_nsu: ZERO })
    expect(res.status).toBe(422)
    expect(res.json).toMatchObject({ cStat: '656', ultNSU: ZERO, maxNSU: '000000000000002' })
    expect(res.json.detail).toMatch(/refused the query: cStat 656 \(Rejeicao: Consumo Indevido/)
    nfe.scenario = 'normal'
    const next = await nfeQuery(app, { empresa_codigo: 'MATRIZ', cnpj_consulta: HEAD_OFFICE_CNPJ, ult_nsu: ZERO })
    expect(next.status).toBe(429)
    expect(next.json.detail).toMatch(/cStat 656/)
    expect(nfe.requests).toHaveLength(1)
  })

  it('maps a SOAP Fault to 422 with its reason', async () => {
    const { app, nfe } = await setup()
    nfe.scenario = 'fault'
    const res = await nfeQuery(app, { empresa_codigo: 'MATRIZ', cnpj_consulta: HEAD_OFFICE_CNPJ, ult_nsu: ZERO })
    expect(res.status).toBe(422)
    expect(res.json.detail).toMatch(/SOAP Fault \(HTTP 500, Sender\): Server was unable to read request\. ---> Erro simulado pelo fake/)
  })

  it('gives up on a slow authority at the configured timeout with 503', async () => {
    const { app, nfe } = await setup({ timeoutMs: 300, nfe: { slowMs: 60_000 } })
    nfe.scenario = 'slow'
    const started = Date.now()
    const res = await nfeQuery(app, { empresa_codigo: 'MATRIZ', cnpj_consulta: HEAD_OFFICE_CNPJ, ult_nsu: ZERO })
    expect(res.status).toBe(503)
    expect(res.json.detail).toMatch(/did not answer within 300 ms/)
    // The service answered before the authority did: the fake has sent nothing yet.
    expect(nfe.answers).toHaveLength(0)
    // A hang catcher only: 0.7 s at a load of 3, 0.85 s at 13 (the first query with a
    // certificate also opens it in a new thread).
    expect(Date.now() - started).toBeLessThan(20_000)
  })

  it('maps a dropped connection and an HTTP 503 of the authority to 503', async () => {
    const { app, nfe } = await setup()
    nfe.scenario = 'drop'
    const dropped = await nfeQuery(app, { empresa_codigo: 'MATRIZ', cnpj_consulta: HEAD_OFFICE_CNPJ, ult_nsu: ZERO })
    expect(dropped.status).toBe(503)
    expect(dropped.json.detail).toMatch(/dropped the connection before answering/)
    nfe.scenario = 'http503'
    const down = await nfeQuery(app, { empresa_codigo: 'MATRIZ', cnpj_consulta: HEAD_OFFICE_CNPJ, ult_nsu: ZERO })
    expect(down.status).toBe(503)
    expect(down.json.detail).toMatch(/failed with HTTP 503/)
  })

  it('is refused in the handshake when the certificate does not chain to a root the authority trusts', async () => {
    const { app, nfe } = await setup()
    const res = await nfeQuery(app, { empresa_codigo: 'ESTRANHA', cnpj_consulta: HEAD_OFFICE_CNPJ, ult_nsu: ZERO })
    expect(res.status).toBe(422)
    expect(res.json.detail).toMatch(/closed the connection during the TLS handshake, after the company's certificate was presented/)
    expect(nfe.refusedHandshakes()).toBeGreaterThan(0)
    expect(nfe.requests).toHaveLength(0)
  })

  it('queries a branch that inherits with the head office\'s certificate and the branch\'s own CNPJ', async () => {
    const { app, nfe } = await setup({ nfeDocs: { [BRANCH_CNPJ]: makeNfeDocuments(BRANCH_CNPJ, 1, 2) }, nfe: { batchSize: 1 } })
    const res = await nfeQuery(app, { empresa_codigo: 'FILIAL', cnpj_consulta: '11.222.333/0002-62', ult_nsu: ZERO })
    expect(res.status).toBe(200)
    expect(nfe.requests[0]).toMatchObject({ cnpj: BRANCH_CNPJ, certCnpj: HEAD_OFFICE_CNPJ, cStat: '138' })
  })

  it('accepts an alphanumeric CNPJ, punctuated and in lower case, and sends it upper case without punctuation', async () => {
    const { app, nfe } = await setup()
    const res = await nfeQuery(app, { empresa_codigo: 'ALFA', cnpj_consulta: '12.abc.345/0001-88', ult_nsu: ZERO })
    expect(res.status).toBe(200)
    expect(nfe.requests[0]).toMatchObject({ cnpj: ALPHANUMERIC_CNPJ, certCnpj: ALPHANUMERIC_CNPJ })
  })

  it('passes the authority\'s refusal of a CNPJ outside the certificate\'s root on as 422 with its cStat', async () => {
    const { app } = await setup()
    const res = await nfeQuery(app, { empresa_codigo: 'TROCADA', cnpj_consulta: OTHER_ROOT_CNPJ, ult_nsu: ZERO })
    expect(res.status).toBe(422)
    expect(res.json.cStat).toBe('593')
  })

  it('reuses one TLS connection for consecutive queries with one certificate', async () => {
    const { app, nfe } = await setup({ nfeDocs: { [HEAD_OFFICE_CNPJ]: makeNfeDocuments(HEAD_OFFICE_CNPJ, 1, 8) }, nfe: { batchSize: 1 } })
    let ult = ZERO
    for (let i = 0; i < 6; i++) {
      const res = await nfeQuery(app, { empresa_codigo: 'MATRIZ', cnpj_consulta: HEAD_OFFICE_CNPJ, ult_nsu: ult })
      expect(res.status).toBe(200)
      ult = res.json.ultNSU
    }
    // The branch shares the head office's certificate, hence its connection.
    expect((await nfeQuery(app, { empresa_codigo: 'FILIAL', cnpj_consulta: BRANCH_CNPJ, ult_nsu: ZERO })).status).toBe(200)
    expect(nfe.requests).toHaveLength(7)
    expect(nfe.handshakes()).toBe(1)
  })

  it('serializes concurrent queries for one CNPJ: never two at the authority at once, in arrival order', async () => {
    const { app, nfe } = await setup({ nfeDocs: { [HEAD_OFFICE_CNPJ]: makeNfeDocuments(HEAD_OFFICE_CNPJ, 1, 6) }, nfe: { batchSize: 2, answerDelayMs: 150 } })
    const [a, b] = await Promise.all([
      nfeQuery(app, { empresa_codigo: 'MATRIZ', cnpj_consulta: HEAD_OFFICE_CNPJ, ult_nsu: ZERO }),
      nfeQuery(app, { empresa_codigo: 'MATRIZ', cnpj_consulta: HEAD_OFFICE_CNPJ, ult_nsu: '000000000000002' })
    ])
    expect([a.status, b.status]).toEqual([200, 200])
    expect(b.json.documentos.map((d: { nsu: string }) => d.nsu)).toEqual(['000000000000003', '000000000000004'])
    expect(nfe.maxConcurrentPerCnpj()).toBe(1)
    const [r1, r2] = nfe.requests
    expect(r2!.startedAt).toBeGreaterThanOrEqual(r1!.endedAt)
  })

  it('gives two identical concurrent queries one call and the same answer', async () => {
    const { app, nfe } = await setup({ nfeDocs: { [HEAD_OFFICE_CNPJ]: makeNfeDocuments(HEAD_OFFICE_CNPJ, 1, 6) }, nfe: { batchSize: 2, answerDelayMs: 150 } })
    const body = { empresa_codigo: 'MATRIZ', cnpj_consulta: HEAD_OFFICE_CNPJ, ult_nsu: ZERO }
    const [a, b] = await Promise.all([nfeQuery(app, body), nfeQuery(app, body)])
    expect(a.status).toBe(200)
    expect(b.json).toEqual(a.json)
    expect(nfe.requests).toHaveLength(1)
  })

  it('logs the raw upstream answer at debug level, without the certificate or its password', async () => {
    const lines: string[] = []
    const stream = new PassThrough()
    stream.on('data', (chunk: Buffer) => lines.push(...chunk.toString('utf8').split('\n').filter(Boolean)))
    const { app } = await setup({ app: { logStream: stream } })
    expect((await nfeQuery(app, { empresa_codigo: 'MATRIZ', cnpj_consulta: HEAD_OFFICE_CNPJ, ult_nsu: ZERO })).status).toBe(200)
    const raw = lines.map((l) => JSON.parse(l)).find((l) => l.msg === 'raw upstream answer')
    expect(raw).toMatchObject({ level: 20, upstream: 'nfe-distribuicao-dfe', status: 200 })
    expect(raw.body).toContain('<cStat>137</cStat>')
    const all = lines.join('\n')
    expect(all).not.toContain(pki.client.password)
    expect(all).not.toContain(pki.client.pfx.toString('base64').slice(0, 40))
    expect(all).not.toContain(TEST_API_KEY)
  })
})

describe('a CNPJ whose managed feed is on (issue 35)', () => {
  it('refuses a one-off distNSU query with 422 GATEWAY_FEED_ACTIVE before it reaches the authority', async () => {
    const { app, nfe } = await setup({ nfeDocs: { [HEAD_OFFICE_CNPJ]: makeNfeDocuments(HEAD_OFFICE_CNPJ, 1, 3) } })
    const { rows } = await db.pool.query<{ id: string }>("INSERT INTO empresas (nome, cnpj) VALUES ('Com feed', $1) RETURNING id", [HEAD_OFFICE_CNPJ])
    try {
      await db.pool.query("INSERT INTO feed_empresas (empresa_id, servico, ativo) VALUES ($1, 'nfe', true)", [rows[0]!.id])
      const refused = await nfeQuery(app, { empresa_codigo: 'MATRIZ', cnpj_consulta: HEAD_OFFICE_CNPJ, ult_nsu: ZERO })
      expect(refused).toMatchObject({ status: 422, json: { code: 'GATEWAY_FEED_ACTIVE', detail: expect.stringMatching(/managed feed reads the NSUs of CNPJ 11222333000181.*GET \/v1\/documents/) } })
      expect(nfe.requests).toHaveLength(0)
      // Turned off, the CNPJ may be paged by hand again.
      await db.pool.query('UPDATE feed_empresas SET ativo = false')
      expect((await nfeQuery(app, { empresa_codigo: 'MATRIZ', cnpj_consulta: HEAD_OFFICE_CNPJ, ult_nsu: ZERO })).status).toBe(200)
    } finally {
      await db.pool.query('DELETE FROM empresas WHERE id = $1', [rows[0]!.id])
    }
  })
})

describe('validation, keys and companies', () => {
  it.each([
    [{ cnpj_consulta: HEAD_OFFICE_CNPJ, ult_nsu: ZERO }, /^empresa_codigo is required/],
    [{ empresa_codigo: 'MATRIZ', ult_nsu: ZERO }, /^cnpj_consulta is required/],
    [{ empresa_codigo: 'MATRIZ', cnpj_consulta: '1122233300018', ult_nsu: ZERO }, /^cnpj_consulta must have 14 characters/],
    [{ empresa_codigo: 'MATRIZ', cnpj_consulta: '11222333000182', ult_nsu: ZERO }, /^cnpj_consulta 11222333000182 is not a valid CNPJ/],
    [{ empresa_codigo: 'MATRIZ', cnpj_consulta: 11222333000181, ult_nsu: ZERO }, /^cnpj_consulta must be a text/],
    [{ empresa_codigo: 'MATRIZ', cnpj_consulta: '00000000000000', ult_nsu: ZERO }, /^cnpj_consulta 00000000000000 is not a valid CNPJ/],
    [{ empresa_codigo: 'MATRIZ', cnpj_consulta: HEAD_OFFICE_CNPJ }, /^ult_nsu is required/],
    [{ empresa_codigo: 'MATRIZ', cnpj_consulta: HEAD_OFFICE_CNPJ, ult_nsu: '00000000000000' }, /^ult_nsu must be a text of exactly 15 digits/],
    [{ empresa_codigo: 'MATRIZ', cnpj_consulta: HEAD_OFFICE_CNPJ, ult_nsu: 0 }, /^ult_nsu must be a text of exactly 15 digits/],
    [[1, 2], /^The request body must be a JSON object/]
  ])('refuses an NF-e query with 400 naming the field (%#)', async (body, detail) => {
    const { app, nfe } = await setup()
    const res = await nfeQuery(app, body)
    expect(res.status).toBe(400)
    expect(res.json.detail).toMatch(detail)
    expect(nfe.requests).toHaveLength(0)
  })

  it.each([
    [{ empresa_codigo: 'MATRIZ', cnpj_consulta: HEAD_OFFICE_CNPJ }, /^nsu is required/],
    [{ empresa_codigo: 'MATRIZ', cnpj_consulta: HEAD_OFFICE_CNPJ, nsu: -1 }, /^nsu must be a whole number/],
    [{ empresa_codigo: 'MATRIZ', cnpj_consulta: HEAD_OFFICE_CNPJ, nsu: 1.5 }, /^nsu must be a whole number/],
    [{ empresa_codigo: 'MATRIZ', cnpj_consulta: HEAD_OFFICE_CNPJ, nsu: '3' }, /^nsu must be a whole number/]
  ])('refuses an NFS-e query with 400 naming the field (%#)', async (body, detail) => {
    const { app, adn } = await setup()
    const res = await adnQuery(app, body)
    expect(res.status).toBe(400)
    expect(res.json.detail).toMatch(detail)
    expect(adn.requests).toHaveLength(0)
  })

  it('refuses a body that is not JSON with 400', async () => {
    const { app } = await setup()
    const bad = await nfeQuery(app, '{"empresa_codigo": ', {})
    expect(bad).toMatchObject({ status: 400, json: { detail: 'The request body is not valid JSON.' } })
    const text = await nfeQuery(app, 'empresa_codigo=MATRIZ', { 'content-type': 'text/plain' })
    expect(text).toMatchObject({ status: 400, json: { detail: 'The request body must be JSON (Content-Type: application/json).' } })
    const form = await nfeQuery(app, 'empresa_codigo=MATRIZ', { 'content-type': 'application/x-www-form-urlencoded' })
    expect(form.status).toBe(400)
  })

  it('answers 401 without a valid X-API-Key and never reaches the authority', async () => {
    const { app, nfe, resolved } = await setup()
    const body = { empresa_codigo: 'MATRIZ', cnpj_consulta: HEAD_OFFICE_CNPJ, ult_nsu: ZERO }
    const wrong = await nfeQuery(app, body, { 'x-api-key': 'outra-chave' })
    expect(wrong).toMatchObject({ status: 401, json: { detail: expect.stringMatching(/X-API-Key/) } })
    const none = await app.inject({ method: 'POST', url: '/adn/consultar-dfe', headers: { 'content-type': 'application/json' }, payload: '{}' })
    expect(none.statusCode).toBe(401)
    expect(nfe.requests).toHaveLength(0)
    expect(resolved).toHaveLength(0)
  })

  it('answers 404 for an unknown or inactive company and 422 for a certificate the store refuses', async () => {
    const { app, nfe } = await setup()
    const unknown = await nfeQuery(app, { empresa_codigo: 'NINGUEM', cnpj_consulta: HEAD_OFFICE_CNPJ, ult_nsu: ZERO })
    expect(unknown).toMatchObject({ status: 404, json: { detail: 'No active company is registered under empresa_codigo "NINGUEM".' } })
    expect((await nfeQuery(app, { empresa_codigo: 'INATIVA', cnpj_consulta: HEAD_OFFICE_CNPJ, ult_nsu: ZERO })).status).toBe(404)
    const expired = await adnQuery(app, { empresa_codigo: 'VENCIDA', cnpj_consulta: HEAD_OFFICE_CNPJ, nsu: 0 })
    expect(expired).toMatchObject({ status: 422, json: { detail: "The company's certificate cannot be used: it expired on 2026-01-31." } })
    const otherRoot = await nfeQuery(app, { empresa_codigo: 'MATRIZ', cnpj_consulta: OTHER_ROOT_CNPJ, ult_nsu: ZERO })
    expect(otherRoot.status).toBe(422)
    expect(otherRoot.json.detail).toMatch(/does not share the CNPJ root \(11222333\)/)
    const fromStore = await nfeQuery(app, { empresa_codigo: 'SUMIDA', cnpj_consulta: HEAD_OFFICE_CNPJ, ult_nsu: ZERO })
    expect(fromStore).toMatchObject({ status: 404, json: { detail: 'The store refused "SUMIDA" (COMPANY_NOT_FOUND).' } })
    expect(nfe.requests).toHaveLength(0)
  })
})

describe('POST /adn/consultar-dfe', () => {
  it('returns the ADN items exactly as received, with the branch\'s CNPJ in cnpjConsulta and the head office\'s certificate', async () => {
    const docs = makeNfseDocuments(BRANCH_CNPJ, 11, 4)
    const { app, adn } = await setup({ adnDocs: { [BRANCH_CNPJ]: docs } })
    const res = await adnQuery(app, { empresa_codigo: 'FILIAL', cnpj_consulta: BRANCH_CNPJ, nsu: 10 })
    expect(res.status).toBe(200)
    const sent = JSON.parse(adn.answers[0]!)
    expect(res.json).toEqual({ sucesso: true, empresa_codigo: 'FILIAL', nsu: 10, data: { documentos: sent.LoteDFe } })
    expect(res.json.data.documentos[0].ArquivoXml).toBe(docs[0]!.ArquivoXml)
    expect(gunzipSync(Buffer.from(res.json.data.documentos[3].ArquivoXml, 'base64')).toString('utf8')).toBe(docs[3]!.xml)
    expect(adn.requests[0]).toMatchObject({ nsu: '10', cnpjConsulta: BRANCH_CNPJ, lote: 'true', certCnpj: HEAD_OFFICE_CNPJ })
  })

  it('answers an empty list when the ADN has nothing after the NSU (404 E2220)', async () => {
    const { app, adn } = await setup({ adnDocs: { [HEAD_OFFICE_CNPJ]: makeNfseDocuments(HEAD_OFFICE_CNPJ, 1, 2) } })
    const res = await adnQuery(app, { empresa_codigo: 'MATRIZ', cnpj_consulta: HEAD_OFFICE_CNPJ, nsu: 2 })
    expect(res).toMatchObject({ status: 200, json: { sucesso: true, empresa_codigo: 'MATRIZ', nsu: 2, data: { documentos: [] } } })
    expect(adn.requests[0]!.status).toBe(404)
  })

  it('maps a REJEICAO to 422, a rate limit to 429, the wrong environment and a dropped connection to 503', async () => {
    const { app, adn } = await setup()
    const refused = await adnQuery(app, { empresa_codigo: 'TROCADA', cnpj_consulta: OTHER_ROOT_CNPJ, nsu: 0 })
    expect(refused.status).toBe(422)
    expect(refused.json.detail).toMatch(/refused the query: E999 cnpjConsulta nao pertence a raiz/)
    adn.scenario = 'rate-limited'
    const limited = await adnQuery(app, { empresa_codigo: 'MATRIZ', cnpj_consulta: HEAD_OFFICE_CNPJ, nsu: 0 })
    expect(limited.status).toBe(429)
    expect(limited.headers['retry-after']).toBe('120')
    adn.scenario = 'wrong-environment'
    const wrongEnv = await adnQuery(app, { empresa_codigo: 'MATRIZ', cnpj_consulta: HEAD_OFFICE_CNPJ, nsu: 0 })
    expect(wrongEnv.status).toBe(503)
    expect(wrongEnv.json.detail).toMatch(/environment PRODUCAO, but this gateway is configured for HOMOLOGACAO/)
    adn.scenario = 'drop'
    expect((await adnQuery(app, { empresa_codigo: 'MATRIZ', cnpj_consulta: HEAD_OFFICE_CNPJ, nsu: 0 })).status).toBe(503)
  })

  it('gives up on a slow ADN at the configured timeout with 503', async () => {
    const { app, adn } = await setup({ timeoutMs: 300 })
    adn.scenario = 'slow'
    const res = await adnQuery(app, { empresa_codigo: 'MATRIZ', cnpj_consulta: HEAD_OFFICE_CNPJ, nsu: 0 })
    expect(res.status).toBe(503)
    expect(res.json.detail).toMatch(/did not answer within 300 ms/)
  })
})

describe('documents kept (issue 35)', () => {
  const get = async (app: FastifyInstance, url: string, key = TEST_API_KEY): Promise<{ status: number, json: any, body: string, type: unknown }> => {
    const res = await app.inject({ method: 'GET', url, headers: key === '' ? {} : { 'x-api-key': key } })
    return { status: res.statusCode, json: res.headers['content-type']?.toString().startsWith('application/json') === true ? res.json() : undefined, body: res.body, type: res.headers['content-type'] }
  }
  const vNF = (xml: string): string => /<vNF>([^<]+)<\/vNF>/.exec(xml)![1]!
  const chave = (xml: string): string => /<chNFe>(\d{44})<\/chNFe>/.exec(xml)![1]!

  it('keeps every document of the distribution once, with its key fields, and marks a note cancelled whichever comes first', async () => {
    const made = makeNfeDocuments(HEAD_OFFICE_CNPJ, 1, 4)
    const [res1, proc2, , proc4] = made as [FakeNfeDocument, FakeNfeDocument, FakeNfeDocument, FakeNfeDocument]
    const k1 = chave(res1.xml)
    const k2 = chave(proc2.xml)
    const kX = chave(proc4.xml)
    // Answer 1: NSU 1-3 (kX's cancellation before kX); answer 2: NSU 4-6 (k2's cancellation after k2).
    const docs = [
      res1, proc2, makeNfeEventDocument(3, kX, '110111', { kind: 'resEvento' }),
      makeNfeEventDocument(4, k2, '110111', { kind: 'procEventoNFe' }), { ...proc4, nsu: '000000000000005' },
      makeNfeEventDocument(6, k1, '210210', { kind: 'procEventoNFe', author: HEAD_OFFICE_CNPJ })
    ]
    const { app } = await setup({ nfeDocs: { [HEAD_OFFICE_CNPJ]: docs, [BRANCH_CNPJ]: [res1] }, nfe: { batchSize: 3 } })
    const first = await nfeQuery(app, { empresa_codigo: 'MATRIZ', cnpj_consulta: HEAD_OFFICE_CNPJ, ult_nsu: ZERO })
    expect(first.status).toBe(200)
    // The raw docZip is still handed back.
    expect(first.json.documentos.map((d: { docZip: string }) => d.docZip)).toEqual(docs.slice(0, 3).map((d) => d.docZip))
    expect((await nfeQuery(app, { empresa_codigo: 'MATRIZ', cnpj_consulta: HEAD_OFFICE_CNPJ, ult_nsu: first.json.ultNSU })).status).toBe(200)
    // The branch receives the same summary: kept once, both companies named.
    expect((await nfeQuery(app, { empresa_codigo: 'FILIAL', cnpj_consulta: BRANCH_CNPJ, ult_nsu: ZERO })).status).toBe(200)

    const all = await get(app, `/v1/documents?cnpj=${HEAD_OFFICE_CNPJ}`)
    expect(all.status).toBe(200)
    expect(all.json.proximo).toBeNull()
    const byNsu = new Map<string, any>(all.json.documentos.map((d: any) => [d.nsu, d]))
    expect([...byNsu.keys()].sort()).toEqual(docs.map((d) => d.nsu).sort())
    expect(byNsu.get(res1.nsu)).toMatchObject({
      chave: k1, tipo: 'resNFe', esquema: 'resNFe', evento: '', cnpjs: [HEAD_OFFICE_CNPJ, BRANCH_CNPJ], emitente_cnpj: '99999090910270',
      emitente_nome: 'FORNECEDOR TESTE LTDA', destinatario_doc: null, data_emissao: '2026-11-20T13:00:00Z', data_emissao_local: '2026-11-20',
      valor_total: vNF(res1.xml), situacao: 'autorizada'
    })
    expect(byNsu.get(proc2.nsu)).toMatchObject({ chave: k2, tipo: 'procNFe', destinatario_doc: HEAD_OFFICE_CNPJ, valor_total: vNF(proc2.xml), situacao: 'cancelada' })
    expect(byNsu.get('000000000000005')).toMatchObject({ chave: kX, tipo: 'procNFe', situacao: 'cancelada' })
    expect(byNsu.get('000000000000003')).toMatchObject({ chave: kX, tipo: 'resEvento', evento: '110111-1', cancela: true, situacao: 'registrado' })
    // A Ciência (210210) changes nothing.
    expect(byNsu.get('000000000000006')).toMatchObject({ chave: k1, tipo: 'procEventoNFe', evento: '210210-1', cancela: false })
    expect((await db.pool.query('SELECT count(*)::int AS n FROM documentos_fiscais')).rows[0].n).toBe(6)

    const one = await get(app, `/v1/documents/${k2}`)
    expect(one.status).toBe(200)
    expect(one.json).toMatchObject({ chave: k2, tipo: 'procNFe', situacao: 'cancelada', eventos: [{ tipo: 'procEventoNFe', evento: '110111-1', cancela: true }] })
    const xml = await get(app, `/v1/documents/${k2}/xml`)
    expect(xml.status).toBe(200)
    expect(xml.type).toBe('application/xml; charset=utf-8')
    expect(xml.body).toBe(proc2.xml)

    // Filters and keyset pages.
    const ids = async (query: string): Promise<string[]> => (await get(app, `/v1/documents?${query}`)).json.documentos.map((d: any) => d.nsu).sort()
    expect(await ids('tipo=procNFe')).toEqual([proc2.nsu, '000000000000005'])
    expect(await ids('situacao=cancelada')).toEqual([proc2.nsu, '000000000000005'])
    expect(await ids('desde=2026-11-21')).toEqual(['000000000000003', '000000000000004', '000000000000006'])
    expect(await ids(`ate=2026-11-20&cnpj=${BRANCH_CNPJ}`)).toEqual([res1.nsu])
    const seen: string[] = []
    let next: string | null = ''
    let pages = 0
    while (next !== null) {
      const page = await get(app, `/v1/documents?limite=4${next === '' ? '' : `&apos=${next}`}`)
      expect(page.status).toBe(200)
      seen.push(...page.json.documentos.map((d: any) => d.id))
      next = page.json.proximo
      pages++
    }
    expect(pages).toBe(2)
    expect(seen).toEqual([...seen].sort((a, b) => Number(b) - Number(a)))
    expect(new Set(seen).size).toBe(6)
  })

  it('keeps NFS-e from the ADN and their cancellation', async () => {
    const made = makeNfseDocuments(HEAD_OFFICE_CNPJ, 1, 3)
    const target = made[0]!
    const docs = [made[0]!, made[1]!, makeNfseCancellation(3, target.ChaveAcesso, HEAD_OFFICE_CNPJ)]
    const { app } = await setup({ adnDocs: { [HEAD_OFFICE_CNPJ]: docs } })
    expect((await adnQuery(app, { empresa_codigo: 'MATRIZ', cnpj_consulta: HEAD_OFFICE_CNPJ, nsu: 0 })).status).toBe(200)
    const one = await get(app, `/v1/documents/${target.ChaveAcesso}`)
    expect(one.status).toBe(200)
    expect(one.json).toMatchObject({
      tipo: 'NFS-e', esquema: 'NFSE', emitente_cnpj: HEAD_OFFICE_CNPJ, valor_total: /<vLiq>([^<]+)</.exec(target.xml)![1], situacao: 'cancelada',
      eventos: [{ tipo: 'eventoNFS-e', evento: '101101-1', cancela: true }]
    })
    expect((await get(app, `/v1/documents/${made[1]!.ChaveAcesso}`)).json.situacao).toBe('autorizada')
    expect((await get(app, `/v1/documents/${target.ChaveAcesso}/xml`)).body).toBe(target.xml)
  })

  it('answers 400 naming the field, 401 without the key, 404 for a key it does not keep', async () => {
    const { app } = await setup()
    for (const [query, field] of [['cnpj=11222333000180', 'cnpj'], ['desde=2026-02-30', 'desde'], ['tipo=NFe', 'tipo'], ['situacao=x', 'situacao'],
      ['limite=0', 'limite'], ['limite=501', 'limite'], ['apos=abc', 'apos'], ['pagina=2', 'pagina'], ['desde=2026-11-21&ate=2026-11-20', 'desde']] as const) {
      const res = await get(app, `/v1/documents?${query}`)
      expect(res.status, query).toBe(400)
      expect(res.json.detail, query).toContain(field)
    }
    expect((await get(app, '/v1/documents', '')).status).toBe(401)
    expect((await get(app, '/v1/documents', 'wrong')).status).toBe(401)
    expect((await get(app, `/v1/documents/${'1'.repeat(44)}`, '')).status).toBe(401)
    const missing = await get(app, `/v1/documents/${'1'.repeat(44)}`)
    expect(missing.status).toBe(404)
    expect(missing.json.detail).toContain('1'.repeat(44))
    expect((await get(app, `/v1/documents/${'1'.repeat(44)}/xml`)).status).toBe(404)
    expect((await get(app, '/v1/documents/123')).status).toBe(400)
  })
})
