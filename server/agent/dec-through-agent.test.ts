/**
 * The DEC package as users run it: installed in the repository's automations root
 * (plugins/automations), discovered by the real agent, run through POST …/run, in Debian's
 * headless Chromium against the local portal (fixtures/automations/dec-portal.ts). The
 * package's own tests (plugins/automations/dec-issqn-poa/dec.test.ts) spawn it the way the
 * agent does; this file proves the agent really does: all three modes, a failing company in
 * the middle, the PDF registered as the job's file and downloadable, the job queued as a
 * singleton, and no portal password in the job, its echoed input, its logs or its files.
 */
import { readdir, readFile, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { Writable } from 'node:stream'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startDecPortal } from '../../fixtures/automations/dec-portal.js'
import type { DecPortal } from '../../fixtures/automations/dec-portal.js'
import { seedFailingMiddle, seedThreeModes } from '../../fixtures/automations/dec-scenarios.js'
import type { Scenario } from '../../fixtures/automations/dec-scenarios.js'
import { MASK } from '../../core/agent/index.js'
import { loadConfig } from '../config.js'
import { buildAgentApp } from './app.js'
import type { AgentApp } from './app.js'
import { loadAgentConfig } from './config.js'
import { runEnvironment } from '../../fixtures/suite/run-env.js'

const KEY = 'agent-dec-test-key-0123456789abcdef'
const AUTOMATIONS = resolve(import.meta.dirname, '../../plugins/automations')
const TERMINAL = new Set(['SUCCEEDED', 'FAILED', 'TIMED_OUT'])

let dir: string
let portal: DecPortal
let app: AgentApp
let url: string
const logs: string[] = []

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'razao-agent-dec-'))
  portal = await startDecPortal()
  const config = loadAgentConfig({
    AUTOMATIONS_ROOT: AUTOMATIONS, AGENT_API_KEY: KEY, PORT: '0', MAX_CONCURRENT_JOBS: '2',
    RUNTIME_DIR: join(dir, 'runtime'), LOG_DIR: join(dir, 'logs'), FILE_STORAGE_ROOT: join(dir, 'files')
  }, dir)
  const shared = loadConfig({ RAZAO_DATA_DIR: join(dir, '.data'), LOG_LEVEL: 'info' }, dir).shared
  const logStream = new Writable({ write (chunk: Buffer, _enc, done) { logs.push(chunk.toString()); done() } })
  app = await buildAgentApp({
    shared, config, apiKey: KEY, logStream,
    // What the package needs from the agent's environment: the portal's address (tests) and PATH.
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? dir, ...runEnvironment(), DEC_PORTAL_URL: portal.url, DEC_ACTION_TIMEOUT_MS: '20000' }
  })
  url = await app.listen({ host: '127.0.0.1', port: 0 })
}, 60_000)
afterAll(async () => {
  await app?.close()
  await portal?.close()
  await rm(dir, { recursive: true, force: true })
})

async function call (path: string, init: RequestInit = {}): Promise<{ status: number, body: any, bytes: Buffer, headers: Headers }> {
  const headers = new Headers(init.headers)
  headers.set('x-agent-api-key', KEY)
  if (typeof init.body === 'string') headers.set('content-type', 'application/json')
  const res = await fetch(`${url}${path}`, { ...init, headers })
  const bytes = Buffer.from(await res.arrayBuffer())
  const json = (res.headers.get('content-type') ?? '').startsWith('application/json')
  return { status: res.status, body: json ? JSON.parse(bytes.toString()) : undefined, bytes, headers: res.headers }
}

async function runDec (scenario: Scenario, requestId: string): Promise<any> {
  const res = await call('/api/v1/automations/dec-issqn-poa/run', { method: 'POST', body: JSON.stringify({ requestId, input: scenario.input }) })
  expect(res.status).toBe(202)
  expect(res.body).toMatchObject({ status: 'QUEUED', automationId: 'dec-issqn-poa', requestId, result: null, files: [] })
  return res.body
}

/** Polls a job while `waiting` holds (hang catcher: 240 s; the two jobs of the test below took 37 s together here). */
async function settleWhile (id: string, waiting: (job: any) => boolean): Promise<any> {
  const deadline = Date.now() + 240_000
  for (;;) {
    const job = (await call(`/api/v1/jobs/${id}`)).body
    if (!waiting(job) || TERMINAL.has(job.status)) return job
    if (Date.now() > deadline) throw new Error(`job ${id} still ${job.status as string}`)
    await new Promise((r) => setTimeout(r, 50))
  }
}

async function settle (id: string): Promise<any> {
  const deadline = Date.now() + 240_000
  for (;;) {
    const job = (await call(`/api/v1/jobs/${id}`)).body
    if (TERMINAL.has(job.status)) return job
    if (Date.now() > deadline) throw new Error(`job ${id} still ${job.status as string}`)
    await new Promise((r) => setTimeout(r, 250))
  }
}

