/**
 * The same movements never count twice (issue 31), over real HTTP into a real PostgreSQL:
 * a ledger re-saved by openpyxl, LibreOffice and Gnumeric (new bytes, same movements) is
 * refused in NORMAL and announced by /v1/analyze; REIMPORTAR replaces; two instances of
 * the service loading overlapping files at the same moment let exactly one win.
 */
import { spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { basename, join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { FastifyInstance } from 'fastify'
import { SYSTEM_PYTHON, probeOpenpyxl } from '../../fixtures/corpus/build.js'
import { convertWithGnumeric, convertWithLibreOffice, probeProducer } from '../../fixtures/corpus/producers.js'
import type { ProducedFile } from '../../fixtures/corpus/producers.js'
import { freshDatabase } from '../../fixtures/db/test-database.js'
import type { TestDatabase } from '../../fixtures/db/test-database.js'
import { generateLedger } from '../../fixtures/ledger/generate.js'
import type { LedgerFacts } from '../../fixtures/ledger/generate.js'
import { addCompany } from '../../core/db/companies.js'
import { centsToDecimal } from '../../core/money/index.js'
import { createPool } from '../../workers/pool.js'
import type { WorkerPool } from '../../workers/pool.js'
import { loadConfig } from '../config.js'
import { buildImportApp } from './app.js'

const API_KEY = 'test-key-overlap-0123456789'
const isCI = process.env.CI === 'true'
const producers = { openpyxl: probeOpenpyxl(), soffice: probeProducer('soffice'), ssconvert: probeProducer('ssconvert') }
const allProducers = producers.openpyxl.available && producers.soffice.available && producers.ssconvert.available

let dir: string
let db: TestDatabase
const instances: Array<{ app: FastifyInstance, pool: WorkerPool, base: string }> = []
let original: string
let facts: LedgerFacts
let resaved: ProducedFile[] = []
const halves: Record<'first' | 'second', string> = { first: '', second: '' }

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'razao-overlap-'))
  db = await freshDatabase()
  // Two instances of the service on one database, as behind a balancer: each its own app and threads.
  for (const name of ['a', 'b']) {
    const config = loadConfig({ RAZAO_DATA_DIR: join(dir, `data-${name}`), RAZAO_TMP_DIR: join(dir, `uploads-${name}`), LOG_LEVEL: 'silent' })
    const pool = createPool({ maxThreads: 1 })
    const app = await buildImportApp({ shared: config.shared, config: config.import, apiKey: API_KEY, pool, database: { url: db.url, pool: db.pool }, logger: false })
    instances.push({ app, pool, base: await app.listen({ host: '127.0.0.1', port: 0 }) })
  }
  original = join(dir, 'razao-ledger.xlsx')
  facts = await generateLedger({ path: original, format: 'xlsx', rows: 1500, seed: 31, firstRowId: 50_001, textAmountEvery: 5, extraColumns: true })
  halves.first = join(dir, 'first.xlsx')
  halves.second = join(dir, 'second.xlsx')
  await generateLedger({ path: halves.first, format: 'xlsx', rows: 3000, seed: 32, firstRowId: 70_001 })
  await generateLedger({ path: halves.second, format: 'xlsx', rows: 3000, seed: 33, firstRowId: 71_501 })
  if (allProducers) {
    const out = join(dir, 'resaved')
    await mkdir(out)
    const openpyxlCopy = join(out, 'openpyxl-razao-ledger.xlsx')
    const run = spawnSync(SYSTEM_PYTHON, ['-c', 'import openpyxl, sys; openpyxl.load_workbook(sys.argv[1]).save(sys.argv[2])', original, openpyxlCopy], { encoding: 'utf8' })
    if (run.status !== 0) throw new Error(`openpyxl re-save failed: ${run.stderr}`)
    resaved = [
      { path: openpyxlCopy, producer: 'openpyxl', format: 'xlsx' },
      ...convertWithLibreOffice([original], out),
      ...await convertWithGnumeric([original], out)
    ]
  }
  for (const code of ['resaved', 'corrida']) await addCompany(db.pool, { codigoDominio: code, nome: `Empresa ${code}` })
}, 300_000)

