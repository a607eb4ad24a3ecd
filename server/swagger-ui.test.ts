/**
 * /docs (Swagger UI from swagger-ui-dist's files, server/swagger-ui.ts) in Debian's
 * headless Chromium, on the extraction service; every service serves the same page
 * (server/openapi.test.ts checks that each does).
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { chromium } from 'playwright-core'
import type { Browser } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { FastifyInstance } from 'fastify'
import { createPool } from '../workers/pool.js'
import type { WorkerPool } from '../workers/pool.js'
import { loadConfig } from './config.js'
import { buildExtractApp } from './extract/app.js'
import { loadExtractConfig } from './extract/config.js'

const API_KEY = 'swagger-test-key-0123456789'
let dir: string
let pool: WorkerPool
let app: FastifyInstance
let base: string
let browser: Browser

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'razao-extract-docs-'))
  const config = loadConfig({ RAZAO_DATA_DIR: join(dir, 'data'), RAZAO_TMP_DIR: join(dir, 'uploads'), LOG_LEVEL: 'silent' })
  pool = createPool({ maxThreads: 1 })
  app = await buildExtractApp({ shared: config.shared, config: loadExtractConfig({}), apiKey: API_KEY, pool, logger: false })
  base = await app.listen({ host: '127.0.0.1', port: 0 })
  browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync']
  })
}, 60_000)

afterAll(async () => {
  await browser?.close()
  await app?.close()
  await pool?.destroy()
  await rm(dir, { recursive: true, force: true })
})

const packageDir = (): string => join(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'), '..')

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
