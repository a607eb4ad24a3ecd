/**
 * The five services describe themselves: each serves /openapi.json (OpenAPI 3.1) and
 * /docs without credentials, and every route it registers (pages aside) is in the
 * description with its answers: a success, the failures of its credential, a sentence
 * for each status. That the answers match these schemas is checked on every answer of
 * the app tests (fixtures/http/response-schemas.ts).
 */
import { randomBytes } from 'node:crypto'
import { subscribe, unsubscribe } from 'node:diagnostics_channel'
import { mkdir, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { FastifyInstance, RouteOptions } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freshDatabase } from '../fixtures/db/test-database.js'
import type { TestDatabase } from '../fixtures/db/test-database.js'
import { parseMasterKey } from '../core/gateway/index.js'
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

const KEY = 'openapi-test-key-0123456789abcdef'
let dir: string
let pool: WorkerPool
let db: TestDatabase
const apps = new Map<string, FastifyInstance>()
/** Every route each app registered, as Fastify saw it. */
const routes = new Map<FastifyInstance, RouteOptions[]>()

const onInit = (message: unknown): void => {
  const app = (message as { fastify: FastifyInstance }).fastify
  const list: RouteOptions[] = []
  routes.set(app, list)
  app.addHook('onRoute', (route) => { list.push(route) })
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'razao-openapi-'))
  await mkdir(join(dir, 'automations'))
  const config = loadConfig({ RAZAO_DATA_DIR: join(dir, 'data'), RAZAO_TMP_DIR: join(dir, 'uploads'), LOG_LEVEL: 'silent' })
  const shared = config.shared
  pool = createPool({ maxThreads: 1 })
  db = await freshDatabase()
  subscribe('fastify.initialization', onInit)
  try {
    apps.set('import', await buildImportApp({ shared, config: config.import, apiKey: KEY, pool, logger: false }))
    apps.set('sign', await buildSignApp({ shared, config: loadSignConfig({}, shared), apiKey: KEY, pool, logger: false }))
    apps.set('extract', await buildExtractApp({ shared, config: loadExtractConfig({}), apiKey: KEY, pool, logger: false }))
    apps.set('gateway', await buildGatewayApp({
      shared, config: loadGatewayConfig({}, shared), adminToken: KEY, masterKey: parseMasterKey(randomBytes(32).toString('hex'))!, database: { pool: db.pool }, logger: false
    }))
    const agentConfig = loadAgentConfig({ AUTOMATIONS_ROOT: 'automations', AGENT_API_KEY: KEY }, dir)
    apps.set('agent', await buildAgentApp({ shared, config: agentConfig, apiKey: agentConfig.apiKey, logger: false, env: { PATH: process.env.PATH ?? '' } }))
  } finally {
    unsubscribe('fastify.initialization', onInit)
  }
  for (const app of apps.values()) await app.ready()
}, 120_000)

afterAll(async () => {
  for (const app of apps.values()) await app.close()
  await pool?.destroy()
  await db?.drop()
  await rm(dir, { recursive: true, force: true })
})

interface Operation { operationId: string, security?: Array<Record<string, string[]>>, responses: Record<string, { description: string }> }

