/**
 * /docs (Swagger UI from swagger-ui-dist's files, server/swagger-ui.ts) in Debian's
 * headless Chromium. The page itself on the extraction service; then, on each of the five
 * services, what a newcomer does: Authorize (the dialog says where the key lives), "Try it
 * out" and "Execute" with the values the page fills in, a sample file picked where the route
 * takes one. server/openapi.test.ts checks the descriptions without a browser.
 */
import { randomBytes } from 'node:crypto'
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { chromium } from 'playwright-core'
import type { Browser, Locator, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { FastifyInstance } from 'fastify'
import { freshDatabase } from '../fixtures/db/test-database.js'
import type { TestDatabase } from '../fixtures/db/test-database.js'
import { generateLedger } from '../fixtures/ledger/generate.js'
import { parseMasterKey } from '../core/gateway/index.js'
import { generateDas } from '../plugins/das/fixtures/generate.js'
import { createPool } from '../workers/pool.js'
import type { WorkerPool } from '../workers/pool.js'
import { buildAgentApp } from './agent/app.js'
import { loadAgentConfig } from './agent/config.js'
import { loadConfig } from './config.js'
import { buildExtractApp } from './extract/app.js'
import { loadExtractConfig } from './extract/config.js'
import { buildGatewayApp } from './gateway/app.js'
import { loadGatewayConfig } from './gateway/config.js'
import { buildImportApp } from './import/app.js'
import { buildSignApp } from './sign/app.js'
import { loadSignConfig } from './sign/config.js'

const API_KEY = 'swagger-test-key-0123456789abcdef'
let dir: string
let pool: WorkerPool
let db: TestDatabase
const apps = new Map<string, FastifyInstance>()
const bases = new Map<string, string>()
let base: string
let browser: Browser
let ledger: string
let das: string

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'razao-docs-'))
  await mkdir(join(dir, 'samples'))
  const config = loadConfig({ RAZAO_DATA_DIR: join(dir, 'data'), RAZAO_TMP_DIR: join(dir, 'uploads'), LOG_LEVEL: 'silent' })
  const shared = config.shared
  pool = createPool({ maxThreads: 1 })
  db = await freshDatabase()
  apps.set('import', await buildImportApp({ shared, config: config.import, apiKey: API_KEY, pool, logger: false }))
  apps.set('sign', await buildSignApp({ shared, config: loadSignConfig({}, shared), apiKey: API_KEY, pool, logger: false }))
  apps.set('extract', await buildExtractApp({ shared, config: loadExtractConfig({}), apiKey: API_KEY, pool, logger: false }))
  apps.set('gateway', await buildGatewayApp({
    shared, config: loadGatewayConfig({}, shared), adminToken: API_KEY, masterKey: parseMasterKey(randomBytes(32).toString('hex'))!, database: { pool: db.pool }, logger: false
  }))
  // The packages we ship (AUTOMATIONS_ROOT's default off Windows): the examples name one.
  const agentConfig = loadAgentConfig({ AGENT_API_KEY: API_KEY }, dir)
  apps.set('agent', await buildAgentApp({ shared, config: agentConfig, apiKey: agentConfig.apiKey, logger: false, env: { PATH: process.env.PATH ?? '' } }))
  for (const [name, app] of apps) bases.set(name, await app.listen({ host: '127.0.0.1', port: 0 }))
  base = bases.get('extract')!
  // What `razao samples` writes, smaller: a ledger and a DAS.
  ledger = join(dir, 'samples', 'razao-2024-03.xlsx')
  await generateLedger({ path: ledger, format: 'xlsx', rows: 300, seed: 36 })
  das = join(dir, 'samples', 'DAS.pdf')
  await writeFile(das, (await generateDas({ seed: 2024 })).pdf)
  browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync']
  })
}, 120_000)

afterAll(async () => {
  await browser?.close()
  for (const app of apps.values()) await app.close()
  await pool?.destroy()
  await db?.drop()
  await rm(dir, { recursive: true, force: true })
})

