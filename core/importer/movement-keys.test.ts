/**
 * No movement is active twice in one company (issue 31): overlapping ledgers on a real
 * PostgreSQL, refused in NORMAL, replaced whole and all together in REIMPORTAR, a repeated
 * or missing id refused, and two loads racing on two connections.
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
import { writeTinyXlsx } from '../../fixtures/tiny-xlsx.js'
import { addCompany } from '../db/companies.js'
import { centsToDecimal } from '../money/index.js'
import { readXlsxFirstSheet } from '../xlsx/index.js'
import { processLedger } from './process-ledger.js'
import type { ImportMode, ProcessSource } from './process-ledger.js'
import { RisingRuns, overlapOfIds } from './movement-keys.js'

let dir: string
let db: TestDatabase
let client: pg.Client
let second: pg.Client

interface Ledger { path: string, name: string, facts: LedgerFacts, sha256: string }
const ledgers: Record<string, Ledger> = {}

/** Ids 10,001..12,000 (A), 11,001..13,000 (B: half of A), 12,501..13,500 (C: a quarter of B), 20,001..21,000 (D: alone). */
const SHAPES = { A: { first: 10_001, rows: 2000, seed: 1 }, B: { first: 11_001, rows: 2000, seed: 2 }, C: { first: 12_501, rows: 1000, seed: 3 }, D: { first: 20_001, rows: 1000, seed: 4 } }

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'razao-movement-keys-'))
  db = await freshDatabase()
  client = new pg.Client({ connectionString: db.url })
  second = new pg.Client({ connectionString: db.url })
  await client.connect()
  await second.connect()
  for (const [name, shape] of Object.entries(SHAPES)) {
    const path = join(dir, `${name}.xlsx`)
    const facts = await generateLedger({ path, format: 'xlsx', rows: shape.rows, seed: shape.seed, firstRowId: shape.first, compressionLevel: 1 })
    ledgers[name] = { path, name: `${name}.xlsx`, facts, sha256: name.toLowerCase().repeat(64) }
  }
}, 120_000)
afterAll(async () => {
  await client?.end()
  await second?.end()
  await db?.drop()
  await rm(dir, { recursive: true, force: true })
})

const sourceOf = (path: string): ProcessSource => (onRow, afterChunk) => readXlsxFirstSheet(path, onRow, { maxInflatedBytes: 1 << 30, afterChunk })

function load (company: string, name: string, mode: ImportMode = 'NORMAL', on: pg.Client = client) {
  const l = ledgers[name]!
  return processLedger(on, sourceOf(l.path), { fileName: l.name, sha256: l.sha256, codigoDominio: company, mode, batchSize: 500 })
}

/** Status of each import of the company, by file name. */
async function statuses (company: string): Promise<Record<string, string[]>> {
  const { rows } = await db.pool.query<{ nome_arquivo: string, status: string }>(
    `SELECT i.nome_arquivo, i.status FROM importacoes i JOIN empresas e ON e.id = i.empresa_id
      WHERE e.codigo_dominio = $1 ORDER BY i.seq`, [company])
  const out: Record<string, string[]> = {}
  for (const r of rows) (out[r.nome_arquivo] ??= []).push(r.status)
  return out
}

/** What the company counts now: movements of its VALIDADO imports, and its active keys. */
async function active (company: string): Promise<{ movements: number, distinctIds: number, keys: number, debit: string }> {
  const { rows } = await db.pool.query<{ movements: number, distinct_ids: number, keys: number, debit: string }>(
    `SELECT count(*)::int AS movements, count(DISTINCT m.id)::int AS distinct_ids, coalesce(sum(m.debito), 0)::text AS debit,
            (SELECT coalesce(sum(upper(a.ids) - lower(a.ids)), 0)::int FROM movimentos_ativos a JOIN empresas e2 ON e2.id = a.empresa_id WHERE e2.codigo_dominio = $1) AS keys
       FROM movimentos m JOIN importacoes i ON i.seq = m.importacao_seq JOIN empresas e ON e.id = i.empresa_id
      WHERE e.codigo_dominio = $1 AND i.status = 'VALIDADO'`, [company])
  const r = rows[0]!
  return { movements: r.movements, distinctIds: r.distinct_ids, keys: r.keys, debit: r.debit }
}

