/**
 * Imports as jobs (issue 31, items 3 and 6) over real HTTP, two instances of the service on
 * one real PostgreSQL as behind a balancer: a job received by one instance is followed,
 * listed and cancelled through the other; a load is held at a row by a lock the test owns
 * (a trigger waits on it), never by a sleep; a killed instance (a real `razao serve import`
 * process, kill -9) has its waiting and its running jobs marked by the other.
 */
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { basename, join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { FastifyInstance } from 'fastify'
import { holdLoadsAt as holdLoadsAtRow } from '../../fixtures/db/load-gate.js'
import type { LoadGate } from '../../fixtures/db/load-gate.js'
import { freshDatabase } from '../../fixtures/db/test-database.js'
import type { TestDatabase } from '../../fixtures/db/test-database.js'
import { generateLedger } from '../../fixtures/ledger/generate.js'
import type { LedgerFacts } from '../../fixtures/ledger/generate.js'
import { serveProcess } from '../../fixtures/serve-process.js'
import { ledgerSheetXml, writeTinyXlsx } from '../../fixtures/tiny-xlsx.js'
import { addCompany } from '../../core/db/companies.js'
import { createPool } from '../../workers/pool.js'
import type { WorkerPool } from '../../workers/pool.js'
import { loadConfig } from '../config.js'
import { buildImportApp } from './app.js'
import { openEventStreams } from './import-events.js'

const API_KEY = 'test-key-jobs-0123456789'
/** Rows of the main ledger; loads are held at GATE_ROW. */
const ROWS = 20_000
const GATE_ROW = 12_000

let dir: string
let db: TestDatabase
const instances: Array<{ app: FastifyInstance, pool: WorkerPool, base: string, uploads: string }> = []
let ledger: string
let facts: LedgerFacts
let other: string
let invalid: string
let xls: string
let xlsFacts: LedgerFacts

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'razao-jobs-'))
  db = await freshDatabase()
  for (const name of ['a', 'b']) {
    const uploads = join(dir, `uploads-${name}`)
    const config = loadConfig({ RAZAO_DATA_DIR: join(dir, `data-${name}`), RAZAO_TMP_DIR: uploads, LOG_LEVEL: 'silent', IMPORT_MAX_JOBS: '3' })
    const pool = createPool({ maxThreads: 1 })
    const app = await buildImportApp({
      shared: config.shared, config: config.import, apiKey: API_KEY, pool, database: { url: db.url, pool: db.pool }, logger: false,
      recoveryIntervalMs: 300, progressWriteMs: 200, events: { pollMs: 100, heartbeatMs: 300, maxStreams: 2 }
    })
    instances.push({ app, pool, base: await app.listen({ host: '127.0.0.1', port: 0 }), uploads })
  }
  ledger = join(dir, 'razao-jobs.xlsx')
  facts = await generateLedger({ path: ledger, format: 'xlsx', rows: ROWS, seed: 311, textAmountEvery: 9 })
  other = join(dir, 'outro.xlsx')
  await generateLedger({ path: other, format: 'xlsx', rows: 500, seed: 312, firstRowId: 900_001 })
  xls = join(dir, 'razao-antigo.xls')
  xlsFacts = await generateLedger({ path: xls, format: 'xls', rows: 1500, seed: 313, firstRowId: 800_001, dateStyle: 'date-cell' })
  invalid = join(dir, 'celulas-ruins.xlsx')
  await writeTinyXlsx(invalid, { sheet: ledgerSheetXml([
    [1, 10, '01/02/2024', '100,00', ''],
    [2, 10, '31/02/2024', '', '100,00'],
    [3, 11, '01/02/2024', '=HYPERLINK("http://x";"y")', ''],
    [4, 11, '01/02/2024', '', 'um;dois "três"\nquatro'],
    [5, 12, '01/02/2024', '-12,50', ''],
    [6, 12, '01/02/2024', '', '12,50']
  ]) })
  for (const code of ['seguir', 'outra', 'sair', 'cancelar', 'esperar', 'processo', 'idem', 'ruim', 'morta', 'xls', 'cheia', 'parada']) await addCompany(db.pool, { codigoDominio: code, nome: `Empresa ${code}` })
}, 180_000)

afterAll(async () => {
  for (const { app, pool } of instances) {
    await app.close()
    await pool.destroy()
  }
  await db?.drop()
  await rm(dir, { recursive: true, force: true })
})


interface Reply { status: number, headers: Headers, body: Record<string, any> }

