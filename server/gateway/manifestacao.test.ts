/**
 * The manifestação do destinatário end to end (issue 35, item 3): the gateway app as it runs
 * (admin API, encrypted certificate store, real PostgreSQL), POST /v1/manifestacao signing with
 * the stored certificate and sending over real mutual TLS to the loopback NFeRecepcaoEvento4,
 * which checks every signature with xmlsec1 (fixtures/gateway/evento-fake.ts); the records of
 * migration 0008; the automatic Ciência the feed calls (autoCiencia), tested directly.
 */
import { execFile, execFileSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freshDatabase } from '../../fixtures/db/test-database.js'
import type { TestDatabase } from '../../fixtures/db/test-database.js'
import { gzipBase64, makeNfeDocuments } from '../../fixtures/gateway/documents.js'
import { startEventoFake } from '../../fixtures/gateway/evento-fake.js'
import { keyOf, startNfeFake } from '../../fixtures/gateway/nfe-fake.js'
import type { EventoFake } from '../../fixtures/gateway/evento-fake.js'
import { BRANCH_CNPJ, HEAD_OFFICE_CNPJ, OTHER_ROOT_CNPJ, createGatewayPki } from '../../fixtures/gateway/pki.js'
import type { GatewayPki } from '../../fixtures/gateway/pki.js'
import { CertificateStore, TlsAgentCache, autoCiencia, ensureApiKey, parseMasterKey } from '../../core/gateway/index.js'
import { loadPkcs12 } from '../../core/sign/index.js'
import { loadConfig } from '../config.js'
import { buildGatewayApp } from './app.js'
import { loadGatewayConfig } from './config.js'
import type { GatewayConfig } from './config.js'
import { manifestSenderFor } from './manifestacao-routes.js'
import { ROOT, runRazao } from '../../fixtures/razao-cli.js'

const hasXmlsec = ((): boolean => { try { execFileSync('xmlsec1', ['--version'], { stdio: 'ignore' }); return true } catch { return false } })()
// CI installs xmlsec1 (.ci/run): there a missing verifier fails the file instead of skipping it.
const withXmlsec = hasXmlsec || process.env.CI === 'true'

const ADMIN = `admin-${randomBytes(16).toString('hex')}`
const API_KEY = `operational-${randomBytes(16).toString('hex')}`
const masterKey = parseMasterKey(randomBytes(32).toString('hex'))!
const key = (n: number): string => `352611112223330001815500100000${String(n).padStart(6, '0')}10000000${n % 10}`.slice(0, 44)

/** The NF-e the fake authority knows, and their recipients. */
const notas = new Map<string, string>([...Array.from({ length: 8 }, (_, i) => [key(i + 1), HEAD_OFFICE_CNPJ] as [string, string]), [key(90), OTHER_ROOT_CNPJ], [key(91), BRANCH_CNPJ]])
let db: TestDatabase
let pki: GatewayPki
let dir: string
let fake: EventoFake
let app: FastifyInstance
let config: GatewayConfig
let matriz: string
let filial: string

