/**
 * The imports screen end to end: Debian's Chromium (headless, playwright-core) against a
 * real import service listening on loopback, on a real PostgreSQL, with ledgers made in the
 * test. A load is held at a row by a lock the test owns (a trigger waits on it), so the page
 * is seen mid-load without any sleep. Every call the page makes must carry the X-API-Key.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { basename, join } from 'node:path'
import type { FastifyInstance } from 'fastify'
import { chromium } from 'playwright-core'
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { holdLoadsAt as holdLoadsAtRow } from '../../fixtures/db/load-gate.js'
import type { LoadGate } from '../../fixtures/db/load-gate.js'
import { freshDatabase } from '../../fixtures/db/test-database.js'
import type { TestDatabase } from '../../fixtures/db/test-database.js'
import { generateLedger } from '../../fixtures/ledger/generate.js'
import type { LedgerFacts } from '../../fixtures/ledger/generate.js'
import { ledgerSheetXml, writeTinyXlsx } from '../../fixtures/tiny-xlsx.js'
import { addCompany } from '../../core/db/companies.js'
import { createPool } from '../../workers/pool.js'
import type { WorkerPool } from '../../workers/pool.js'
import { loadConfig } from '../config.js'
import { buildImportApp } from './app.js'

const API_KEY = 'test-key-imports-page-0123456789'
/** Rows of the balanced ledger; its load is held at GATE_ROW, early: the reader runs some 20,000 rows ahead of the database (buffers), then waits, at about a third of the file. */
const ROWS = 60_000
const GATE_ROW = 1_000

let dir: string
let db: TestDatabase
let app: FastifyInstance
let pool: WorkerPool
let base: string
let browser: Browser
let page: Page
let ledger: string
let facts: LedgerFacts
let unbalanced: string
let unbalancedFacts: LedgerFacts
let invalid: string
/** 300 rows whose ids are the first 300 of `ledger`'s, in another file: refused for overlap. */
let overlapping: string
/** 250 rows, each with a date that does not exist: more rejected cells than the page shows. */
let manyInvalid: string
const problems: string[] = []
const apiCalls: Array<{ url: string, key: string | undefined }> = []

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'razao-imports-ui-'))
  db = await freshDatabase()
  const config = loadConfig({ RAZAO_DATA_DIR: join(dir, 'data'), RAZAO_TMP_DIR: join(dir, 'uploads'), LOG_LEVEL: 'silent' })
  pool = createPool({ maxThreads: 1 })
  app = await buildImportApp({ shared: config.shared, config: config.import, apiKey: API_KEY, pool, database: { url: db.url, pool: db.pool }, logger: false, progressWriteMs: 200 })
  base = await app.listen({ host: '127.0.0.1', port: 0 })
  ledger = join(dir, 'razao-marco.xlsx')
  facts = await generateLedger({ path: ledger, format: 'xlsx', rows: ROWS, seed: 411, firstRowId: 1 })
  unbalanced = join(dir, 'razao-desbalanceado.xlsx')
  unbalancedFacts = await generateLedger({ path: unbalanced, format: 'xlsx', rows: 400, seed: 412, firstRowId: 500_001, unbalancedGroups: 2 })
  overlapping = join(dir, 'razao-marco-parcial.xlsx')
  await generateLedger({ path: overlapping, format: 'xlsx', rows: 300, seed: 413, firstRowId: 1 })
  // A file name with markup in it: shown as text, never parsed.
  invalid = join(dir, 'celulas-<img src=x>-ruins.xlsx')
  await writeTinyXlsx(invalid, { sheet: ledgerSheetXml([
    [1, 10, '01/02/2024', '100,00', ''],
    [2, 10, '31/02/2024', '', '100,00'],
    [3, 11, '01/02/2024', '=HYPERLINK("http://x";"y")', ''],
    [4, 11, '01/02/2024', '', 'um;dois "três"\nquatro'],
    [5, 12, '01/02/2024', '-12,50', ''],
    [6, 12, '01/02/2024', '', '12,50']
  ]) })
  manyInvalid = join(dir, 'datas-ruins.xlsx')
  await writeTinyXlsx(manyInvalid, { sheet: ledgerSheetXml(Array.from({ length: 250 }, (_, i) => [i + 1, i + 1, '30/02/2024', '1,00', '1,00'])) })
  for (const code of ['4521', '4522', '4523', '4524', '4525', '4526']) await addCompany(db.pool, { codigoDominio: code, nome: `Empresa ${code}` })
  browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync']
  })
  page = await browser.newPage()
  page.on('pageerror', (err) => problems.push(`pageerror: ${err.message}`))
  page.on('console', (msg) => { if (msg.type() === 'error') problems.push(`console: ${msg.text()}`) })
  page.on('request', (request) => {
    const path = new URL(request.url()).pathname
    if (path.startsWith('/v1/')) apiCalls.push({ url: `${request.method()} ${path}`, key: request.headers()['x-api-key'] })
  })
}, 180_000)

