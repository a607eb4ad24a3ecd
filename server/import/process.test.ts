/**
 * /v1/process over real HTTP into a real PostgreSQL (a fresh database of the run's
 * server): every status of spec 1, section 7 on this route, NORMAL and duplicate,
 * REIMPORTAR, the concurrent duplicate race, failures injected inside the database
 * mid-COPY, a client that hangs up mid-load, and stored totals to the cent.
 */
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { FastifyInstance } from 'fastify'
import { freshDatabase } from '../../fixtures/db/test-database.js'
import type { TestDatabase } from '../../fixtures/db/test-database.js'
import { generateLedger } from '../../fixtures/ledger/generate.js'
import type { LedgerFacts } from '../../fixtures/ledger/generate.js'
import { ledgerSheetXml, writeTinyXlsx } from '../../fixtures/tiny-xlsx.js'
import { addCompany, setCompanyActive } from '../../core/db/companies.js'
import { centsToDecimal } from '../../core/money/index.js'
import { createPool } from '../../workers/pool.js'
import type { WorkerPool } from '../../workers/pool.js'
import { loadConfig } from '../config.js'
import { buildImportApp } from './app.js'

const API_KEY = 'test-key-process-0123456789'
let dir: string
let uploadTmp: string
let db: TestDatabase
let pool: WorkerPool
let app: FastifyInstance
let base: string

const files: Record<string, string> = {}
let facts: LedgerFacts
let xlsFacts: LedgerFacts
let bigFacts: LedgerFacts
const TRICKY_TEXTS = ['Tab\there', 'Line 1\nLine 2', 'Back\\slash \\N', 'Ação – “aspas” 😀', '  padded  ']

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'razao-process-'))
  uploadTmp = join(dir, 'uploads')
  db = await freshDatabase()
  const config = loadConfig({ RAZAO_DATA_DIR: join(dir, 'data'), RAZAO_TMP_DIR: uploadTmp, IMPORT_MAX_UPLOAD_BYTES: String(8 * 1024 * 1024), LOG_LEVEL: 'silent' })
  pool = createPool({ maxThreads: 2 })
  app = await buildImportApp({ shared: config.shared, config: config.import, apiKey: API_KEY, pool, database: { url: db.url, pool: db.pool }, logger: false })
  base = await app.listen({ host: '127.0.0.1', port: 0 })

  files.ledger = join(dir, 'ledger.xlsx')
  facts = await generateLedger({ path: files.ledger, format: 'xlsx', rows: 3000, seed: 21, textAmountEvery: 7, blankRowEvery: 400, dateStyle: 'mixed', extraColumns: true, headerCase: 'padded' })
  files.other = join(dir, 'other.xlsx')
  await generateLedger({ path: files.other, format: 'xlsx', rows: 1200, seed: 22 })
  files.unbalanced = join(dir, 'unbalanced.xlsx')
  await generateLedger({ path: files.unbalanced, format: 'xlsx', rows: 900, seed: 23, unbalancedGroups: 3 })
  files.xls = join(dir, 'ledger.xls')
  xlsFacts = await generateLedger({ path: files.xls, format: 'xls', rows: 1500, seed: 24, dateStyle: 'date-cell' })
  files.big = join(dir, 'big.xlsx')
  bigFacts = await generateLedger({ path: files.big, format: 'xlsx', rows: 20_000, seed: 25 })
  files.csv = join(dir, 'ledger.csv')
  await writeFile(files.csv, 'id;id_movim_finan;data\n1;2;01/01/2024\n')
  files.huge = join(dir, 'huge.bin')
  await writeFile(files.huge, Buffer.alloc(9 * 1024 * 1024, 1))
  files.invalid = join(dir, 'invalid.xlsx')
  await writeTinyXlsx(files.invalid, { sheet: ledgerSheetXml([[1, 10, '01/02/2024', 'abc', '100,00'], [2, 10, '01/02/2024', '100,00', '']]) })
  files.nul = join(dir, 'nul.xlsx')
  // _x0000_ is ST_Xstring's escape for U+0000 (ECMA-376 Part 1, 22.9.2.19): a cell can carry one.
  await writeTinyXlsx(files.nul, { sheet: ledgerSheetXml([[1, 10, '01/02/2024', '100,00', '', 'Conta'], [2, 10, '01/02/2024', '', '100,00', 'Conta _x0000_ nula']]) })
  files.formulas = join(dir, 'formulas.xlsx')
  // Balanced as read today (both amounts lost to zero), which is how the lost amounts went unnoticed.
  await writeTinyXlsx(files.formulas, { sheet: ledgerSheetXml([[1, 10, '01/02/2024', { f: 'SUM(K5:K9)' }, '', 'Conta'], [2, 10, '01/02/2024', '', { f: 'SUM(J5:J9)' }, 'Conta']]) })
  files.longText = join(dir, 'long-text.xlsx')
  await writeTinyXlsx(files.longText, { sheet: ledgerSheetXml([[1, 10, '01/02/2024', '100,00', '', 'x'.repeat(40_000)], [2, 10, '01/02/2024', '', '100,00', 'Conta']]) })
  files.tricky = join(dir, 'tricky.xlsx')
  await writeTinyXlsx(files.tricky, { sheet: ledgerSheetXml(TRICKY_TEXTS.map((text, i) => [i + 1, 500, '2024-03-05', i === 0 ? '10,00' : '', i === 1 ? '10,00' : '', text])) })

  for (const code of ['100', '200', '300', '400', '500', '600', '700', '800', 'csv']) {
    await addCompany(db.pool, { codigoDominio: code, nome: `Empresa ${code}` })
  }
  await addCompany(db.pool, { codigoDominio: 'inativa', nome: 'Empresa Inativa' })
  await setCompanyActive(db.pool, 'inativa', false)
}, 180_000)