afterAll(async () => {
  for (const { app, pool } of instances) {
    await app.close()
    await pool.destroy()
  }
  await db?.drop()
  await rm(dir, { recursive: true, force: true })
})

interface Reply { status: number, body: Record<string, any> }

async function post (route: 'process' | 'analyze', file: string, fields: Record<string, string>, instance = 0): Promise<Reply> {
  const form = new FormData()
  for (const [k, v] of Object.entries(fields)) form.append(k, v)
  form.append('file', new Blob([await readFile(file)]), basename(file))
  const res = await fetch(`${instances[instance]!.base}/v1/${route}`, { method: 'POST', body: form, headers: { 'x-api-key': API_KEY } })
  return { status: res.status, body: await res.json() as Record<string, any> }
}

/** What the company counts: its VALIDADO imports' movements. */
async function counted (code: string): Promise<{ imports: number, movements: number, distinctIds: number, debit: string }> {
  const { rows } = await db.pool.query<{ imports: number, movements: number, distinct_ids: number, debit: string }>(
    `SELECT count(DISTINCT i.id)::int AS imports, count(m.*)::int AS movements, count(DISTINCT m.id)::int AS distinct_ids, coalesce(sum(m.debito), 0)::text AS debit
       FROM importacoes i JOIN empresas e ON e.id = i.empresa_id LEFT JOIN movimentos m ON m.importacao_seq = i.seq
      WHERE e.codigo_dominio = $1 AND i.status = 'VALIDADO'`, [code])
  const r = rows[0]!
  return { imports: r.imports, movements: r.movements, distinctIds: r.distinct_ids, debit: r.debit }
}

const sha256 = async (path: string): Promise<string> => createHash('sha256').update(await readFile(path)).digest('hex')

describe('a ledger saved again by a spreadsheet program', () => {
  it.runIf(isCI || allProducers)('is refused in NORMAL (409 IMPORT_OVERLAP naming the first import) and announced by /v1/analyze, for every producer and format', async () => {
    expect(producers, 'CI installs python3-openpyxl, libreoffice-calc-nogui and gnumeric').toMatchObject({
      openpyxl: { available: true }, soffice: { available: true }, ssconvert: { available: true }
    })
    const first = await post('process', original, { codigo_dominio: 'resaved' })
    expect(first.status).toBe(200)
    const firstId = first.body.importacao_id as string
    expect(resaved.map((f) => `${f.producer}/${f.format}`)).toEqual(
      ['openpyxl/xlsx', 'libreoffice/xlsx', 'libreoffice/biff8', 'gnumeric/xlsx', 'gnumeric/biff8', 'gnumeric/biff7', 'gnumeric/biff7-stream'])
    for (const copy of resaved) {
      const label = `${copy.producer}/${copy.format}`
      // New bytes: the spec's same-file rule alone would have let it in.
      expect(await sha256(copy.path), label).not.toBe(first.body.sha256)

      const analysis = await post('analyze', copy.path, { codigo_dominio: 'resaved' })
      expect(analysis.status, label).toBe(200)
      expect(analysis.body.total_rows, label).toBe(facts.totalRows)
      expect(analysis.body.sobreposicao, label).toMatchObject({
        codigo_dominio: 'resaved',
        movimentos_sobrepostos: facts.totalRows,
        importacoes: [{ importacao_id: firstId, nome_arquivo: 'razao-ledger.xlsx', total_linhas: facts.totalRows, movimentos_sobrepostos: facts.totalRows, movimentos_fora_do_arquivo: 0 }]
      })
      expect(analysis.body.sobreposicao.aviso, label).toMatch(/would refuse it/)

      const refused = await post('process', copy.path, { codigo_dominio: 'resaved' }, 1)
      expect(refused.status, label).toBe(409)
      expect(refused.body, label).toMatchObject({
        code: 'IMPORT_OVERLAP',
        sobreposicao: { movimentos_sobrepostos: facts.totalRows, importacoes: [{ importacao_id: firstId, nome_arquivo: 'razao-ledger.xlsx' }] }
      })
      expect(refused.body.detail, label).toContain(firstId)
      expect(refused.body.sobreposicao.importacoes[0].criado_em, label).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/)
    }
    expect(await counted('resaved')).toEqual({ imports: 1, movements: facts.totalRows, distinctIds: facts.totalRows, debit: centsToDecimal(facts.totalDebitCents) })

    // REIMPORTAR with one of them replaces the first import: still one import's worth of movements.
    const replaced = await post('process', resaved[2]!.path, { codigo_dominio: 'resaved', modo_importacao: 'REIMPORTAR' })
    expect(replaced.status).toBe(200)
    expect(replaced.body).toMatchObject({
      status: 'VALIDADO',
      replaced_importacao_id: firstId,
      importacoes_substituidas: [{ importacao_id: firstId, movimentos_sobrepostos: facts.totalRows, movimentos_fora_do_arquivo: 0 }]
    })
    expect(await counted('resaved')).toEqual({ imports: 1, movements: facts.totalRows, distinctIds: facts.totalRows, debit: centsToDecimal(facts.totalDebitCents) })
  }, 300_000)

  it.skipIf(isCI || allProducers)(`needs openpyxl, LibreOffice and Gnumeric (${JSON.stringify(producers)})`, () => {
    expect(allProducers).toBe(false)
  })
})