beforeAll(async () => {
  if (!withXmlsec) return
  pki = createGatewayPki()
  dir = await mkdtemp(join(tmpdir(), 'razao-manif-e2e-'))
  const caFile = join(dir, 'ca.pem')
  await writeFile(caFile, pki.rootPem)
  await writeFile(join(dir, 'int.pem'), pki.chain.intermediate.certPem)
  fake = await startEventoFake({
    pki: { ...pki, intermediatePem: pki.chain.intermediate.certPem },
    tpAmb: 2,
    notas
  })
  db = await freshDatabase()
  await ensureApiKey(db.pool, API_KEY)
  const shared = loadConfig({ LOG_LEVEL: 'silent' }).shared
  config = loadGatewayConfig({ GATEWAY_EVENTO_URL: fake.url, GATEWAY_CA_FILE: caFile, GATEWAY_TIMEOUT_MS: '10000' }, shared)
  app = await buildGatewayApp({ shared, config, adminToken: ADMIN, masterKey, database: { pool: db.pool }, logger: false })
  const admin = { authorization: `Bearer ${ADMIN}` }
  const m = await app.inject({ method: 'POST', url: '/admin/empresas', headers: admin, payload: { razao_social: 'Empresa Teste Gateway Ltda', cnpj: HEAD_OFFICE_CNPJ } })
  matriz = m.json().empresa_codigo
  const f = await app.inject({ method: 'POST', url: '/admin/empresas', headers: admin, payload: { razao_social: 'Empresa Teste Filial', cnpj: BRANCH_CNPJ, matriz_empresa_codigo: matriz, herda_certificado_matriz: true } })
  filial = f.json().empresa_codigo
  const c = await app.inject({ method: 'POST', url: '/admin/certificados', headers: admin, payload: { empresa_codigo: matriz, pfx_base64: pki.client.pfx.toString('base64'), senha: pki.client.password } })
  expect(c.statusCode).toBe(201)
})
afterAll(async () => {
  await app?.close()
  await fake?.close()
  await db?.drop()
  if (dir !== undefined) await rm(dir, { recursive: true, force: true })
})

async function manifest (empresa: string, eventos: Array<Record<string, unknown>>, apiKey = API_KEY): Promise<{ status: number, json: any }> {
  const res = await app.inject({ method: 'POST', url: '/v1/manifestacao', headers: { 'x-api-key': apiKey }, payload: { empresa_codigo: empresa, eventos } })
  return { status: res.statusCode, json: res.json() }
}
const sent = (): number => fake.requests.length