afterAll(async () => {
  await app?.close()
  await pool?.destroy()
  await db?.drop()
  await rm(dir, { recursive: true, force: true })
})


interface Reply { status: number, body: Record<string, any> }

async function processFile (file: string | undefined, fields: Record<string, string>, options: { headers?: Record<string, string>, signal?: AbortSignal } = {}): Promise<Reply> {
  const form = new FormData()
  for (const [k, v] of Object.entries(fields)) form.append(k, v)
  if (file !== undefined) form.append('file', new Blob([await readFile(file)]), file.split('/').pop())
  const res = await fetch(`${base}/v1/process`, { method: 'POST', body: form, headers: options.headers ?? { 'x-api-key': API_KEY }, ...(options.signal === undefined ? {} : { signal: options.signal }) })
  return { status: res.status, body: await res.json() as Record<string, any> }
}

async function importsOf (code: string) {
  const { rows } = await db.pool.query<{ id: string, status: string, substituida_por: string | null, erro: string | null, total_linhas: number | null, total_debito: string | null, total_credito: string | null, movimentos: string }>(
    `SELECT i.id, i.status, i.substituida_por, i.erro, i.total_linhas, i.total_debito::text, i.total_credito::text,
            (SELECT count(*) FROM movimentos m WHERE m.importacao_seq = i.seq) AS movimentos
       FROM importacoes i JOIN empresas e ON e.id = i.empresa_id WHERE e.codigo_dominio = $1 ORDER BY i.criado_em`, [code])
  return rows
}

async function movementsOfCompany (code: string): Promise<number> {
  const { rows } = await db.pool.query<{ n: string }>(
    'SELECT count(*) AS n FROM movimentos m JOIN importacoes i ON i.seq = m.importacao_seq JOIN empresas e ON e.id = i.empresa_id WHERE e.codigo_dominio = $1', [code])
  return Number(rows[0]!.n)
}

