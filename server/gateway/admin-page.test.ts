/**
 * The administration screen end to end: Debian's Chromium (headless, playwright-core)
 * against a real gateway listening on loopback, on a real PostgreSQL, with certificates
 * made in the test. Every call the page makes must carry the Bearer token.
 */
import { createHash, randomBytes } from 'node:crypto'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { FastifyInstance } from 'fastify'
import { chromium } from 'playwright-core'
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freshDatabase } from '../../fixtures/db/test-database.js'
import type { TestDatabase } from '../../fixtures/db/test-database.js'
import { WebhookDelivery, ensureApiKey, openNfeDocument, parseMasterKey, storeDocuments } from '../../core/gateway/index.js'
import { makeNfeDocuments } from '../../fixtures/gateway/documents.js'
import { createDevChain } from '../../core/sign/index.js'
import { loadConfig } from '../config.js'
import { buildGatewayApp } from './app.js'
import { loadGatewayConfig } from './config.js'

const ADMIN = `admin-${randomBytes(16).toString('hex')}`
const MASTER = parseMasterKey(randomBytes(32).toString('hex'))!
let db: TestDatabase
let delivery: WebhookDelivery | undefined
let app: FastifyInstance
let browser: Browser
let page: Page
let base: string
let dir: string
const problems: string[] = []
const adminCalls: Array<{ url: string, authorization: string | undefined }> = []

beforeAll(async () => {
  db = await freshDatabase()
  await ensureApiKey(db.pool, `first-${randomBytes(16).toString('hex')}`)
  const shared = loadConfig({}).shared
  app = await buildGatewayApp({
    shared, config: loadGatewayConfig({ GATEWAY_EVENTS_POLL_MS: '300' }, shared), adminToken: ADMIN, masterKey: MASTER, database: { pool: db.pool }, logger: false
  })
  base = await app.listen({ host: '127.0.0.1', port: 0 })
  dir = await mkdtemp(join(tmpdir(), 'razao-gateway-ui-'))
  browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync']
  })
  page = await browser.newPage()
  page.on('pageerror', (err) => problems.push(`pageerror: ${err.message}`))
  page.on('console', (msg) => { if (msg.type() === 'error') problems.push(`console: ${msg.text()}`) })
  page.on('dialog', (dialog) => { void dialog.accept() })
  page.on('request', (request) => {
    const path = new URL(request.url()).pathname
    if (path.startsWith('/admin/')) adminCalls.push({ url: `${request.method()} ${path}`, authorization: request.headers().authorization })
  })
})

afterAll(async () => {
  await delivery?.stop()
  await browser?.close()
  await app?.close()
  await db?.drop()
  if (dir !== undefined) await rm(dir, { recursive: true, force: true })
})

const row = (razao: string) => page.locator('#companies tbody tr', { hasText: razao })
const message = () => page.locator('#message')

async function addCompany (fields: { razao: string, cnpj: string, matriz?: string, herda?: boolean }): Promise<void> {
  await page.fill('#company-form [name=razao_social]', fields.razao)
  await page.fill('#company-form [name=cnpj]', fields.cnpj)
  if (fields.matriz !== undefined) await page.selectOption('#company-form [name=matriz_empresa_codigo]', fields.matriz)
  if (fields.herda === true) await page.check('#company-form [name=herda_certificado_matriz]')
  await page.click('#company-form button[type=submit]')
  await row(fields.razao).waitFor()
}

async function codeOf (razao: string): Promise<string> {
  return (await row(razao).getAttribute('data-empresa-codigo'))!
}

