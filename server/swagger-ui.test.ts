/**
 * /docs (Swagger UI from swagger-ui-dist's files) in Debian's headless Chromium, and
 * /openapi.json checked as an OpenAPI 3 document against what the service really answers.
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

type Schema = { type?: string | string[], required?: string[], properties?: Record<string, Schema>, items?: Schema, enum?: unknown[], additionalProperties?: boolean | Schema, anyOf?: Schema[], oneOf?: Schema[] }

/** The places where `value` breaks `schema` (the JSON Schema keywords our route schemas use). */
function violations (value: unknown, schema: Schema, at = '$'): string[] {
  if (schema.anyOf !== undefined || schema.oneOf !== undefined) {
    const options = schema.anyOf ?? schema.oneOf ?? []
    return options.some((s) => violations(value, s, at).length === 0) ? [] : [`${at}: matches none of its alternatives`]
  }
  const kind = value === null ? 'null' : Array.isArray(value) ? 'array' : Number.isInteger(value) ? 'integer' : typeof value
  const allowed = schema.type === undefined ? undefined : [schema.type].flat()
  if (allowed !== undefined && !allowed.includes(kind) && !(kind === 'integer' && allowed.includes('number'))) return [`${at}: ${kind}, not ${allowed.join('|')}`]
  if (schema.enum !== undefined && !schema.enum.includes(value)) return [`${at}: ${String(value)} not in the enum`]
  const out: string[] = []
  if (kind === 'object') {
    const object = value as Record<string, unknown>
    for (const key of schema.required ?? []) if (!(key in object)) out.push(`${at}.${key}: missing`)
    for (const [key, v] of Object.entries(object)) {
      const property = schema.properties?.[key]
      if (property !== undefined) out.push(...violations(v, property, `${at}.${key}`))
      else if (schema.additionalProperties === false) out.push(`${at}.${key}: not in the schema`)
    }
  }
  if (kind === 'array' && schema.items !== undefined) (value as unknown[]).forEach((v, i) => out.push(...violations(v, schema.items!, `${at}[${i}]`)))
  return out
}

describe('/openapi.json as an OpenAPI 3 document', () => {
  it('is well formed: version, info, unique operation ids, a described answer per status, every secured route on a declared scheme', async () => {
    const doc = await (await fetch(`${base}/openapi.json`)).json() as Record<string, any>
    expect(doc.openapi).toMatch(/^3\.\d+\.\d+$/)
    expect(doc.info).toEqual(expect.objectContaining({ title: expect.any(String), version: '2.0.0' }))
    const ids: string[] = []
    for (const [path, methods] of Object.entries(doc.paths as Record<string, Record<string, any>>)) {
      expect(path).toMatch(/^\//)
      for (const [method, op] of Object.entries(methods)) {
        expect(['get', 'post', 'put', 'delete', 'patch']).toContain(method)
        ids.push(op.operationId)
        expect(Object.keys(op.responses).length).toBeGreaterThan(0)
        for (const [status, response] of Object.entries(op.responses as Record<string, any>)) {
          expect(status).toMatch(/^[1-5]\d\d$/)
          expect(typeof response.description).toBe('string')
          expect(response.content['application/json'].schema).toEqual(expect.objectContaining({ type: 'object' }))
        }
        for (const requirement of op.security) for (const name of Object.keys(requirement)) expect(doc.components.securitySchemes).toHaveProperty(name)
      }
    }
    expect(new Set(ids).size).toBe(ids.length)
    // Every route of the service with a schema is described; the docs pages are not API.
    expect(Object.keys(doc.paths).sort()).toEqual(['/api/v1/diagnostics', '/api/v1/health', '/api/v1/info', '/api/v1/pdf/extract', '/api/v1/pdf/extract-batch', '/openapi.json'])
  })

  it('describes what the service really answers: live answers match the documented response schemas', async () => {
    const doc = await (await fetch(`${base}/openapi.json`)).json() as Record<string, any>
    const schema = (path: string, method: string, status: number): Schema => doc.paths[path][method].responses[String(status)].content['application/json'].schema
    const check = async (path: string, method: string, init: RequestInit = {}): Promise<number> => {
      const res = await fetch(`${base}${path}`, init)
      expect(violations(await res.json(), schema(path, method, res.status)), `${method} ${path} ${res.status}`).toEqual([])
      return res.status
    }
    expect(await check('/api/v1/health', 'get')).toBe(200)
    expect(await check('/api/v1/info', 'get')).toBe(200)
    expect(await check('/api/v1/diagnostics', 'get', { headers: { 'x-api-key': API_KEY } })).toBe(200)
    expect(await check('/api/v1/diagnostics', 'get')).toBe(401)
    const form = new FormData()
    form.append('file', new Blob([Buffer.from('not a pdf at all')], { type: 'application/pdf' }), 'x.pdf')
    expect(await check('/api/v1/pdf/extract', 'post', { method: 'POST', body: form, headers: { 'x-api-key': API_KEY } })).toBe(415)
    const batch = new FormData()
    batch.append('files', new Blob([Buffer.from('not a pdf at all')], { type: 'application/pdf' }), 'x.pdf')
    expect(await check('/api/v1/pdf/extract-batch', 'post', { method: 'POST', body: batch, headers: { 'x-api-key': API_KEY } })).toBe(200)
  })
})