describe.runIf(withXmlsec)('POST /v1/manifestacao', () => {
  it('registers a Ciência signed with the stored certificate; the record holds the signed event and a procEventoNFe xmlsec1 verifies', async () => {
    const res = await manifest(matriz, [{ chave: key(1), tp_evento: '210210' }])
    expect(res.status).toBe(200)
    expect(res.json.eventos).toEqual([{ chave: key(1), tp_evento: '210210', n_seq_evento: 1, situacao: 'registrado', cStat: '135', xMotivo: 'Evento registrado e vinculado a NF-e', nProt: expect.stringMatching(/^[0-9]{15}$/), dhRegEvento: expect.stringMatching(/-03:00$/), repetido: false }])
    expect(fake.requests.at(-1)!.eventos[0]).toMatchObject({ cStat: '135', signatureChecked: true })
    const row = (await db.pool.query('SELECT * FROM manifestacoes WHERE chave = $1', [key(1)])).rows[0]
    expect(row).toMatchObject({ status: 'registrado', cnpj: HEAD_OFFICE_CNPJ, tp_evento: '210210', n_seq_evento: 1, c_stat: '135', n_prot: res.json.eventos[0].nProt, automatica: false })
    expect(row.registrado_em).toBeInstanceOf(Date)
    // procEventoNFe: the signed event as sent, then the authority's retEvento as it came.
    expect(row.proc_evento_xml.startsWith(`<procEventoNFe xmlns="http://www.portalfiscal.inf.br/nfe" versao="1.00">${row.evento_xml}<retEvento versao="1.00"><infEvento>`)).toBe(true)
    expect(row.proc_evento_xml).toMatch(new RegExp(`<cStat>135</cStat>.*<nProt>${row.n_prot}</nProt></infEvento></retEvento></procEventoNFe>$`))
    const proc = join(dir, 'proc.xml')
    await writeFile(proc, row.proc_evento_xml)
    const verified = await new Promise<boolean>((resolve) => execFile('xmlsec1', ['--verify', '--id-attr:Id', 'http://www.portalfiscal.inf.br/nfe:infEvento', '--trusted-pem', join(dir, 'ca.pem'), '--untrusted-pem', join(dir, 'int.pem'), proc], (e) => resolve(e === null)))
    expect(verified).toBe(true)
  })

  it('answers a repeat from the record without sending anything', async () => {
    const before = sent()
    const res = await manifest(matriz, [{ chave: key(1), tp_evento: '210210' }])
    expect(res.status).toBe(200)
    expect(res.json.eventos[0]).toMatchObject({ situacao: 'registrado', cStat: '135', repetido: true, n_seq_evento: 1 })
    expect(sent()).toBe(before)
  })

  it('numbers conclusive events: each at most twice, a repeat of the one in force changes nothing, a third time is refused unsent', async () => {
    const seq = async (tp: string, xJust?: string): Promise<[number, string | null, boolean]> => {
      const r = await manifest(matriz, [{ chave: key(2), tp_evento: tp, ...(xJust === undefined ? {} : { justificativa: xJust }) }])
      expect(r.status).toBe(200)
      return [r.json.eventos[0].n_seq_evento, r.json.eventos[0].cStat, r.json.eventos[0].repetido]
    }
    expect(await seq('210200')).toEqual([1, '135', false])
    expect(await seq('210200')).toEqual([1, '135', true])
    expect(await seq('210220', 'Nao reconhecemos esta operacao')).toEqual([1, '135', false])
    expect(await seq('210200')).toEqual([2, '135', false])
    expect(await seq('210220')).toEqual([2, '135', false])
    const before = sent()
    // In a batch: the whole request is refused, and the other event is neither sent nor recorded.
    const third = await manifest(matriz, [{ chave: key(8), tp_evento: '210210' }, { chave: key(2), tp_evento: '210200' }])
    expect(third.status).toBe(422)
    expect(third.json).toMatchObject({ code: 'GATEWAY_EVENT_REFUSED', detail: expect.stringMatching(/already registered twice/) })
    expect(sent()).toBe(before)
    expect((await db.pool.query('SELECT count(*)::int AS n FROM manifestacoes WHERE chave = $1', [key(8)])).rows[0].n).toBe(0)
  })

  it('takes the authority\'s 573 as registered when the first answer was lost on the way back', async () => {
    fake.scenario = 'drop'
    const lost = await manifest(matriz, [{ chave: key(3), tp_evento: '210210' }])
    fake.scenario = 'normal'
    expect(lost.status).toBe(503)
    expect(lost.json.code).toBe('GATEWAY_UPSTREAM_UNAVAILABLE')
    expect((await db.pool.query('SELECT status, erro FROM manifestacoes WHERE chave = $1', [key(3)])).rows[0]).toMatchObject({ status: 'falhou', erro: expect.stringMatching(/dropped/) })
    const retry = await manifest(matriz, [{ chave: key(3), tp_evento: '210210' }])
    expect(retry.status).toBe(200)
    expect(retry.json.eventos[0]).toMatchObject({ situacao: 'registrado', cStat: '573', repetido: false, n_seq_evento: 1 })
    const list = await app.inject({ method: 'GET', url: `/v1/documents/${key(3)}/manifestacoes`, headers: { 'x-api-key': API_KEY } })
    expect(list.statusCode).toBe(200)
    expect(list.json().manifestacoes).toEqual([expect.objectContaining({ empresa_codigo: matriz, tp_evento: '210210', situacao: 'registrado', cStat: '573', erro: null, automatica: false })])
  })

  it('answers 422 with the authority\'s cStat when it refuses the only event (631: another recipient\'s NF-e), and 200 with each result in a mixed batch', async () => {
    const refused = await manifest(matriz, [{ chave: key(90), tp_evento: '210200' }])
    expect(refused.status).toBe(422)
    expect(refused.json).toMatchObject({ code: 'GATEWAY_EVENT_REFUSED', cStat: '631', xMotivo: expect.stringMatching(/CNPJ-Base do Destinatario/), eventos: [expect.objectContaining({ situacao: 'rejeitado', cStat: '631' })] })
    expect(refused.json.detail).toMatch(/cStat 631/)
    const mixed = await manifest(matriz, [{ chave: key(4), tp_evento: '210240', justificativa: 'Mercadoria nao foi entregue' }, { chave: key(90), tp_evento: '210210' }])
    expect(mixed.status).toBe(200)
    expect(mixed.json.eventos.map((e: any) => [e.chave, e.situacao, e.cStat])).toEqual([[key(4), 'registrado', '135'], [key(90), 'rejeitado', '631']])
  })

  it('refuses an answer outside its schema with 503 and records the events falhou; a paused service (108) too; sending again then registers them', async () => {
    const envelope = (inner: string): string => '<?xml version="1.0" encoding="utf-8"?><soap:Envelope xmlns:soap="http://www.w3.org/2003/05/soap-envelope"><soap:Body>' +
      `<nfeResultMsg xmlns="http://www.portalfiscal.inf.br/nfe/wsdl/NFeRecepcaoEvento4">${inner}</nfeResultMsg></soap:Body></soap:Envelope>`
    const retEvento = `<retEvento versao="1.00"><infEvento><tpAmb>2</tpAmb><verAplic>X</verAplic><cOrgao>91</cOrgao><cStat>135</cStat><xMotivo>ok</xMotivo><chNFe>${key(5)}</chNFe><tpEvento>210210</tpEvento><nSeqEvento>1</nSeqEvento><dhRegEvento>2026-11-29T09:00:00-03:00</dhRegEvento><nProt>891260000000009</nProt></infEvento></retEvento>`
    const ret = (events: string): string => `<retEnvEvento versao="1.00" xmlns="http://www.portalfiscal.inf.br/nfe"><idLote>1</idLote><tpAmb>2</tpAmb><verAplic>X</verAplic><cOrgao>91</cOrgao><cStat>128</cStat><xMotivo>Lote processado</xMotivo>${events}</retEnvEvento>`
    const hostile: Array<[string, RegExp]> = [
      [`<!DOCTYPE lol [<!ENTITY a "aaaaaaaaaa">]>${envelope(ret(retEvento))}`, /DOCTYPE/],
      [envelope(ret(retEvento.repeat(21))), /21 retEvento/],
      [envelope(ret(retEvento.replace('<cStat>135', '<cStat>13a'))), /cStat/],
      [envelope(ret(retEvento).replace('<tpAmb>2</tpAmb>', '<tpAmb>1</tpAmb>')), /environment tpAmb 1/],
      [envelope(`${ret(retEvento)}${ret(retEvento)}`), /2 <retEnvEvento>/]
    ]
    try {
      for (const [answer, why] of hostile) {
        fake.rawAnswer = answer
        const res = await manifest(matriz, [{ chave: key(5), tp_evento: '210210' }])
        expect(res.status).toBe(503)
        expect(res.json).toMatchObject({ code: 'GATEWAY_UPSTREAM_UNAVAILABLE', detail: expect.stringMatching(why) })
        expect((await db.pool.query('SELECT status, n_prot FROM manifestacoes WHERE chave = $1', [key(5)])).rows).toEqual([{ status: 'falhou', n_prot: null }])
      }
    } finally {
      fake.rawAnswer = undefined
    }
    fake.scenario = 'pause'
    const paused = await manifest(matriz, [{ chave: key(5), tp_evento: '210210' }])
    fake.scenario = 'normal'
    expect(paused.status).toBe(503)
    expect(paused.json).toMatchObject({ cStat: '108', detail: expect.stringMatching(/paused/) })
    const res = await manifest(matriz, [{ chave: key(5), tp_evento: '210210' }])
    expect(res.json.eventos[0]).toMatchObject({ situacao: 'registrado', cStat: '135', repetido: false })
  })

  it('sends for a branch under the head office\'s certificate with the branch\'s own CNPJ as author', async () => {
    const res = await manifest(filial, [{ chave: key(91), tp_evento: '210210' }])
    expect(res.status).toBe(200)
    expect(res.json.eventos[0].cStat).toBe('135')
    expect(fake.requests.at(-1)!.certCnpj).toBe(HEAD_OFFICE_CNPJ)
    expect((await db.pool.query('SELECT cnpj FROM manifestacoes WHERE chave = $1', [key(91)])).rows[0].cnpj).toBe(BRANCH_CNPJ)
  })

  it('refuses bad requests with 400 naming the field, an unknown company with 404 and a missing key with 401, sending nothing', async () => {
    const before = sent()
    const bad = async (eventos: unknown, expected: RegExp): Promise<void> => {
      const res = await app.inject({ method: 'POST', url: '/v1/manifestacao', headers: { 'x-api-key': API_KEY }, payload: { empresa_codigo: matriz, eventos } as Record<string, unknown> })
      expect(res.statusCode).toBe(400)
      expect(res.json()).toMatchObject({ code: 'GATEWAY_INVALID_REQUEST', detail: expect.stringMatching(expected) })
    }
    await bad([{ chave: key(5), tp_evento: '210240' }], /justificativa is required for Operação não Realizada/)
    await bad([{ chave: key(5), tp_evento: '210210', justificativa: 'Nao cabe justificativa aqui' }], /not part of a Ciência/)
    await bad([{ chave: key(5).slice(1), tp_evento: '210210' }], /eventos\[0\]\.chave must be an NF-e access key/)
    await bad([{ chave: key(5), tp_evento: 210210 }], /eventos\[0\]\.tp_evento must be/)
    await bad([{ chave: key(5), tp_evento: '210210', extra: 1 }], /unknown field "extra"/)
    await bad([], /1 to 20 events/)
    expect((await manifest('EMP0000000000', [{ chave: key(5), tp_evento: '210210' }])).status).toBe(404)
    expect((await manifest(matriz, [{ chave: key(5), tp_evento: '210210' }], 'wrong-key')).status).toBe(401)
    expect(sent()).toBe(before)
  })
})