async function waitFor<T> (probe: () => Promise<T | undefined>, timeoutMs: number): Promise<T> {
  const until = Date.now() + timeoutMs
  for (;;) {
    const value = await probe()
    if (value !== undefined) return value
    if (Date.now() > until) throw new Error('condition not reached in time')
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

/** A trigger inside the database that fails (or stalls) the COPY at one source row. */
async function injectAtRow (row: number, action: 'fail' | 'sleep'): Promise<() => Promise<void>> {
  const body = action === 'fail'
    ? "RAISE EXCEPTION 'injected failure at row %', NEW.linha_origem"
    : 'PERFORM pg_sleep(1.5)'
  await db.pool.query(`CREATE OR REPLACE FUNCTION test_inject() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN ${body}; RETURN NEW; END $$`)
  await db.pool.query(`CREATE TRIGGER test_inject BEFORE INSERT ON movimentos FOR EACH ROW WHEN (NEW.linha_origem = ${row}) EXECUTE FUNCTION test_inject()`)
  return async () => {
    await db.pool.query('DROP TRIGGER IF EXISTS test_inject ON movimentos')
  }
}

describe('POST /v1/process: refusals', () => {
  it('401 without a valid key', async () => {
    const res = await processFile(files.ledger, { codigo_dominio: '100' }, { headers: { 'x-api-key': 'wrong' } })
    expect(res.status).toBe(401)
    expect(res.body.detail).toMatch(/API key/)
  })

  it('400 for a batch_size out of range, an unknown mode and a CSV that is not a ledger', async () => {
    const batch = await processFile(files.ledger, { codigo_dominio: '100', batch_size: '99' })
    expect(batch.status).toBe(400)
    expect(batch.body.detail).toMatch(/batch_size/)
    const mode = await processFile(files.ledger, { codigo_dominio: '100', modo_importacao: 'SOBRESCREVER' })
    expect(mode.status).toBe(400)
    expect(mode.body.detail).toMatch(/modo_importacao/)
    const csv = await processFile(files.csv, { codigo_dominio: 'csv' })
    expect(csv.status).toBe(400)
    expect(csv.body.detail).toMatch(/read as CSV, but its first line is not a ledger header: it has only 3 of the 11 required columns/)
    // Found while reading, as a workbook's missing columns are: the importation ends FALHOU, without movements.
    expect((await importsOf('csv')).map((i) => [i.status, i.movimentos])).toEqual([['FALHOU', '0']])
  })

  it('422 without codigo_dominio or without a file; 413 above the upload limit', async () => {
    const noCode = await processFile(files.ledger, {})
    expect(noCode.status).toBe(422)
    expect(noCode.body.detail).toMatch(/codigo_dominio/)
    const noFile = await processFile(undefined, { codigo_dominio: '100' })
    expect(noFile.status).toBe(422)
    expect(noFile.body.detail).toMatch(/file/)
    const huge = await processFile(files.huge, { codigo_dominio: '100' })
    expect(huge.status).toBe(413)
  })

  it('404 for an unknown company, 409 for an inactive one; nothing is written', async () => {
    const unknown = await processFile(files.ledger, { codigo_dominio: 'nao-existe' })
    expect(unknown.status).toBe(404)
    expect(unknown.body.detail).toMatch(/not registered|No company is registered/)
    const inactive = await processFile(files.ledger, { codigo_dominio: 'inativa' })
    expect(inactive.status).toBe(409)
    expect(inactive.body.detail).toMatch(/inactive/)
    expect(await importsOf('inativa')).toEqual([])
  })

  it('422 for an unbalanced file, with the difference in the text; nothing is written', async () => {
    const res = await processFile(files.unbalanced, { codigo_dominio: '100' })
    expect(res.status).toBe(422)
    const analysis = await fetchAnalysis(files.unbalanced!)
    expect(analysis.difference).not.toBe(0)
    expect(res.body.detail).toContain(centsToDecimal(Math.round(analysis.difference * 100)))
    // It says where to look next, with the stable code and the request id.
    expect(res.body).toMatchObject({ detail: expect.stringContaining('run "razao diagnose FILE" (or POST the file to /v1/diagnose-unbalanced)'), code: 'LEDGER_UNBALANCED', requestId: expect.any(String) })
    expect(await importsOf('100')).toEqual([])
    expect(await movementsOfCompany('100')).toBe(0)
  })

  it('422 for a file with cells that cannot be stored as typed; nothing is written', async () => {
    const res = await processFile(files.invalid, { codigo_dominio: '100' })
    expect(res.status).toBe(422)
    expect(res.body.detail).toMatch(/cannot be imported.*row 2, column debito/s)
    expect(await importsOf('100')).toEqual([])
  })

  it('400 for a NUL character in codigo_dominio or in the file name; nothing is written', async () => {
    const code = await processFile(files.ledger, { codigo_dominio: '1\u000000' })
    expect(code.status).toBe(400)
    expect(code.body.detail).toMatch(/codigo_dominio holds a NUL/)
    const form = new FormData()
    form.append('codigo_dominio', '100')
    form.append('file', new Blob([await readFile(files.ledger!)]), 'razao\u0000.xlsx')
    const res = await fetch(`${base}/v1/process`, { method: 'POST', body: form, headers: { 'x-api-key': API_KEY } })
    expect(res.status).toBe(400)
    expect(((await res.json()) as { detail: string }).detail).toMatch(/file name holds a NUL/)
    expect(await importsOf('100')).toEqual([])
  })

  it('422 for a text cell holding a NUL character, which PostgreSQL text cannot store; nothing is written', async () => {
    const res = await processFile(files.nul, { codigo_dominio: '100' })
    expect(res.status).toBe(422)
    expect(res.body.detail).toMatch(/Row 3, column planejamento_analitico holds a NUL character/)
    expect(await importsOf('100')).toEqual([])
    expect(await movementsOfCompany('100')).toBe(0)
  })

  it('422 for amounts that are formulas saved without their values, saying to save the file in Excel or LibreOffice; nothing is written (issue 11)', async () => {
    const analysis = await fetchAnalysis(files.formulas!)
    expect(analysis).toMatchObject({ total_rows: 2, invalid_cells: 2, rows_without_values: 0, total_debit: 0, total_credit: 0 })
    expect(analysis.cell_problems).toEqual([
      { linha: 2, coluna: 'debito', valor: '=SUM(K5:K9)', problema: 'UNCOMPUTED_FORMULA', mensagem: expect.stringMatching(/Open the file in Excel or LibreOffice and save it/) },
      { linha: 3, coluna: 'credito', valor: '=SUM(J5:J9)', problema: 'UNCOMPUTED_FORMULA', mensagem: expect.stringMatching(/values are computed/) }
    ])
    const res = await processFile(files.formulas, { codigo_dominio: '100' })
    expect(res.status).toBe(422)
    expect(res.body.detail).toMatch(/row 2, column debito \("=SUM\(K5:K9\)"\): UNCOMPUTED_FORMULA\. .*Excel or LibreOffice/)
    expect(await importsOf('100')).toEqual([])
    expect(await movementsOfCompany('100')).toBe(0)
  })

  it('422 for text longer than an Excel cell holds, reported shortened; nothing is written (issue 11)', async () => {
    const analysis = await fetchAnalysis(files.longText!)
    expect(analysis.invalid_cells).toBe(1)
    expect(analysis.cell_problems).toEqual([
      { linha: 2, coluna: 'planejamento_analitico', valor: `${'x'.repeat(200)}… (40000 characters)`, problema: 'TEXT_TOO_LONG', mensagem: expect.stringMatching(/32,767 characters/) }
    ])
    const res = await processFile(files.longText, { codigo_dominio: '100' })
    expect(res.status).toBe(422)
    expect(res.body.detail).toMatch(/TEXT_TOO_LONG/)
    expect(res.body.detail.length).toBeLessThan(1000)
    expect(await importsOf('100')).toEqual([])
    expect(await movementsOfCompany('100')).toBe(0)
  })

  it('reports an unbalanced file before an unknown company (the spec\'s order)', async () => {
    const res = await processFile(files.unbalanced, { codigo_dominio: 'nao-existe' })
    expect(res.status).toBe(422)
  })
})

async function fetchAnalysis (file: string): Promise<Record<string, any>> {
  const form = new FormData()
  form.append('file', new Blob([await readFile(file)]), 'f.xlsx')
  const res = await fetch(`${base}/v1/analyze`, { method: 'POST', body: form, headers: { 'x-api-key': API_KEY } })
  return await res.json() as Record<string, any>
}

describe('POST /v1/process: loads', () => {
  let first: Reply

  it('NORMAL: 200 with every ProcessResponse field; stored rows and totals equal the file to the cent', async () => {
    first = await processFile(files.ledger, { codigo_dominio: '200', batch_size: '250' })
    expect(first.status).toBe(200)
    const b = first.body
    expect(b).toMatchObject({
      success: true,
      file_name: 'ledger.xlsx',
      total_rows: facts.totalRows,
      total_batches: Math.ceil(facts.totalRows / 250),
      total_debit: facts.totalDebitCents / 100,
      total_credit: facts.totalCreditCents / 100,
      difference: 0,
      distinct_id_movim_finan: facts.distinctGroups,
      min_date: facts.minDate,
      max_date: facts.maxDate,
      types: facts.typeCounts,
      rows_with_both_debit_credit: facts.rowsWithBothDebitCredit,
      rows_without_values: facts.rowsWithoutValues,
      unbalanced_lots: 0,
      codigo_dominio: '200',
      modo_importacao: 'NORMAL',
      replaced_importacao_id: null,
      inserted_rows: facts.totalRows,
      status: 'VALIDADO'
    })
    expect(b.sha256).toMatch(/^[0-9a-f]{64}$/)
    expect(b.importacao_id).toMatch(/^[0-9a-f-]{36}$/)
    const { rows: [company] } = await db.pool.query<{ id: string }>("SELECT id FROM empresas WHERE codigo_dominio = '200'")
    expect(b.empresa_id).toBe(company!.id)

    const [stored] = await importsOf('200')
    expect(stored).toMatchObject({ id: b.importacao_id, status: 'VALIDADO', total_linhas: facts.totalRows, movimentos: String(facts.totalRows) })
    const { rows: [sums] } = await db.pool.query<{ debito: string, credito: string, min: string, max: string, grupos: string }>(
      `SELECT sum(debito)::text AS debito, sum(credito)::text AS credito, min(data)::text AS min, max(data)::text AS max,
              count(DISTINCT id_movim_finan) AS grupos FROM movimentos WHERE importacao_seq = (SELECT seq FROM importacoes WHERE id = $1)`, [b.importacao_id])
    expect(sums).toEqual({
      debito: centsToDecimal(facts.totalDebitCents),
      credito: centsToDecimal(facts.totalCreditCents),
      min: facts.minDate,
      max: facts.maxDate,
      grupos: String(facts.distinctGroups)
    })
    expect(stored!.total_debito).toBe(centsToDecimal(facts.totalDebitCents))
    expect(stored!.total_credito).toBe(centsToDecimal(facts.totalCreditCents))
    const { rows: kinds } = await db.pool.query<{ tipo: string, n: string }>('SELECT tipo, count(*) AS n FROM movimentos WHERE importacao_seq = (SELECT seq FROM importacoes WHERE id = $1) GROUP BY tipo', [b.importacao_id])
    expect(Object.fromEntries(kinds.map((k) => [k.tipo, Number(k.n)]))).toEqual(facts.typeCounts)
    expect(await readdir(uploadTmp)).toEqual([])
  })

  it('NORMAL again with the same file: 409, and nothing changes', async () => {
    const again = await processFile(files.ledger, { codigo_dominio: '200' })
    expect(again.status).toBe(409)
    expect(again.body.detail).toMatch(/REIMPORTAR/)
    const imports = await importsOf('200')
    expect(imports).toHaveLength(1)
    expect(imports[0]).toMatchObject({ id: first.body.importacao_id, status: 'VALIDADO' })
  })

  it('the same file for another company is a separate import', async () => {
    const res = await processFile(files.ledger, { codigo_dominio: '300' })
    expect(res.status).toBe(200)
    expect(res.body.empresa_id).not.toBe(first.body.empresa_id)
  })

  it('REIMPORTAR: the old import becomes SUBSTITUIDO, the new one VALIDADO, and both keep their movements', async () => {
    const again = await processFile(files.ledger, { codigo_dominio: '200', modo_importacao: 'REIMPORTAR' })
    expect(again.status).toBe(200)
    expect(again.body).toMatchObject({ modo_importacao: 'REIMPORTAR', replaced_importacao_id: first.body.importacao_id, status: 'VALIDADO', inserted_rows: facts.totalRows })
    const imports = await importsOf('200')
    expect(imports.map((i) => [i.id, i.status, i.substituida_por, i.movimentos])).toEqual([
      [first.body.importacao_id, 'SUBSTITUIDO', again.body.importacao_id, String(facts.totalRows)],
      [again.body.importacao_id, 'VALIDADO', null, String(facts.totalRows)]
    ])
  })

  it('REIMPORTAR of a file never imported simply imports it', async () => {
    const res = await processFile(files.other, { codigo_dominio: '200', modo_importacao: 'REIMPORTAR' })
    expect(res.status).toBe(200)
    expect(res.body.replaced_importacao_id).toBeNull()
  })

  it('XLS files load too', async () => {
    const res = await processFile(files.xls, { codigo_dominio: '400' })
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ total_rows: xlsFacts.totalRows, inserted_rows: xlsFacts.totalRows, total_debit: xlsFacts.totalDebitCents / 100 })
    expect((await importsOf('400'))[0]!.movimentos).toBe(String(xlsFacts.totalRows))
  })

  it('texts with tabs, newlines, backslashes and emoji are stored exactly as the cells hold them (trimmed)', async () => {
    const res = await processFile(files.tricky, { codigo_dominio: '400' })
    expect(res.status).toBe(200)
    const { rows } = await db.pool.query<{ linha_origem: number, planejamento_analitico: string, data: string, debito: string, credito: string }>(
      'SELECT linha_origem, planejamento_analitico, data::text, debito::text, credito::text FROM movimentos WHERE importacao_seq = (SELECT seq FROM importacoes WHERE id = $1) ORDER BY linha_origem', [res.body.importacao_id])
    expect(rows.map((r) => r.planejamento_analitico)).toEqual(TRICKY_TEXTS.map((t) => t.trim()))
    expect(rows.map((r) => r.linha_origem)).toEqual([2, 3, 4, 5, 6])
    expect(rows[0]).toMatchObject({ data: '2024-03-05', debito: '10.00', credito: '0.00' })
    expect(rows[1]).toMatchObject({ debito: '0.00', credito: '10.00' })
  })
})

