/**
 * CSV and TXT ledgers end to end (issue 31, item 5): a generated ledger exported as CSV by
 * LibreOffice and Gnumeric in a Brazilian locale and by Python's csv module, in UTF-8 (with
 * and without a BOM), Windows-1252 and ISO-8859-1, with `;`, `,` and tab, then analyzed,
 * diagnosed and imported over real HTTP into a real PostgreSQL. The ledger's own facts are
 * the truth: totals to the cent, rows, dates, kinds, stored sums. Under CI a missing
 * producer fails the test instead of skipping it.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { basename, join } from 'node:path'
import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freshDatabase } from '../../fixtures/db/test-database.js'
import type { TestDatabase } from '../../fixtures/db/test-database.js'
import { convertCsvWithGnumeric, convertCsvWithLibreOffice, convertCsvWithPython, probeProducer, probePythonCsv } from '../../fixtures/corpus/producers.js'
import type { ProducedCsv } from '../../fixtures/corpus/producers.js'
import { generateLedger } from '../../fixtures/ledger/generate.js'
import type { LedgerFacts } from '../../fixtures/ledger/generate.js'
import { encodeWindows1252 } from '../../fixtures/ledger/write-csv.js'
import { addCompany } from '../../core/db/companies.js'
import { REQUIRED_COLUMNS } from '../../core/ledger/index.js'
import { centsToDecimal } from '../../core/money/index.js'
import { createPool } from '../../workers/pool.js'
import type { WorkerPool } from '../../workers/pool.js'
import { loadConfig } from '../config.js'
import { buildImportApp } from './app.js'

const API_KEY = 'test-key-csv-0123456789'
const isCI = process.env.CI === 'true'
const soffice = probeProducer('soffice')
const ssconvert = probeProducer('ssconvert')
const python = probePythonCsv()

let dir: string
let db: TestDatabase
let pool: WorkerPool
let app: FastifyInstance
let base: string
let facts: LedgerFacts
let unbalancedFacts: LedgerFacts
const exports: ProducedCsv[] = []
const files: Record<string, string> = {}

/** Texts a CSV must carry through quoting and Windows-1252: separators, quotes, a line break, its punctuation. */
const TRICKY = ['Silva; Souza, “Cia”', 'Linha 1\r\nLinha 2', 'Diz "olá" – 10%', '€ 1.000,00 • pago', 'Ação ‘já’ — ok']

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'razao-csv-http-'))
  db = await freshDatabase()
  const config = loadConfig({ RAZAO_DATA_DIR: join(dir, 'data'), RAZAO_TMP_DIR: join(dir, 'uploads'), LOG_LEVEL: 'silent' })
  pool = createPool({ maxThreads: 2 })
  app = await buildImportApp({ shared: config.shared, config: config.import, apiKey: API_KEY, pool, database: { url: db.url, pool: db.pool }, logger: false })
  base = await app.listen({ host: '127.0.0.1', port: 0 })

  const source = join(dir, 'razao-csv.xlsx')
  facts = await generateLedger({ path: source, format: 'xlsx', rows: 2000, seed: 61, textAmountEvery: 9, blankRowEvery: 150, dateStyle: 'date-cell', extraColumns: true, headerCase: 'padded' })
  if (soffice.available) exports.push(...convertCsvWithLibreOffice([source], dir))
  if (ssconvert.available) exports.push(...await convertCsvWithGnumeric([source], dir))
  if (python.available) exports.push(...convertCsvWithPython([source], dir))
  for (const [i] of exports.entries()) await addCompany(db.pool, { codigoDominio: `csv-${i}`, nome: `Empresa CSV ${i}` })

  files.unbalanced = join(dir, 'desbalanceado.csv')
  unbalancedFacts = await generateLedger({ path: files.unbalanced, format: 'csv', csv: { delimiter: ';', encoding: 'windows-1252' }, rows: 900, seed: 62, unbalancedGroups: 3, blankRowEvery: 100 })

  files.tricky = join(dir, 'textos.csv')
  const quote = (v: string): string => /[;"\r\n]/.test(v) ? `"${v.replaceAll('"', '""')}"` : v
  await writeFile(files.tricky, encodeWindows1252([REQUIRED_COLUMNS.join(';'), ...TRICKY.map((text, i) => `${i + 1};500;05/03/2024;3001;${quote(text)};77;Plano;AJUSTE;1.2.3;${i === 0 ? '10,00' : ''};${i === 1 ? '10,00' : ''}`)].join('\r\n') + '\r\n'))
  files.statement = join(dir, 'extrato.csv')
  await writeFile(files.statement, 'Data;Histórico;Documento;Valor\r\n05/03/2024;Tarifa;123;-10,00\r\n')
  for (const code of ['texto', 'desbalanceado', 'extrato']) await addCompany(db.pool, { codigoDominio: code, nome: `Empresa ${code}` })
}, 300_000)

