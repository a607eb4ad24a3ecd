/**
 * processLedger on a real PostgreSQL, both ways of feeding COPY: the stored rows
 * and totals equal the file's to the cent, and a failure inside the database mid-load
 * leaves nothing but a FALHOU importation.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freshDatabase } from '../../fixtures/db/test-database.js'
import type { TestDatabase } from '../../fixtures/db/test-database.js'
import { generateLedger } from '../../fixtures/ledger/generate.js'
import type { LedgerFacts } from '../../fixtures/ledger/generate.js'
import { addCompany } from '../db/companies.js'
import { centsToDecimal } from '../money/index.js'
import { readXlsxFirstSheet } from '../xlsx/index.js'
import type { CopyMode } from './copy-sink.js'
import { processLedger, recoverInterruptedImports } from './process-ledger.js'
import type { ProcessSource } from './process-ledger.js'

let dir: string
let db: TestDatabase
let client: pg.Client
let file: string
let facts: LedgerFacts
let source: ProcessSource

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'razao-process-ledger-'))
  db = await freshDatabase()
  client = new pg.Client({ connectionString: db.url })
  await client.connect()
  file = join(dir, 'ledger.xlsx')
  facts = await generateLedger({ path: file, format: 'xlsx', rows: 5000, seed: 41, textAmountEvery: 3 })
  source = (onRow, afterChunk) => readXlsxFirstSheet(file, onRow, { maxInflatedBytes: 1 << 30, afterChunk })
  await addCompany(db.pool, { codigoDominio: 'stream', nome: 'Stream' })
  await addCompany(db.pool, { codigoDominio: 'per-batch', nome: 'Per batch' })
  // One company per test below: the same ledger's movements are active once per company.
  for (const code of ['marked', 'recovery-live', 'recovery-dead']) await addCompany(db.pool, { codigoDominio: code, nome: code })
}, 120_000)
afterAll(async () => {
  await client?.end()
  await db?.drop()
  await rm(dir, { recursive: true, force: true })
})

async function stored (importacaoId: string) {
  const { rows } = await db.pool.query<{ n: string, debito: string, credito: string, linhas: string }>(
    `SELECT count(*) AS n, sum(debito)::text AS debito, sum(credito)::text AS credito, count(DISTINCT linha_origem) AS linhas
       FROM movimentos WHERE importacao_seq = (SELECT seq FROM importacoes WHERE id = $1)`, [importacaoId])
  return rows[0]!
}

describe.each(['stream', 'per-batch'] as CopyMode[])('processLedger, copy mode %s', (copyMode) => {
  it('stores every row once, with the file\'s totals to the cent', async () => {
    const result = await processLedger(client, source, { fileName: 'ledger.xlsx', sha256: 'a'.repeat(64), codigoDominio: copyMode, mode: 'NORMAL', batchSize: 333, copyMode })
    expect(result).toMatchObject({ status: 'VALIDADO', insertedRows: facts.totalRows, replacedImportacaoId: null })
    expect(await stored(result.importacaoId)).toEqual({
      n: String(facts.totalRows),
      linhas: String(facts.totalRows),
      debito: centsToDecimal(facts.totalDebitCents),
      credito: centsToDecimal(facts.totalCreditCents)
    })
  })

  it('rolls everything back when the database fails mid-load', async () => {
    await db.pool.query("CREATE OR REPLACE FUNCTION fail_row() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'boom'; END $$")
    await db.pool.query('CREATE TRIGGER fail_row BEFORE INSERT ON movimentos FOR EACH ROW WHEN (NEW.linha_origem = 4000) EXECUTE FUNCTION fail_row()')
    try {
      await expect(processLedger(client, source, { fileName: 'ledger.xlsx', sha256: 'b'.repeat(64), codigoDominio: copyMode, mode: 'NORMAL', batchSize: 500, copyMode }))
        .rejects.toThrow(/boom/)
    } finally {
      await db.pool.query('DROP TRIGGER fail_row ON movimentos')
    }
    const { rows } = await db.pool.query<{ status: string, n: string }>(
      "SELECT status, (SELECT count(*) FROM movimentos m WHERE m.importacao_seq = i.seq) AS n FROM importacoes i WHERE sha256 = $1", ['b'.repeat(64)])
    expect(rows).toEqual([{ status: 'FALHOU', n: '0' }])
    // The connection is usable again for the next load.
    expect((await client.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }])
    await db.pool.query("DELETE FROM importacoes WHERE sha256 = $1", ['b'.repeat(64)])
  })

  it('reports the server\'s refusal, not a client-side error, when it arrives before the COPY is ended', async () => {
    await db.pool.query("CREATE OR REPLACE FUNCTION fail_row() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'early boom'; END $$")
    // The last row fails, and the batch size divides the row count: every batch is written
    // while the file is read, and the source ends only once the refusal has landed, before
    // the COPY is ended.
    expect(facts.totalRows % 100).toBe(0)
    await db.pool.query(`CREATE TRIGGER fail_row BEFORE INSERT ON movimentos FOR EACH ROW WHEN (NEW.linha_origem = ${facts.totalRows + 1}) EXECUTE FUNCTION fail_row()`)
    const slowEnd: ProcessSource = async (onRow, afterChunk) => {
      // The server's ErrorResponse reaching the connection, not a fixed pause; a hang catcher
      // far beyond the few ms it takes.
      let backstop: NodeJS.Timeout | undefined
      const refused = Promise.race([
        new Promise((resolve) => client.connection.once('errorMessage', resolve)),
        new Promise((_resolve, reject) => { backstop = setTimeout(() => { reject(new Error('no refusal from the server while the COPY was open')) }, 30_000) })
      ])
      refused.catch(() => undefined)
      try {
        const summary = await source(onRow, afterChunk)
        await refused
        return summary
      } finally {
        clearTimeout(backstop)
      }
    }
    try {
      await expect(processLedger(client, slowEnd, { fileName: 'ledger.xlsx', sha256: 'd'.repeat(64), codigoDominio: copyMode, mode: 'NORMAL', batchSize: 100, copyMode }))
        .rejects.toThrow(/early boom/)
    } finally {
      await db.pool.query('DROP TRIGGER fail_row ON movimentos')
    }
    expect((await client.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }])
    await db.pool.query("DELETE FROM importacoes WHERE sha256 = $1", ['d'.repeat(64)])
  })
})

describe('an import marked failed while it is written', () => {
  it('never turns VALIDADO: the load is rolled back', async () => {
    await db.pool.query("CREATE OR REPLACE FUNCTION slow_row() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_sleep(0.5); RETURN NEW; END $$")
    await db.pool.query('CREATE TRIGGER slow_row BEFORE INSERT ON movimentos FOR EACH ROW WHEN (NEW.linha_origem = 2500) EXECUTE FUNCTION slow_row()')
    try {
      const load = processLedger(client, source, { fileName: 'ledger.xlsx', sha256: 'c'.repeat(64), codigoDominio: 'marked', mode: 'NORMAL', batchSize: 100 })
      load.catch(() => undefined)
      // What recovery does to an import whose session it believes gone.
      for (let marked = 0; marked === 0;) {
        marked = (await db.pool.query("UPDATE importacoes SET status = 'FALHOU' WHERE sha256 = $1 AND status = 'PROCESSANDO'", ['c'.repeat(64)])).rowCount ?? 0
      }
      await expect(load).rejects.toMatchObject({ code: 'IMPORT_VALIDATION_FAILED' })
    } finally {
      await db.pool.query('DROP TRIGGER slow_row ON movimentos')
    }
    const { rows } = await db.pool.query<{ status: string, n: string }>(
      "SELECT status, (SELECT count(*) FROM movimentos m WHERE m.importacao_seq = i.seq) AS n FROM importacoes i WHERE sha256 = $1", ['c'.repeat(64)])
    expect(rows).toEqual([{ status: 'FALHOU', n: '0' }])
  })
})

describe('recovery of interrupted imports, from any instance', () => {
  it('leaves a load that is still being written alone, and fails the one whose session ended, at once', async () => {
    // Both loads stop at row 2500 until the test lets them go (a lock the test holds), so that
    // the second is still being written when its session ends, however slow the machine.
    const gate = new pg.Client({ connectionString: db.url })
    await gate.connect()
    await gate.query('SELECT pg_advisory_lock(7310, 2500)')
    await db.pool.query("CREATE OR REPLACE FUNCTION slow_row() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_advisory_xact_lock_shared(7310, 2500); RETURN NEW; END $$")
    await db.pool.query('CREATE TRIGGER slow_row BEFORE INSERT ON movimentos FOR EACH ROW WHEN (NEW.linha_origem = 2500) EXECUTE FUNCTION slow_row()')
    const doomed = new pg.Client({ connectionString: db.url })
    await doomed.connect()
    doomed.on('error', () => undefined)
    // Asked before the load: once it runs, a query on this connection waits behind it.
    const { rows } = await doomed.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')
    try {
      const live = processLedger(client, source, { fileName: 'ledger.xlsx', sha256: 'e'.repeat(64), codigoDominio: 'recovery-live', mode: 'NORMAL', batchSize: 100 })
      const dead = processLedger(doomed, source, { fileName: 'ledger.xlsx', sha256: 'f'.repeat(64), codigoDominio: 'recovery-dead', mode: 'NORMAL', batchSize: 100 })
      live.catch(() => undefined)
      dead.catch(() => undefined)
      const statusOf = async (sha: string): Promise<string[]> =>
        (await db.pool.query<{ status: string }>('SELECT status FROM importacoes WHERE sha256 = $1', [sha.repeat(64)])).rows.map((r) => r.status)
      while ((await statusOf('e')).length === 0 || (await statusOf('f')).length === 0) await new Promise((resolve) => setTimeout(resolve, 5))
      // Both are being written: recovery, run as often as a live instance would, touches neither.
      expect(await recoverInterruptedImports(db.pool)).toBe(0)
      expect([await statusOf('e'), await statusOf('f')]).toEqual([['PROCESSANDO'], ['PROCESSANDO']])
      // The second writer's session ends (a killed instance): its lock goes with it.
      await db.pool.query('SELECT pg_terminate_backend($1)', [rows[0]!.pid])
      await expect(dead).rejects.toBeDefined()
      let recovered = 0
      for (let i = 0; i < 50 && recovered === 0; i++) {
        recovered = await recoverInterruptedImports(db.pool)
        if (recovered === 0) await new Promise((resolve) => setTimeout(resolve, 20))
      }
      expect(recovered).toBe(1)
      expect(await statusOf('f')).toEqual(['FALHOU'])
      expect(await statusOf('e')).toEqual(['PROCESSANDO'])
      await gate.query('SELECT pg_advisory_unlock(7310, 2500)')
      expect(await live).toMatchObject({ status: 'VALIDADO' })
      expect(await statusOf('e')).toEqual(['VALIDADO'])
      // A settled load gives its lock back: the connection goes on without holding it.
      const { rows: held } = await client.query("SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid()")
      expect(held).toEqual([{ n: 0 }])
    } finally {
      await gate.end().catch(() => undefined)
      await db.pool.query('DROP TRIGGER slow_row ON movimentos')
      await doomed.end().catch(() => undefined)
    }
  })
})