describe('a ledger that overlaps half of another', () => {
  it('is refused in NORMAL with the earlier import named and the overlap counted, and nothing is written', async () => {
    await addCompany(db.pool, { codigoDominio: 'half', nome: 'Half' })
    const first = await load('half', 'A')
    const refused = await load('half', 'B').catch((err: unknown) => err)
    expect(refused).toMatchObject({
      code: 'IMPORT_OVERLAP',
      details: { overlap: { overlappingRows: 1000, imports: [{ importacaoId: first.importacaoId, fileName: 'A.xlsx', totalRows: 2000, overlappingRows: 1000 }] } }
    })
    expect((refused as Error).message).toContain(first.importacaoId)
    expect((refused as Error).message).toContain('"A.xlsx"')
    expect(await statuses('half')).toEqual({ 'A.xlsx': ['VALIDADO'] })
    expect(await active('half')).toEqual({ movements: 2000, distinctIds: 2000, keys: 2000, debit: centsToDecimal(ledgers.A!.facts.totalDebitCents) })
  })

  it('in REIMPORTAR replaces the earlier import whole: the company then counts the new file\'s movements only', async () => {
    const result = await load('half', 'B', 'REIMPORTAR')
    const { rows } = await db.pool.query<{ id: string }>("SELECT id FROM importacoes WHERE nome_arquivo = 'A.xlsx' AND status = 'SUBSTITUIDO' AND substituida_por = $1", [result.importacaoId])
    expect(rows).toHaveLength(1)
    expect(result.replacedImportacaoId).toBe(rows[0]!.id)
    expect(result.replaced).toMatchObject([{ importacaoId: rows[0]!.id, overlappingRows: 1000, totalRows: 2000 }])
    expect(await active('half')).toEqual({ movements: 2000, distinctIds: 2000, keys: 2000, debit: centsToDecimal(ledgers.B!.facts.totalDebitCents) })
  })

  it('leaves another company\'s movements alone', async () => {
    await addCompany(db.pool, { codigoDominio: 'other', nome: 'Other' })
    expect(await load('other', 'A')).toMatchObject({ status: 'VALIDADO', replaced: [] })
  })
})

describe('REIMPORTAR over several imports', () => {
  it('replaces all of them or, when the load fails, none', async () => {
    await addCompany(db.pool, { codigoDominio: 'several', nome: 'Several' })
    await load('several', 'C')
    await load('several', 'D')
    // A (10,001..12,000) overlaps neither C nor D; B (11,001..13,000) overlaps A (1,000) and C (500).
    await load('several', 'A')
    // A failure inside B's load keeps A and C as they were: all or nothing.
    await db.pool.query("CREATE OR REPLACE FUNCTION fail_row() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'boom'; END $$")
    await db.pool.query('CREATE TRIGGER fail_keys BEFORE INSERT ON movimentos_ativos FOR EACH ROW WHEN (NEW.ids @> 12999::bigint) EXECUTE FUNCTION fail_row()')
    try {
      await expect(load('several', 'B', 'REIMPORTAR')).rejects.toThrow(/boom/)
    } finally {
      await db.pool.query('DROP TRIGGER fail_keys ON movimentos_ativos')
    }
    expect(await statuses('several')).toEqual({ 'C.xlsx': ['VALIDADO'], 'D.xlsx': ['VALIDADO'], 'A.xlsx': ['VALIDADO'], 'B.xlsx': ['FALHOU'] })
    expect(await active('several')).toMatchObject({ movements: 4000, keys: 4000 })

    const result = await load('several', 'B', 'REIMPORTAR')
    expect(result.replaced.map((r) => [r.fileName, r.overlappingRows])).toEqual([['C.xlsx', 500], ['A.xlsx', 1000]])
    // The spec's one id: the import sharing the most movements.
    expect(result.replacedImportacaoId).toBe(result.replaced[1]!.importacaoId)
    expect(await statuses('several')).toEqual({ 'C.xlsx': ['SUBSTITUIDO'], 'D.xlsx': ['VALIDADO'], 'A.xlsx': ['SUBSTITUIDO'], 'B.xlsx': ['FALHOU', 'VALIDADO'] })
    expect(await active('several')).toEqual({
      movements: 3000, distinctIds: 3000, keys: 3000, debit: centsToDecimal(ledgers.B!.facts.totalDebitCents + ledgers.D!.facts.totalDebitCents)
    })
  })
})