afterAll(async () => {
  await browser?.close()
  await app?.close()
  await pool?.destroy()
  await db?.drop()
  if (dir !== undefined) await rm(dir, { recursive: true, force: true })
})


/** Started as a client would (the page lists imports; it does not send files to /v1/imports). */
async function startImport (file: string, codigoDominio: string): Promise<string> {
  const form = new FormData()
  form.append('codigo_dominio', codigoDominio)
  form.append('batch_size', '500')
  form.append('file', new Blob([await readFile(file)]), basename(file))
  const res = await fetch(`${base}/v1/imports`, { method: 'POST', body: form, headers: { 'x-api-key': API_KEY } })
  expect(res.status).toBe(202)
  return ((await res.json()) as { importacao_id: string }).importacao_id
}

/** Every load of this file's database held at `row` (fixtures/db/load-gate.ts). */
const holdLoadsAt = async (row: number): Promise<LoadGate> => await holdLoadsAtRow(db.pool, 7317, row)

const card = (id: string) => page.locator(`article[data-id="${id}"]`)
const message = () => page.locator('#message')
/** The bar's value (a progress element's value property reflects its attribute). */
const bar = async (id: string): Promise<number> => Number(await card(id).locator('[data-field=progress]').getAttribute('value'))
const money = (cents: number): string => (cents / 100).toLocaleString('pt-BR', { minimumFractionDigits: 2, maximumFractionDigits: 2 })

