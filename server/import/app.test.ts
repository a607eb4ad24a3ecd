/**
 * The import service over real HTTP: a listening Fastify app, the real worker pool,
 * real files from the seeded generator. Every status of spec 1, section 7 that the
 * read-only routes can give is exercised here.
 */
import { request as httpRequest } from 'node:http'
import { connect } from 'node:net'
import { mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises'
import { readFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PassThrough } from 'node:stream'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { FastifyInstance } from 'fastify'
import { generateLedger } from '../../fixtures/ledger/generate.js'
import type { LedgerFacts } from '../../fixtures/ledger/generate.js'
import XLSX from 'xlsx'
import { deflatedEntry, rawZip, repeatedEntry } from '../../fixtures/raw-zip.js'
import { tinyXlsxParts, writeTinyXlsx } from '../../fixtures/tiny-xlsx.js'
import { readXlsxFirstSheet } from '../../core/xlsx/index.js'
import { NATIVE_HANDLE_NODE_MAJORS } from '../../core/xlsx/inflate.js'
import { SUPPORTED_NODE_LINES } from '../runtime.js'
import { createPool } from '../../workers/pool.js'
import type { WorkerPool } from '../../workers/pool.js'
import { loadConfig } from '../config.js'
import { buildImportApp } from './app.js'

const API_KEY = 'test-key-0123456789abcdef'
let dir: string
let uploadTmp: string
let pool: WorkerPool
let app: FastifyInstance
let base: string
const logs = new PassThrough()
let logText = ''
logs.on('data', (chunk: Buffer) => { logText += chunk.toString() })

const files: Record<string, string> = {}
let facts: LedgerFacts
let xlsFacts: LedgerFacts

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'razao-import-app-'))
  uploadTmp = join(dir, 'uploads')
  const config = loadConfig({ RAZAO_DATA_DIR: join(dir, 'data'), RAZAO_TMP_DIR: uploadTmp, IMPORT_MAX_UPLOAD_BYTES: String(8 * 1024 * 1024), IMPORT_MAX_INFLATED_BYTES: String(64 * 1024 * 1024), LOG_LEVEL: 'info' })
  pool = createPool({ maxThreads: 2 })
  app = await buildImportApp({ shared: config.shared, config: config.import, apiKey: API_KEY, pool, logStream: logs })
  base = await app.listen({ host: '127.0.0.1', port: 0 })

  files.ledger = join(dir, 'ledger.xlsx')
  facts = await generateLedger({
    path: files.ledger, format: 'xlsx', rows: 3000, seed: 7, unbalancedGroups: 4, textAmountEvery: 9,
    blankRowEvery: 250, dateStyle: 'mixed', extraColumns: true, headerCase: 'padded', oddPartNames: true
  })
  files.xls = join(dir, 'ledger.xls')
  xlsFacts = await generateLedger({ path: files.xls, format: 'xls', rows: 1500, seed: 3, unbalancedGroups: 2, dateStyle: 'date-cell' })
  files.balanced = join(dir, 'balanced.xlsx')
  await generateLedger({ path: files.balanced, format: 'xlsx', rows: 500, seed: 11 })
  files.csv = join(dir, 'ledger.xlsx.csv')
  await writeFile(files.csv, 'id;id_movim_finan;data\n1;2;01/01/2024\n')
  files.missingColumns = join(dir, 'missing.xlsx')
  await writeTinyXlsx(files.missingColumns, { sheet: '<row r="1"><c t="inlineStr"><is><t>id</t></is></c><c t="inlineStr"><is><t>DATA</t></is></c></row>' })
  files.bomb = join(dir, 'bomb.xlsx')
  await writeTinyXlsx(files.bomb, { sheet: `<row r="1"><c><v>1</v></c></row>${' '.repeat(80 * 1024 * 1024)}` })
  files.big = join(dir, 'big.bin')
  await writeFile(files.big, Buffer.alloc(9 * 1024 * 1024, 1))
}, 120_000)