async function post (instance: number, file: string, fields: Record<string, string>, headers: Record<string, string> = {}): Promise<Reply> {
  const form = new FormData()
  for (const [k, v] of Object.entries(fields)) form.append(k, v)
  form.append('file', new Blob([await readFile(file)]), basename(file))
  const res = await fetch(`${instances[instance]!.base}/v1/imports`, { method: 'POST', body: form, headers: { 'x-api-key': API_KEY, ...headers } })
  return { status: res.status, headers: res.headers, body: await res.json() as Record<string, any> }
}

async function call (instance: number, method: string, path: string): Promise<Reply> {
  const res = await fetch(`${instances[instance]!.base}${path}`, { method, headers: { 'x-api-key': API_KEY } })
  const type = res.headers.get('content-type') ?? ''
  return { status: res.status, headers: res.headers, body: type.startsWith('application/json') ? await res.json() as Record<string, any> : { text: await res.text() } }
}

/** Every load of this file's database held at `row` (fixtures/db/load-gate.ts). */
const holdLoadsAt = async (row: number): Promise<LoadGate> => await holdLoadsAtRow(db.pool, 7315, row)

interface ServerEvent { event: string, id: string | undefined, data: string }

/** Reads a Server-Sent Events stream into events as they come; `comments` counts the heartbeat lines. */
async function openEvents (instance: number, id: string, signal?: AbortSignal) {
  const res = await fetch(`${instances[instance]!.base}/v1/imports/${id}/events`, { headers: { 'x-api-key': API_KEY }, ...(signal === undefined ? {} : { signal }) })
  const events: ServerEvent[] = []
  const state = { comments: 0, ended: false, retry: undefined as string | undefined }
  const waiters: Array<() => void> = []
  const reader = res.body!.getReader()
  const decoder = new TextDecoder()
  const pump = (async () => {
    let buffer = ''
    for (;;) {
      const { done, value } = await reader.read().catch(() => ({ done: true, value: undefined }))
      if (done) break
      buffer += decoder.decode(value, { stream: true })
      let end: number
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, end)
        buffer = buffer.slice(end + 2)
        if (block.startsWith(':')) { state.comments++; continue }
        const fields = Object.fromEntries(block.split('\n').map((line) => [line.slice(0, line.indexOf(':')), line.slice(line.indexOf(':') + 2)]))
        if (fields.retry !== undefined) { state.retry = fields.retry; continue }
        events.push({ event: fields.event!, id: fields.id, data: fields.data! })
      }
      for (const w of waiters.splice(0)) w()
    }
    state.ended = true
    for (const w of waiters.splice(0)) w()
  })()
  /** Resolves with the first event (from the start) that satisfies `test`. */
  const until = async (test: (e: ServerEvent) => boolean): Promise<ServerEvent> => {
    for (;;) {
      const found = events.find(test)
      if (found !== undefined) return found
      if (state.ended) throw new Error(`the stream ended without such an event: ${JSON.stringify(events.map((e) => e.data.slice(0, 200)))}`)
      await new Promise<void>((resolve) => waiters.push(resolve))
    }
  }
  return { res, events, state, until, finished: pump }
}

const importacao = (e: ServerEvent): Record<string, any> => JSON.parse(e.data) as Record<string, any>

async function movementsOf (id: string): Promise<{ movements: number, keys: number }> {
  const { rows } = await db.pool.query<{ movements: number, keys: number }>(
    `SELECT (SELECT count(*)::int FROM movimentos m WHERE m.importacao_seq = i.seq) AS movements,
            (SELECT coalesce(sum(upper(a.ids) - lower(a.ids)), 0)::int FROM movimentos_ativos a WHERE a.importacao_seq = i.seq) AS keys
       FROM importacoes i WHERE i.id = $1`, [id])
  return rows[0]!
}