describe('imports screen in Chromium', () => {
  it('is served under a policy that forbids inline script and style, and is hidden from /docs', async () => {
    const res = await page.goto(`${base}/imports`)
    expect(res?.status()).toBe(200)
    const csp = res!.headers()['content-security-policy']!
    expect(csp).toContain("script-src 'self';")
    expect(csp).toContain("style-src 'self';")
    expect(csp).toContain("default-src 'none'")
    expect(csp).not.toContain('unsafe-inline')
    // Chromium applies it: a script written into the page does not run.
    await page.evaluate("const s = document.createElement('script'); s.textContent = 'document.body.dataset.inline = 1'; document.body.appendChild(s)")
    expect(await page.evaluate('document.body.dataset.inline')).toBeUndefined()
    const spec = await (await fetch(`${base}/openapi.json`)).json() as { paths: Record<string, unknown> }
    expect(Object.keys(spec.paths).filter((p) => p.startsWith('/imports'))).toEqual([])
  })

  it('loads without the key, refuses a wrong one with a clear message, and keeps the right one for the tab', async () => {
    await page.goto(`${base}/imports`)
    await expect(page.locator('#key-form').isVisible()).resolves.toBe(true)
    await expect(page.locator('#app').isHidden()).resolves.toBe(true)
    await page.fill('#key', 'not-the-import-key')
    await page.click('#key-form button')
    await expect.poll(() => message().textContent()).toMatch(/^Chave recusada: Invalid or missing API key\. Send the key in the X-API-Key header\./)
    await expect(page.locator('#app').isHidden()).resolves.toBe(true)
    expect(await page.evaluate("sessionStorage.getItem('razao-import-api-key')")).toBeNull()
    await page.fill('#key', API_KEY)
    await page.click('#key-form button')
    await page.locator('#app').waitFor({ state: 'visible' })
    await expect.poll(() => page.locator('#empty').isVisible()).toBe(true)
    expect(await page.evaluate("sessionStorage.getItem('razao-import-api-key')")).toBe(API_KEY)
  })

  it('shows a running import\'s progress bar move, without a reload, then its VALIDADO totals', async () => {
    const gate = await holdLoadsAt(GATE_ROW)
    let id: string
    try {
      id = await startImport(ledger, '4521')
      // The page polls: the import appears, and its bar fills while the load is held mid-file.
      await card(id).waitFor()
      await expect.poll(() => gate.waiting(), { timeout: 60_000 }).toBe(1)
      // A poll may first show the load still opening the workbook (lendo, some bytes read): wait
      // for the held state itself, which the page shows at its next poll.
      await expect.poll(async () => await bar(id) > 0 && /^PROCESSANDO · fase: carregando/.test(await card(id).locator('[data-field=status]').textContent() ?? ''), { timeout: 30_000 }).toBe(true)
      const held = await bar(id)
      expect(held).toBeLessThan(100)
      expect(await card(id).locator('[data-field=figures]').textContent()).toMatch(/linhas lidas · .* carregadas · .* linhas\/s/)
    } finally {
      await gate.release()
    }
    // The whole held load took about 2 s here (measured); 60 s only catches a hang.
    await expect.poll(() => card(id).getAttribute('data-status'), { timeout: 60_000 }).toBe('VALIDADO')
    expect(await bar(id)).toBe(100)
    await expect.poll(() => card(id).locator('[data-field=result]').textContent()).toBe(
      `Resultado: ${facts.totalRows.toLocaleString('pt-BR')} linhas · débito ${money(facts.totalDebitCents)} · crédito ${money(facts.totalCreditCents)} · diferença 0,00`)
  }, 120_000)

  it('shows a ledger refused for invalid cells with each cell\'s row and column, as text', async () => {
    const id = await startImport(invalid, '4522')
    await expect.poll(() => card(id).getAttribute('data-status'), { timeout: 30_000 }).toBe('FALHOU')
    await expect.poll(() => card(id).locator('[data-field=error]').textContent()).toMatch(/^LEDGER_INVALID_CELLS — The file has 3 cells that cannot be imported/)
    expect(await card(id).locator('h3').textContent()).toBe('celulas-<img src=x>-ruins.xlsx · empresa 4522 · NORMAL')
    expect(await page.locator('img').count()).toBe(0)
    const cells = card(id).locator('[data-field=cells] tbody tr')
    await expect.poll(() => cells.count()).toBe(3)
    const rows = await Promise.all([0, 1, 2].map(async (i) => (await cells.nth(i).locator('td').allTextContents()).slice(0, 3)))
    expect(rows).toEqual([
      ['3', 'data', '31/02/2024'],
      ['4', 'debito', '=HYPERLINK("http://x";"y")'],
      ['5', 'credito', 'um;dois "três"\nquatro']
    ])
    expect(await card(id).locator('[data-field=cells] tbody tr').first().locator('td').nth(3).textContent()).toMatch(/^INVALID_DATE: /)
    // The CSV is downloaded with the key (a plain link could not send it).
    const [download] = await Promise.all([page.waitForEvent('download'), card(id).locator('button[data-action=download]').click()])
    expect(download.suggestedFilename()).toBe(`importacao-${id}-problemas.csv`)
    const saved = await readFile((await download.path())!)
    expect(saved.subarray(3).toString('utf8').split('\r\n')[1]).toBe('3;data;31/02/2024;INVALID_DATE: The date cannot be read or does not exist: use a date cell, dd/mm/yyyy or yyyy-mm-dd.')
  }, 60_000)

  it('shows the first 200 of 250 rejected cells, in order, and says how many there are', async () => {
    const id = await startImport(manyInvalid, '4524')
    await expect.poll(() => card(id).getAttribute('data-status'), { timeout: 30_000 }).toBe('FALHOU')
    await expect.poll(() => card(id).locator('[data-field=cells] tbody tr').count()).toBe(200)
    expect(await card(id).locator('[data-field=cells] tbody tr td:first-child').allTextContents()).toEqual(Array.from({ length: 200 }, (_, i) => String(i + 2)))
    expect(await card(id).locator('p', { hasText: 'Células inválidas' }).textContent()).toBe('Células inválidas: 250 (as primeiras 200 abaixo). Nada foi gravado.')
  }, 60_000)

  it('shows an unbalanced ledger\'s difference and its groups with their rows, as the job kept them', async () => {
    const id = await startImport(unbalanced, '4523')
    await expect.poll(() => card(id).getAttribute('data-status'), { timeout: 30_000 }).toBe('FALHOU')
    await expect.poll(() => card(id).locator('[data-field=error]').textContent()).toMatch(/^LEDGER_UNBALANCED — The file is not balanced/)
    const groups = card(id).locator('[data-field=diagnosis] .group')
    await expect.poll(() => groups.count(), { timeout: 30_000 }).toBe(unbalancedFacts.unbalancedGroupIds.length)
    for (const groupId of unbalancedFacts.unbalancedGroupIds) {
      const group = card(id).locator(`[data-field=diagnosis] .group[data-group="${groupId}"]`)
      const lines = await group.locator('tbody tr td:first-child').allTextContents()
      expect(lines.map(Number)).toEqual(unbalancedFacts.unbalancedGroupRows[groupId])
    }
    // Nothing to pick: the rows came with the import.
    expect(await card(id).locator('form[data-action=diagnose]').count()).toBe(0)
    await expect(card(id).locator('[data-field=diagnosis]').textContent()).resolves.not.toMatch(/não é o arquivo/)
  }, 60_000)

  it('asks for the file of an unbalanced import that kept no groups (one from before they were kept), and diagnoses it', async () => {
    const id = await startImport(unbalanced, '4525')
    await expect.poll(() => card(id).getAttribute('data-status'), { timeout: 30_000 }).toBe('FALHOU')
    await db.pool.query("UPDATE importacoes SET erro_detalhes = erro_detalhes - 'diagnosis' WHERE id = $1", [id])
    await page.reload()
    await card(id).locator('form[data-action=diagnose] input[type=file]').setInputFiles(unbalanced)
    await card(id).locator('form[data-action=diagnose] button[type=submit]').click()
    const groups = card(id).locator('[data-field=diagnosis] .group')
    await expect.poll(() => groups.count(), { timeout: 30_000 }).toBe(unbalancedFacts.unbalancedGroupIds.length)
    await expect(card(id).locator('[data-field=diagnosis]').textContent()).resolves.not.toMatch(/não é o arquivo/)

    // Another file is diagnosed too, but the page says it is not this import's.
    await card(id).locator('form[data-action=diagnose] input[type=file]').setInputFiles(invalid)
    await card(id).locator('form[data-action=diagnose] button[type=submit]').click()
    await expect.poll(() => card(id).locator('[data-field=diagnosis]').textContent(), { timeout: 30_000 }).toMatch(/não é o arquivo desta importação/)
  }, 60_000)

  it('shows a load refused for overlap with the earlier imports it names', async () => {
    const first = await page.locator('#imports article[data-status=VALIDADO]').getAttribute('data-id')
    const id = await startImport(overlapping, '4521')
    await expect.poll(() => card(id).getAttribute('data-status'), { timeout: 60_000 }).toBe('FALHOU')
    await expect.poll(() => card(id).locator('[data-field=error]').textContent()).toMatch(/^IMPORT_OVERLAP — /)
    const named = card(id).locator('[data-field=overlap] tbody tr')
    await expect.poll(() => named.count()).toBe(1)
    const cells = await named.first().locator('td').allTextContents()
    expect([cells[0], cells[1], cells[3], cells[4], cells[5]]).toEqual([first, 'razao-marco.xlsx', ROWS.toLocaleString('pt-BR'), '300', (ROWS - 300).toLocaleString('pt-BR')])
  }, 90_000)

  it('cancels a running import with two clicks, keeping nothing of it, and filters the list by company and status', async () => {
    const gate = await holdLoadsAt(GATE_ROW)
    let id: string
    try {
      id = await startImport(ledger, '4526')
      await expect.poll(() => gate.waiting(), { timeout: 60_000 }).toBe(1)
      await expect.poll(() => card(id).getAttribute('data-status')).toBe('PROCESSANDO')
      const button = card(id).locator('button[data-action=cancel]')
      await button.click()
      // The first click only asks.
      expect(await button.textContent()).toMatch(/^Confirmar o cancelamento/)
      const { rows } = await db.pool.query<{ asked: boolean }>('SELECT cancelamento_pedido_em IS NOT NULL AS asked FROM importacoes WHERE id = $1', [id])
      expect(rows[0]!.asked).toBe(false)
      await button.click()
      await expect.poll(() => card(id).getAttribute('data-status'), { timeout: 30_000 }).toBe('CANCELADO')
    } finally {
      await gate.release()
    }
    expect(await card(id).locator('button[data-action=cancel]').isHidden()).toBe(true)
    const kept = await db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM movimentos m JOIN importacoes i ON i.seq = m.importacao_seq WHERE i.id = $1', [id])
    expect(kept.rows[0]!.n).toBe(0)

    const listed = async (): Promise<string[]> => await page.locator('#imports article').evaluateAll((as) => as.map((a) => a.getAttribute('data-id') ?? ''))
    await page.locator('#filter-company').fill('4526')
    await page.locator('#filter-status').selectOption('CANCELADO')
    await page.locator('#filter button[type=submit]').click()
    await expect.poll(listed).toEqual([id])
    await page.locator('#filter-status').selectOption('VALIDADO')
    await page.locator('#filter button[type=submit]').click()
    await expect.poll(() => page.locator('#empty').isVisible()).toBe(true)
    expect(await page.locator('#empty').textContent()).toBe('Nenhuma importação com estes filtros.')
    await page.locator('#filter-company').fill('')
    await page.locator('#filter-status').selectOption('')
    await page.locator('#filter button[type=submit]').click()
    await expect.poll(async () => (await listed()).length).toBe(7)
  }, 120_000)

  it('lists newest first, sent the key on every call, and hit no script or policy error beyond the probe', async () => {
    const order = await page.locator('#imports article').evaluateAll((as) => as.map((a) => a.getAttribute('data-status')))
    expect(order).toEqual(['CANCELADO', 'FALHOU', 'FALHOU', 'FALHOU', 'FALHOU', 'FALHOU', 'VALIDADO'])
    expect(apiCalls.length).toBeGreaterThan(5)
    expect(apiCalls.map((c) => c.url)).toEqual(expect.arrayContaining(['GET /v1/imports', 'POST /v1/diagnose-unbalanced']))
    expect(apiCalls.filter((c) => /^DELETE \/v1\/imports\/[0-9a-f-]{36}$/.test(c.url))).toHaveLength(1)
    expect(apiCalls.filter((c) => c.key === undefined)).toEqual([])
    // The wrong key's 401, and the inline script the first test wrote on purpose.
    expect(problems.filter((p) => !/401|Content Security Policy/.test(p))).toEqual([])
    expect(problems.filter((p) => /Content Security Policy/.test(p))).toHaveLength(1)
  })
})
