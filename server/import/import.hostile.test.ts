/**
 * The import service's hostile group (issue 22, item 12): a `historico` of 1 MiB, far past
 * the 32,767 characters an Excel cell holds, written as an inline string, a shared string,
 * a formula's cached text and a CSV field. It is never cut short in silence: /v1/analyze reports the
 * cell (TEXT_TOO_LONG), /v1/diagnose-unbalanced shows it shortened with its full length,
 * and /v1/process refuses the file with 422 and writes nothing. The same text saved by
 * LibreOffice reaches us cut to 32,767 characters (LibreOffice cuts it without a word):
 * that file is refused too (TEXT_AT_CELL_LIMIT). As a job (POST /v1/imports, issue 31) the
 * same file ends FALHOU and its problems.csv shows the cell shortened; a ledger with more
 * rejected cells than the file keeps lists the first 100,000 and says how many more.
 * Issue 32: a huge shared string table in a small upload (item 4), archives that read
 * differently in different programs and hidden first sheets (item 5). Hostile CSVs (issue
 * 31, item 5): a line of 16 MiB, a quote never closed, a NUL byte, encodings mixed; each is
 * refused with 400 naming its line, writes nothing, and the service serves the next request.
 * The process's peak memory through the group is printed.
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
import { deflatedEntry, rawZip, repeatedEntry } from '../../fixtures/raw-zip.js'
import type { RawEntry } from '../../fixtures/raw-zip.js'
import { escapeXml, tinyXlsxParts, writeTinyXlsx, writeZip } from '../../fixtures/tiny-xlsx.js'
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
  await addCompany(db.pool, { codigoDominio: '901', nome: 'Empresa Hostil, em tarefas' })
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

const NS_MAIN = 'http://schemas.openxmlformats.org/spreadsheetml/2006/main'
const NS_REL = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships'
const rawEntries = (parts: Record<string, string | Buffer>): RawEntry[] => Object.entries(parts).map(([name, content]) => deflatedEntry(name, content))

/**
 * Issue 32, item 4: a 598 KB upload whose shared string table held 14 million items took
 * 31.7 s and 1 GB more memory before it was refused for its header. Items are now decoded
 * as the sheet names them, and the table inflated only that far.
 */
describe('a small workbook whose shared string table holds 14 million items', () => {
  it('is refused for its header with 400 at once, and the pool serves the next request', async () => {
    const path = join(dir, 'huge-table.xlsx')
    const cells = [0, 1, 2].map((i) => `<c t="s"><v>${i}</v></c>`).join('')
    await writeFile(path, rawZip([
      ...rawEntries(tinyXlsxParts({ sheet: `<row r="1">${cells}</row><row r="2"><c t="s"><v>14000002</v></c></row>` })),
      repeatedEntry('xl/sharedStrings.xml', `<sst xmlns="${NS_MAIN}"><si><t>id</t></si><si><t>data</t></si><si><t>valor</t></si>`, '<si><t>a</t></si>', 14_000_000, '</sst>')
    ]))
    expect((await readFile(path)).length).toBeLessThan(700_000)
    const started = Date.now()
    const { status, body } = await post('/v1/analyze', path)
    expect(status).toBe(400)
    expect(body.detail).toMatch(/lacks the required columns: id_movim_finan/)
    // A hang catcher: about 1 s at a load of 22 as the file's first request, pool thread
    // started cold (31.7 s before the change).
    expect(Date.now() - started).toBeLessThan(20_000)
    expect((await post('/v1/analyze', files.inline)).status).toBe(200)
  })
})

/**
 * Issue 32, item 5: files that Excel, LibreOffice and openpyxl read differently from us. An
 * archive that reads differently in different programs is refused; of a workbook whose first
 * sheet is hidden, we read the sheet a person sees.
 */