afterAll(async () => {
  await app.close()
  await pool.destroy()
  await rm(dir, { recursive: true, force: true })
})

async function post (path: string, fields: Record<string, string>, file?: { path: string, name: string }, headers: Record<string, string> = { 'x-api-key': API_KEY }) {
  const form = new FormData()
  for (const [k, v] of Object.entries(fields)) form.append(k, v)
  if (file !== undefined) form.append('file', new Blob([await readFile(file.path)]), file.name)
  const res = await fetch(`${base}${path}`, { method: 'POST', body: form, headers })
  return { status: res.status, body: await res.json() as Record<string, any> }
}

async function uploadsLeft (): Promise<string[]> {
  try { return await readdir(uploadTmp) } catch { return [] }
}

describe('GET /health', () => {
  it('answers without a key: the spec\'s fields, then the Node line and the reader\'s inflate engine on it', async () => {
    const res = await fetch(`${base}/health`)
    expect(res.status).toBe(200)
    const line = Number(process.versions.node.split('.')[0])
    expect(await res.json()).toEqual({
      success: true,
      service: 'razao-import',
      environment: 'development',
      runtime: {
        name: 'Node.js',
        version: process.versions.node,
        line,
        supported: SUPPORTED_NODE_LINES.includes(line),
        xlsxInflate: NATIVE_HANDLE_NODE_MAJORS.has(line) ? 'native-handle' : 'stream'
      }
    })
  })
})

describe('authentication', () => {
  it('refuses a missing or wrong X-API-Key with 401', async () => {
    for (const headers of [{}, { 'x-api-key': 'wrong' }, { 'x-api-key': `${API_KEY}x` }]) {
      const { status, body } = await post('/v1/analyze', {}, { path: files.balanced!, name: 'b.xlsx' }, headers)
      expect(status).toBe(401)
      // It names the header and where the key is, with the stable code and the request id.
      expect(body).toEqual({ detail: expect.stringMatching(/^Invalid or missing API key\. Send the key in the X-API-Key header\. .*IMPORT_API_KEY.*\.data\/import-api-key/), code: 'UNAUTHORIZED', requestId: expect.any(String) })
    }
  })

  it('closes the connection after a 401, or a 404 for a route that does not exist, instead of reading the body', async () => {
    for (const [path, status] of [['/v1/analyze', 401], ['/nope', 404], ['/v1/nothing', 404]] as const) {
      const socket = connect(Number(new URL(base).port), '127.0.0.1')
      let answer = ''
      socket.on('data', (d: Buffer) => { answer += d.toString() })
      const closed = new Promise((resolve) => socket.on('close', resolve))
      // A gigabyte announced and a trickle sent: none of it is wanted.
      socket.write(`POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=XX\r\nContent-Length: 1000000000\r\n\r\nabc`)
      const trickle = setInterval(() => { if (!socket.destroyed) socket.write('a') }, 50)
      await closed
      clearInterval(trickle)
      expect(answer, path).toMatch(new RegExp(`^HTTP/1\\.1 ${status} `))
      expect(answer).toMatch(/\r\nconnection: close\r\n/i)
    }
  })

  it('refuses a keyless request whose path reaches a /v1 route only once percent-decoded', async () => {
    // The router decodes "%76" to "v": a check on the raw URL would let these through.
    for (const path of ['/%761/analyze', '/v%31/diagnose-unbalanced', '/%76%31/process']) {
      const { status, body } = await post(path, {}, { path: files.balanced!, name: 'b.xlsx' }, {})
      expect(status, path).toBe(401)
      expect(body).toMatchObject({ detail: expect.stringMatching(/API key/), code: 'UNAUTHORIZED' })
    }
  })
})