describe.each(['import', 'sign', 'extract', 'gateway', 'agent'])('the %s service', (name) => {
  const app = (): FastifyInstance => apps.get(name)!
  const description = async (): Promise<Record<string, any>> => {
    const res = await app().inject({ method: 'GET', url: '/openapi.json' })
    expect(res.statusCode).toBe(200)
    return res.json()
  }

  it('serves its OpenAPI 3.1 description without credentials, every route in it with its answers', async () => {
    const doc = await description()
    expect(doc.openapi).toBe('3.1.0')
    expect(doc.info).toEqual(expect.objectContaining({ title: expect.stringContaining('razao'), version: expect.stringMatching(/^\d+\.\d+\.\d+$/) }))
    const api = routes.get(app())!.filter((r) => (r.schema as { hide?: boolean } | undefined)?.hide !== true)
    expect(api.length).toBeGreaterThan(2)
    const ids: string[] = []
    for (const route of api) {
      for (const method of [route.method].flat().filter((m) => m !== 'HEAD')) {
        const where = `${method} ${route.url}`
        const op = doc.paths[route.url.replace(/:(\w+)/g, '{$1}')]?.[method.toLowerCase()] as Operation | undefined
        expect(op, where).toBeDefined()
        ids.push(op!.operationId)
        const statuses = Object.keys(op!.responses)
        expect(statuses.some((s) => s.startsWith('2')), `${where} declares a success`).toBe(true)
        for (const s of statuses) {
          expect(s, where).toMatch(/^[1-5]\d\d$/)
          expect(op!.responses[s]!.description, `${where} ${s}`).not.toBe('Default Response')
        }
        // A route behind a credential says how it refuses a missing one.
        const schemes = (op!.security ?? []).flatMap((r) => Object.keys(r))
        for (const scheme of schemes) expect(doc.components.securitySchemes, where).toHaveProperty(scheme)
        if ((op!.security ?? []).length > 0 && (op!.security ?? []).every((r) => Object.keys(r).length > 0)) expect(statuses, where).toContain('401')
      }
    }
    expect(new Set(ids).size).toBe(ids.length)
  })

  it('gives every field a request takes an example, a default or a list of values (so "Try it out" fills in something valid)', async () => {
    const doc = await description()
    const bare: string[] = []
    const filled = (schema: Record<string, any> | undefined, where: string): void => {
      if (schema === undefined) { bare.push(where); return }
      const isFile = schema.format === 'binary' || (schema.items?.format === 'binary')
      if (isFile || schema.examples !== undefined || schema.example !== undefined || schema.default !== undefined || schema.enum !== undefined) return
      bare.push(where)
    }
    for (const [path, methods] of Object.entries(doc.paths as Record<string, Record<string, any>>)) {
      for (const [method, op] of Object.entries(methods)) {
        for (const p of op.parameters ?? []) filled(p.example === undefined ? p.schema : { ...p.schema, example: p.example }, `${method} ${path} ${p.in} ${p.name}`)
        for (const [type, media] of Object.entries(op.requestBody?.content ?? {}) as Array<[string, any]>) {
          if (media.example !== undefined) continue
          for (const [name, field] of Object.entries(media.schema?.properties ?? {})) filled(field as Record<string, any>, `${method} ${path} ${type} ${name}`)
        }
      }
    }
    expect(bare).toEqual([])
  })

  it('says, for each key it asks for, the header it goes in and where its value lives', async () => {
    const schemes = (await description()).components.securitySchemes as Record<string, { type: string, name?: string, scheme?: string, description?: string }>
    expect(Object.keys(schemes).length).toBeGreaterThan(0)
    for (const [name, scheme] of Object.entries(schemes)) {
      const header = scheme.type === 'apiKey' ? scheme.name! : 'Authorization'
      expect(scheme.description, name).toContain(header)
      // A key file of the data folder, or (the gateway's operational key, only hashed) how to get one.
      expect(scheme.description, name).toMatch(/\.data\/[a-z-]+-api-key|api-key\/rotate/)
      expect(scheme.description, name).toMatch(/[A-Z]+_(API_KEY|ADMIN_TOKEN)/)
    }
  })

  it('serves /docs and /docs/plain without credentials, the page under a same-origin script policy', async () => {
    const page = await app().inject({ method: 'GET', url: '/docs' })
    expect(page.statusCode).toBe(200)
    expect(page.headers['content-security-policy']).toContain("script-src 'self'")
    const plain = await app().inject({ method: 'GET', url: '/docs/plain' })
    expect(plain.statusCode).toBe(200)
    expect(plain.body).toContain('/openapi.json')
    const doc = await description()
    for (const path of Object.keys(doc.paths)) expect(plain.body).toContain(path)
  })
})

it('names the agent\'s automations folder by its variable, AUTOMATIONS_ROOT', async () => {
  const doc = (await apps.get('agent')!.inject({ method: 'GET', url: '/openapi.json' })).json()
  expect(JSON.stringify(doc)).not.toContain('AGENT_AUTOMATIONS_DIR')
  expect(doc.info.description).toContain('AUTOMATIONS_ROOT')
  expect(doc.paths['/api/v1/automations'].get.summary).toContain('AUTOMATIONS_ROOT')
})

it('leaves the gateway\'s admin screen its own strict policy', async () => {
  const admin = await apps.get('gateway')!.inject({ method: 'GET', url: '/admin' })
  expect(admin.statusCode).toBe(200)
  expect(admin.headers['content-security-policy']).toContain("style-src 'self';")
  expect(admin.headers['content-security-policy']).not.toContain('unsafe-inline')
})