describe.runIf(withXmlsec)('razao manifest', () => {
  it('sends from the command line with the stored certificate (exit 0, the route\'s JSON), and refuses a bad request with exit 2 before anything is sent', async () => {
    const env = {
      ...process.env, DATABASE_URL: db.url, GATEWAY_MASTER_KEY: masterKey.key.toString('hex'), GATEWAY_EVENTO_URL: fake.url,
      GATEWAY_CA_FILE: join(dir, 'ca.pem'), GATEWAY_TIMEOUT_MS: '10000', LOG_LEVEL: 'silent', RAZAO_DATA_DIR: dir
    }
    const before = sent()
    const usage = await runRazao(['manifest', key(6), '--empresa', matriz, '--evento', 'nao-realizada'], { cwd: ROOT, env })
    expect([usage.code, usage.stdout]).toEqual([2, ''])
    expect(usage.stderr).toMatch(/justificativa is required for Operação não Realizada/)
    expect(sent()).toBe(before)
    const run = await runRazao(['manifest', key(6), key(7), '--empresa', matriz, '--evento', 'confirmacao'], { cwd: ROOT, env })
    expect(run.stderr).toBe('')
    expect(run.code).toBe(0)
    expect(JSON.parse(run.stdout)).toEqual({
      empresa_codigo: matriz,
      eventos: [key(6), key(7)].map((chave) => expect.objectContaining({ chave, tp_evento: '210200', n_seq_evento: 1, situacao: 'registrado', cStat: '135', repetido: false }))
    })
    expect(fake.requests.at(-1)!.eventos.map((e) => e.chNFe)).toEqual([key(6), key(7)])
  })
})