describe('POST /v1/analyze', () => {
  it('returns every AnalyzeResponse field, equal to the generator\'s facts to the cent', async () => {
    const { status, body } = await post('/v1/analyze', { batch_size: '250' }, { path: files.ledger!, name: 'Razão março.xlsx' })
    expect(status).toBe(200)
    const hash = (await import('node:crypto')).createHash('sha256').update(await readFile(files.ledger!)).digest('hex')
    expect(body).toMatchObject({
      success: true,
      file_name: 'Razão março.xlsx',
      sha256: hash,
      total_rows: facts.totalRows,
      total_batches: Math.ceil(facts.totalRows / 250),
      total_debit: facts.totalDebitCents / 100,
      total_credit: facts.totalCreditCents / 100,
      difference: (facts.totalDebitCents - facts.totalCreditCents) / 100,
      distinct_id_movim_finan: facts.distinctGroups,
      min_date: facts.minDate,
      max_date: facts.maxDate,
      types: facts.typeCounts,
      rows_with_both_debit_credit: facts.rowsWithBothDebitCredit,
      rows_without_values: facts.rowsWithoutValues,
      unbalanced_lots: facts.unbalancedGroupIds.length,
      invalid_cells: 0,
      cell_problems: []
    })
    expect(Math.round(body.total_debit * 100)).toBe(facts.totalDebitCents)
  })

  it('reads XLS through the isolated reader with the same contract', async () => {
    const { status, body } = await post('/v1/analyze', {}, { path: files.xls!, name: 'ledger.xls' })
    expect(status).toBe(200)
    expect(body).toMatchObject({
      total_rows: xlsFacts.totalRows,
      total_batches: Math.ceil(xlsFacts.totalRows / 1000),
      total_debit: xlsFacts.totalDebitCents / 100,
      total_credit: xlsFacts.totalCreditCents / 100,
      unbalanced_lots: xlsFacts.unbalancedGroupIds.length,
      min_date: xlsFacts.minDate,
      max_date: xlsFacts.maxDate
    })
  })

  it.each([['biff5-stream'], ['biff2-stream']] as const)('reads a bare %s (no OLE2 container) through the isolated reader with the same contract (issue 11)', async (variant) => {
    const path = join(dir, `ledger-${variant}.xls`)
    // SheetJS's BIFF2 writer keeps no number formats: its date cells arrive as serial numbers, which a ledger also accepts.
    const truth = await generateLedger({ path, format: 'xls', xlsVariant: variant, rows: 800, seed: 31, unbalancedGroups: 2, dateStyle: 'mixed', textAmountEvery: 11 })
    const { status, body } = await post('/v1/analyze', {}, { path, name: 'antigo.xls' })
    expect(status).toBe(200)
    expect(body).toMatchObject({
      total_rows: truth.totalRows,
      total_debit: truth.totalDebitCents / 100,
      total_credit: truth.totalCreditCents / 100,
      unbalanced_lots: truth.unbalancedGroupIds.length,
      min_date: truth.minDate,
      max_date: truth.maxDate,
      invalid_cells: 0
    })
  })

  it('refuses a file that opens like a BIFF stream but is damaged with 400, and the pool still serves', async () => {
    const path = join(dir, 'broken-biff.xls')
    await writeFile(path, Buffer.concat([Buffer.from([0x09, 0x08, 0x08, 0x00, 0x00, 0x05, 0x05, 0x00, 0, 0, 0, 0]), Buffer.alloc(300, 0xee)]))
    const { status, body } = await post('/v1/analyze', {}, { path, name: 'x.xls' })
    expect(status).toBe(400)
    expect(body.detail).toMatch(/no sheets|damaged/)
    expect((await post('/v1/analyze', {}, { path: files.balanced!, name: 'b.xlsx' })).status).toBe(200)
  })

  it.each([['99'], ['10001'], ['abc'], ['1e3'], ['-100']])('refuses batch_size=%s with 400', async (value) => {
    const { status, body } = await post('/v1/analyze', { batch_size: value }, { path: files.balanced!, name: 'b.xlsx' })
    expect(status).toBe(400)
    expect(body.detail).toMatch(/batch_size/)
  })

  it('refuses an unknown modo_importacao with 400', async () => {
    const { status, body } = await post('/v1/analyze', { modo_importacao: 'APAGAR' }, { path: files.balanced!, name: 'b.xlsx' })
    expect(status).toBe(400)
    expect(body.detail).toMatch(/modo_importacao/)
  })

  it('refuses a request without a file with 422', async () => {
    const { status, body } = await post('/v1/analyze', { batch_size: '100' })
    expect(status).toBe(422)
    expect(body.detail).toMatch(/file/)
  })

  it('decides the format by the bytes: a text file named .xlsx is read as CSV (400: not a ledger), a binary one is refused', async () => {
    const { status, body } = await post('/v1/analyze', {}, { path: files.csv!, name: 'ledger.xlsx' })
    expect(status).toBe(400)
    expect(body.detail).toMatch(/read as CSV, but its first line is not a ledger header/)
    const binary = join(dir, 'image.xlsx')
    await writeFile(binary, Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52]))
    const refused = await post('/v1/analyze', {}, { path: binary, name: 'ledger.xlsx' })
    expect(refused.status).toBe(400)
    expect(refused.body.detail).toMatch(/neither an XLSX nor an XLS workbook, nor a CSV\/TXT text file/)
    // An OpenDocument spreadsheet (written by SheetJS) and a PDF: named, with what is accepted.
    const ods = join(dir, 'ledger.ods')
    const book = XLSX.utils.book_new()
    XLSX.utils.book_append_sheet(book, XLSX.utils.aoa_to_sheet([['id', 'data'], [1, 'x']]), 'Razao')
    await writeFile(ods, XLSX.write(book, { type: 'buffer', bookType: 'ods' }) as Buffer)
    const pdf = join(dir, 'ledger.pdf')
    await writeFile(pdf, '%PDF-1.7\n%\xe2\xe3\n1 0 obj\n<<>>\nendobj\n')
    for (const [path, what] of [[ods, /OpenDocument spreadsheet \(\.ods\)/], [pdf, /is a PDF, not a spreadsheet/]] as const) {
      const answer = await post('/v1/analyze', {}, { path, name: path.slice(dir.length + 1) })
      expect(answer.status, path).toBe(400)
      expect(answer.body).toEqual({ detail: expect.stringMatching(what), code: 'SHEET_UNSUPPORTED_FORMAT', requestId: expect.any(String) })
      expect(answer.body.detail).toContain('The import accepts XLSX and XLS workbooks and CSV/TXT text files')
    }
  })

  it('names the missing required columns with 400', async () => {
    const { status, body } = await post('/v1/analyze', {}, { path: files.missingColumns!, name: 'm.xlsx' })
    expect(status).toBe(400)
    expect(body.detail).toContain('id_movim_finan')
    expect(body.detail).toContain('debito')
  })

  it('reads the sheet the sheet field names (by name or position); without it, a non-ledger first sheet is refused naming it', async () => {
    const book = XLSX.utils.book_new()
    XLSX.utils.book_append_sheet(book, XLSX.utils.aoa_to_sheet([['Resumo do mês', 'Total']]), 'Resumo')
    const header = ['id', 'id_movim_finan', 'data', 'id_conta', 'planejamento_analitico', 'id_planejamento', 'planejamento', 'tipo', 'cod_planejamento', 'credito', 'debito']
    XLSX.utils.book_append_sheet(book, XLSX.utils.aoa_to_sheet([header, [1, 10, '01/02/2024', 3001, 'Caixa', 7, 'P', 'T', '1', 0, 25.5], [2, 10, '01/02/2024', 3002, 'Banco', 7, 'P', 'T', '1', 25.5, 0]]), 'Razão')
    const path = join(dir, 'two-sheets.xlsx')
    await writeFile(path, XLSX.write(book, { bookType: 'xlsx', type: 'buffer' }) as Buffer)
    const first = await post('/v1/analyze', {}, { path, name: 'two-sheets.xlsx' })
    expect(first.status).toBe(400)
    expect(first.body.detail).toMatch(/^Sheet "Resumo", row 1: the header row lacks .* It holds: "Resumo do mês", "Total"\. The workbook's sheets: "Resumo" \(1\), "Razão" \(2\)/)
    for (const sheet of ['Razão', '2']) {
      const chosen = await post('/v1/analyze', { sheet }, { path, name: 'two-sheets.xlsx' })
      expect(chosen.status, sheet).toBe(200)
      expect(chosen.body).toMatchObject({ total_rows: 2, total_debit: 25.5, total_credit: 25.5 })
    }
    const missing = await post('/v1/diagnose-unbalanced', { sheet: 'Balanço' }, { path, name: 'two-sheets.xlsx' })
    expect(missing.status).toBe(400)
    expect(missing.body.detail).toMatch(/no sheet named "Balanço"; its sheets are "Resumo" \(1\), "Razão" \(2\)/)
  })

  it('refuses an upload above the size limit with 413 and keeps nothing', async () => {
    const { status, body } = await post('/v1/analyze', {}, { path: files.big!, name: 'big.xlsx' })
    expect(status).toBe(413)
    expect(body.detail).toMatch(/larger/)
    expect(await uploadsLeft()).toEqual([])
  })

  it('refuses a zip bomb with 400 and the pool still serves the next request', async () => {
    const bomb = await post('/v1/analyze', {}, { path: files.bomb!, name: 'bomb.xlsx' })
    expect(bomb.status).toBe(400)
    expect(bomb.body.detail).toMatch(/zip bomb/)
    const next = await post('/v1/analyze', {}, { path: files.balanced!, name: 'b.xlsx' })
    expect(next.status).toBe(200)
  })

  it('refuses hostile workbooks with 400 and a clear detail, and the pool still serves the next request', async () => {
    const NS = 'http://schemas.openxmlformats.org/spreadsheetml/2006/main'
    const dtd = join(dir, 'dtd.xlsx')
    await writeTinyXlsx(dtd, { sheet: '<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "aaaa">]><worksheet><sheetData><row r="1"><c t="inlineStr"><is><t>&a;</t></is></c></row></sheetData></worksheet>' })
    const noSheets = join(dir, 'no-sheets.xlsx')
    await writeTinyXlsx(noSheets, { sheet: '', workbookXml: `<workbook xmlns="${NS}"><sheets/></workbook>` })
    // A password-protected workbook: an OLE2 compound file holding an EncryptedPackage.
    const cfb = XLSX.CFB.utils.cfb_new()
    XLSX.CFB.utils.cfb_add(cfb, 'EncryptionInfo', Buffer.alloc(64, 1))
    XLSX.CFB.utils.cfb_add(cfb, 'EncryptedPackage', Buffer.alloc(4096, 7))
    const encrypted = join(dir, 'encrypted.xlsx')
    await writeFile(encrypted, XLSX.CFB.write(cfb, { type: 'buffer' }) as Buffer)
    // An OLE2 file whose workbook stream is garbage: SheetJS fails inside the isolate.
    const garbage = XLSX.CFB.utils.cfb_new()
    XLSX.CFB.utils.cfb_add(garbage, 'Workbook', Buffer.alloc(2048, 0xee))
    const brokenXls = join(dir, 'broken.xls')
    await writeFile(brokenXls, XLSX.CFB.write(garbage, { type: 'buffer' }) as Buffer)
    // 50 KB whose styles part inflates to 19 MB of cell formats (a million; Excel keeps 65,430),
    // under this app's 64 MiB inflation limit.
    const stylesBomb = join(dir, 'styles-bomb.xlsx')
    await writeFile(stylesBomb, rawZip([
      ...Object.entries(tinyXlsxParts({ sheet: '<row r="1"><c><v>1</v></c></row>' })).map(([name, content]) => deflatedEntry(name, content)),
      repeatedEntry('xl/styles.xml', `<styleSheet xmlns="${NS}"><cellXfs>`, '<xf numFmtId="14"/>', 1_000_000, '</cellXfs></styleSheet>')
    ]))
    for (const [path, detail] of [[dtd, /DTD/], [noSheets, /no sheets/], [encrypted, /encrypted/], [brokenXls, /no sheets|damaged|cannot be read/], [stylesBomb, /more than 262,144 cell formats/]] as const) {
      const { status, body } = await post('/v1/analyze', {}, { path, name: 'hostile.xlsx' })
      expect(status, path).toBe(400)
      expect(Object.keys(body)).toEqual(['detail', 'code', 'requestId'])
      expect(body.detail).toMatch(detail)
      expect(body.detail).not.toMatch(/\n\s+at /)
    }
    const next = await post('/v1/analyze', {}, { path: files.balanced!, name: 'b.xlsx' })
    expect(next.status).toBe(200)
    expect(await uploadsLeft()).toEqual([])
  })

  it('refuses a form with more fields than any request needs with 400, not 413', async () => {
    const fields = Object.fromEntries(Array.from({ length: 11 }, (_, i) => [`f${i}`, 'x']))
    const { status, body } = await post('/v1/analyze', fields, { path: files.balanced!, name: 'b.xlsx' })
    expect(status).toBe(400)
    expect(body).toEqual({ detail: 'The request has too many form fields.', code: 'REQUEST_INVALID', requestId: expect.any(String) })
    expect(await uploadsLeft()).toEqual([])
  })

  it('accepts batch_size at both ends of 100..10000 and counts batches by it', async () => {
    for (const [size, batches] of [['100', 5], ['10000', 1]] as const) {
      const { status, body } = await post('/v1/analyze', { batch_size: size }, { path: files.balanced!, name: 'b.xlsx' })
      expect(status).toBe(200)
      expect(body.total_rows).toBe(500)
      expect(body.total_batches).toBe(batches)
    }
  })

  it('answers a URL with a bad percent-escape with 400 in the usual shape', async () => {
    const res = await fetch(`${base}/v1/%zz`, { method: 'POST', headers: { 'x-api-key': API_KEY, 'x-request-id': 'bad-url-1' } })
    expect(res.status).toBe(400)
    expect(await res.json()).toEqual({ detail: 'The request URL is malformed.', code: 'REQUEST_INVALID', requestId: 'bad-url-1' })
  })

  it('refuses a malformed multipart body with 400, keeping nothing', async () => {
    const unterminated = '--XX\r\nContent-Disposition: form-data; name="file"; filename="a.xlsx"\r\n\r\nPK\x03\x04abc'
    const cases: Array<[string, string]> = [['multipart/form-data', 'garbage'], ['multipart/form-data; boundary=XX', 'garbage'], ['multipart/form-data; boundary=XX', unterminated]]
    for (const [type, body] of cases) {
      const res = await fetch(`${base}/v1/analyze`, { method: 'POST', body, headers: { 'content-type': type, 'x-api-key': API_KEY } })
      expect(res.status, `${type} ${body.slice(0, 10)}`).toBe(400)
      expect(await res.json()).toEqual({ detail: expect.stringMatching(/multipart/), code: 'REQUEST_INVALID', requestId: expect.any(String) })
    }
    expect(await uploadsLeft()).toEqual([])
  })

  it('refuses a body that is not multipart with 400', async () => {
    const res = await fetch(`${base}/v1/analyze`, { method: 'POST', body: JSON.stringify({ a: 1 }), headers: { 'content-type': 'application/json', 'x-api-key': API_KEY } })
    expect(res.status).toBe(400)
    expect(await res.json()).toEqual({ detail: expect.any(String), code: 'REQUEST_INVALID', requestId: expect.any(String) })
  })
})