afterAll(async () => {
  await app?.close()
  await pool?.destroy()
  await db?.drop()
  await rm(dir, { recursive: true, force: true })
})

async function post (route: string, file: string, fields: Record<string, string> = {}): Promise<{ status: number, body: Record<string, any> }> {
  const form = new FormData()
  for (const [k, v] of Object.entries(fields)) form.append(k, v)
  form.append('file', new Blob([await readFile(file)]), basename(file))
  const res = await fetch(`${base}${route}`, { method: 'POST', body: form, headers: { 'x-api-key': API_KEY } })
  return { status: res.status, body: await res.json() as Record<string, any> }
}

const label = (f: ProducedCsv): string => `${f.producer} ${f.encoding} ${f.delimiter === '\t' ? 'tab' : f.delimiter}`

describe('the producers', () => {
  it.runIf(isCI || (soffice.available && ssconvert.available && python.available))('LibreOffice, Gnumeric and Python wrote the ledger in every encoding', () => {
    expect({ soffice, ssconvert, python }).toEqual({ soffice: { available: true }, ssconvert: { available: true }, python: { available: true } })
    expect(exports.map(label).sort()).toEqual([
      'gnumeric iso-8859-1 ;', 'gnumeric utf-8 ;', 'gnumeric windows-1252 ,',
      'libreoffice iso-8859-1 ;', 'libreoffice utf-8 ;', 'libreoffice windows-1252 ;',
      'python-csv iso-8859-1 ,', 'python-csv iso-8859-1 tab', 'python-csv utf-8 ,', 'python-csv utf-8 tab',
      'python-csv utf-8-bom ,', 'python-csv utf-8-bom tab', 'python-csv windows-1252 ,', 'python-csv windows-1252 tab'
    ])
  })
  it.skipIf(isCI || (soffice.available && ssconvert.available && python.available))(`are not all here: ${[soffice.reason, ssconvert.reason, python.reason].filter(Boolean).join('; ')}`, () => {})
})

describe('CSV exports of a ledger over HTTP', () => {
  it('/v1/analyze gives the ledger\'s totals, rows, dates and kinds for every export', async () => {
    expect(exports.length).toBeGreaterThan(0)
    for (const file of exports) {
      const { status, body } = await post('/v1/analyze', file.path, { batch_size: '500' })
      expect({ file: label(file), status, body }).toMatchObject({
        file: label(file),
        status: 200,
        body: {
          success: true,
          file_name: basename(file.path),
          total_rows: facts.totalRows,
          total_batches: Math.ceil(facts.totalRows / 500),
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
          invalid_cells: 0
        }
      })
    }
  }, 120_000)

  it('/v1/process stores every export to VALIDADO, its rows and sums equal to the ledger\'s to the cent, its accents intact', async () => {
    for (const [i, file] of exports.entries()) {
      const { status, body } = await post('/v1/process', file.path, { codigo_dominio: `csv-${i}` })
      expect({ file: label(file), status, body }).toMatchObject({ file: label(file), status: 200, body: { status: 'VALIDADO', inserted_rows: facts.totalRows, total_rows: facts.totalRows } })
      const { rows: [stored] } = await db.pool.query<Record<string, string>>(
        `SELECT count(*)::text AS linhas, sum(debito)::text AS debito, sum(credito)::text AS credito, min(data)::text AS min, max(data)::text AS max,
                max(linha_origem)::text AS ultima, count(*) FILTER (WHERE planejamento ~ 'ção|ções|ã')::text AS acentos,
                count(*) FILTER (WHERE planejamento ~ '[ÃÂ][\\u0080-\\u00bf]|\\ufffd')::text AS trocados
           FROM movimentos WHERE importacao_seq = (SELECT seq FROM importacoes WHERE id = $1)`, [body.importacao_id])
      expect({ file: label(file), stored }).toEqual({
        file: label(file),
        stored: {
          linhas: String(facts.totalRows),
          debito: centsToDecimal(facts.totalDebitCents),
          credito: centsToDecimal(facts.totalCreditCents),
          min: facts.minDate,
          max: facts.maxDate,
          // Row numbers are the sheet's: blank rows are counted, as a spreadsheet shows them.
          ultima: String(facts.lastSheetRow),
          acentos: expect.not.stringMatching(/^0$/),
          trocados: '0'
        }
      })
    }
  }, 180_000)
})