describe.runIf(withXmlsec)('autoCiencia (what the feed calls after storing summaries)', () => {
  async function summary (chave: string, o: { situacao?: string, diasAtras?: number, cnpj?: string, tipo?: string } = {}): Promise<void> {
    await db.pool.query(
      `INSERT INTO documentos_fiscais (chave, esquema, tipo, cnpjs, situacao, data_emissao, xml)
       VALUES ($1, $2, $2, ARRAY[$3], $4, now() - make_interval(days => $5), '<resNFe/>')`,
      [chave, o.tipo ?? 'resNFe', o.cnpj ?? HEAD_OFFICE_CNPJ, o.situacao ?? 'autorizada', o.diasAtras ?? 1])
  }

  it('sends a Ciência for the summaries that need one, in batches of at most 20, and leaves the others alone', async () => {
    const fresh = Array.from({ length: 25 }, (_, i) => key(100 + i))
    for (const k of fresh) await summary(k)
    // The authority knows 20 of them; the other 5 it answers 494 (unknown key).
    for (const k of fresh.slice(0, 20)) notas.set(k, HEAD_OFFICE_CNPJ)
    await summary(key(200), { situacao: 'cancelada' })
    await summary(key(201), { diasAtras: 30 })
    await summary(key(202), { cnpj: OTHER_ROOT_CNPJ })
    await summary(key(203))
    await summary(key(203), { tipo: 'procNFe' })
    // Events already sent: a Confirmação registered, a Ciência refused; one sent and never answered
    // 20 minutes ago (its process died: sent again), one a moment ago (under way: left alone).
    const earlier: Array<[string, string, string, number]> = [[key(204), '210200', 'registrado', 0], [key(205), '210210', 'rejeitado', 0], [key(300), '210210', 'enviando', 20], [key(301), '210210', 'enviando', 0]]
    for (const [k, tp, status, ago] of earlier) {
      await summary(k)
      await db.pool.query(`INSERT INTO manifestacoes (chave, empresa_id, cnpj, tp_evento, n_seq_evento, status, evento_xml, enviado_em)
        SELECT $1, id, cnpj, $3, 1, $4, '<evento/>', now() - make_interval(mins => $5) FROM empresas WHERE empresa_codigo = $2`, [k, matriz, tp, status, ago])
    }
    notas.set(key(300), HEAD_OFFICE_CNPJ)
    const agents = new TlsAgentCache({ extraCaPem: pki.rootPem, openPkcs12: async (f, p) => loadPkcs12(f, p) })
    const store = new CertificateStore({ pool: db.pool, masterKey })
    const sender = manifestSenderFor({ config, pool: db.pool, resolveCertificate: (code) => store.resolveCertificate(code) }, agents)
    try {
      const off = await autoCiencia(db.pool, { empresaCodigo: matriz, cnpj: HEAD_OFFICE_CNPJ, cienciaAutomatica: false, servico: 'nfe' }, fresh, sender)
      expect(off).toEqual({ ignoradas: 25, registradas: 0, rejeitadas: 0, erro: null })
      expect(await autoCiencia(db.pool, { empresaCodigo: matriz, cnpj: HEAD_OFFICE_CNPJ, cienciaAutomatica: true, servico: 'adn' }, fresh, sender)).toEqual(off)
      const before = sent()
      const all = [...fresh, key(200), key(201), key(202), key(203), key(204), key(205), key(300), key(301)]
      // The feed's row as it reads it (FeedState of core/gateway/feed-state.ts has these fields).
      const outcome = await autoCiencia(db.pool, { empresaCodigo: matriz, cnpj: HEAD_OFFICE_CNPJ, cienciaAutomatica: true, servico: 'nfe' }, all, sender)
      expect(outcome).toEqual({ ignoradas: 7, registradas: 21, rejeitadas: 5, erro: null })
      expect(fake.requests.slice(before).map((r) => r.eventos.length)).toEqual([20, 6])
      expect(fake.requests.slice(before).flatMap((r) => r.eventos.map((e) => e.chNFe)).sort()).toEqual([...fresh, key(300)].sort())
      const rows = (await db.pool.query("SELECT status, c_stat, count(*)::int AS n FROM manifestacoes WHERE automatica AND tp_evento = '210210' GROUP BY 1, 2 ORDER BY 1")).rows
      expect(rows).toEqual([{ status: 'registrado', c_stat: '135', n: 21 }, { status: 'rejeitado', c_stat: '494', n: 5 }])
      expect((await db.pool.query('SELECT status, c_stat FROM manifestacoes WHERE chave = ANY($1) ORDER BY chave', [[key(300), key(301)]])).rows)
        .toEqual([{ status: 'registrado', c_stat: '135' }, { status: 'enviando', c_stat: null }])
      // Nothing is sent twice: a refused Ciência is not retried automatically either.
      const again = await autoCiencia(db.pool, { empresaCodigo: matriz, cnpj: HEAD_OFFICE_CNPJ, cienciaAutomatica: true }, all, sender)
      expect(again).toEqual({ ignoradas: 33, registradas: 0, rejeitadas: 0, erro: null })
    } finally {
      agents.close()
    }
  })
})