describe('POST /v1/imports, followed over Server-Sent Events', () => {
  it('answers 202 with the import\'s URL once the upload is stored, reports the load growing, and ends VALIDADO with /v1/process\'s body', async () => {
    const gate = await holdLoadsAt(GATE_ROW)
    let id: string
    try {
      const accepted = await post(0, ledger, { codigo_dominio: 'seguir', batch_size: '500' })
      expect(accepted.status).toBe(202)
      id = accepted.body.importacao_id as string
      expect(accepted.headers.get('location')).toBe(`/v1/imports/${id}`)
      expect(accepted.body).toEqual({ importacao_id: id, status: expect.stringMatching(/^(RECEBIDO|PROCESSANDO)$/), fase: expect.any(String), url: `/v1/imports/${id}`, eventos_url: `/v1/imports/${id}/events` })

      // Followed through the other instance, which holds nothing of the job but its row.
      const stream = await openEvents(1, id)
      expect(stream.res.status).toBe(200)
      expect(stream.res.headers.get('content-type')).toBe('text/event-stream; charset=utf-8')
      const held = importacao(await stream.until((e) => e.event === 'importacao' && importacao(e).fase === 'carregando' && importacao(e).linhas_lidas > 0))
      expect(held).toMatchObject({ status: 'PROCESSANDO', origem: 'imports', codigo_dominio: 'seguir', resultado: null, erro: null })
      expect(held.linhas_lidas).toBeLessThan(facts.totalRows)
      expect(held.percentual).toBeGreaterThan(0)
      expect(held.percentual).toBeLessThan(100)
      expect(held.bytes_total).toBeGreaterThan(held.bytes_lidos)
      expect(held.taxa_linhas_s).toBeGreaterThan(0)
      expect(held.restante_estimado_s).toBeGreaterThanOrEqual(0)
      // The load stays at the gate while the stream goes on: heartbeats, no new figures.
      await expect.poll(() => gate.waiting()).toBe(1)
      const heartbeats = stream.state.comments
      await expect.poll(() => stream.state.comments).toBeGreaterThan(heartbeats)
      await gate.release()

      const end = await stream.until((e) => e.event === 'fim')
      await stream.finished
      expect(stream.state.ended).toBe(true)
      expect(stream.state.retry).toBe('10000')
      expect(JSON.parse(end.data)).toEqual({ importacao_id: id, status: 'VALIDADO' })
      const updates = stream.events.filter((e) => e.event === 'importacao').map(importacao)
      const last = updates[updates.length - 1]!
      expect(last).toMatchObject({ status: 'VALIDADO', fase: 'VALIDADO', linhas_lidas: facts.totalRows, linhas_carregadas: facts.totalRows, percentual: 100 })
      // Its end is after the figures seen while it was held (not the start of its transaction), so its rate counts the whole load.
      expect(Date.parse(last.finalizado_em as string)).toBeGreaterThan(Date.parse(held.atualizado_em as string))
      // Figures only grow, and there was one between the start and the end.
      const read = updates.map((u) => u.linhas_lidas as number)
      expect(read).toEqual([...read].sort((x, y) => x - y))
      expect(read.some((n) => n > 0 && n < facts.totalRows)).toBe(true)
      expect(stream.events.map((e) => Number(e.id))).toEqual(stream.events.map((_, i) => i + 1))

      // The result is what /v1/process answers for the same file (another company: the same ids would overlap).
      const form = new FormData()
      form.append('codigo_dominio', 'outra')
      form.append('batch_size', '500')
      form.append('file', new Blob([await readFile(ledger)]), basename(ledger))
      const direct = await (await fetch(`${instances[1]!.base}/v1/process`, { method: 'POST', body: form, headers: { 'x-api-key': API_KEY } })).json() as Record<string, unknown>
      const shown = await call(1, 'GET', `/v1/imports/${id}`)
      expect(shown.status).toBe(200)
      expect(shown.body).toEqual(last)
      const same = (body: Record<string, unknown>): Record<string, unknown> => ({ ...body, importacao_id: '', empresa_id: '', codigo_dominio: '' })
      expect(same(shown.body.resultado)).toEqual(same(direct))
      expect(shown.body.resultado).toMatchObject({ importacao_id: id, codigo_dominio: 'seguir', status: 'VALIDADO', inserted_rows: facts.totalRows })
      expect(await movementsOf(id)).toEqual({ movements: facts.totalRows, keys: facts.totalRows })
      // The runner removes a job's upload once its task has returned, just after the commit shows.
      await expect.poll(async () => await readdir(instances[0]!.uploads)).toEqual([])
    } finally {
      await gate.release()
    }
  }, 120_000)

  it('ends the stream\'s polling when the client leaves, and keeps at most maxStreams open', async () => {
    const gate = await holdLoadsAt(300)
    try {
      const accepted = await post(0, other, { codigo_dominio: 'sair' })
      const controller = new AbortController()
      const stream = await openEvents(1, accepted.body.importacao_id as string, controller.signal)
      await stream.until((e) => e.event === 'importacao')
      expect(openEventStreams(instances[1]!.app)).toBe(1)
      // Two streams at most here (maxStreams): a third is 503, the one above stays open.
      const second = new AbortController()
      await openEvents(1, accepted.body.importacao_id as string, second.signal)
      const third = await call(1, 'GET', `/v1/imports/${accepted.body.importacao_id as string}/events`)
      expect(third.status).toBe(503)
      expect(third.body).toMatchObject({ code: 'SERVICE_BUSY', detail: expect.stringMatching(/as many event streams open/) })
      expect(openEventStreams(instances[1]!.app)).toBe(2)
      controller.abort()
      second.abort()
      await expect.poll(() => openEventStreams(instances[1]!.app)).toBe(0)
    } finally {
      await gate.release()
    }
  }, 60_000)

  it('answers 404 for an id no import has, a malformed one, and its events', async () => {
    for (const path of ['/v1/imports/00000000-0000-4000-8000-000000000000', '/v1/imports/nem-um-uuid', '/v1/imports/00000000-0000-4000-8000-000000000000/events', '/v1/imports/x/problems.csv']) {
      const res = await call(0, 'GET', path)
      expect(res.status, path).toBe(404)
      expect(res.body, path).toMatchObject({ code: 'IMPORT_NOT_FOUND', detail: expect.stringMatching(/No import has the id/) })
    }
  })
})

