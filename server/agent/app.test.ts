/**
 * The agent over real HTTP (listen on port 0) with real packages (node scripts) in a
 * temporary AUTOMATIONS_ROOT: every route and status of spec 3 part C, the queue, the
 * runner's failure modes, the file index and its limits.
 */
import { existsSync } from 'node:fs'
import { mkdir, mkdtemp, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import type { AgentAppOptions } from './app.js'
import { AGENT_TEST_KEY, isAlive, isTerminal, startAgent, untilJob, waitForPid } from '../../fixtures/agent/harness.js'
import type { StartedAgent } from '../../fixtures/agent/harness.js'
import { CHATTY, CRASH, ECHO, FILES, installPackage, NO_RESULT, TREE, WAIT_FOR_RELEASE } from '../../fixtures/agent/packages.js'

const KEY = AGENT_TEST_KEY
const DAY_MS = 86_400_000

let base: string
beforeAll(async () => { base = await mkdtemp(join(tmpdir(), 'razao-agent-')) })
afterAll(async () => { await rm(base, { recursive: true, force: true }) })

type Started = StartedAgent

const open: Started[] = []
afterEach(async () => {
  for (const s of open.splice(0)) await s.app.close()
})

async function folder (name: string): Promise<string> {
  const dir = join(base, name)
  await mkdir(join(dir, 'automations'), { recursive: true })
  await mkdir(join(dir, 'outside'), { recursive: true })
  await writeFile(join(dir, 'outside', 'secret.txt'), 'not for download')
  return dir
}

async function start (dir: string, env: Record<string, string> = {}, tuning: AgentAppOptions['tuning'] = {}): Promise<Started> {
  const started = await startAgent(dir, env, tuning)
  open.push(started)
  return started
}

async function run (s: Started, id: string, input: object = {}, requestId?: string): Promise<any> {
  const res = await s.call(`/api/v1/automations/${id}/run`, { method: 'POST', body: JSON.stringify({ input, ...(requestId === undefined ? {} : { requestId }) }) })
  expect(res.status).toBe(202)
  return res.body
}

const until = untilJob
const terminal = isTerminal

describe('authentication and routes', () => {
  it('answers /health without a key and refuses /api/v1 without the right X-AGENT-API-KEY', async () => {
    const dir = await folder('auth')
    await installPackage(join(dir, 'automations'), { id: 'echo', script: ECHO })
    const s = await start(dir, { EXECUTOR_ID: 'RPA_TEST', NODE_ENV: 'test' })
    const health = await s.call('/health', { key: null })
    expect(health.status).toBe(200)
    expect(health.body).toMatchObject({ status: 'UP', service: 'razao-agent', version: '1.1.0', executor: 'RPA_TEST', automationsLoaded: 1 })
    expect(Date.parse(health.body.startedAt)).toBeLessThanOrEqual(Date.parse(health.body.timestamp))
    expect(Number.isInteger(health.body.uptimeSeconds)).toBe(true)
    expect(health.headers.get('x-request-id')).toBeTruthy()
    for (const key of [null, 'wrong-key-wrong-key-wrong', '']) {
      const res = await s.call('/api/v1/automations', { key })
      expect(res.status).toBe(401)
      expect(res.body).toEqual({ error: expect.stringMatching(/^Invalid or missing API key\. .*X-AGENT-API-KEY header.*AGENT_API_KEY.*\.data\/agent-api-key/), code: 'UNAUTHORIZED', requestId: res.headers.get('x-request-id') })
    }
    const refusedRun = await s.call('/api/v1/automations/echo/run', { method: 'POST', key: null, body: '{"input":{}}' })
    expect(refusedRun.status).toBe(401)
    expect(s.app.agent.recentJobs(10)).toHaveLength(0)
    expect((await s.call('/api/v1/automations')).status).toBe(200)
  })

  it('answers 404 "Route not found." for unknown routes, with or without a key', async () => {
    const s = await start(await folder('routes'))
    for (const key of [null, KEY]) {
      for (const path of ['/nope', '/api/v1/nope', '/api/v2/automations']) {
        const res = await s.call(path, { key })
        expect(res.status).toBe(404)
        expect(res.body).toEqual({ error: 'Route not found.', code: 'ROUTE_NOT_FOUND', requestId: expect.any(String) })
      }
    }
    expect((await s.call('/api/v1/automations', { method: 'DELETE' })).body).toEqual({ error: 'Route not found.', code: 'ROUTE_NOT_FOUND', requestId: expect.any(String) })
  })

  it('refuses everyone when AGENT_API_KEY is set but empty, and says so at start-up', async () => {
    const s = await start(await folder('empty-key'), { AGENT_API_KEY: '' })
    for (const key of [null, '', KEY]) expect((await s.call('/api/v1/automations', { key })).status).toBe(401)
    expect((await s.call('/health', { key: null })).status).toBe(200)
    expect(s.logs.some((l) => l.includes('AGENT_API_KEY is set but empty'))).toBe(true)
  })
})

describe('automations', () => {
  it('lists, gets and reloads packages; a broken descriptor is logged and skipped', async () => {
    const dir = await folder('reload')
    const root = join(dir, 'automations')
    await installPackage(root, { id: 'echo', script: ECHO })
    await mkdir(join(root, 'not-a-package'))
    const s = await start(dir)
    expect((await s.call('/api/v1/automations')).body).toEqual({ count: 1, items: [{ schemaVersion: '1.0', id: 'echo', name: 'Test package echo', version: '1.0.0', enabled: true }] })
    expect((await s.call('/api/v1/automations/echo')).body).toMatchObject({ id: 'echo', enabled: true })
    const missing = await s.call('/api/v1/automations/nope')
    expect(missing.status).toBe(404)
    expect(missing.body).toEqual({ error: 'Automation not found.', code: 'AUTOMATION_NOT_FOUND', requestId: expect.any(String) })

    await installPackage(root, { id: 'second', script: ECHO, enabled: false })
    await mkdir(join(root, 'broken-json'))
    await writeFile(join(root, 'broken-json', 'automation.json'), '{ not json')
    await mkdir(join(root, 'wrong-schema'))
    await writeFile(join(root, 'wrong-schema', 'automation.json'), JSON.stringify({ schemaVersion: '2.0', id: 'x', name: 'x', version: '1', enabled: true, command: [] }))
    const reloaded = await s.call('/api/v1/automations/reload', { method: 'POST' })
    expect(reloaded.status).toBe(200)
    expect(reloaded.body.count).toBe(2)
    expect(reloaded.body.items.map((p: any) => p.id)).toEqual(['echo', 'second'])
    const skipped = s.logs.filter((l) => l.includes('automation package skipped'))
    expect(skipped.some((l) => l.includes('broken-json') && l.includes('not valid JSON'))).toBe(true)
    expect(skipped.some((l) => l.includes('wrong-schema') && l.includes('schemaVersion') && l.includes('must be') && l.includes('command'))).toBe(true)
    expect(skipped.some((l) => l.includes('not-a-package'))).toBe(false)
    expect((await s.call('/health', { key: null })).body.automationsLoaded).toBe(2)
    // The disabled package exists (GET shows it) but does not run.
    expect((await s.call('/api/v1/automations/second')).body.enabled).toBe(false)
    const disabled = await s.call('/api/v1/automations/second/run', { method: 'POST', body: '{"input":{}}' })
    expect(disabled.status).toBe(409)
    expect(disabled.body).toEqual({ error: 'Automation is disabled.', code: 'AUTOMATION_DISABLED', requestId: expect.any(String) })
  })
})

describe('jobs', () => {
  it('runs a job: 202 QUEUED, then SUCCEEDED with the last result line, input masked in the echo only', async () => {
    const dir = await folder('run')
    await installPackage(join(dir, 'automations'), { id: 'echo', script: ECHO })
    const s = await start(dir)
    const input = { empresas: [{ cnpj: '11222333000181', senha: 'portal-secret' }], password: 'p', nested: { deeper: { Password: 'q', senha: null } }, headless: true }
    const queued = await run(s, 'echo', input, 'req-1')
    expect(queued).toMatchObject({ jobId: queued.id, requestId: 'req-1', automationId: 'echo', status: 'QUEUED', startedAt: null, finishedAt: null, result: null, files: [], error: null })
    expect(queued.input).toEqual({ empresas: [{ cnpj: '11222333000181', senha: '********' }], password: '********', nested: { deeper: { Password: '********', senha: null } }, headless: true })
    expect(queued.createdAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
    const job = await until(s, queued.id, terminal)
    expect(job.status).toBe('SUCCEEDED')
    expect(job.error).toBeNull()
    expect(job.result).toMatchObject({ success: true, status: 'SUCCEEDED', exitCode: 0, signal: null })
    // The package got the real input, on stdin and in the file, and no API key of ours.
    expect(job.result.result).toMatchObject({ input, sameAsFile: true, jobId: queued.id, jobDirExists: true, sawApiKey: false })
    expect(job.input.password).toBe('********')
    expect(Date.parse(job.startedAt)).toBeLessThanOrEqual(Date.parse(job.finishedAt))
    // The input file (it holds the passwords) is gone once the job ends; the empty job folder too.
    expect(await readdir(join(dir, 'runtime', 'inputs'))).toEqual([])
    // The empty job folder goes too (without holding the queue for it).
    for (let i = 0; i < 100 && existsSync(join(dir, 'runtime', 'jobs', queued.id)); i++) await new Promise((r) => setTimeout(r, 10))
    expect(existsSync(join(dir, 'runtime', 'jobs', queued.id))).toBe(false)
    const log = await readFile(join(dir, 'logs', 'jobs', `${queued.id}.stdout.log`), 'utf8')
    expect(log).toContain('working')
  })

  it('generates a requestId when none is given; by-request finds the first job of a repeated one', async () => {
    const dir = await folder('requests')
    await installPackage(join(dir, 'automations'), { id: 'echo', script: ECHO })
    const s = await start(dir)
    const generated = await run(s, 'echo')
    expect(generated.requestId).toMatch(/^[0-9a-f-]{36}$/)
    const first = await run(s, 'echo', {}, 'same')
    const second = await run(s, 'echo', {}, 'same')
    expect(second.id).not.toBe(first.id)
    expect((await s.call('/api/v1/jobs/by-request/same')).body.id).toBe(first.id)
    const none = await s.call('/api/v1/jobs/by-request/nothing')
    expect(none.status).toBe(404)
    expect(none.body).toEqual({ error: 'Job not found.', code: 'JOB_NOT_FOUND', requestId: expect.any(String) })
    expect((await s.call('/api/v1/jobs/00000000-0000-0000-0000-000000000000')).status).toBe(404)
    await s.app.agent.idle()
  })

  it('lists the newest jobs first, limit 1 to 200, default 50, 400 outside', async () => {
    const dir = await folder('list')
    await installPackage(join(dir, 'automations'), { id: 'echo', script: ECHO })
    const s = await start(dir)
    const ids: string[] = []
    for (let i = 0; i < 3; i++) ids.push((await run(s, 'echo', { i })).id)
    const all = await s.call('/api/v1/jobs')
    expect(all.body.count).toBe(3)
    expect(all.body.items.map((j: any) => j.id)).toEqual([...ids].reverse())
    expect((await s.call('/api/v1/jobs?limit=2')).body.items.map((j: any) => j.id)).toEqual([ids[2], ids[1]])
    expect((await s.call('/api/v1/jobs?limit=200')).status).toBe(200)
    for (const bad of ['0', '201', 'abc', '-1', '1.5', '']) {
      const res = await s.call(`/api/v1/jobs?limit=${bad}`)
      expect(res.status, bad).toBe(400)
      expect(res.body).toEqual({ error: 'limit must be a whole number from 1 to 200.', code: 'INVALID_LIMIT', requestId: expect.any(String) })
    }
    await s.app.agent.idle()
  })

  it('refuses a bad body with 400/413/415 and { error }', async () => {
    const dir = await folder('bodies')
    await installPackage(join(dir, 'automations'), { id: 'echo', script: ECHO })
    const s = await start(dir, { JSON_LIMIT: '2kb' })
    const post = async (body: string): Promise<{ status: number, body: any }> => {
      const res = await s.call('/api/v1/automations/echo/run', { method: 'POST', body })
      return { status: res.status, body: res.body }
    }
    expect(await post('{ nope')).toEqual({ status: 400, body: { error: 'The body is not valid JSON.', code: 'REQUEST_INVALID', requestId: expect.any(String) } })
    expect((await post('[1]')).status).toBe(400)
    expect((await post('{"input": 3}')).body).toEqual({ error: 'input must be a JSON object.', code: 'REQUEST_INVALID', requestId: expect.any(String) })
    expect((await post('{"requestId": 7, "input": {}}')).body).toMatchObject({ error: 'requestId must be a non-empty string of at most 200 characters.', code: 'REQUEST_INVALID' })
    expect((await post(JSON.stringify({ input: { big: 'x'.repeat(4096) } }))).status).toBe(413)
    const typed = await s.call('/api/v1/automations/echo/run', { method: 'POST', body: 'a=b', headers: { 'content-type': 'application/x-www-form-urlencoded' } })
    expect(typed.status).toBe(415)
    expect(s.app.agent.recentJobs(10)).toHaveLength(0)
  })

  it('runs one job at a time under MAX_CONCURRENT_JOBS=1: the second stays QUEUED until the first ends', async () => {
    const dir = await folder('queue')
    await installPackage(join(dir, 'automations'), { id: 'wait', script: WAIT_FOR_RELEASE })
    const s = await start(dir, { MAX_CONCURRENT_JOBS: '1' })
    const release = join(dir, 'release')
    const first = await run(s, 'wait', { release })
    const second = await run(s, 'wait', { release })
    await until(s, first.id, (j) => j.status === 'RUNNING')
    await new Promise((r) => setTimeout(r, 400))
    expect((await s.call(`/api/v1/jobs/${second.id}`)).body.status).toBe('QUEUED')
    expect((await s.call(`/api/v1/jobs/${first.id}`)).body.status).toBe('RUNNING')
    await writeFile(release, '')
    const a = await until(s, first.id, terminal)
    const b = await until(s, second.id, terminal)
    expect([a.status, b.status]).toEqual(['SUCCEEDED', 'SUCCEEDED'])
    expect(Date.parse(b.startedAt)).toBeGreaterThanOrEqual(Date.parse(a.finishedAt))
  })

  it('runs two jobs at once under MAX_CONCURRENT_JOBS=2, but one at a time for a singleton package', async () => {
    const dir = await folder('singleton')
    await installPackage(join(dir, 'automations'), { id: 'wait', script: WAIT_FOR_RELEASE })
    await installPackage(join(dir, 'automations'), { id: 'solo', script: WAIT_FOR_RELEASE, singleton: true })
    const s = await start(dir, { MAX_CONCURRENT_JOBS: '2' })
    const release = join(dir, 'release')
    const p1 = await run(s, 'wait', { release })
    const p2 = await run(s, 'wait', { release })
    await until(s, p1.id, (j) => j.status === 'RUNNING')
    await until(s, p2.id, (j) => j.status === 'RUNNING')
    await writeFile(release, '')
    await s.app.agent.idle()
    await rm(release)
    const solo1 = await run(s, 'solo', { release })
    const solo2 = await run(s, 'solo', { release })
    await until(s, solo1.id, (j) => j.status === 'RUNNING')
    await new Promise((r) => setTimeout(r, 300))
    expect((await s.call(`/api/v1/jobs/${solo2.id}`)).body.status).toBe('QUEUED')
    await writeFile(release, '')
    await s.app.agent.idle()
  })

  it('kills the whole process tree at the timeout (grandchild included, SIGTERM ignored): TIMED_OUT', async () => {
    const dir = await folder('timeout')
    await installPackage(join(dir, 'automations'), { id: 'tree', script: TREE, timeoutMs: 1000 })
    const s = await start(dir)
    const pidFile = join(dir, 'grandchild.pid')
    const queued = await run(s, 'tree', { pidFile })
    const job = await until(s, queued.id, terminal)
    expect(job.status).toBe('TIMED_OUT')
    expect(job.error).toEqual({ code: 'AGENT_TIMED_OUT', message: 'The job did not finish within 1000 ms; its processes were stopped.' })
    expect(job.result).toMatchObject({ success: false, status: 'TIMED_OUT', signal: 'SIGKILL', result: null })
    const grandchild = await waitForPid(pidFile)
    const end = Date.now() + 5000
    while (isAlive(grandchild) && Date.now() < end) await new Promise((r) => setTimeout(r, 50))
    expect(isAlive(grandchild)).toBe(false)
  })

  it('fails a crash (non-zero exit) keeping its partial result, a missing result line, and a program that cannot start', async () => {
    const dir = await folder('failures')
    const root = join(dir, 'automations')
    await installPackage(root, { id: 'crash', script: CRASH })
    await installPackage(root, { id: 'silent', script: NO_RESULT })
    await installPackage(root, { id: 'absent', command: ['./no-such-program', '--flag'] })
    const s = await start(dir)
    const crash = await until(s, (await run(s, 'crash')).id, terminal)
    expect(crash.status).toBe('FAILED')
    expect(crash.error).toEqual({ code: 'AGENT_EXIT_NON_ZERO', message: "The package exited with code 3; its output is in the job's log." })
    expect(crash.result).toMatchObject({ success: false, status: 'FAILED', exitCode: 3, result: { processed: 1 } })
    expect(await readFile(join(dir, 'logs', 'jobs', `${crash.id}.stderr.log`), 'utf8')).toContain('something broke')
    const silent = await until(s, (await run(s, 'silent')).id, terminal)
    expect(silent.status).toBe('FAILED')
    expect(silent.error.code).toBe('AGENT_NO_RESULT')
    const absent = await until(s, (await run(s, 'absent')).id, terminal)
    expect(absent.status).toBe('FAILED')
    expect(absent.result).toMatchObject({ success: false, status: 'FAILED_TO_START', exitCode: null, result: null })
    expect(absent.error).toEqual({ code: 'AGENT_FAILED_TO_START', message: 'The program "./no-such-program" could not be started (ENOENT).' })
    // The agent goes on after all of it.
    expect((await s.call('/health', { key: null })).body.status).toBe('UP')
  })

  it('keeps each job log under the cap and says how much was cut', async () => {
    const dir = await folder('logs')
    await installPackage(join(dir, 'automations'), { id: 'chatty', script: CHATTY })
    const s = await start(dir, {}, { maxLogBytes: 64 * 1024 })
    const job = await until(s, (await run(s, 'chatty', { bytes: 1024 * 1024 })).id, terminal)
    // The result line came after the cut: it is read from the stream, not from the log.
    expect(job.status).toBe('SUCCEEDED')
    for (const stream of ['stdout', 'stderr']) {
      const path = join(dir, 'logs', 'jobs', `${job.id}.${stream}.log`)
      expect((await stat(path)).size).toBeLessThan(64 * 1024 + 200)
      expect(await readFile(path, 'utf8')).toMatch(/log cut at 65536 bytes; \d+ more bytes were not kept/)
    }
  })

  it('drops the oldest finished jobs past the in-memory cap', async () => {
    const dir = await folder('cap')
    await installPackage(join(dir, 'automations'), { id: 'echo', script: ECHO })
    const s = await start(dir, {}, { maxJobsInMemory: 3 })
    const ids: string[] = []
    for (let i = 0; i < 5; i++) {
      ids.push((await run(s, 'echo', {}, `r${i}`)).id)
      await s.app.agent.idle()
    }
    expect((await s.call('/api/v1/jobs')).body.items.map((j: any) => j.id)).toEqual([ids[4], ids[3], ids[2]])
    expect((await s.call(`/api/v1/jobs/${ids[0]}`)).status).toBe(404)
    expect((await s.call('/api/v1/jobs/by-request/r0')).status).toBe(404)
  })

  it('on shutdown kills the running job and marks it and the queued one FAILED (AGENT_SHUTDOWN)', async () => {
    const dir = await folder('shutdown')
    await installPackage(join(dir, 'automations'), { id: 'tree', script: TREE })
    const s = await start(dir)
    const pidFile = join(dir, 'grandchild.pid')
    const running = await run(s, 'tree', { pidFile })
    const queued = await run(s, 'tree', { pidFile: join(dir, 'other.pid') })
    await until(s, running.id, (j) => j.status === 'RUNNING')
    const grandchild = await waitForPid(pidFile)
    open.splice(open.indexOf(s), 1)
    await s.app.close()
    const a = s.app.agent.job(running.id)!
    const b = s.app.agent.job(queued.id)!
    expect(a).toMatchObject({ status: 'FAILED', error: { code: 'AGENT_SHUTDOWN' } })
    expect(b).toMatchObject({ status: 'FAILED', startedAt: null, error: { code: 'AGENT_SHUTDOWN' } })
    expect(s.logs.some((l) => l.includes('queued job(s) will not run') && l.includes(queued.id))).toBe(true)
    const end = Date.now() + 5000
    while (isAlive(grandchild) && Date.now() < end) await new Promise((r) => setTimeout(r, 50))
    expect(isAlive(grandchild)).toBe(false)
  })
})

describe('files', () => {
  it('registers files only from the allowed roots, serves them, and answers 404 and 410', async () => {
    const dir = await folder('files')
    await installPackage(join(dir, 'automations'), { id: 'files', script: FILES })
    const s = await start(dir)
    const outside = join(dir, 'outside', 'secret.txt')
    const job = await until(s, (await run(s, 'files', { outside })).id, terminal)
    expect(job.status).toBe('SUCCEEDED')
    expect(job.files.map((f: any) => f.fileName)).toEqual(['report.pdf', 'Declaração março.txt'])
    const refused = s.logs.filter((l) => l.includes('file not registered'))
    expect(refused.filter((l) => l.includes('outside FILE_ALLOWED_ROOTS'))).toHaveLength(2)
    expect(refused.filter((l) => l.includes('does not exist'))).toHaveLength(1)
    expect(s.logs.some((l) => l.includes('ignored an AGENT_FILE_JSON= line'))).toBe(true)

    const list = await s.call(`/api/v1/jobs/${job.id}/files`)
    expect(list.body).toMatchObject({ jobId: job.id, count: 2 })
    const [pdf, notes] = list.body.items
    expect(pdf).toMatchObject({ jobId: job.id, fileName: 'report.pdf', mimeType: 'application/pdf', sizeBytes: 13, downloadedAt: null, downloadUrl: `/api/v1/jobs/${job.id}/files/${pdf.fileId}` })
    expect(Date.parse(pdf.expiresAt) - Date.parse(pdf.createdAt)).toBe(7 * DAY_MS)

    const download = await s.call(pdf.downloadUrl)
    expect(download.status).toBe(200)
    expect(download.headers.get('content-type')).toBe('application/pdf')
    expect(download.headers.get('content-disposition')).toBe('attachment; filename="report.pdf"')
    expect(download.bytes.toString()).toBe('%PDF-1.4 test')
    const after = (await s.call(`/api/v1/jobs/${job.id}`)).body.files[0]
    expect(Date.parse(after.downloadedAt)).toBeGreaterThan(0)

    const text = await s.call(notes.downloadUrl)
    expect(text.headers.get('content-disposition')).toBe("attachment; filename=\"Declaracao marco.txt\"; filename*=UTF-8''Declara%C3%A7%C3%A3o%20mar%C3%A7o.txt")
    expect(text.headers.get('content-type')).toBe('text/plain; charset=utf-8')

    // Not of that job, unknown, and unknown job: 404.
    const other = await until(s, (await run(s, 'files', { outside })).id, terminal)
    for (const path of [`/api/v1/jobs/${other.id}/files/${pdf.fileId}`, `/api/v1/jobs/${job.id}/files/nope`, '/api/v1/jobs/nope/files']) {
      const res = await s.call(path)
      expect(res.status, path).toBe(404)
    }
    expect((await s.call(`/api/v1/jobs/${other.id}/files/${pdf.fileId}`)).body).toEqual({ error: 'File not found.', code: 'FILE_NOT_FOUND', requestId: expect.any(String) })
    expect((await s.call(pdf.downloadUrl, { key: null })).status).toBe(401)

    // The record stays, the file goes: 410.
    await rm(join(dir, 'runtime', 'jobs', job.id, 'report.pdf'))
    const gone = await s.call(pdf.downloadUrl)
    expect(gone.status).toBe(410)
    expect(gone.body).toEqual({ error: 'File is no longer available.', code: 'FILE_GONE', requestId: expect.any(String) })
  })

  it('keeps the index across a restart and purges expired records (and the agent\'s own files)', async () => {
    const dir = await folder('restart')
    await installPackage(join(dir, 'automations'), { id: 'files', script: FILES })
    const first = await start(dir)
    const job = await until(first, (await run(first, 'files', { outside: join(dir, 'outside', 'secret.txt') })).id, terminal)
    const fileId = job.files[0].fileId
    await first.call(job.files[0].downloadUrl)
    open.splice(open.indexOf(first), 1)
    await first.app.close()
    expect(JSON.parse(await readFile(join(dir, 'runtime', 'files', 'index.json'), 'utf8')).files).toHaveLength(2)

    const second = await start(dir)
    // The job is gone with the old process; its files are not.
    expect((await second.call(`/api/v1/jobs/${job.id}`)).status).toBe(404)
    const list = await second.call(`/api/v1/jobs/${job.id}/files`)
    expect(list.body.count).toBe(2)
    expect(list.body.items[0].downloadedAt).toBe(job.files[0].downloadedAt ?? list.body.items[0].downloadedAt)
    expect(list.body.items[0].downloadedAt).not.toBeNull()
    expect((await second.call(`/api/v1/jobs/${job.id}/files/${fileId}`)).status).toBe(200)
    open.splice(open.indexOf(second), 1)
    await second.app.close()

    const later = Date.now() + 8 * DAY_MS
    const third = await start(dir, {}, { now: () => later })
    expect((await third.call(`/api/v1/jobs/${job.id}/files/${fileId}`)).status).toBe(404)
    expect((await third.call(`/api/v1/jobs/${job.id}/files`)).status).toBe(404)
    expect(JSON.parse(await readFile(join(dir, 'runtime', 'files', 'index.json'), 'utf8')).files).toEqual([])
    expect(existsSync(join(dir, 'runtime', 'jobs', job.id, 'report.pdf'))).toBe(false)
    expect(third.logs.some((l) => l.includes('expired file records purged'))).toBe(true)
  })

  it('accepts files from FILE_ALLOWED_ROOTS (";"-separated) and nothing else', async () => {
    const dir = await folder('roots')
    const extra = join(dir, 'outside')
    await installPackage(join(dir, 'automations'), { id: 'files', script: FILES })
    const s = await start(dir, { FILE_ALLOWED_ROOTS: `automations; ${extra}` })
    const job = await until(s, (await run(s, 'files', { outside: join(extra, 'secret.txt') })).id, terminal)
    // Now "outside" is allowed: the ".." path and the link both reach an allowed file.
    expect(job.files.map((f: any) => f.fileName).sort()).toEqual(['Declaração março.txt', 'report.pdf', 'secret.txt', 'secret.txt'])
  })
})