describe('archives and workbooks that programs read differently', () => {
  const worksheet = (rows: string): string => `<?xml version="1.0" encoding="UTF-8"?><worksheet xmlns="${NS_MAIN}"><sheetData>${rows}</sheetData></worksheet>`
  const twoSheets = (hiddenRows: string, visibleRows: string, state: string): Record<string, string | Buffer> => tinyXlsxParts({
    sheet: hiddenRows,
    workbookXml: `<?xml version="1.0" encoding="UTF-8"?><workbook xmlns="${NS_MAIN}" xmlns:r="${NS_REL}"><sheets><sheet name="Oculta" sheetId="1" state="${state}" r:id="rId1"/><sheet name="Razao" sheetId="2" r:id="rId4"/></sheets></workbook>`,
    extraParts: {
      'xl/_rels/workbook.xml.rels': `<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="${NS_REL}/worksheet" Target="worksheets/sheet1.xml"/><Relationship Id="rId4" Type="${NS_REL}/worksheet" Target="worksheets/sheet2.xml"/></Relationships>`,
      'xl/worksheets/sheet2.xml': worksheet(visibleRows)
    }
  })
  const visible = ledger('<c t="inlineStr"><is><t>curto</t></is></c>')
  const hidden = visible.replace('100,00', '999,00')

  it('refuses with 400 an archive with two entries whose names differ only in case, or whose directory disagrees with its local headers', async () => {
    const collision = join(dir, 'collision.xlsx')
    await writeZip(collision, { ...tinyXlsxParts({ sheet: visible }), 'XL/WORKSHEETS/SHEET1.XML': worksheet(hidden) })
    const swapped = join(dir, 'swapped.xlsx')
    const swap: Record<string, string> = { 'xl/worksheets/sheet1.xml': 'xl/worksheets/sheet2.xml', 'xl/worksheets/sheet2.xml': 'xl/worksheets/sheet1.xml' }
    await writeFile(swapped, rawZip(rawEntries(twoSheets(visible, hidden, 'visible')).map((e) => ({ ...e, localName: e.name, name: swap[e.name] ?? e.name }))))
    for (const [path, what] of [[collision, /differ only in case/], [swapped, /is named "xl\/worksheets\/sheet\d.xml" in its local header/]] as const) {
      const { status, body } = await post('/v1/analyze', path)
      expect(status, path).toBe(400)
      expect(body).toMatchObject({ code: 'XLSX_AMBIGUOUS_ARCHIVE', requestId: expect.any(String) })
      expect(body.detail).toMatch(/archive is ambiguous/)
      expect(body.detail).toMatch(what)
      expect(body.detail).toMatch(/save the workbook again from Excel or LibreOffice/)
    }
    expect((await post('/v1/analyze', files.inline)).status).toBe(200)
  })

  it.each(['veryHidden', 'hidden'])('analyzes the first visible sheet of a workbook whose first sheet is %s', async (state) => {
    const path = join(dir, `hidden-first-${state}.xlsx`)
    await writeZip(path, twoSheets(hidden, visible, state))
    const { status, body } = await post('/v1/analyze', path)
    expect(status).toBe(200)
    expect(body.total_rows).toBe(2)
    expect(body.total_debit).toBe(100)
    expect(body.total_credit).toBe(90)
  })
})

/** A job's import, followed until it ends. */
async function importAsJob (file: string, codigoDominio: string): Promise<any> {
  const form = new FormData()
  form.append('codigo_dominio', codigoDominio)
  form.append('file', new Blob([await readFile(file)]), 'razao.xlsx')
  const accepted = await fetch(`${base}/v1/imports`, { method: 'POST', body: form, headers: { 'x-api-key': API_KEY } })
  expect(accepted.status).toBe(202)
  const { url } = await accepted.json() as { url: string }
  let shown: any
  await expect.poll(async () => {
    shown = await (await fetch(`${base}${url}`, { headers: { 'x-api-key': API_KEY } })).json()
    return shown.status
  }, { timeout: 60_000 }).toMatch(/^(VALIDADO|FALHOU|CANCELADO)$/)
  return shown
}

async function problemsCsv (id: string): Promise<string[]> {
  const res = await fetch(`${base}/v1/imports/${id}/problems.csv`, { headers: { 'x-api-key': API_KEY } })
  expect(res.status).toBe(200)
  return (await res.text()).replace(/^\uFEFF/, '').split('\r\n')
}

describe('as an import job', () => {
  it('a 1 MiB historico ends FALHOU, and problems.csv shows the cell shortened with its length', async () => {
    const job = await importAsJob(files.inline, '901')
    expect(job).toMatchObject({ status: 'FALHOU', erro: { code: 'LEDGER_INVALID_CELLS' }, problemas: { total: 1, listados: 1 } })
    const lines = await problemsCsv(job.importacao_id as string)
    expect(lines).toEqual(['linha;coluna;valor_original;motivo', expect.stringMatching(/^2;historico;h{200}… \(1048576 characters\);"TEXT_TOO_LONG: /), ''])
  }, 90_000)

  it('more rejected cells than the file keeps: the first 100,000 in order, and a last line saying how many more', async () => {
    // 33,400 rows, each with three cells that cannot be read (date, debit, credit): 100,200 problems.
    const rows = 33_400
    const path = join(dir, 'muitos-problemas.xlsx')
    const shared = ['Conta', 'Plano', 'AJUSTE', '1.2.3', 'nunca', 'x', 'y']
    const s = (i: number): string => `<c t="s"><v>${i}</v></c>`
    const header = `<row>${HEADER.slice(0, 11).map((h) => `<c t="inlineStr"><is><t>${h}</t></is></c>`).join('')}</row>`
    let sheet = header
    for (let r = 0; r < rows; r++) sheet += `<row><c><v>${r + 1}</v></c><c><v>${r + 1}</v></c>${s(4)}<c><v>3001</v></c>${s(0)}<c><v>77</v></c>${s(1)}${s(2)}${s(3)}${s(6)}${s(5)}</row>`
    await writeTinyXlsx(path, { sheet, sharedStrings: shared })
    const job = await importAsJob(path, '901')
    expect(job).toMatchObject({ status: 'FALHOU', erro: { code: 'LEDGER_INVALID_CELLS' }, problemas: { total: rows * 3, listados: 100_000 } })
    const lines = await problemsCsv(job.importacao_id as string)
    expect(lines).toHaveLength(1 + 100_000 + 1 + 1)
    expect(lines[1]).toMatch(/^2;(data|debito|credito);(nunca|x|y);/)
    expect(lines[100_000]).toMatch(/^33335;/)
    expect(lines[100_001]).toBe(';;;200 more problem cells are not listed here: this file lists the first 100000 of 100200.')
    const { rows: stored } = await db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM importacao_problemas WHERE importacao_id = $1', [job.importacao_id])
    expect(stored).toEqual([{ n: 100_000 }])
  }, 180_000)
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