describe('POST /v1/diagnose-unbalanced', () => {
  it('returns every unbalanced group with all of its original rows', async () => {
    const { status, body } = await post('/v1/diagnose-unbalanced', {}, { path: files.ledger!, name: 'ledger.xlsx' })
    expect(status).toBe(200)
    expect(body.diagnostico).toBe('ARQUIVO_DESBALANCEADO')
    expect(body.nome_arquivo).toBe('ledger.xlsx')
    expect(body.resumo).toEqual({
      total_linhas: facts.totalRows,
      total_movimentos_financeiros: facts.distinctGroups,
      total_debito: facts.totalDebitCents / 100,
      total_credito: facts.totalCreditCents / 100,
      diferenca: (facts.totalDebitCents - facts.totalCreditCents) / 100,
      quantidade_grupos_desbalanceados: facts.unbalancedGroupIds.length,
      total_batches: Math.ceil(facts.totalRows / 1000)
    })
    expect(body).toMatchObject({ grupos_omitidos: 0, linhas_omitidas: 0 })
    const groups = body.grupos_desbalanceados as Array<Record<string, any>>
    expect(groups.map((g) => g.id_movim_finan).sort((a, b) => a - b)).toEqual(facts.unbalancedGroupIds)
    for (const g of groups) {
      const expected = facts.unbalancedGroupTotals[g.id_movim_finan]!
      expect(g.linhas.map((l: Record<string, unknown>) => l.linha_origem)).toEqual(facts.unbalancedGroupRows[g.id_movim_finan])
      expect(g.quantidade_linhas).toBe(g.linhas.length)
      expect(g.total_debito).toBe(expected.debitCents / 100)
      expect(g.total_credito).toBe(expected.creditCents / 100)
      expect(g.diferenca).toBe((expected.debitCents - expected.creditCents) / 100)
      expect(g.data).toMatch(/^\d{4}-\d{2}-\d{2}$/)
      for (const line of g.linhas) {
        expect(Object.keys(line).sort()).toEqual(['descricao_origem', 'historico_origem', 'id_conta', 'id_planejamento', 'linha_origem', 'tipo_origem', 'valor_credito', 'valor_debito'])
        expect(typeof line.id_conta).toBe('number')
      }
    }
    // historico_origem is the row's own "historico" cell (the fixture has that optional column).
    const history = new Map<number, unknown>()
    let at = -1
    await readXlsxFirstSheet(files.ledger!, (row, cells) => {
      if (at === -1) at = cells.findIndex((c) => typeof c === 'string' && c.trim().toLowerCase() === 'historico')
      else history.set(row, cells[at])
    }, { maxInflatedBytes: 1 << 26 })
    expect(at).toBeGreaterThan(0)
    const lines = groups.flatMap((g) => g.linhas as Array<Record<string, unknown>>)
    expect(lines.length).toBeGreaterThan(0)
    for (const line of lines) {
      expect(line.historico_origem).toEqual(expect.any(String))
      expect(line.historico_origem).toBe(String(history.get(line.linha_origem as number)).trim())
    }
  })

  it('says ARQUIVO_BALANCEADO with no groups for a balanced file', async () => {
    const { status, body } = await post('/v1/diagnose-unbalanced', {}, { path: files.balanced!, name: 'b.xlsx' })
    expect(status).toBe(200)
    expect(body.diagnostico).toBe('ARQUIVO_BALANCEADO')
    expect(body.grupos_desbalanceados).toEqual([])
    expect(body.resumo.quantidade_grupos_desbalanceados).toBe(0)
  })
})