describe('the end of a job of this instance', () => {
  it('reaches its event streams at once, not at their next poll (here an hour away)', async () => {
    const uploads = join(dir, 'uploads-c')
    const config = loadConfig({ RAZAO_DATA_DIR: join(dir, 'data-c'), RAZAO_TMP_DIR: uploads, LOG_LEVEL: 'silent' })
    const pool = createPool({ maxThreads: 1 })
    const app = await buildImportApp({
      shared: config.shared, config: config.import, apiKey: API_KEY, pool, database: { url: db.url, pool: db.pool }, logger: false,
      events: { pollMs: 3_600_000, heartbeatMs: 3_600_000 }
    })
    const index = instances.push({ app, pool, base: await app.listen({ host: '127.0.0.1', port: 0 }), uploads }) - 1
    const small = join(dir, 'avisada.xlsx')
    const smallFacts = await generateLedger({ path: small, format: 'xlsx', rows: 300, seed: 314, firstRowId: 700_001 })
    await addCompany(db.pool, { codigoDominio: 'avisada', nome: 'Empresa avisada' })
    const gate = await holdLoadsAt(100)
    try {
      const accepted = await post(index, small, { codigo_dominio: 'avisada' })
      expect(accepted.status).toBe(202)
      const stream = await openEvents(index, accepted.body.importacao_id as string)
      await expect.poll(() => gate.waiting()).toBe(1)
      // Held mid-load: the stream has shown the import running, and its next poll is an hour away.
      await stream.until((e) => e.event === 'importacao')
      await gate.release()
      const end = await stream.until((e) => e.event === 'fim')
      expect(JSON.parse(end.data)).toMatchObject({ status: 'VALIDADO' })
      const last = importacao(stream.events.filter((e) => e.event === 'importacao').at(-1)!)
      expect(last.status).toBe('VALIDADO')
      expect(last.resultado.total_rows).toBe(smallFacts.totalRows)
      await stream.finished
    } finally {
      await gate.release()
    }
  })
})