describe('the ids of a file', () => {
  const header = ['id', 'id_movim_finan', 'data', 'id_conta', 'planejamento_analitico', 'id_planejamento', 'planejamento', 'tipo', 'cod_planejamento', 'credito', 'debito']
  const cell = (v: string | number | null): string => v === null ? '<c/>' : typeof v === 'number' ? `<c><v>${v}</v></c>` : `<c t="inlineStr"><is><t>${v}</t></is></c>`
  const row = (values: Array<string | number | null>): string => `<row>${values.map(cell).join('')}</row>`
  /** Rows of one balanced group per pair: [id, id] with debit then credit. */
  async function tiny (name: string, ids: Array<number | null>): Promise<ProcessSource> {
    const path = join(dir, name)
    const rows = ids.map((id, i) => row([id, 900 + Math.floor(i / 2), '2024-01-0' + String(1 + (i % 9)), 1, 'Conta', 2, 'Plano', 'T', '1.1', i % 2 === 1 ? 10 : 0, i % 2 === 0 ? 10 : 0]))
    await writeTinyXlsx(path, { sheet: row(header) + rows.join('') })
    return sourceOf(path)
  }

  it('refuses an id repeated inside the file, naming it and its rows, and writes nothing', async () => {
    await addCompany(db.pool, { codigoDominio: 'repeats', nome: 'Repeats' })
    const source = await tiny('repeats.xlsx', [1, 2, 3, 2])
    const refused = processLedger(client, source, { fileName: 'repeats.xlsx', sha256: '1'.repeat(64), codigoDominio: 'repeats', mode: 'NORMAL', batchSize: 100 })
    await expect(refused).rejects.toMatchObject({ code: 'LEDGER_DUPLICATE_IDS', message: expect.stringContaining('id 2 on rows 3, 5') })
    expect(await statuses('repeats')).toEqual({})
    expect(await active('repeats')).toMatchObject({ movements: 0, keys: 0 })
  })

  it('counts ids, not ranges: a file whose ids interleave with an import\'s shares none of them, one that covers them is refused for those only', async () => {
    await addCompany(db.pool, { codigoDominio: 'gaps', nome: 'Gaps' })
    const evens = Array.from({ length: 40 }, (_, i) => 1000 + 2 * i) // 1000, 1002, …, 1078: forty runs of one id
    const odds = evens.map((id) => id + 1).reverse() // 1079, 1077, …, 1001: between them, in falling order
    const span = Array.from({ length: 30 }, (_, i) => 1060 + i) // 1060..1089: shares 1060, 1062, …, 1078 with the evens and 1061…1079 with the odds
    const ok = (name: string, sha: string, ids: number[]) => async () => processLedger(client, await tiny(name, ids), { fileName: name, sha256: sha.repeat(64), codigoDominio: 'gaps', mode: 'NORMAL', batchSize: 100 })
    await expect((await ok('evens.xlsx', '3', evens))()).resolves.toMatchObject({ status: 'VALIDADO' })
    await expect((await ok('odds.xlsx', '4', odds))()).resolves.toMatchObject({ status: 'VALIDADO' })
    expect(await active('gaps')).toMatchObject({ movements: 80, distinctIds: 80, keys: 80 })
    const refused = await (await ok('span.xlsx', '5', span))().catch((err: unknown) => err)
    expect(refused).toMatchObject({
      code: 'IMPORT_OVERLAP',
      details: { overlap: { overlappingRows: 20, imports: [{ fileName: 'evens.xlsx', overlappingRows: 10 }, { fileName: 'odds.xlsx', overlappingRows: 10 }] } }
    })
  })

  it('refuses a row without an id: it could not be told from one already imported', async () => {
    await addCompany(db.pool, { codigoDominio: 'no-id', nome: 'No id' })
    const source = await tiny('no-id.xlsx', [1, null, 3, 4])
    const refused = processLedger(client, source, { fileName: 'no-id.xlsx', sha256: '2'.repeat(64), codigoDominio: 'no-id', mode: 'NORMAL', batchSize: 100 })
    await expect(refused).rejects.toMatchObject({ code: 'LEDGER_INVALID_CELLS', message: expect.stringContaining('row 3, column id') })
    expect(await statuses('no-id')).toEqual({})
  })
})