describe('the DEC package through the agent', () => {
  it('is discovered in the repository automations root with its descriptor', async () => {
    const res = await call('/api/v1/automations/dec-issqn-poa')
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ schemaVersion: '1.0', id: 'dec-issqn-poa', enabled: true })
  })

  it('refuses a run whose input breaks the package\'s declared shape before queueing it, naming the field', async () => {
    for (const [input, error] of [
      [{}, 'input.empresas is required (the companies to declare, 1 to 500).'],
      [{ empresas: [{ cnpj: '11222333000181', competenciaAno: '2026', competenciaMes: '7' }] }, 'input.empresas[0].senha is required (the company\'s portal password).']
    ] as const) {
      const res = await call('/api/v1/automations/dec-issqn-poa/run', { method: 'POST', body: JSON.stringify({ input }) })
      expect([res.status, res.body]).toEqual([400, { error, code: expect.any(String), requestId: expect.any(String) }])
    }
    expect(app.agent.recentJobs(10)).toHaveLength(0)
    expect((await call('/api/v1/automations/dec-issqn-poa')).body.inputSchema).toMatchObject({ required: ['empresas'] })
  })

  it('runs all three modes and a failing company in the middle, one job after the other (queued singleton), keeping every result', async () => {
    const modes = seedThreeModes(portal)
    const failing = seedFailingMiddle(portal)
    // Two jobs posted at once with two free slots: the singleton package still runs them in turn.
    const first = await runDec(modes, 'dec-modes')
    const second = await runDec(failing, 'dec-failing')
    // While the first runs, its result so far: the companies done, the rest pending.
    const during = await settleWhile(first.id, (job) => job.result === null || job.status === 'QUEUED')
    expect(during).toMatchObject({ status: 'RUNNING', result: { status: 'RUNNING', result: { success: false, total: 3, pending: expect.any(Number) } } })
    const jobs = [await settle(first.id), await settle(second.id)]
    expect(Date.parse(jobs[1].startedAt)).toBeGreaterThanOrEqual(Date.parse(jobs[0].finishedAt))
    // Two companies of four failed: the job says so (it is not SUCCEEDED), and keeps every item and file.
    expect(jobs[0]).toMatchObject({ status: 'SUCCEEDED', error: null })
    expect(jobs[1]).toMatchObject({ status: 'FAILED', error: { code: 'AGENT_REPORTED_FAILURE', message: 'The package reported that 2 of 4 item(s) failed; result.result says which and why, and what succeeded is kept.' } })
    // The job's log: the package's progress lines, no password.
    const log = await call(`/api/v1/jobs/${second.id}/log?stream=stderr`)
    expect(log.bytes.toString()).toMatch(/\[2\/4\] 07\/2026 failed: login/)

    for (const [job, scenario] of [[jobs[0], modes], [jobs[1], failing]] as const) {
      const result = job.result.result
      expect(result.total).toBe(scenario.expected.length)
      expect(result.items.map((i: any) => ({ success: i.success, cnpj: i.cnpj, competencia: i.competencia, mode: i.mode })))
        .toEqual(scenario.expected.map((e) => ({ success: e.success, cnpj: e.cnpj, competencia: e.competencia, mode: e.mode })))
      expect(result.succeeded).toBe(scenario.expected.filter((e) => e.success).length)
      expect(result.failed).toBe(scenario.expected.filter((e) => !e.success).length)
      // One PDF per company that succeeded, registered as the job's files and downloadable.
      expect(job.files).toHaveLength(result.succeeded)
      for (const file of job.files) {
        const download = await call(file.downloadUrl)
        expect(download.status).toBe(200)
        expect(download.headers.get('content-type')).toBe('application/pdf')
        expect(download.bytes.subarray(0, 5).toString()).toBe('%PDF-')
        expect(download.bytes.length).toBe(file.sizeBytes)
      }
      // The echoed input masks the portal passwords; the package received them (it logged in).
      expect(job.input.empresas).toEqual(scenario.input.empresas.map((e) => ({ ...e, senha: MASK })))
      const everything = JSON.stringify(job) + JSON.stringify((await call('/api/v1/jobs?limit=200')).body)
      for (const password of scenario.passwords) expect(everything).not.toContain(password)
    }
    expect(jobs[1].result.result.items.filter((i: any) => !i.success).map((i: any) => i.error)).toEqual([
      expect.stringMatching(/^login/), expect.stringMatching(/^send/)
    ])
    expect(portal.userAgents.every((ua) => ua.includes('HeadlessChrome'))).toBe(true)

    // Nor in the agent's own log lines or the jobs' stdout/stderr logs.
    const jobLogs = await Promise.all((await readdir(join(dir, 'logs'), { recursive: true }))
      .map(async (name) => await readFile(join(dir, 'logs', name)).then((b) => b.toString(), () => '')))
    const allLogs = logs.join('') + jobLogs.join('')
    for (const password of [...modes.passwords, ...failing.passwords]) expect(allLogs).not.toContain(password)
  }, 300_000)
})