describe('CSV beyond the producers', () => {
  it('/v1/diagnose-unbalanced names the unbalanced groups of a Windows-1252 CSV and each of their rows', async () => {
    const { status, body } = await post('/v1/diagnose-unbalanced', files.unbalanced!)
    expect(status).toBe(200)
    expect(body.diagnostico).toBe('ARQUIVO_DESBALANCEADO')
    expect(body.grupos_desbalanceados.map((g: any) => g.id_movim_finan).sort()).toEqual([...unbalancedFacts.unbalancedGroupIds].sort())
    for (const group of body.grupos_desbalanceados) {
      expect(group.linhas.map((l: any) => l.linha_origem)).toEqual(unbalancedFacts.unbalancedGroupRows[group.id_movim_finan])
      const totals = unbalancedFacts.unbalancedGroupTotals[group.id_movim_finan]!
      expect([group.total_debito, group.total_credito]).toEqual([totals.debitCents / 100, totals.creditCents / 100])
    }
    const refused = await post('/v1/process', files.unbalanced!, { codigo_dominio: 'desbalanceado' })
    expect(refused.status).toBe(422)
  })

  it('stores quoted texts with separators, quotes, a line break and Windows-1252 punctuation exactly', async () => {
    const { status, body } = await post('/v1/process', files.tricky!, { codigo_dominio: 'texto' })
    expect(status).toBe(200)
    const { rows } = await db.pool.query<{ linha_origem: number, planejamento_analitico: string }>(
      'SELECT linha_origem, planejamento_analitico FROM movimentos WHERE importacao_seq = (SELECT seq FROM importacoes WHERE id = $1) ORDER BY linha_origem', [body.importacao_id])
    // A line break inside a cell becomes LF, as in a workbook's text.
    expect(rows.map((r) => r.planejamento_analitico)).toEqual(TRICKY.map((t) => t.replace('\r\n', '\n')))
    expect(rows.map((r) => r.linha_origem)).toEqual([2, 3, 4, 5, 6])
  })

  it('refuses a CSV that is not a ledger with 400, saying so and showing its first line; no movement is written', async () => {
    for (const route of ['/v1/analyze', '/v1/process']) {
      const { status, body } = await post(route, files.statement!, { codigo_dominio: 'extrato' })
      expect({ route, status }).toEqual({ route, status: 400 })
      expect(body.detail).toMatch(/^The file is text, read as CSV, but its first line is not a ledger header: it has only 1 of the 11 required columns .* First line: "Data;Histórico;Documento;Valor"\.$/)
    }
    // As for a workbook that cannot be read: the importation ends FALHOU with the reason, and holds no movement.
    const { rows } = await db.pool.query<{ status: string, erro: string, movimentos: string }>(
      `SELECT i.status, i.erro, (SELECT count(*) FROM movimentos m WHERE m.importacao_seq = i.seq)::text AS movimentos
         FROM importacoes i JOIN empresas e ON e.id = i.empresa_id WHERE e.codigo_dominio = 'extrato'`)
    expect(rows).toEqual([{ status: 'FALHOU', erro: expect.stringMatching(/not a ledger header/), movimentos: '0' }])
  })
})
