/**
 * The import service's hostile group (issue 22, item 12): a `historico` of 1 MiB, far past
 * the 32,767 characters an Excel cell holds, written as an inline string, a shared string,
 * a formula's cached text and a CSV field. It is never cut short in silence: /v1/analyze reports the
 * cell (TEXT_TOO_LONG), /v1/diagnose-unbalanced shows it shortened with its full length,
 * and /v1/process refuses the file with 422 and writes nothing. The same text saved by
 * LibreOffice reaches us cut to 32,767 characters (LibreOffice cuts it without a word):
 * that file is refused too (TEXT_AT_CELL_LIMIT). Hostile CSVs (issue 31, item 5): a line
 * of 16 MiB, a quote never closed, a NUL byte, encodings mixed; each is refused with 400
 * naming its line, writes nothing, and the service serves the next request. The process's
 * peak memory through the group is printed.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freshDatabase } from '../../fixtures/db/test-database.js'
import type { TestDatabase } from '../../fixtures/db/test-database.js'
import { convertWithLibreOffice, probeProducer } from '../../fixtures/corpus/producers.js'
import { peakRssMiB } from '../../fixtures/peak-rss.js'
import { escapeXml, writeTinyXlsx } from '../../fixtures/tiny-xlsx.js'
import { addCompany } from '../../core/db/companies.js'
import { createPool } from '../../workers/pool.js'
import type { WorkerPool } from '../../workers/pool.js'
import { loadConfig } from '../config.js'
import { buildImportApp } from './app.js'

const API_KEY = 'chave-import-hostil-0123456789'
const LONG = 'h'.repeat(1 << 20)
let dir: string
let db: TestDatabase
let pool: WorkerPool
let app: FastifyInstance
let base: string
const files: Record<'inline' | 'shared' | 'formula' | 'csv', string> = { inline: '', shared: '', formula: '', csv: '' }
/** LibreOffice's re-saves of the same ledger as CSV; under CI a missing soffice fails the test. */
const soffice = probeProducer('soffice')
const withLibreOffice = soffice.available || process.env.CI === 'true'
let libreOfficeFiles: string[] = []

const HEADER = ['id', 'id_movim_finan', 'data', 'id_conta', 'planejamento_analitico', 'id_planejamento', 'planejamento', 'tipo', 'cod_planejamento', 'credito', 'debito', 'historico']