describe('temporary files and logs', () => {
  it('removes the upload after success and after errors', async () => {
    await post('/v1/analyze', {}, { path: files.balanced!, name: 'b.xlsx' })
    await post('/v1/analyze', {}, { path: files.csv!, name: 'c.xlsx' })
    await post('/v1/analyze', { batch_size: '5' }, { path: files.balanced!, name: 'b.xlsx' })
    expect(await uploadsLeft()).toEqual([])
  })

  it('removes the upload when the client aborts mid-upload', async () => {
    const boundary = 'razao-test-boundary'
    const req = httpRequest(`${base}/v1/analyze`, {
      method: 'POST',
      headers: { 'x-api-key': API_KEY, 'content-type': `multipart/form-data; boundary=${boundary}`, 'content-length': String(4 * 1024 * 1024) }
    })
    req.on('error', () => {})
    req.write(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="x.xlsx"\r\nContent-Type: application/octet-stream\r\n\r\n`)
    req.write(Buffer.alloc(512 * 1024, 7))
    await expect.poll(async () => (await uploadsLeft()).length).toBe(1)
    req.destroy()
    await expect.poll(uploadsLeft, { timeout: 5000 }).toEqual([])
  })

  it('cancels the analysis and removes the upload when the client aborts while the worker reads', async () => {
    const path = join(dir, 'slow.xlsx')
    await generateLedger({ path, format: 'xlsx', rows: 60_000, seed: 21 })
    const form = new FormData()
    form.append('file', new Blob([await readFile(path)]), 'slow.xlsx')
    const controller = new AbortController()
    const pending = fetch(`${base}/v1/diagnose-unbalanced`, { method: 'POST', body: form, headers: { 'x-api-key': API_KEY }, signal: controller.signal })
    // Wait until the whole upload is on disk (the task starts right after), then hang up.
    const size = (await stat(path)).size
    await expect.poll(async () => {
      const [entry] = await uploadsLeft()
      return entry === undefined ? -1 : (await stat(join(uploadTmp, entry, 'upload')).catch(() => ({ size: -1 }))).size
    }, { timeout: 5000, interval: 2 }).toBe(size)
    // A thread has the task: the client hangs up while the worker reads.
    await expect.poll(() => pool.threads.length - pool.idleThreads, { interval: 2 }).toBeGreaterThan(0)
    controller.abort()
    await expect(pending).rejects.toThrow()
    await expect.poll(uploadsLeft, { timeout: 5000 }).toEqual([])
    const next = await post('/v1/analyze', {}, { path: files.balanced!, name: 'b.xlsx' })
    expect(next.status).toBe(200)
    expect(logText).toMatch(/"code":"ABORTED"/)
  })

  it('keeps a client\'s plain X-Request-Id and replaces one that could forge log lines', async () => {
    const seen = async (id: string): Promise<string | undefined> => {
      const before = logText.length
      await fetch(`${base}/v1/analyze`, { method: 'POST', headers: { 'x-request-id': id } })
      const lines = logText.slice(before).trim().split('\n').map((l) => JSON.parse(l) as { reqId?: string })
      return lines.find((l) => l.reqId !== undefined)?.reqId
    }
    expect(await seen('client-42.a:b')).toBe('client-42.a:b')
    const forged = await seen('x" "level":60 "msg":"fake')
    expect(forged).toMatch(/^[0-9a-f-]{36}$/)
  })

  it('logs a request id on request lines and never the API key', async () => {
    await post('/v1/analyze', {}, { path: files.balanced!, name: 'b.xlsx' })
    const lines = logText.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>)
    const requestLines = lines.filter((l) => l.req !== undefined || l.res !== undefined)
    expect(requestLines.length).toBeGreaterThan(0)
    for (const l of requestLines) expect(l.reqId).toEqual(expect.any(String))
    expect(logText).not.toContain(API_KEY)
    // Nor the file's contents: the texts of the ledger's cells appear in no log line.
    const texts = new Set<string>()
    await readXlsxFirstSheet(files.ledger!, (row, cells) => {
      if (row > 1) for (const c of cells) if (typeof c === 'string' && c.length >= 8) texts.add(c)
    }, { maxInflatedBytes: 1 << 26 })
    expect(texts.size).toBeGreaterThan(10)
    for (const text of texts) expect(logText).not.toContain(text)
  })
})