const packageDir = (): string => join(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'), '..')

/** The operation block of `method path`, opened. */
async function operation (page: Page, method: string, path: string): Promise<Locator> {
  const block = page.locator(`.opblock-${method}`, { has: page.locator('.opblock-summary-path', { hasText: new RegExp(`^${path.replace(/[{}]/g, '\\$&')}$`) }) })
  await block.locator('.opblock-summary').click()
  return block
}

/** Clicks Execute and waits for the answer the page shows: its status and body text. */
async function execute (block: Locator): Promise<{ status: number, body: string }> {
  await block.locator('button.execute').click()
  const status = block.locator('.live-responses-table tbody .response-col_status').first()
  // Signing and extraction run in a thread; measured 1-3 s here, 60 s only catches a hang.
  await status.waitFor({ timeout: 60_000 })
  return { status: Number((await status.innerText()).trim().slice(0, 3)), body: await block.locator('.live-responses-table tbody .microlight').first().innerText() }
}

describe('/docs in headless Chromium', () => {
  it('renders every operation from /openapi.json, with no request leaving loopback and no CSP violation', async () => {
    const context = await browser.newContext()
    const page = await context.newPage()
    const requests: string[] = []
    const problems: string[] = []
    page.on('request', (r) => { requests.push(r.url()) })
    page.on('console', (m) => { if (m.type() === 'error') problems.push(m.text()) })
    page.on('pageerror', (e) => { problems.push(e.message) })
    try {
      const answer = await page.goto(`${base}/docs`)
      expect(answer?.status()).toBe(200)
      await page.locator('.opblock-summary-path', { hasText: '/api/v1/pdf/extract-batch' }).waitFor({ timeout: 20_000 })
      const paths = await page.locator('.opblock-summary-path').allInnerTexts()
      expect(paths.map((p) => p.replace(/\u200b/g, '').trim()).sort()).toEqual(['/api/v1/diagnostics', '/api/v1/health', '/api/v1/info', '/api/v1/pdf/extract', '/api/v1/pdf/extract-batch', '/openapi.json'])
      // The API key scheme is offered (the Authorize button), the title and version are ours.
      await expect(page.locator('button.authorize').count()).resolves.toBe(1)
      expect(await page.locator('.info .title').innerText()).toMatch(/razao document-extraction service\s*2\.0\.0/)
      // Swagger UI found nothing wrong in the description.
      await expect(page.locator('.errors-wrapper').count()).resolves.toBe(0)
      expect(problems).toEqual([])
      const origins = new Set(requests.map((u) => new URL(u).origin))
      expect([...origins]).toEqual([base])
      expect(requests).toEqual(expect.arrayContaining([`${base}/openapi.json`, `${base}/docs/swagger-ui-bundle.js`, `${base}/docs/swagger-initializer.js`]))
    } finally {
      await context.close()
    }
  }, 60_000)

  it('runs "Try it out" against the service: a public route answers in the page', async () => {
    const context = await browser.newContext()
    const page = await context.newPage()
    try {
      await page.goto(`${base}/docs`)
      const health = page.locator('.opblock', { has: page.locator('.opblock-summary-path', { hasText: '/api/v1/health' }) })
      await health.locator('.opblock-summary').click()
      await health.locator('button.try-out__btn').click()
      await health.locator('button.execute').click()
      await health.locator('.live-responses-table tbody .response-col_status').first().waitFor({ timeout: 20_000 })
      expect(await health.locator('.live-responses-table tbody .response-col_status').first().innerText()).toContain('200')
      expect(await health.locator('.live-responses-table tbody .microlight').first().innerText()).toContain('"status": "UP"')
    } finally {
      await context.close()
    }
  }, 60_000)
})

/** Each service's scheme, the key file and variable its Authorize dialog names, and the route tried. */
const TRIES = [
  { service: 'import', header: 'X-API-Key', file: '.data/import-api-key', variable: 'IMPORT_API_KEY', method: 'post', path: '/v1/analyze', upload: () => ledger, expected: 200, shows: '"total_rows": 300' },
  { service: 'sign', header: 'X-API-Key', file: '.data/sign-api-key', variable: 'SIGN_API_KEY', method: 'post', path: '/api/v1/sign', expected: 200, shows: '"signedFileName": "contrato_assinado.pdf"' },
  { service: 'extract', header: 'X-API-Key', file: '.data/extract-api-key', variable: 'EXTRACT_API_KEY', method: 'post', path: '/api/v1/pdf/extract', upload: () => das, expected: 200, shows: '"documentType": "DAS"' },
  { service: 'gateway', header: 'Authorization', file: '.data/gateway-admin-api-key', variable: 'GATEWAY_ADMIN_TOKEN', method: 'post', path: '/admin/empresas', expected: 201, shows: '"cnpj": "11222333000181"' },
  { service: 'agent', header: 'X-AGENT-API-KEY', file: '.data/agent-api-key', variable: 'AGENT_API_KEY', method: 'get', path: '/api/v1/automations/{id}', expected: 200, shows: '"id": "dec-issqn-poa"' }
] as const

describe('/docs works with what it shows, on every service', () => {
  it.each(TRIES)('$service: Authorize names $header and $file, and "Try it out" + "Execute" on $path with the filled-in values answers $expected', async (t) => {
    const context = await browser.newContext()
    const page = await context.newPage()
    const problems: string[] = []
    page.on('pageerror', (e) => { problems.push(e.message) })
    try {
      await page.goto(`${bases.get(t.service)!}/docs`)
      await page.locator('button.authorize').click()
      const dialog = page.locator('.dialog-ux .modal-ux')
      // The gateway's dialog holds two schemes: the admin token's is the one for /admin.
      const scheme = dialog.locator('.auth-container', { hasText: t.file })
      await scheme.waitFor()
      await expect(scheme.count()).resolves.toBe(1)
      const text = await scheme.innerText()
      expect(text).toContain(t.header)
      expect(text).toContain(t.variable)
      await scheme.locator('input').first().fill(API_KEY)
      await scheme.locator('button.authorize').click()
      await dialog.locator('button.btn-done').first().click()

      const block = await operation(page, t.method, t.path)
      await block.locator('button.try-out__btn').click()
      if ('upload' in t) await block.locator('input[type=file]').first().setInputFiles(t.upload())
      const answer = await execute(block)
      expect(answer.status, answer.body.slice(0, 500)).toBe(t.expected)
      expect(answer.body).toContain(t.shows)
      expect(problems).toEqual([])
    } finally {
      await context.close()
    }
  }, 120_000)

  it('offers a file picker for every file field of every multipart route', async () => {
    const context = await browser.newContext()
    const page = await context.newPage()
    try {
      let pickers = 0
      for (const [service, url] of bases) {
        const doc = await (await fetch(`${url}/openapi.json`)).json() as { paths: Record<string, Record<string, { requestBody?: { content: Record<string, { schema: { properties: Record<string, { format?: string, items?: { format?: string } }> } }> } }>> }
        const forms = Object.entries(doc.paths).flatMap(([path, methods]) => Object.entries(methods)
          .flatMap(([method, op]) => {
            const form = op.requestBody?.content['multipart/form-data']?.schema.properties
            if (form === undefined) return []
            const files = Object.entries(form).filter(([, f]) => f.format === 'binary' || f.items?.format === 'binary').map(([name]) => name)
            return [{ method, path, files }]
          }))
        if (forms.length === 0) continue
        await page.goto(`${url}/docs`)
        for (const form of forms) {
          const block = await operation(page, form.method, form.path)
          await block.locator('button.try-out__btn').click()
          for (const name of form.files) {
            const row = block.locator('.parameters tr, .opblock-section-request-body tr', { has: page.locator('.parameter__name', { hasText: new RegExp(`^${name}\\b`) }) })
            // Waits for the form Swagger UI renders after "Try it out"; a field with no picker never gets one.
            await row.locator('input').first().waitFor()
            await expect(row.locator('input[type=file]').count(), `${service} ${form.method} ${form.path} ${name}`).resolves.toBeGreaterThanOrEqual(1)
            pickers++
          }
        }
      }
      // import: analyze, diagnose-unbalanced, process, imports; extract: extract, extract-batch.
      expect(pickers).toBeGreaterThanOrEqual(6)
    } finally {
      await context.close()
    }
  }, 120_000)
})

describe('/docs over HTTP', () => {
  it('serves the page with a same-origin script policy and the package\'s files byte for byte, typed and cacheable', async () => {
    const html = await fetch(`${base}/docs`)
    expect(html.headers.get('content-type')).toBe('text/html; charset=utf-8')
    expect(html.headers.get('content-security-policy')).toContain("script-src 'self'")
    expect(await html.text()).not.toMatch(/<script>|<script [^>]*>[^<]/)
    const types: Record<string, string> = {
      'swagger-ui.css': 'text/css; charset=utf-8',
      'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
      'swagger-ui-standalone-preset.js': 'text/javascript; charset=utf-8',
      'favicon-32x32.png': 'image/png'
    }
    for (const [name, type] of Object.entries(types)) {
      const res = await fetch(`${base}/docs/${name}`)
      expect(res.status).toBe(200)
      expect(res.headers.get('content-type')).toBe(type)
      expect(res.headers.get('cache-control')).toBe('public, max-age=86400')
      expect(res.headers.get('x-content-type-options')).toBe('nosniff')
      expect(Buffer.from(await res.arrayBuffer()).equals(await readFile(join(packageDir(), name)))).toBe(true)
      const again = await fetch(`${base}/docs/${name}`, { headers: { 'if-none-match': res.headers.get('etag')! } })
      expect(again.status).toBe(304)
    }
    const init = await (await fetch(`${base}/docs/swagger-initializer.js`)).text()
    expect(init).toContain('"/openapi.json"')
    expect(init).toContain('validatorUrl: null')
  })

  it('serves nothing else of the package or the disk: no listing, no traversal, the service\'s 404', async () => {
    for (const path of ['/docs/', '/docs/index.html', '/docs/package.json', '/docs/swagger-ui-bundle.js.map', '/docs/..%2Fpackage.json', '/docs/%2e%2e%2f%2e%2e%2fpackage.json', '/docs/..%2F..%2F..%2Fetc%2Fpasswd', '/docs/../package.json']) {
      const res = await fetch(`${base}${path}`)
      expect(res.status, path).toBe(404)
      expect(await res.json(), path).toMatchObject({ success: false, errors: [expect.objectContaining({ code: 'NOT_FOUND' })] })
    }
  })

  it('keeps the plain list of operations at /docs/plain, for readers without JavaScript', async () => {
    const res = await fetch(`${base}/docs/plain`)
    expect(res.headers.get('content-type')).toMatch(/^text\/html/)
    const html = await res.text()
    for (const op of ['POST /api/v1/pdf/extract-batch', 'GET /api/v1/diagnostics']) expect(html).toContain(op)
  })
})