describe('/v1/analyze with codigo_dominio', () => {
  it('is silent about overlap without it, and answers 404 for a company nobody registered', async () => {
    const plain = await post('analyze', halves.first, {})
    expect(plain.status).toBe(200)
    expect(plain.body).not.toHaveProperty('sobreposicao')
    const unknown = await post('analyze', halves.first, { codigo_dominio: 'ninguem' })
    expect(unknown.status).toBe(404)
    expect(unknown.body.detail).toMatch(/No company is registered/)
  })
})

describe('two instances loading overlapping ledgers at the same moment', () => {
  it('let exactly one win; the other answers 409 naming it, and nothing of it is kept', async () => {
    // Each load waits at its row 1500 for a lock the test holds: both are copying together
    // when it is let go, on two instances (two processes' worth of threads and connections).
    const gate = await db.pool.connect()
    await gate.query('SELECT pg_advisory_lock(7312, 1500)')
    await db.pool.query("CREATE OR REPLACE FUNCTION wait_gate() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_advisory_xact_lock_shared(7312, 1500); RETURN NEW; END $$")
    await db.pool.query('CREATE TRIGGER wait_gate BEFORE INSERT ON movimentos FOR EACH ROW WHEN (NEW.linha_origem = 1500) EXECUTE FUNCTION wait_gate()')
    try {
      const a = post('process', halves.first, { codigo_dominio: 'corrida' }, 0)
      const b = post('process', halves.second, { codigo_dominio: 'corrida' }, 1)
      for (;;) {
        const { rows } = await db.pool.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND classid = 7312 AND NOT granted")
        if (rows[0]!.n === 2) break
        await new Promise((resolve) => setTimeout(resolve, 10))
      }
      await gate.query('SELECT pg_advisory_unlock(7312, 1500)')
      const replies = await Promise.all([a, b])
      expect(replies.map((r) => r.status).sort()).toEqual([200, 409])
      const winner = replies.find((r) => r.status === 200)!
      const loser = replies.find((r) => r.status === 409)!
      expect(loser.body).toMatchObject({ code: 'IMPORT_OVERLAP', sobreposicao: { movimentos_sobrepostos: 1500, importacoes: [{ importacao_id: winner.body.importacao_id }] } })
      expect(await counted('corrida')).toMatchObject({ imports: 1, movements: 3000, distinctIds: 3000 })
      const { rows } = await db.pool.query<{ n: number }>("SELECT count(*)::int AS n FROM importacoes i JOIN empresas e ON e.id = i.empresa_id WHERE e.codigo_dominio = 'corrida'")
      expect(rows).toEqual([{ n: 1 }])
    } finally {
      gate.release()
      await db.pool.query('DROP TRIGGER wait_gate ON movimentos')
    }
  }, 120_000)
})
