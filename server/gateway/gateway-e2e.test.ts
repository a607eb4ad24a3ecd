/**
 * The whole gateway as it runs: the admin API registers a head office and a branch that
 * inherits its certificate in the real PostgreSQL registry, the certificate goes into the
 * encrypted store, and the query routes resolve it from there and call the loopback NF-e and
 * NFS-e fakes over real mutual TLS (GATEWAY_CA_FILE trusting the fakes' test root).
 * query-routes.test.ts covers the statuses with an in-test resolver; app.test.ts the admin
 * side with a stand-in route; this file is where the two halves meet.
 */
import { randomBytes } from 'node:crypto'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { gunzipSync } from 'node:zlib'
import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freshDatabase } from '../../fixtures/db/test-database.js'
import type { TestDatabase } from '../../fixtures/db/test-database.js'
import { makeNfeDocuments, makeNfseDocuments } from '../../fixtures/gateway/documents.js'
import { startAdnFake } from '../../fixtures/gateway/adn-fake.js'
import type { AdnFake } from '../../fixtures/gateway/adn-fake.js'
import { startNfeFake } from '../../fixtures/gateway/nfe-fake.js'
import type { NfeFake } from '../../fixtures/gateway/nfe-fake.js'
import { BRANCH_CNPJ, HEAD_OFFICE_CNPJ, createGatewayPki } from '../../fixtures/gateway/pki.js'
import type { GatewayPki } from '../../fixtures/gateway/pki.js'
import { ensureApiKey, parseMasterKey } from '../../core/gateway/index.js'
import { loadConfig } from '../config.js'
import { buildGatewayApp } from './app.js'
import { loadGatewayConfig } from './config.js'

const ADMIN = `admin-${randomBytes(16).toString('hex')}`
const FIRST_KEY = `operational-${randomBytes(16).toString('hex')}`
const ZERO = '0'.repeat(15)

let db: TestDatabase
let pki: GatewayPki
let dir: string
let nfe: NfeFake
let adn: AdnFake
let app: FastifyInstance
let apiKey = FIRST_KEY
const nfeDocs = makeNfeDocuments(BRANCH_CNPJ, 1, 2)

beforeAll(async () => {
  pki = createGatewayPki()
  dir = await mkdtemp(join(tmpdir(), 'razao-gw-e2e-'))
  const caFile = join(dir, 'ca.pem')
  await writeFile(caFile, pki.rootPem)
  nfe = await startNfeFake({ pki, tpAmb: 2, documents: new Map([[BRANCH_CNPJ, nfeDocs]]) })
  adn = await startAdnFake({ pki, tpAmb: 2, documents: new Map([[BRANCH_CNPJ, makeNfseDocuments(BRANCH_CNPJ, 1, 2)]]) })
  db = await freshDatabase()
  await ensureApiKey(db.pool, FIRST_KEY)
  const shared = loadConfig({ LOG_LEVEL: 'silent' }).shared
  const config = loadGatewayConfig({ GATEWAY_NFE_URL: nfe.url, GATEWAY_ADN_URL: adn.baseUrl, GATEWAY_CA_FILE: caFile, GATEWAY_TIMEOUT_MS: '5000' }, shared)
  app = await buildGatewayApp({ shared, config, adminToken: ADMIN, masterKey: parseMasterKey(randomBytes(32).toString('hex'))!, database: { pool: db.pool }, logger: false })
})
afterAll(async () => {
  await app?.close()
  await nfe?.close()
  await adn?.close()
  await db?.drop()
  await rm(dir, { recursive: true, force: true })
})

const admin = { authorization: `Bearer ${ADMIN}` }
async function adminCall (method: 'POST' | 'GET', url: string, payload?: Record<string, unknown>): Promise<{ status: number, json: any }> {
  const res = await app.inject({ method, url, headers: admin, ...(payload === undefined ? {} : { payload }) })
  return { status: res.statusCode, json: res.json() }
}
async function queryCall (url: string, payload: Record<string, unknown>, key = apiKey): Promise<{ status: number, json: any }> {
  const res = await app.inject({ method: 'POST', url, headers: { 'x-api-key': key }, payload })
  return { status: res.statusCode, json: res.json() }
}