describe('two loads of overlapping files racing on two connections', () => {
  it('lets exactly one win; the other is refused naming the winner', async () => {
    await addCompany(db.pool, { codigoDominio: 'race', nome: 'Race' })
    // Both loads stop at their row 1500 until the test lets them go, so both are copying at once.
    const gate = new pg.Client({ connectionString: db.url })
    await gate.connect()
    await gate.query('SELECT pg_advisory_lock(7311, 1500)')
    await db.pool.query("CREATE OR REPLACE FUNCTION wait_gate() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_advisory_xact_lock_shared(7311, 1500); RETURN NEW; END $$")
    await db.pool.query('CREATE TRIGGER wait_gate BEFORE INSERT ON movimentos FOR EACH ROW WHEN (NEW.linha_origem = 1500) EXECUTE FUNCTION wait_gate()')
    try {
      const a = load('race', 'A', 'NORMAL', client)
      const b = load('race', 'B', 'NORMAL', second)
      a.catch(() => undefined)
      b.catch(() => undefined)
      // Both sessions wait on the gate: the two loads are under way together.
      for (;;) {
        const { rows } = await db.pool.query<{ n: number }>(
          "SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND classid = 7311 AND NOT granted")
        if (rows[0]!.n === 2) break
        await new Promise((resolve) => setTimeout(resolve, 10))
      }
      await gate.query('SELECT pg_advisory_unlock(7311, 1500)')
      const outcomes = await Promise.allSettled([a, b])
      const won = outcomes.filter((o) => o.status === 'fulfilled')
      const lost = outcomes.filter((o): o is PromiseRejectedResult => o.status === 'rejected')
      expect(won).toHaveLength(1)
      expect(lost).toHaveLength(1)
      const winner = (won[0] as PromiseFulfilledResult<Awaited<ReturnType<typeof load>>>).value
      expect(lost[0]!.reason).toMatchObject({ code: 'IMPORT_OVERLAP', details: { overlap: { overlappingRows: 1000, imports: [{ importacaoId: winner.importacaoId }] } } })
      expect(await active('race')).toMatchObject({ movements: 2000, distinctIds: 2000, keys: 2000 })
    } finally {
      await gate.end().catch(() => undefined)
      await db.pool.query('DROP TRIGGER wait_gate ON movimentos')
    }
  })
})

describe('overlapOfIds, what /v1/analyze with a company reports', () => {
  it('counts the ids the company already has active, by import, and stores nothing', async () => {
    const { rows } = await db.pool.query<{ id: string }>("SELECT id FROM empresas WHERE codigo_dominio = 'half'")
    const ids = Array.from({ length: 2000 }, (_, i) => 12_001 + i) // 12,001..14,000 against B's 11,001..13,000
    const report = await overlapOfIds(db.pool, rows[0]!.id, [...ids, 12_001])
    expect(report).toMatchObject({ overlappingRows: 1000, imports: [{ fileName: 'B.xlsx', overlappingRows: 1000, totalRows: 2000 }] })
    expect(await active('half')).toMatchObject({ keys: 2000 })
  })
})

describe('RisingRuns', () => {
  const runsOf = (ids: number[], max?: number) => {
    const runs = new RisingRuns(max)
    for (const id of ids) runs.add(id)
    return runs.runs()
  }
  it('keeps the runs of ids that only rise, and gives up on one that does not, or on too many runs', () => {
    expect(runsOf([5, 6, 7, 9, 10, 20])).toEqual({ lows: [5, 9, 20], highs: [8, 11, 21] })
    expect(runsOf([])).toEqual({ lows: [], highs: [] })
    expect(runsOf([1, 2, 2, 3])).toBeUndefined()
    expect(runsOf([3, 1])).toBeUndefined()
    expect(runsOf([1, 3, 5], 2)).toBeUndefined()
    expect(runsOf([1, 2, 3, 5, 6], 2)).toEqual({ lows: [1, 5], highs: [4, 7] })
  })
})