describe('the jobs an instance takes', () => {
  it('loads an XLS, read in its isolate thread (the progress port moves on to that thread)', async () => {
    const accepted = await post(1, xls, { codigo_dominio: 'xls' })
    expect(accepted.status).toBe(202)
    const stream = await openEvents(0, accepted.body.importacao_id as string)
    await stream.until((e) => e.event === 'fim')
    const last = stream.events.filter((e) => e.event === 'importacao').map(importacao).pop()!
    expect(last).toMatchObject({ status: 'VALIDADO', linhas_lidas: xlsFacts.totalRows, percentual: 100, resultado: { inserted_rows: xlsFacts.totalRows, total_debit: xlsFacts.totalDebitCents / 100 } })
  }, 60_000)

  it('answers 503 with Retry-After once it holds IMPORT_MAX_JOBS, before storing anything', async () => {
    const gate = await holdLoadsAt(300)
    const ids: string[] = []
    try {
      // IMPORT_MAX_JOBS is 3 here: one running (held), two waiting.
      for (const mode of ['NORMAL', 'REIMPORTAR', 'REIMPORTAR']) {
        const res = await post(0, other, { codigo_dominio: 'cheia', modo_importacao: mode })
        expect(res.status).toBe(202)
        ids.push(res.body.importacao_id as string)
      }
      const before = (await db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM importacoes')).rows[0]!.n
      const busy = await post(0, other, { codigo_dominio: 'cheia', modo_importacao: 'REIMPORTAR' })
      expect(busy.status).toBe(503)
      expect(busy.headers.get('retry-after')).toBe('30')
      expect(busy.body).toMatchObject({ code: 'SERVICE_BUSY', detail: expect.stringMatching(/IMPORT_MAX_JOBS/) })
      expect((await db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM importacoes')).rows[0]!.n).toBe(before)
      // The other instance still takes jobs.
      const elsewhere = await post(1, other, { codigo_dominio: 'cheia', modo_importacao: 'REIMPORTAR' })
      expect(elsewhere.status).toBe(202)
      ids.push(elsewhere.body.importacao_id as string)
      await gate.release()
      for (const id of ids) await expect.poll(async () => (await call(0, 'GET', `/v1/imports/${id}`)).body.status).toMatch(/^(VALIDADO|SUBSTITUIDO)$/)
      // The runner removes a job's upload once its task has returned, just after the commit shows.
      await expect.poll(async () => await readdir(instances[0]!.uploads)).toEqual([])
    } finally {
      await gate.release()
    }
  }, 60_000)

  it('stopped while a load runs (the app closes): the load rolls back and ends FALHOU, IMPORT_INTERRUPTED', async () => {
    const config = loadConfig({ RAZAO_DATA_DIR: join(dir, 'data-c'), RAZAO_TMP_DIR: join(dir, 'uploads-c'), LOG_LEVEL: 'silent' })
    const pool = createPool({ maxThreads: 1 })
    const app = await buildImportApp({ shared: config.shared, config: config.import, apiKey: API_KEY, pool, database: { url: db.url, pool: db.pool }, logger: false })
    const base = await app.listen({ host: '127.0.0.1', port: 0 })
    const gate = await holdLoadsAt(300)
    try {
      const form = new FormData()
      form.append('codigo_dominio', 'parada')
      form.append('file', new Blob([await readFile(other)]), 'outro.xlsx')
      const res = await fetch(`${base}/v1/imports`, { method: 'POST', body: form, headers: { 'x-api-key': API_KEY } })
      const id = (await res.json() as { importacao_id: string }).importacao_id
      await expect.poll(() => gate.waiting()).toBe(1)
      await app.close()
      const shown = await call(0, 'GET', `/v1/imports/${id}`)
      // Marked by the closing instance, or first by another instance's periodic recovery once the
      // load's session is gone: the same code either way, each sentence saying the writer stopped.
      expect(shown.body).toMatchObject({ status: 'FALHOU', erro: { code: 'IMPORT_INTERRUPTED', detail: expect.stringMatching(/(instance running this import was stopped|process writing this import stopped)/) } })
      expect(await movementsOf(id)).toEqual({ movements: 0, keys: 0 })
      expect(await readdir(join(dir, 'uploads-c'))).toEqual([])
    } finally {
      await gate.release()
      await app.close()
      await pool.destroy()
    }
  }, 60_000)
})

describe('DELETE /v1/imports/{id}', () => {
  it('cancels a load running on the other instance: CANCELADO, no movement and no key kept, the upload removed', async () => {
    const gate = await holdLoadsAt(GATE_ROW)
    try {
      const accepted = await post(0, ledger, { codigo_dominio: 'cancelar' })
      const id = accepted.body.importacao_id as string
      await expect.poll(() => gate.waiting()).toBe(1)
      const stream = await openEvents(1, id)
      await stream.until((e) => importacao(e).status === 'PROCESSANDO')
      const asked = await call(1, 'DELETE', `/v1/imports/${id}`)
      expect(asked.status).toBe(202)
      expect(asked.body).toMatchObject({ importacao_id: id, status: 'PROCESSANDO', cancelamento_pedido_em: expect.any(String) })
      // The load is still held at the gate: its instance ends its session, so it rolls back at once.
      const end = importacao(await stream.until((e) => e.event === 'importacao' && importacao(e).status !== 'PROCESSANDO'))
      expect(end).toMatchObject({ status: 'CANCELADO', fase: 'CANCELADO', erro: { code: 'IMPORT_CANCELLED', fase: 'carregando' }, resultado: null })
      expect(await movementsOf(id)).toEqual({ movements: 0, keys: 0 })
      await expect.poll(async () => await readdir(instances[0]!.uploads)).toEqual([])
      const again = await call(0, 'DELETE', `/v1/imports/${id}`)
      expect(again.status).toBe(409)
      expect(again.body).toMatchObject({ code: 'IMPORT_FINISHED', detail: expect.stringMatching(/already ended \(CANCELADO\)/) })
    } finally {
      await gate.release()
    }
  }, 120_000)

  it('cancels a job still waiting for a thread at once (200), and its load never starts', async () => {
    const gate = await holdLoadsAt(300)
    try {
      const running = await post(0, other, { codigo_dominio: 'esperar' })
      await expect.poll(() => gate.waiting()).toBe(1)
      // Instance a has one thread, held by the first load: the second waits, RECEBIDO.
      const waiting = await post(0, other, { codigo_dominio: 'esperar', modo_importacao: 'REIMPORTAR' })
      expect(waiting.body.status).toBe('RECEBIDO')
      const cancelled = await call(1, 'DELETE', `/v1/imports/${waiting.body.importacao_id as string}`)
      expect(cancelled.status).toBe(200)
      expect(cancelled.body).toMatchObject({ status: 'CANCELADO', fase: 'CANCELADO', iniciado_em: null, erro: { code: 'IMPORT_CANCELLED', fase: 'recebido' } })
      await gate.release()
      await expect.poll(async () => (await call(1, 'GET', `/v1/imports/${running.body.importacao_id as string}`)).body.status).toBe('VALIDADO')
      expect((await call(1, 'GET', `/v1/imports/${waiting.body.importacao_id as string}`)).body).toMatchObject({ status: 'CANCELADO', iniciado_em: null, linhas_lidas: 0 })
    } finally {
      await gate.release()
    }
  }, 60_000)

  it('refuses an import of /v1/process (409), which ends with its request, and an unknown id (404)', async () => {
    const gate = await holdLoadsAt(300)
    try {
      const form = new FormData()
      form.append('codigo_dominio', 'processo')
      form.append('file', new Blob([await readFile(other)]), 'outro.xlsx')
      const loading = fetch(`${instances[0]!.base}/v1/process`, { method: 'POST', body: form, headers: { 'x-api-key': API_KEY } })
      await expect.poll(() => gate.waiting()).toBe(1)
      const { rows } = await db.pool.query<{ id: string }>("SELECT i.id FROM importacoes i JOIN empresas e ON e.id = i.empresa_id WHERE e.codigo_dominio = 'processo'")
      const res = await call(1, 'DELETE', `/v1/imports/${rows[0]!.id}`)
      expect(res.status).toBe(409)
      expect(res.body).toMatchObject({ code: 'IMPORT_NOT_CANCELLABLE', detail: expect.stringMatching(/\/v1\/process/) })
      await gate.release()
      expect((await loading).status).toBe(200)
    } finally {
      await gate.release()
    }
    expect((await call(0, 'DELETE', '/v1/imports/00000000-0000-4000-8000-000000000000')).status).toBe(404)
  }, 60_000)
})

describe('Idempotency-Key', () => {
  it('answers the same import for the same key, file and fields, with no second load; another file is 422', async () => {
    const key = '"8e03978e-40d5-43e8-bc93-6894a57f9324"'
    const first = await post(0, other, { codigo_dominio: 'idem' }, { 'idempotency-key': key })
    expect(first.status).toBe(202)
    const id = first.body.importacao_id as string
    await expect.poll(async () => (await call(0, 'GET', `/v1/imports/${id}`)).body.status).toBe('VALIDADO')
    const again = await post(1, other, { codigo_dominio: 'idem' }, { 'idempotency-key': key })
    expect(again.status).toBe(202)
    expect(again.body).toMatchObject({ importacao_id: id, status: 'VALIDADO', fase: 'VALIDADO' })
    const { rows } = await db.pool.query<{ n: number }>("SELECT count(*)::int AS n FROM importacoes i JOIN empresas e ON e.id = i.empresa_id WHERE e.codigo_dominio = 'idem'")
    expect(rows).toEqual([{ n: 1 }])

    const mismatch = await post(1, invalid, { codigo_dominio: 'idem' }, { 'idempotency-key': key })
    expect(mismatch.status).toBe(422)
    expect(mismatch.body).toMatchObject({ code: 'IMPORT_IDEMPOTENCY_MISMATCH', detail: expect.stringContaining(id) })
    const otherFields = await post(1, other, { codigo_dominio: 'idem', modo_importacao: 'REIMPORTAR' }, { 'idempotency-key': key })
    expect(otherFields.status).toBe(422)
    expect(otherFields.body.detail).toMatch(/modo_importacao \(NORMAL then\)/)
    expect(await readdir(instances[1]!.uploads)).toEqual([])

    const malformed = await post(0, other, { codigo_dominio: 'idem' }, { 'idempotency-key': '"sem fim' })
    expect(malformed.status).toBe(400)
    expect(malformed.body.detail).toMatch(/Idempotency-Key/)
  }, 60_000)
})

describe('a load refused for invalid cells', () => {
  it('ends FALHOU with the code and detail, and serves its rejected cells as CSV for Excel', async () => {
    const accepted = await post(1, invalid, { codigo_dominio: 'ruim' })
    expect(accepted.status).toBe(202)
    const id = accepted.body.importacao_id as string
    const stream = await openEvents(0, id)
    await stream.until((e) => e.event === 'fim')
    const shown = await call(0, 'GET', `/v1/imports/${id}`)
    expect(shown.body).toMatchObject({
      status: 'FALHOU',
      fase: 'FALHOU',
      erro: { code: 'LEDGER_INVALID_CELLS', detail: expect.stringMatching(/3 cells that cannot be imported/), fase: 'validando' },
      problemas: { total: 3, listados: 3, url: `/v1/imports/${id}/problems.csv` },
      resultado: null
    })
    expect(await movementsOf(id)).toEqual({ movements: 0, keys: 0 })

    const csv = await fetch(`${instances[1]!.base}/v1/imports/${id}/problems.csv`, { headers: { 'x-api-key': API_KEY } })
    expect(csv.status).toBe(200)
    expect(csv.headers.get('content-type')).toBe('text/csv; charset=utf-8')
    expect(csv.headers.get('content-disposition')).toBe(`attachment; filename="importacao-${id}-problemas.csv"`)
    const bytes = Buffer.from(await csv.arrayBuffer())
    expect([...bytes.subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf])
    expect(bytes.subarray(3).toString('utf8').split('\r\n')).toEqual([
      'linha;coluna;valor_original;motivo',
      '3;data;31/02/2024;INVALID_DATE: The date cannot be read or does not exist: use a date cell, dd/mm/yyyy or yyyy-mm-dd.',
      `4;debito;"'=HYPERLINK(""http://x"";""y"")";INVALID_AMOUNT: The amount cannot be read as a number: use digits with a comma or point for the cents (1.234,56 or 1234.56).`,
      '5;credito;"um;dois ""três""\nquatro";INVALID_AMOUNT: The amount cannot be read as a number: use digits with a comma or point for the cents (1.234,56 or 1234.56).',
      ''
    ])

    // A load that was not refused for its cells has none on record.
    const { rows } = await db.pool.query<{ id: string }>("SELECT i.id FROM importacoes i JOIN empresas e ON e.id = i.empresa_id WHERE e.codigo_dominio = 'seguir'")
    const none = await call(0, 'GET', `/v1/imports/${rows[0]!.id}/problems.csv`)
    expect(none.status).toBe(404)
    expect(none.body).toMatchObject({ code: 'IMPORT_NO_PROBLEMS' })
  }, 60_000)

  it('refuses at once what is no spreadsheet, an unknown company and a missing field, storing nothing', async () => {
    const before = (await db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM importacoes')).rows[0]!.n
    // Binary bytes: a text file is read as a CSV ledger (and refused later, for its columns).
    const notSheet = join(dir, 'nota.png')
    await writeFile(notSheet, Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]))
    expect((await post(0, notSheet, { codigo_dominio: 'ruim' })).status).toBe(400)
    const unknown = await post(0, other, { codigo_dominio: 'ninguem' })
    expect(unknown.status).toBe(404)
    expect(unknown.body.detail).toMatch(/No company is registered/)
    expect((await post(0, other, {})).status).toBe(422)
    expect((await db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM importacoes')).rows[0]!.n).toBe(before)
    expect(await readdir(instances[0]!.uploads)).toEqual([])
  })
})

describe('GET /v1/imports', () => {
  it('lists imports newest first, by company, status and limit, and refuses malformed parameters with 400', async () => {
    const all = await call(0, 'GET', '/v1/imports?limit=500')
    expect(all.status).toBe(200)
    const listed = all.body.importacoes as Array<Record<string, any>>
    expect(all.body.count).toBe(listed.length)
    const created = listed.map((i) => i.criado_em as string)
    expect(created).toEqual([...created].sort().reverse())
    expect(listed[0]).not.toHaveProperty('resultado')

    const mine = (await call(1, 'GET', '/v1/imports?codigo_dominio=esperar')).body.importacoes as Array<Record<string, any>>
    expect(mine.map((i) => [i.codigo_dominio, i.modo_importacao, i.status])).toEqual([['esperar', 'REIMPORTAR', 'CANCELADO'], ['esperar', 'NORMAL', 'VALIDADO']])
    const cancelled = await call(1, 'GET', '/v1/imports?codigo_dominio=esperar&status=CANCELADO')
    expect((cancelled.body.importacoes as Array<Record<string, any>>).map((i) => i.importacao_id)).toEqual([mine[0]!.importacao_id])
    const validated = (await call(1, 'GET', '/v1/imports?status=VALIDADO&limit=500')).body.importacoes as Array<Record<string, any>>
    expect(validated.length).toBeGreaterThan(1)
    expect(new Set(validated.map((i) => i.status))).toEqual(new Set(['VALIDADO']))
    const one = await call(1, 'GET', '/v1/imports?codigo_dominio=esperar&limit=1')
    expect((one.body.importacoes as Array<Record<string, any>>).map((i) => i.importacao_id)).toEqual([mine[0]!.importacao_id])

    for (const [query, message] of [
      ['limit=0', /limit must be a whole number from 1 to 500; got "0"/],
      ['limit=501', /limit must be/],
      ['limit=abc', /limit must be/],
      ['status=validado', /status must be one of RECEBIDO, PROCESSANDO, VALIDADO, SUBSTITUIDO, FALHOU, CANCELADO; got "validado"/],
      ['codigo_dominio=a&codigo_dominio=b', /codigo_dominio must be given once/]
    ] as const) {
      const res = await call(0, 'GET', `/v1/imports?${query}`)
      expect(res.status, query).toBe(400)
      expect(res.body.detail, query).toMatch(message)
    }
    expect((await call(0, 'GET', '/v1/imports?codigo_dominio=ninguem')).status).toBe(404)
  })
})

describe('an instance killed with jobs in hand', () => {
  it('has its running load and its waiting job marked FALHOU by the other instance; the retry with the same Idempotency-Key starts it again', async () => {
    const gate = await holdLoadsAt(GATE_ROW)
    const served = await serveProcess('import', {
      DATABASE_URL: db.url, IMPORT_API_KEY: API_KEY, IMPORT_PORT: '0', RAZAO_POOL_SIZE: '1',
      RAZAO_DATA_DIR: join(dir, 'data-killed'), RAZAO_TMP_DIR: join(dir, 'uploads-killed')
    })
    let killed = false
    try {
      const key = '"retomar-depois-de-kill-9"'
      const send = async (fields: Record<string, string>, headers: Record<string, string> = {}): Promise<string> => {
        const form = new FormData()
        for (const [k, v] of Object.entries(fields)) form.append(k, v)
        form.append('file', new Blob([await readFile(ledger)]), 'morta.xlsx')
        const res = await fetch(`${served.url}/v1/imports`, { method: 'POST', body: form, headers: { 'x-api-key': API_KEY, ...headers } })
        expect(res.status).toBe(202)
        return (await res.json() as { importacao_id: string }).importacao_id
      }
      const running = await send({ codigo_dominio: 'morta' }, { 'idempotency-key': key })
      await expect.poll(() => gate.waiting(), { timeout: 60_000 }).toBe(1)
      const waiting = await send({ codigo_dominio: 'morta', modo_importacao: 'REIMPORTAR' })
      expect((await call(0, 'GET', `/v1/imports/${running}`)).body.status).toBe('PROCESSANDO')
      expect((await call(0, 'GET', `/v1/imports/${waiting}`)).body.status).toBe('RECEBIDO')

      process.kill(served.pid, 'SIGKILL')
      killed = true
      // The held load's backend learns that its client is gone once it reads again.
      await gate.release()
      for (const id of [running, waiting]) {
        await expect.poll(async () => (await call(0, 'GET', `/v1/imports/${id}`)).body.status, { timeout: 30_000 }).toBe('FALHOU')
        expect((await call(1, 'GET', `/v1/imports/${id}`)).body.erro).toMatchObject({ code: 'IMPORT_INTERRUPTED', detail: expect.stringMatching(/^interrupted/) })
        expect(await movementsOf(id)).toEqual({ movements: 0, keys: 0 })
      }
      // The client's retry with the same Idempotency-Key, to a live instance, starts the import again.
      const retry = await post(0, ledger, { codigo_dominio: 'morta' }, { 'idempotency-key': key })
      expect(retry.status).toBe(202)
      expect(retry.body.importacao_id).not.toBe(running)
      await expect.poll(async () => (await call(1, 'GET', `/v1/imports/${retry.body.importacao_id as string}`)).body.status, { timeout: 30_000 }).toBe('VALIDADO')
    } finally {
      await gate.release()
      if (!killed) await served.stop()
    }
  }, 180_000)
})