describe('admin screen in Chromium', () => {
  it('loads without the token, refuses a wrong one, and keeps the right one for the tab', async () => {
    const res = await page.goto(`${base}/admin`)
    expect(res?.status()).toBe(200)
    await expect(page.locator('#token-form').isVisible()).resolves.toBe(true)
    await expect(page.locator('#app').isHidden()).resolves.toBe(true)
    // Where the token is: the file a first start writes, or the variable that replaces it.
    const hint = await page.locator('#login').innerText()
    expect(hint).toContain('.data/gateway-admin-api-key')
    expect(hint).toContain('GATEWAY_ADMIN_TOKEN')
    await page.fill('#token', 'not-the-admin-token')
    await page.click('#token-form button')
    await expect.poll(() => message().textContent()).toMatch(/^Token recusado\. Use o conteúdo de \.data\/gateway-admin-api-key/)
    // In Portuguese: the service's English sentence is only in the tooltip.
    expect(await message().textContent()).not.toMatch(/Invalid|missing|admin token/)
    expect(await message().getAttribute('title')).toMatch(/^Resposta do serviço: /)
    await expect(page.locator('#app').isHidden()).resolves.toBe(true)
    await page.fill('#token', ADMIN)
    await page.click('#token-form button')
    await page.locator('#app').waitFor({ state: 'visible' })
    expect(await page.evaluate("sessionStorage.getItem('razao-gateway-admin-token')")).toBe(ADMIN)
  })

  it('adds companies (alphanumeric CNPJ, head office, inheriting branch) and edits one', async () => {
    // A new company is active: the form does not offer "Ativa" (it showed, and was ignored).
    await expect(page.locator('#company-form [name=ativo]').isVisible()).resolves.toBe(false)
    await addCompany({ razao: 'Alfa Nova Ltda', cnpj: '12.abc.345/01de-35' })
    await expect.poll(() => row('Alfa Nova Ltda').locator('[data-field=cnpj]').textContent()).toBe('12.ABC.345/01DE-35')
    await expect.poll(() => row('Alfa Nova Ltda').locator('[data-field=certificado_status]').textContent()).toBe('AUSENTE')
    await addCompany({ razao: 'Matriz Teste SA', cnpj: '11.222.333/0001-81' })
    const matriz = await codeOf('Matriz Teste SA')
    await addCompany({ razao: 'Filial Teste', cnpj: '11.222.333/0002-62', matriz, herda: true })
    await expect.poll(() => row('Filial Teste').locator('td').nth(4).textContent()).toBe(`${matriz} (herda certificado)`)

    await page.fill('#company-form [name=cnpj]', '11.222.333/0001-82')
    await page.fill('#company-form [name=razao_social]', 'Com CNPJ errado')
    await page.click('#company-form button[type=submit]')
    await expect.poll(() => message().textContent()).toMatch(/^CNPJ inválido: são 14 caracteres/)
    expect(await message().getAttribute('title')).toMatch(/not a valid CNPJ/)
    await page.click('#company-cancel')
    await page.fill('#company-form [name=razao_social]', 'Outra Matriz')
    await page.fill('#company-form [name=cnpj]', '11.222.333/0001-81')
    await page.click('#company-form button[type=submit]')
    await expect.poll(() => message().textContent()).toMatch(/^Já existe uma empresa ativa com este CNPJ \(EMP[0-9A-F]+\)/)
    await page.click('#company-cancel')

    await row('Alfa Nova Ltda').locator('button[data-action=edit]').click()
    await expect(page.locator('#company-form [name=cnpj]').inputValue()).resolves.toBe('12.ABC.345/01DE-35')
    await expect(page.locator('#company-form [name=ativo]').isVisible()).resolves.toBe(true)
    await page.fill('#company-form [name=razao_social]', 'Alfa Nova Comércio Ltda')
    await page.click('#company-form button[type=submit]')
    await row('Alfa Nova Comércio Ltda').waitFor()
    await expect.poll(() => message().textContent()).toMatch(/Empresa atualizada/)
    await expect(page.locator('#company-form [name=ativo]').isVisible()).resolves.toBe(false)
  })

  it('finds a company by any word of its name (accents and case aside), its codes or its CNPJ, with or without punctuation', async () => {
    const visible = async (): Promise<string[]> => (await page.locator('#companies tbody tr:visible td:first-child').allTextContents()).sort()
    const search = async (text: string): Promise<void> => { await page.fill('#search', text) }
    await search('comercio')
    await expect.poll(visible).toEqual(['Alfa Nova Comércio Ltda'])
    await search('11222333')
    await expect.poll(visible).toEqual(['Filial Teste', 'Matriz Teste SA'])
    await search('11.222.333/0002-62')
    await expect.poll(visible).toEqual(['Filial Teste'])
    await expect.poll(() => page.locator('#search-count').textContent()).toBe('1 de 3 empresas')
    // The feed panel follows the same search: the branch's NF-e and NFS-e rows.
    expect(await page.locator('#feeds tbody tr:visible td:first-child').allTextContents()).toEqual(['Filial Teste', 'Filial Teste'])
    await search(await codeOf('Matriz Teste SA'))
    await expect.poll(visible).toEqual(['Matriz Teste SA'])
    await search('TESTE sa')
    await expect.poll(visible).toEqual(['Matriz Teste SA'])
    await search('padaria')
    await expect.poll(visible).toEqual([])
    await expect.poll(() => page.locator('#search-count').textContent()).toBe('Nenhuma empresa encontrada.')
    await search('')
    await expect.poll(visible).toEqual(['Alfa Nova Comércio Ltda', 'Filial Teste', 'Matriz Teste SA'])
    await expect.poll(() => page.locator('#search-count').textContent()).toBe('')
  })

  it('uploads a certificate from a file; the branch shows it inherited; removes it', async () => {
    const chain = createDevChain({ document: '11222333000181', password: 'senha-do-arquivo' })
    const file = join(dir, 'matriz.pfx')
    await writeFile(file, chain.pkcs12)
    await page.selectOption('#cert-form [name=empresa_codigo]', await codeOf('Matriz Teste SA'))
    await page.setInputFiles('#cert-form [name=pfx]', file)
    await page.fill('#cert-form [name=senha]', 'senha-errada')
    await page.click('#cert-form button[type=submit]')
    // The gateway opens a certificate in a thread of its own (seconds on a loaded machine).
    await expect.poll(() => message().textContent(), { timeout: 30_000 }).toBe('O certificado não abriu com esta senha.')
    await page.fill('#cert-form [name=senha]', 'senha-do-arquivo')
    await page.click('#cert-form button[type=submit]')
    await expect.poll(() => message().textContent(), { timeout: 30_000 }).toMatch(/Certificado de 11\.222\.333\/0001-81 guardado/)
    await expect.poll(() => row('Matriz Teste SA').locator('[data-field=certificado_status]').textContent()).toBe('VALIDO')
    const days = Number(await row('Matriz Teste SA').locator('[data-field=days_to_expiry]').textContent())
    expect(days).toBeGreaterThanOrEqual(363)
    expect(days).toBeLessThanOrEqual(365)
    await expect.poll(() => row('Filial Teste').locator('[data-field=certificado_status]').textContent()).toBe('VALIDO (matriz)')
    const { rows } = await db.pool.query('SELECT cnpj FROM certificados')
    expect(rows).toEqual([{ cnpj: '11222333000181' }])

    await row('Matriz Teste SA').locator('button[data-action=remove-cert]').click()
    await expect.poll(() => message().textContent()).toMatch(/Certificado removido/)
    await expect.poll(() => row('Matriz Teste SA').locator('[data-field=certificado_status]').textContent()).toBe('AUSENTE')
    await expect.poll(() => row('Filial Teste').locator('[data-field=certificado_status]').textContent()).toBe('AUSENTE')
  })

  it('shows each company\'s feed, turns it on and off, follows the scheduler and the documents live, and manages the webhooks and their log', async () => {
    const matriz = await codeOf('Matriz Teste SA')
    const feedRow = page.locator(`#feeds tr[data-empresa-codigo="${matriz}"][data-servico="nfe"]`)
    const field = (name: string) => feedRow.locator(`[data-field=${name}]`)
    await expect.poll(() => field('ativo').textContent()).toBe('desligada Ligar')
    await expect.poll(() => page.locator('#live-status').textContent()).toBe('ao vivo')
    await field('ativo').locator('button').click()
    await expect.poll(() => field('ativo').textContent()).toBe('ligada Desligar')
    expect(await message().textContent()).toBe('Distribuição NF-e de Matriz Teste SA ligada.')
    expect((await db.pool.query('SELECT ativo FROM feed_empresas')).rows).toEqual([{ ativo: true }])
    expect(await field('proxima_consulta').getAttribute('data-iso')).toMatch(/^\d{4}-\d\d-\d\dT/)
    // The automatic Ciência, NF-e only.
    expect(await field('ciencia_automatica').textContent()).toBe('desligada Ligar')
    await field('ciencia_automatica').locator('button').click()
    await expect.poll(() => field('ciencia_automatica').textContent()).toBe('ligada Desligar')
    expect(await message().textContent()).toBe('Ciência automática de Matriz Teste SA ligada.')
    expect((await db.pool.query('SELECT ativo, ciencia_automatica FROM feed_empresas')).rows).toEqual([{ ativo: true, ciencia_automatica: true }])
    expect(await page.locator(`#feeds tr[data-empresa-codigo="${matriz}"][data-servico="adn"] [data-field=ciencia_automatica]`).textContent()).toBe('—')

    // The scheduler (another instance: an SQL update here) moves the cursor and records a refusal.
    await db.pool.query("UPDATE feed_empresas SET ult_nsu = 123, max_nsu = 456, ultimo_cstat = '656', ultimo_erro_codigo = '656', ultimo_erro = 'Consumo indevido', ultimo_erro_em = now()")
    await expect.poll(() => field('ult_nsu').textContent()).toBe('123')
    expect(await field('max_nsu').textContent()).toBe('456')
    expect(await field('ultimo_erro').textContent()).toMatch(/^656: Consumo indevido \(/)

    // A webhook for the company (its receiver is down: the log shows why it gave up).
    await page.fill('#webhook-form [name=url]', 'http://127.0.0.1:9/nada')
    await page.selectOption('#webhook-form [name=empresa_codigo]', matriz)
    await page.click('#webhook-form button[type=submit]')
    await page.locator('#webhook-secret-box').waitFor({ state: 'visible' })
    const secret = (await page.locator('#webhook-secret').textContent())!
    expect(secret).toMatch(/^[A-Za-z0-9_-]{43}$/)
    await expect.poll(() => page.locator('#webhooks tbody tr').first().locator('td').nth(2).textContent()).toBe(`…${secret.slice(-4)}`)
    delivery = new WebhookDelivery({ pool: db.pool, masterKey: MASTER, retryLimit: 0, retryDelaySeconds: 1, timeoutMs: 2000, concurrency: 2, pollMs: 500, keepDays: 7, log: { warn: () => undefined } })
    await delivery.start()

    // Two documents kept for the company: the counts follow without a reload.
    const docs = makeNfeDocuments('11222333000181', 1, 2).map((d) => ({ nsu: d.nsu, esquema: d.schema.split('_v')[0]!, opened: openNfeDocument(d.docZip, d.schema) }))
    await storeDocuments(db.pool, '11222333000181', docs)
    await expect.poll(() => field('por_tipo').textContent()).toBe('procNFe: 1 · resNFe: 1')
    expect(await field('por_situacao').textContent()).toBe('autorizada: 2')
    await expect.poll(async () => {
      await page.click('#deliveries-refresh')
      return await page.locator('#deliveries [data-field=status]').allTextContents()
    }).toEqual(['falhou (desistiu)', 'falhou (desistiu)'])
    expect(await page.locator('#deliveries tbody tr').first().textContent()).toMatch(/Connection refused: nothing listens at that address\. Gave up after 1 attempt\(s\)\./)

    await field('ativo').locator('button').click()
    await expect.poll(() => field('ativo').textContent()).toBe('desligada Ligar')
    // The secret shows once, in its box; the list has only its hint.
    expect(await page.locator('#webhooks').textContent()).not.toContain(secret)
    await page.locator('#webhooks button[data-action=pause-webhook]').click()
    await expect.poll(() => page.locator('#webhooks [data-field=ativo]').textContent()).toBe('pausado')
    expect((await db.pool.query('SELECT ativo FROM webhook_endpoints')).rows).toEqual([{ ativo: false }])
    await page.locator('#webhooks button[data-action=remove-webhook]').click()
    await expect.poll(() => page.locator('#webhooks tbody tr').count()).toBe(0)
  })

  it('deactivates a company and rotates the key, showing the new key once', async () => {
    await row('Filial Teste').locator('button[data-action=deactivate]').click()
    await expect.poll(() => row('Filial Teste').locator('td').nth(5).textContent()).toBe('não')
    // "Ativa", when editing, is sent and kept: the branch comes back.
    await row('Filial Teste').locator('button[data-action=edit]').click()
    await expect(page.locator('#company-form [name=ativo]').isChecked()).resolves.toBe(false)
    await page.check('#company-form [name=ativo]')
    await page.click('#company-form button[type=submit]')
    await expect.poll(() => row('Filial Teste').locator('td').nth(5).textContent()).toBe('sim')
    await row('Filial Teste').locator('button[data-action=deactivate]').click()
    await expect.poll(() => row('Filial Teste').locator('td').nth(5).textContent()).toBe('não')

    await page.click('#rotate')
    await page.locator('#new-key-box').waitFor({ state: 'visible' })
    const key = (await page.locator('#new-key').textContent())!
    expect(key).toMatch(/^[A-Za-z0-9_-]{43}$/)
    const { rows } = await db.pool.query<{ sha256: string }>('SELECT sha256 FROM chaves_api')
    expect(rows[0]!.sha256).toBe(createHash('sha256').update(key).digest('hex'))

    // Shown once: after a reload the tab is still signed in, and the key is gone from the page.
    await page.reload()
    await page.locator('#app').waitFor({ state: 'visible' })
    await expect(page.locator('#new-key-box').isHidden()).resolves.toBe(true)
    expect(await page.content()).not.toContain(key)
    await page.click('#logout')
    await expect(page.locator('#token-form').isVisible()).resolves.toBe(true)
    expect(await page.evaluate("sessionStorage.getItem('razao-gateway-admin-token')")).toBeNull()
  })

  it('sent the Bearer token on every admin call and hit no script or policy error', () => {
    const calls = adminCalls.filter((c) => !c.url.startsWith('GET /admin-ui/'))
    expect(calls.length).toBeGreaterThan(10)
    expect(calls.map((c) => c.url)).toEqual(expect.arrayContaining(['POST /admin/empresas', 'POST /admin/certificados', 'POST /admin/api-key/rotate']))
    // The event stream is the one call without it: EventSource sends the session cookie that
    // POST /admin/eventos/sessao (with the token) set.
    expect(calls.map((c) => c.url)).toEqual(expect.arrayContaining(['POST /admin/eventos/sessao', 'GET /admin/eventos']))
    expect(calls.filter((c) => c.url !== 'GET /admin/eventos' && (c.authorization === undefined || !c.authorization.startsWith('Bearer ')))).toEqual([])
    expect(problems.filter((p) => !/401|422|409|400/.test(p))).toEqual([])
  })
})