describe.runIf(withXmlsec)('the served gateway\'s feed with automatic Ciência', () => {
  it('sends one Ciência, signed and registered, for each new summary the feed stores for a company with it on', async () => {
    // Issued yesterday: inside the Ciência's window whatever day the test runs, and before the event.
    const yesterday = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10)
    const docs = makeNfeDocuments(HEAD_OFFICE_CNPJ, 700, 4).map((d, i) => {
      const xml = d.xml.replaceAll('2026-11-20', yesterday)
      return { ...d, xml, docZip: gzipBase64(xml), nsu: String(i + 1).padStart(15, '0') }
    })
    const summaries = docs.filter((d) => d.schema.startsWith('resNFe')).map((d) => keyOf(d)!)
    for (const chave of summaries) notas.set(chave, HEAD_OFFICE_CNPJ)
    const nfe = await startNfeFake({ pki, tpAmb: 2, documents: new Map([[HEAD_OFFICE_CNPJ, docs]]) })
    const shared = loadConfig({ LOG_LEVEL: 'silent' }).shared
    const served = await buildGatewayApp({
      shared,
      config: loadGatewayConfig({ GATEWAY_EVENTO_URL: fake.url, GATEWAY_NFE_URL: nfe.url, GATEWAY_CA_FILE: join(dir, 'ca.pem'), GATEWAY_TIMEOUT_MS: '10000', GATEWAY_FEED_IDLE_MS: '100' }, shared),
      adminToken: ADMIN, masterKey, database: { pool: db.pool }, logger: false, feed: { run: true }
    })
    try {
      await served.ready()
      const on = await served.inject({ method: 'PUT', url: `/admin/empresas/${matriz}/feed/nfe`, headers: { authorization: `Bearer ${ADMIN}` }, payload: { ativo: true, ciencia_automatica: true } })
      expect(on.statusCode).toBe(200)
      // Waits for the events themselves (the hang catcher is far above the ~1 s this takes).
      const registered = async (): Promise<string[]> => (await db.pool.query<{ chave: string }>(
        "SELECT chave FROM manifestacoes WHERE automatica AND status = 'registrado' AND chave = ANY($1) ORDER BY chave", [summaries])).rows.map((r) => r.chave)
      for (let waited = 0; (await registered()).length < summaries.length; waited += 50) {
        if (waited > 60_000) throw new Error(`no automatic Ciência after 60 s: ${JSON.stringify(await registered())}`)
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
      expect(await registered()).toEqual([...summaries].sort())
      const events = fake.requests.flatMap((r) => r.eventos).filter((e) => summaries.includes(e.chNFe))
      expect(events.map((e) => [e.tpEvento, e.signatureChecked])).toEqual(summaries.map(() => ['210210', true]))
    } finally {
      await served.close()
      await nfe.close()
    }
  })
})