describe('POST /v1/process: concurrency and failures', () => {
  it('two identical NORMAL requests at once: exactly one 200 and one 409', async () => {
    const replies = await Promise.all([processFile(files.other, { codigo_dominio: '500' }), processFile(files.other, { codigo_dominio: '500' })])
    expect(replies.map((r) => r.status).sort()).toEqual([200, 409])
    const imports = await importsOf('500')
    expect(imports).toHaveLength(1)
    expect(imports[0]).toMatchObject({ status: 'VALIDADO', movimentos: '1200' })
  })

  it('imports of different files run side by side', async () => {
    const replies = await Promise.all([processFile(files.other, { codigo_dominio: '600' }), processFile(files.ledger, { codigo_dominio: '600' })])
    expect(replies.map((r) => r.status)).toEqual([200, 200])
    expect(await movementsOfCompany('600')).toBe(1200 + facts.totalRows)
  })

  it('a failure inside the database mid-COPY: 500, nothing visible, the import marked FALHOU; a retry succeeds', async () => {
    const heal = await injectAtRow(1500, 'fail')
    let res: Reply
    try {
      res = await processFile(files.ledger, { codigo_dominio: '700', batch_size: '100' })
    } finally {
      await heal()
    }
    expect(res.status).toBe(500)
    expect(res.body.detail).toMatch(/request id/)
    expect(JSON.stringify(res.body)).not.toMatch(/injected|at Object|\.ts:/)
    const failed = await importsOf('700')
    expect(failed).toHaveLength(1)
    expect(failed[0]).toMatchObject({ status: 'FALHOU', movimentos: '0' })
    expect(failed[0]!.erro).toMatch(/injected failure at row 1500/)

    const retry = await processFile(files.ledger, { codigo_dominio: '700', batch_size: '100' })
    expect(retry.status).toBe(200)
    expect(await movementsOfCompany('700')).toBe(facts.totalRows)
    expect((await importsOf('700')).map((i) => i.status)).toEqual(['FALHOU', 'VALIDADO'])
  })

  it('a client that hangs up mid-load: the load is rolled back and the import ends FALHOU', async () => {
    const heal = await injectAtRow(5000, 'sleep')
    try {
      const controller = new AbortController()
      const pending = processFile(files.big, { codigo_dominio: '800' }, { signal: controller.signal }).catch((err: Error) => err)
      await waitFor(async () => (await importsOf('800')).find((i) => i.status === 'PROCESSANDO'), 20_000)
      controller.abort()
      expect(await pending).toBeInstanceOf(Error)
      const settled = await waitFor(async () => {
        const imports = await importsOf('800')
        return imports.length === 1 && imports[0]!.status !== 'PROCESSANDO' ? imports[0] : undefined
      }, 30_000)
      expect(settled).toMatchObject({ status: 'FALHOU', movimentos: '0' })
      expect(await movementsOfCompany('800')).toBe(0)
    } finally {
      await heal()
    }
    expect(await readdir(uploadTmp)).toEqual([])
    const retry = await processFile(files.big, { codigo_dominio: '800' })
    expect(retry.status).toBe(200)
    expect(retry.body.inserted_rows).toBe(bigFacts.totalRows)
  }, 90_000)

  it('the database connection dropped mid-load: 500 naming the database, nothing visible, FALHOU; the next request reconnects', async () => {
    const heal = await injectAtRow(3000, 'sleep')
    let res: Reply
    try {
      const pending = processFile(files.big, { codigo_dominio: '800', modo_importacao: 'REIMPORTAR' })
      await waitFor(async () => (await importsOf('800')).find((i) => i.status === 'PROCESSANDO'), 20_000)
      await db.pool.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'razao-import-worker' AND datname = current_database()")
      res = await pending
    } finally {
      await heal()
    }
    expect(res.status).toBe(500)
    expect(res.body.detail).toMatch(/database/)
    expect(res.body.detail).not.toMatch(/postgres:\/\//)
    const settled = await waitFor(async () => {
      const imports = await importsOf('800')
      const last = imports[imports.length - 1]!
      return last.status !== 'PROCESSANDO' ? imports : undefined
    }, 30_000)
    expect(settled.map((i) => i.status)).toEqual(['FALHOU', 'VALIDADO', 'FALHOU'])
    expect(settled[2]!.movimentos).toBe('0')
    const retry = await processFile(files.big, { codigo_dominio: '800', modo_importacao: 'REIMPORTAR' })
    expect(retry.status).toBe(200)
    expect(retry.body.replaced_importacao_id).toBe(settled[1]!.id)
  }, 90_000)
})