/** Two rows of group 10, debit 100,00 and credit 90,00 (unbalanced, for the diagnosis); the first row's historico is `long`. */
function ledger (long: string): string {
  const text = (v: string): string => `<c t="inlineStr"><is><t>${escapeXml(v)}</t></is></c>`
  const number = (v: number): string => `<c><v>${v}</v></c>`
  const rows = [
    HEADER.map(text).join(''),
    [number(1), number(10), text('01/02/2024'), number(3001), text('Conta'), number(77), text('Plano'), text('AJUSTE'), text('1.2.3'), '<c/>', text('100,00'), long].join(''),
    [number(2), number(10), text('01/02/2024'), number(3001), text('Conta'), number(77), text('Plano'), text('AJUSTE'), text('1.2.3'), text('90,00'), '<c/>', text('curto')].join('')
  ]
  return rows.map((r) => `<row>${r}</row>`).join('')
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'razao-import-hostile-'))
  db = await freshDatabase()
  const config = loadConfig({ RAZAO_DATA_DIR: join(dir, 'data'), RAZAO_TMP_DIR: join(dir, 'uploads'), LOG_LEVEL: 'silent' })
  pool = createPool({ maxThreads: 1 })
  app = await buildImportApp({ shared: config.shared, config: config.import, apiKey: API_KEY, pool, database: { url: db.url, pool: db.pool }, logger: false })
  base = await app.listen({ host: '127.0.0.1', port: 0 })
  await addCompany(db.pool, { codigoDominio: '900', nome: 'Empresa Hostil' })
  files.inline = join(dir, 'inline.xlsx')
  await writeTinyXlsx(files.inline, { sheet: ledger(`<c t="inlineStr"><is><t>${LONG}</t></is></c>`) })
  files.shared = join(dir, 'shared.xlsx')
  await writeTinyXlsx(files.shared, { sheet: ledger('<c t="s"><v>0</v></c>'), sharedStrings: [LONG] })
  files.formula = join(dir, 'formula.xlsx')
  await writeTinyXlsx(files.formula, { sheet: ledger(`<c t="str"><f>REPT("h",1048576)</f><v>${LONG}</v></c>`) })
  files.csv = join(dir, 'longo.csv')
  await writeFile(files.csv, [HEADER.join(';'), `1;10;01/02/2024;3001;Conta;77;Plano;AJUSTE;1.2.3;;100,00;${LONG}`, '2;10;01/02/2024;3001;Conta;77;Plano;AJUSTE;1.2.3;90,00;;curto'].join('\r\n'))
  if (withLibreOffice) {
    const csv = join(dir, 'longo-virgulas.csv')
    await writeFile(csv, [HEADER.join(','), `1,10,01/02/2024,3001,Conta,77,Plano,AJUSTE,1.2.3,,"100,00",${LONG}`, '2,10,01/02/2024,3001,Conta,77,Plano,AJUSTE,1.2.3,"100,00",,curto'].join('\n'))
    libreOfficeFiles = convertWithLibreOffice([csv], dir).map((f) => f.path)
  }
}, 180_000)

afterAll(async () => {
  console.log(`import service, hostile group: peak RSS ${peakRssMiB()} MiB`)
  await app?.close()
  await pool?.destroy()
  await db?.drop()
  await rm(dir, { recursive: true, force: true })
})

async function post (path: string, file: string, fields: Record<string, string> = {}): Promise<{ status: number, body: any }> {
  const form = new FormData()
  for (const [k, v] of Object.entries(fields)) form.append(k, v)
  form.append('file', new Blob([await readFile(file)]), 'razao.xlsx')
  const res = await fetch(`${base}${path}`, { method: 'POST', body: form, headers: { 'x-api-key': API_KEY } })
  return { status: res.status, body: await res.json() }
}

describe.each(['inline', 'shared', 'formula', 'csv'] as const)('a 1 MiB historico as %s text', (kind) => {
  it('is a problem cell in the analysis, shown shortened with its length', async () => {
    const { status, body } = await post('/v1/analyze', files[kind])
    expect(status).toBe(200)
    expect(body.invalid_cells).toBe(1)
    expect(body.cell_problems).toEqual([{ linha: 2, coluna: 'historico', valor: `${'h'.repeat(200)}… (1048576 characters)`, problema: 'TEXT_TOO_LONG', mensagem: expect.stringMatching(/32,767 characters/) }])
  })

  it('is shown shortened with its length in the diagnosis, never cut without a word', async () => {
    const { status, body } = await post('/v1/diagnose-unbalanced', files[kind])
    expect(status).toBe(200)
    expect(JSON.stringify(body)).toContain('… (1048576 characters)')
    expect(JSON.stringify(body)).not.toContain('h'.repeat(32_000))
  })

  it('makes /v1/process refuse the file with 422, writing nothing', async () => {
    const { status, body } = await post('/v1/process', files[kind], { codigo_dominio: '900' })
    expect(status).toBe(422)
    expect(body.detail).toMatch(/row 2, column historico .*TEXT_TOO_LONG/)
    const { rows } = await db.pool.query<{ n: string }>('SELECT count(*) AS n FROM movimentos')
    expect(Number(rows[0]!.n)).toBe(0)
  })
})