describe('registry, store and query routes together', () => {
  let matriz: string
  let filial: string

  it('registers a head office with its certificate and a branch that inherits it, through the admin API', async () => {
    const m = await adminCall('POST', '/admin/empresas', { razao_social: 'Empresa Teste Gateway Ltda', cnpj: '11.222.333/0001-81' })
    expect(m.status).toBe(201)
    matriz = m.json.empresa_codigo
    const f = await adminCall('POST', '/admin/empresas', { razao_social: 'Empresa Teste Gateway Ltda - Filial', cnpj: BRANCH_CNPJ, matriz_empresa_codigo: matriz, herda_certificado_matriz: true })
    expect(f.status).toBe(201)
    filial = f.json.empresa_codigo
    const cert = await adminCall('POST', '/admin/certificados', { empresa_codigo: matriz, pfx_base64: pki.client.pfx.toString('base64'), senha: pki.client.password })
    expect(cert.status).toBe(201)
    expect(cert.json.cnpj).toBe(HEAD_OFFICE_CNPJ)
    expect(JSON.stringify(cert.json)).not.toContain(pki.client.password)
  })

  it('queries NF-e for the branch with the head office certificate and the branch CNPJ in distDFeInt', async () => {
    const res = await queryCall('/nfe/distribuicao-dfe', { empresa_codigo: filial, cnpj_consulta: '11.222.333/0002-62', ult_nsu: ZERO })
    expect(res.status).toBe(200)
    expect(res.json.success).toBe(true)
    expect(res.json.documentos).toEqual(nfeDocs.map((d) => ({ docZip: d.docZip, nsu: d.nsu, schema: d.schema })))
    expect(gunzipSync(Buffer.from(res.json.documentos[1].docZip, 'base64')).toString('utf8')).toBe(nfeDocs[1]!.xml)
    // The fake saw the head office's certificate (its CNPJ) and the branch's CNPJ in the query.
    expect(nfe.requests.map((r) => [r.cnpj, r.certCnpj, r.ultNSU])).toEqual([[BRANCH_CNPJ, HEAD_OFFICE_CNPJ, ZERO]])
  })

  it('queries the national NFS-e distribution for the branch the same way', async () => {
    const res = await queryCall('/adn/consultar-dfe', { empresa_codigo: filial, cnpj_consulta: BRANCH_CNPJ, nsu: 0 })
    expect(res.status).toBe(200)
    expect(res.json).toMatchObject({ sucesso: true, empresa_codigo: filial, nsu: 0 })
    expect(res.json.data.documentos).toHaveLength(2)
    expect(adn.requests.map((r) => [r.cnpjConsulta, r.certCnpj])).toEqual([[BRANCH_CNPJ, HEAD_OFFICE_CNPJ]])
  })

  it('answers 422 once the certificate is removed and 404 for an unknown company, without calling the authority', async () => {
    const before = nfe.requests.length
    expect((await queryCall('/nfe/distribuicao-dfe', { empresa_codigo: 'EMP0000000000', cnpj_consulta: BRANCH_CNPJ, ult_nsu: ZERO })).status).toBe(404)
    expect((await app.inject({ method: 'DELETE', url: `/admin/certificados/${matriz}`, headers: admin })).statusCode).toBe(204)
    const res = await queryCall('/nfe/distribuicao-dfe', { empresa_codigo: filial, cnpj_consulta: BRANCH_CNPJ, ult_nsu: '000000000000002' })
    expect(res.status).toBe(422)
    expect(typeof res.json.detail).toBe('string')
    expect(nfe.requests).toHaveLength(before)
  })

  it('refuses the old operational key on the query routes after a rotation and takes the new one', async () => {
    const rotated = await adminCall('POST', '/admin/api-key/rotate')
    expect(rotated.status).toBe(201)
    const body = { empresa_codigo: filial, cnpj_consulta: BRANCH_CNPJ, nsu: 0 }
    expect((await queryCall('/adn/consultar-dfe', body, FIRST_KEY)).status).toBe(401)
    apiKey = rotated.json.api_key
    // The key opens the route; the certificate is gone, so the answer is the store's 422.
    expect((await queryCall('/adn/consultar-dfe', body)).status).toBe(422)
    expect((await queryCall('/adn/consultar-dfe', body, ADMIN)).status).toBe(401)
  })
})