describe('a 1 MiB historico saved by LibreOffice', () => {
  it.skipIf(!withLibreOffice)('reaches us cut to the 32,767-character limit, and /v1/process refuses it (TEXT_AT_CELL_LIMIT) in XLSX and XLS', async () => {
    expect(libreOfficeFiles).toHaveLength(2)
    for (const file of libreOfficeFiles) {
      const analysis = await post('/v1/analyze', file)
      expect(analysis.body.cell_problems).toEqual([expect.objectContaining({ linha: 2, coluna: 'historico', valor: `${'h'.repeat(200)}… (32767 characters)`, problema: 'TEXT_AT_CELL_LIMIT' })])
      const { status, body } = await post('/v1/process', file, { codigo_dominio: '900' })
      expect(status).toBe(422)
      expect(body.detail).toMatch(/TEXT_AT_CELL_LIMIT/)
    }
    const { rows } = await db.pool.query<{ n: string }>('SELECT count(*) AS n FROM movimentos')
    expect(Number(rows[0]!.n)).toBe(0)
  }, 60_000)
})

describe('hostile CSVs', () => {
  const line = (id: number, text = 'Conta'): string => `${id};10;01/02/2024;3001;${text};77;Plano;AJUSTE;1.2.3;;10,00;h`
  const csv = async (name: string, bytes: Buffer): Promise<string> => {
    const path = join(dir, name)
    await writeFile(path, bytes)
    return path
  }
  const lines = (count: number, at: number, text: Buffer): Buffer => Buffer.concat([
    Buffer.from(HEADER.join(';') + '\r\n'),
    ...Array.from({ length: count }, (_, i) => i + 2 === at ? Buffer.concat([Buffer.from('9;10;01/02/2024;3001;'), text, Buffer.from(';77;Plano;AJUSTE;1.2.3;;10,00;h\r\n')]) : Buffer.from(line(i + 1) + '\r\n'))
  ])
  const movements = async (): Promise<number> => Number((await db.pool.query<{ n: string }>('SELECT count(*) AS n FROM movimentos')).rows[0]!.n)

  const cases: Array<[string, () => Promise<string>, RegExp]> = [
    ['a line of 16 MiB', async () => await csv('linha.csv', Buffer.concat([Buffer.from(HEADER.join(';') + '\r\n' + line(1) + '\r\n2;'), Buffer.alloc(16 << 20, 'x')])), /^Line 3 of the CSV file is longer than 4,194,304 characters/],
    ['a quote never closed', async () => await csv('aspas.csv', lines(2000, 1500, Buffer.from('"Conta'))), /^Line 1500 of the CSV file opens a quoted field \(".*never closed/],
    ['a NUL byte', async () => await csv('nul.csv', lines(2000, 1700, Buffer.from('Con\u0000ta'))), /^Line 1700 of the CSV file holds a NUL byte/],
    ['UTF-8, then Windows-1252', async () => await csv('mista.csv', Buffer.concat([lines(3, 3, Buffer.from('Ação', 'utf8')), lines(2000, 1800, Buffer.from('Ação', 'latin1')).subarray(HEADER.join(';').length + 2)])), /^Line 1803 of the CSV file has bytes that are not UTF-8 .*mixes encodings/]
  ]
  for (const [name, make, message] of cases) {
    it(`${name}: 400 naming its line, on every route; nothing written; the service serves on`, async () => {
      const file = await make()
      const before = await movements()
      const started = performance.now()
      for (const route of ['/v1/analyze', '/v1/diagnose-unbalanced', '/v1/process']) {
        const { status, body } = await post(route, file, { codigo_dominio: '900' })
        expect({ route, status, detail: body.detail }).toEqual({ route, status: 400, detail: expect.stringMatching(message) })
      }
      // A hang catcher only: the three requests and the check after took 0.1-0.7 s here (the 16 MiB upload included).
      expect(performance.now() - started).toBeLessThan(30_000)
      expect(await movements()).toBe(before)
      expect((await post('/v1/analyze', files.csv)).status).toBe(200)
    }, 60_000)
  }
})
