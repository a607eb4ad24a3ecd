/**
 * The agent's hostile group: what an attack run did to it, each case asserting the
 * refusal or the bound, the time it took, and that the agent still serves afterwards.
 * Processes that leave the job's group, a flood of queued jobs and large inputs, deeply
 * nested input and results, secrets in the agent's environment, and a FIFO or a device
 * where a package's automation.json should be.
 */
import { spawnSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { link, mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises'
import { request } from 'node:http'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import type { AgentAppOptions } from './app.js'
import { AGENT_TEST_KEY, isAlive, isTerminal, startAgent, untilJob, waitForPid } from '../../fixtures/agent/harness.js'
import type { StartedAgent } from '../../fixtures/agent/harness.js'
import { ECHO, installPackage, WAIT_FOR_RELEASE } from '../../fixtures/agent/packages.js'
import { serveProcess } from '../../fixtures/serve-process.js'
import type { ServedProcess } from '../../fixtures/serve-process.js'

const linux = process.platform === 'linux'
let base: string
beforeAll(async () => { base = await mkdtemp(join(tmpdir(), 'razao-agent-hostile-')) })
afterAll(async () => {
  await rm(base, { recursive: true, force: true })
  // The peak of this test process, the agent included (it runs in-process): for the closing note.
  process.stderr.write(`agent hostile group: peak RSS ${Math.round(process.resourceUsage().maxRSS / 1024)} MB\n`)
})

const open: StartedAgent[] = []
afterEach(async () => {
  for (const s of open.splice(0)) await s.app.close()
})

let folders = 0
async function start (env: Record<string, string> = {}, tuning: AgentAppOptions['tuning'] = {}, agentEnv?: NodeJS.ProcessEnv): Promise<StartedAgent> {
  const dir = join(base, `a${++folders}`)
  await mkdir(join(dir, 'automations'), { recursive: true })
  const s = await startAgent(dir, env, tuning, agentEnv)
  open.push(s)
  return s
}

const root = (s: StartedAgent): string => join(s.dir, 'automations')
async function post (s: StartedAgent, id: string, body: string): Promise<{ status: number, body: any, headers: Headers }> {
  return await s.call(`/api/v1/automations/${id}/run`, { method: 'POST', body })
}
async function reload (s: StartedAgent): Promise<void> {
  expect((await s.call('/api/v1/automations/reload', { method: 'POST' })).status).toBe(200)
}

/**
 * Starts `sleep 300` in a new session (`setsid`: out of the job's process group), which
 * writes its own pid to input.pidFile. input.output: 'inherit' keeps the job's stdout and
 * stderr open in it, 'ignore' lets go of them. input.cleanEnv: it runs with an empty
 * environment (no marker), under `setsid -w`, which stays as its parent (found through
 * the ancestry while the main process lives). input.stay: the main process waits for
 * ever, else it prints its result and exits.
 */
const ESCAPE = `
import { spawn } from 'node:child_process'
let stdin = ''
for await (const chunk of process.stdin) stdin += chunk
const { pidFile, output, cleanEnv, stay } = JSON.parse(stdin)
const script = 'echo $$ > "$0"; exec sleep 300'
const args = [...(cleanEnv ? ['-w'] : []), 'sh', '-c', script, pidFile]
spawn('setsid', args, { stdio: ['ignore', output, output], ...(cleanEnv ? { env: {} } : {}) }).unref()
if (stay) setInterval(() => {}, 1000)
else {
  await new Promise((r) => setTimeout(r, 200))
  console.log('AGENT_RESULT_JSON={"left":"a process behind"}')
}
`

async function escapee (s: StartedAgent, name: string, input: Record<string, unknown>): Promise<{ job: any, pid: number }> {
  const pidFile = join(s.dir, `${name}.pid`)
  const res = await post(s, 'escape', JSON.stringify({ input: { pidFile, output: 'inherit', cleanEnv: false, stay: false, ...input } }))
  expect(res.status).toBe(202)
  return { job: res.body, pid: await waitForPid(pidFile, 5000) }
}

async function untilDead (pid: number, ms = 3000): Promise<boolean> {
  const end = Date.now() + ms
  while (Date.now() < end) {
    if (!isAlive(pid)) return true
    await new Promise((r) => setTimeout(r, 25))
  }
  return !isAlive(pid)
}

const stderrLog = async (s: StartedAgent, jobId: string): Promise<string> => await readFile(join(s.dir, 'logs', 'jobs', `${jobId}.stderr.log`), 'utf8').catch(() => '')

/** `razao serve agent` in a process of its own (its memory measured apart from the test's), AUTOMATIONS_ROOT `dir/automations`. */
async function serveAgent (dir: string): Promise<ServedProcess> {
  return await serveProcess('agent', {
    RAZAO_DATA_DIR: join(dir, '.data'), PORT: '0', AUTOMATIONS_ROOT: join(dir, 'automations'), AGENT_API_KEY: AGENT_TEST_KEY,
    RUNTIME_DIR: join(dir, 'runtime'), LOG_DIR: join(dir, 'logs'), FILE_STORAGE_ROOT: join(dir, 'runtime', 'files')
  })
}

/** A run whose headers declare `length` bytes of body and send none; the status it gets. */
async function declareBody (url: string, length: number): Promise<number> {
  return await new Promise((resolve, reject) => {
    const req = request(`${url}/api/v1/automations/wait/run`, {
      method: 'POST', headers: { 'x-agent-api-key': AGENT_TEST_KEY, 'content-type': 'application/json', 'content-length': String(length) }
    }, (res) => {
      res.resume()
      req.destroy()
      resolve(res.statusCode ?? 0)
    })
    req.on('error', reject)
    req.flushHeaders()
  })
}

describe.runIf(linux)('processes that leave the job\'s process group', () => {
  it('times out at the deadline with a setsid grandchild holding the output; the grandchild is killed, the log names it, the queue moves on', async () => {
    const s = await start({}, { killGraceMs: 300 })
    await installPackage(root(s), { id: 'escape', script: ESCAPE, timeoutMs: 2000 })
    await installPackage(root(s), { id: 'echo', script: ECHO })
    await reload(s)
    const { job, pid } = await escapee(s, 'deadline', { stay: true })
    const next = (await post(s, 'echo', '{"input":{"after":true}}')).body
    // A hang catcher: about 2.1 s from the run to its end, at a load of 3 as of 10; waiting
    // for the grandchild's output to close would take its 300 s.
    const done = await untilJob(s, job.id, isTerminal, 30_000)
    expect(done).toMatchObject({ status: 'TIMED_OUT', error: { code: 'AGENT_TIMED_OUT' } })
    // It ran until its deadline, by the agent's own clock (less a timer's granularity).
    expect(Date.parse(done.finishedAt) - Date.parse(done.startedAt)).toBeGreaterThanOrEqual(2000 - 100)
    expect(await untilDead(pid)).toBe(true)
    const log = await stderrLog(s, job.id)
    expect(log).toMatch(new RegExp(`time limit of 2000 ms passed: SIGTERM sent to \\d+ process\\(es\\): .*${pid} sleep 300 \\(outside the job's process group\\)`))
    expect(s.logs.some((l) => l.includes(job.id) && l.includes(`${pid} sleep 300`))).toBe(true)
    expect(await untilJob(s, next.id, isTerminal)).toMatchObject({ status: 'SUCCEEDED' })
  })

  it('at the deadline also finds an escapee that dropped the marker from its environment, through its ancestry', async () => {
    const s = await start({}, { killGraceMs: 300 })
    await installPackage(root(s), { id: 'escape', script: ESCAPE, timeoutMs: 1500 })
    await reload(s)
    const { job, pid } = await escapee(s, 'clean', { stay: true, cleanEnv: true, output: 'ignore' })
    expect(await untilJob(s, job.id, isTerminal, 10_000)).toMatchObject({ status: 'TIMED_OUT' })
    expect(await untilDead(pid)).toBe(true)
    expect(await stderrLog(s, job.id)).toContain(`${pid} sleep 300 (outside the job's process group)`)
  })

  it('ends a job whose main process exited while an escapee holds its output, and kills the escapee', async () => {
    const s = await start()
    await installPackage(root(s), { id: 'escape', script: ESCAPE, timeoutMs: 60_000 })
    await reload(s)
    const started = Date.now()
    const { job, pid } = await escapee(s, 'exit', {})
    expect(await untilJob(s, job.id, isTerminal, 20_000)).toMatchObject({ status: 'SUCCEEDED', result: { result: { left: 'a process behind' } } })
    // A hang catcher only: about 1.3 s (the main process's 0.2 s and the agent's 1 s of
    // grace for the output), at a load of 3 as of 10; the escapee holds it for 300 s.
    expect(Date.now() - started).toBeLessThan(20_000)
    expect(await untilDead(pid)).toBe(true)
    expect(await stderrLog(s, job.id)).toContain(`held its output: SIGKILL sent to ${pid} sleep 300`)
  })

  it('kills, shortly after the job, an escapee that let go of the output', async () => {
    const s = await start({}, { straySweepDelayMs: 100 })
    await installPackage(root(s), { id: 'escape', script: ESCAPE })
    await reload(s)
    const { job, pid } = await escapee(s, 'detached', { output: 'ignore' })
    expect(await untilJob(s, job.id, isTerminal)).toMatchObject({ status: 'SUCCEEDED' })
    expect(await untilDead(pid)).toBe(true)
    // The note is written once the kill is done: wait for it, not for a fixed time.
    await expect.poll(async () => await stderrLog(s, job.id)).toContain(`after the job ended, SIGKILL sent to 1 process(es) it left running outside its process group: ${pid} sleep 300`)
  })

  it('kills a running job\'s escapees when the agent shuts down', async () => {
    const s = await start()
    await installPackage(root(s), { id: 'escape', script: ESCAPE })
    await reload(s)
    const { job, pid } = await escapee(s, 'shutdown', { stay: true, output: 'ignore' })
    await untilJob(s, job.id, (j) => j.status === 'RUNNING')
    const started = Date.now()
    await s.app.close()
    open.splice(open.indexOf(s), 1)
    // A hang catcher only (10-20 ms at a load of 3 to 10).
    expect(Date.now() - started).toBeLessThan(5000)
    expect(await untilDead(pid)).toBe(true)
    expect(await stderrLog(s, job.id)).toMatch(new RegExp(`the agent is shutting down: SIGTERM sent to .*${pid} sleep 300`))
  })
})

describe('a flood of jobs and large inputs', () => {
  it('refuses runs past AGENT_MAX_QUEUED_JOBS with 429 and Retry-After, storing nothing', async () => {
    const s = await start({ AGENT_MAX_QUEUED_JOBS: '3' })
    await installPackage(root(s), { id: 'wait', script: WAIT_FOR_RELEASE })
    await reload(s)
    const release = join(s.dir, 'release')
    const body = JSON.stringify({ input: { release } })
    const first = (await post(s, 'wait', body)).body
    await untilJob(s, first.id, (j) => j.status === 'RUNNING')
    for (let i = 0; i < 3; i++) expect((await post(s, 'wait', body)).status).toBe(202)
    const refused = await post(s, 'wait', body)
    expect(refused.status).toBe(429)
    expect(refused.headers.get('retry-after')).toBe('10')
    expect(refused.body).toEqual({ error: '3 jobs are already waiting to run; try again later.', code: 'TOO_MANY_REQUESTS', requestId: expect.any(String) })
    expect((await s.call('/api/v1/jobs')).body.count).toBe(4)
    await writeFile(release, '')
    await untilJob(s, first.id, isTerminal)
    // A slot in the queue frees as a job starts.
    expect((await post(s, 'wait', body)).status).toBe(202)
  })

  it('refuses inputs over AGENT_MAX_INPUT_BYTES with 413; after 400 of 1 MB and a full queue of large ones, memory and the list stay small', async () => {
    const dir = join(base, 'serve-flood')
    await installPackage(join(dir, 'automations'), { id: 'wait', script: WAIT_FOR_RELEASE })
    const agent = await serveAgent(dir)
    try {
      const call = async (body: string): Promise<{ status: number, body: any }> => {
        const res = await fetch(`${agent.url}/api/v1/automations/wait/run`, { method: 'POST', headers: { 'x-agent-api-key': AGENT_TEST_KEY, 'content-type': 'application/json' }, body })
        return { status: res.status, body: await res.json() }
      }
      const rssBefore = agent.rss().current
      // 400 runs declaring 1 MB bodies: refused from their Content-Length, before a byte of body is read.
      const declared = await Promise.all(Array.from({ length: 400 }, async () => await declareBody(agent.url, 1_000_060)))
      expect(new Set(declared)).toEqual(new Set([413]))
      // Sent whole (chunked, no length), they are cut at the body limit.
      const sent = await call(JSON.stringify({ input: { blob: 'x'.repeat(1_000_000) } }))
      expect(sent).toMatchObject({ status: 413, body: { error: expect.stringMatching(/twice AGENT_MAX_INPUT_BYTES/) } })
      // Under the body limit, the input itself is measured.
      expect(await call(JSON.stringify({ input: { blob: 'x'.repeat(300_000) } }))).toEqual({
        status: 413, body: { error: 'input is 300011 bytes as JSON; this agent accepts at most 262144 (AGENT_MAX_INPUT_BYTES).', code: 'REQUEST_TOO_LARGE', requestId: expect.any(String) }
      })
      // Inputs just under the cap fill the queue to its default bound of 100 (one more runs), then 429.
      const largeInput = { release: join(dir, 'never'), blob: 'x'.repeat(250_000) }
      const large = JSON.stringify({ input: largeInput })
      const statuses = []
      for (let i = 0; i < 110; i++) statuses.push((await call(large)).status)
      expect(statuses.filter((c) => c === 202)).toHaveLength(101)
      expect(statuses.slice(101)).toEqual(Array(9).fill(429))
      const res = await fetch(`${agent.url}/api/v1/jobs?limit=200`, { headers: { 'x-agent-api-key': AGENT_TEST_KEY } })
      const bytes = Buffer.from(await res.arrayBuffer())
      expect(res.status).toBe(200)
      expect(bytes.length).toBeLessThan(101 * 1024)
      const list = JSON.parse(bytes.toString())
      expect(list.count).toBe(101)
      expect(list.items[0].input).toEqual({ _truncated: true, sizeBytes: Buffer.byteLength(JSON.stringify(largeInput)) })
      // The single job keeps its input.
      const one = await (await fetch(`${agent.url}/api/v1/jobs/${list.items[0].id}`, { headers: { 'x-agent-api-key': AGENT_TEST_KEY } })).json() as any
      expect(one.input.blob).toHaveLength(250_000)
      const { peak } = agent.rss()
      process.stderr.write(`agent under the flood: RSS ${Math.round(rssBefore / 2 ** 20)} MB at start, peak ${Math.round(peak / 2 ** 20)} MB\n`)
      expect(peak - rssBefore).toBeLessThan(200 * 2 ** 20)
      expect((await fetch(`${agent.url}/health`)).status).toBe(200)
    } finally {
      expect(await agent.stop()).toBe(0)
    }
  })
})

describe('deeply nested input and results', () => {
  const nested = (levels: number): string => '{"a":'.repeat(levels) + '1' + '}'.repeat(levels)

  it('refuses input nested 4,500 levels with 400 and stores nothing; the list still answers', async () => {
    const s = await start()
    await installPackage(root(s), { id: 'echo', script: ECHO })
    await reload(s)
    const refused = await post(s, 'echo', `{"input":${nested(4500)}}`)
    expect(refused).toMatchObject({ status: 400, body: { error: 'input must not nest objects and arrays more than 64 levels deep.' } })
    expect(await s.call('/api/v1/jobs')).toMatchObject({ status: 200, body: { count: 0, items: [] } })
    const accepted = await post(s, 'echo', `{"input":${nested(63)}}`)
    expect(accepted.status).toBe(202)
    expect(await untilJob(s, accepted.body.id, isTerminal)).toMatchObject({ status: 'SUCCEEDED' })
    expect(await s.call('/api/v1/jobs')).toMatchObject({ status: 200, body: { count: 1 } })
  })

  it('does not keep a package\'s result nested past the limit; the list still answers', async () => {
    const s = await start()
    await installPackage(root(s), { id: 'deep', script: `console.log('AGENT_RESULT_JSON=' + ${JSON.stringify(nested(5000))})` })
    await reload(s)
    const job = (await post(s, 'deep', '{}')).body
    expect(await untilJob(s, job.id, isTerminal)).toMatchObject({ status: 'FAILED', error: { code: 'AGENT_RESULT_INVALID' }, result: { result: null } })
    expect((await s.call('/api/v1/jobs')).status).toBe(200)
  })
})

describe('secrets in the agent\'s environment', () => {
  const DUMP = `
let stdin = ''
for await (const chunk of process.stdin) stdin += chunk
console.log('AGENT_RESULT_JSON=' + JSON.stringify({ env: process.env }))
`
  it('never hands GATEWAY_MASTER_KEY or a SIGN_TSA_URL with a password to a package, declared or not', async () => {
    const agentEnv = {
      PATH: process.env.PATH ?? '', HOME: '/home/agent', LANG: 'C.UTF-8',
      GATEWAY_MASTER_KEY: 'ab'.repeat(32), SIGN_TSA_URL: 'https://carimbo:senha-do-tsa@tsa.example/', DATABASE_URL: 'postgres://u:p@h/db',
      AGENT_API_KEY: AGENT_TEST_KEY, CLOUD_CREDENTIAL: 'c', PORTAL_URL: 'http://127.0.0.1:9/'
    }
    const s = await start({}, {}, agentEnv)
    const dir = await installPackage(root(s), { id: 'dump', script: DUMP })
    const descriptor = JSON.parse(await readFile(join(dir, 'automation.json'), 'utf8'))
    await writeFile(join(dir, 'automation.json'), JSON.stringify({ ...descriptor, env: ['PORTAL_URL'] }))
    const greedy = await installPackage(root(s), { id: 'greedy', script: DUMP })
    await writeFile(join(greedy, 'automation.json'), JSON.stringify({ ...descriptor, id: 'greedy', env: ['GATEWAY_MASTER_KEY', 'SIGN_TSA_URL'] }))
    await reload(s)
    const job = await untilJob(s, (await post(s, 'dump', '{}')).body.id, isTerminal)
    const env = job.result.result.env
    expect(Object.keys(env).sort()).toEqual(['AGENT_JOB_DIR', 'AGENT_JOB_ID', 'AGENT_JOB_INPUT', 'HOME', 'LANG', 'PATH', 'PORTAL_URL'])
    expect(JSON.stringify(env)).not.toMatch(/abababab|senha-do-tsa|postgres:|agent-test-key/)
    expect((await s.call('/api/v1/automations/greedy')).status).toBe(404)
    expect(s.logs.some((l) => l.includes('automation package skipped') && l.includes('GATEWAY_MASTER_KEY, SIGN_TSA_URL'))).toBe(true)
  })
})

describe.runIf(linux)('what is not a descriptor', () => {
  it('skips a FIFO, a device and an oversized file named automation.json; reload returns and close is prompt', async () => {
    const s = await start()
    await installPackage(root(s), { id: 'echo', script: ECHO })
    await mkdir(join(root(s), 'fifo'))
    expect(spawnSync('mkfifo', [join(root(s), 'fifo', 'automation.json')]).status).toBe(0)
    await mkdir(join(root(s), 'device'))
    await symlink('/dev/zero', join(root(s), 'device', 'automation.json'))
    await mkdir(join(root(s), 'huge'))
    await writeFile(join(root(s), 'huge', 'automation.json'), `{"pad":"${'x'.repeat(70_000)}"}`)
    const started = Date.now()
    const res = await s.call('/api/v1/automations/reload', { method: 'POST' })
    // Hang catchers, here and at the close below (a few ms at a load of 3 to 10): a FIFO
    // read as a file would wait for a writer for ever.
    expect(Date.now() - started).toBeLessThan(3000)
    expect(res.body).toMatchObject({ count: 1, items: [{ id: 'echo' }] })
    const skipped = s.logs.filter((l) => l.includes('automation package skipped'))
    expect(skipped.some((l) => l.includes('fifo') && l.includes('automation.json is not a regular file'))).toBe(true)
    expect(skipped.some((l) => l.includes('device') && l.includes('automation.json is not a regular file'))).toBe(true)
    expect(skipped.some((l) => l.includes('huge') && l.includes('automation.json is larger than 65536 bytes'))).toBe(true)
    const closing = Date.now()
    await s.app.close()
    open.splice(open.indexOf(s), 1)
    expect(Date.now() - closing).toBeLessThan(3000)
  })

  it('razao serve agent starts past a FIFO descriptor and exits on SIGTERM', async () => {
    const dir = join(base, 'serve-fifo')
    await mkdir(join(dir, 'automations', 'fifo'), { recursive: true })
    expect(spawnSync('mkfifo', [join(dir, 'automations', 'fifo', 'automation.json')]).status).toBe(0)
    const agent = await serveAgent(dir)
    const reloaded = await fetch(`${agent.url}/api/v1/automations/reload`, { method: 'POST', headers: { 'x-agent-api-key': AGENT_TEST_KEY } })
    expect(await reloaded.json()).toEqual({ count: 0, items: [] })
    const stopping = Date.now()
    expect(await agent.stop()).toBe(0)
    // A hang catcher only (about 10 ms at a load of 3 to 10).
    expect(Date.now() - stopping).toBeLessThan(5000)
  })
})

/** The environment a process was started with, as /proc shows it (NUL-separated). */
const environOf = (pid: number): string => readFileSync(`/proc/${pid}/environ`, 'latin1')

/**
 * Registers a file in its job folder, starts `sleep 300` in its own process group (as a
 * browser would be), writes the child's pid then its own (input.pidFile + '.child', input.pidFile)
 * and waits for ever.
 */
const HOLD = `
import { spawn } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
let stdin = ''
for await (const chunk of process.stdin) stdin += chunk
const { pidFile } = JSON.parse(stdin)
const out = join(process.env.AGENT_JOB_DIR, 'partial.pdf')
writeFileSync(out, '%PDF-1.4 partial')
console.log('AGENT_FILE_JSON=' + JSON.stringify({ path: out }))
const child = spawn('sleep', ['300'], { stdio: 'ignore' })
writeFileSync(pidFile + '.child', String(child.pid))
writeFileSync(pidFile, String(process.pid))
setInterval(() => {}, 1000)
`

describe.runIf(linux)('an agent killed with SIGKILL in the middle of a job (issue 32, item 9)', () => {
  /** Agents and job processes this test started, ended if it fails half-way. */
  const started: ServedProcess[] = []
  const pids: number[] = []
  afterEach(async () => {
    for (const served of started.splice(0)) served.kill()
    for (const pid of pids.splice(0)) if (isAlive(pid)) process.kill(pid, 'SIGKILL')
  })
  const serve = async (dir: string): Promise<ServedProcess> => {
    const served = await serveAgent(dir)
    started.push(served)
    return served
  }
  const call = async (url: string, path: string, init: RequestInit = {}): Promise<any> =>
    await (await fetch(`${url}${path}`, { ...init, headers: { 'x-agent-api-key': AGENT_TEST_KEY, 'content-type': 'application/json' } })).json()

  it('at its restart removes the job\'s input file (a password in clear) and ends the job\'s processes; another agent\'s job runs on', async () => {
    const dir = join(base, 'serve-killed')
    await installPackage(join(dir, 'automations'), { id: 'hold', script: HOLD })
    const agent = await serve(dir)
    const pidFile = join(dir, 'hold.pid')
    const job = await call(agent.url, '/api/v1/automations/hold/run', { method: 'POST', body: JSON.stringify({ input: { pidFile, senha: 'segredo-do-portal' } }) })
    const child = await waitForPid(`${pidFile}.child`)
    const main = await waitForPid(pidFile)
    pids.push(child, main)
    const inputFile = join(dir, 'runtime', 'inputs', `${job.id}.json`)
    expect(await readFile(inputFile, 'utf8')).toContain('segredo-do-portal')
    await expect.poll(async () => (await call(agent.url, `/api/v1/jobs/${job.id}`)).files.length).toBe(1)

    // A second agent on the same folder would take the live job's processes for leftovers: refused.
    await expect(serve(dir)).rejects.toThrow(new RegExp(`RUNTIME_DIR .* is in use by another agent \\(process ${agent.pid}\\)`))
    expect([isAlive(main), isAlive(child)]).toEqual([true, true])

    // Another agent (another runtime folder) with a job of the same package, running meanwhile.
    const bystander = await start()
    await installPackage(root(bystander), { id: 'hold', script: HOLD })
    await reload(bystander)
    const otherPidFile = join(bystander.dir, 'hold.pid')
    expect((await post(bystander, 'hold', JSON.stringify({ input: { pidFile: otherPidFile } }))).status).toBe(202)
    const otherChild = await waitForPid(`${otherPidFile}.child`)
    const otherMain = await waitForPid(otherPidFile)

    agent.kill('SIGKILL')
    expect(await agent.exited).toBeNull()
    // What the killed agent left: the input file, and both processes, marked with the job's id.
    expect(existsSync(inputFile)).toBe(true)
    for (const pid of [main, child]) {
      expect(isAlive(pid)).toBe(true)
      expect(environOf(pid).split('\0')).toContain(`AGENT_JOB_ID=${job.id}`)
    }

    const restarted = await serve(dir)
    // Cleared before the agent listens.
    expect(existsSync(inputFile)).toBe(false)
    // Hang catchers (dead 0-1 ms after the restart answered, at a load of 15 as of 32): SIGKILL is sent before the agent listens.
    expect(await untilDead(main, 10_000)).toBe(true)
    expect(await untilDead(child, 10_000)).toBe(true)
    expect([isAlive(otherMain), isAlive(otherChild)]).toEqual([true, true])
    const log = await readFile(join(dir, 'logs', 'jobs', `${job.id}.stderr.log`), 'utf8')
    expect(log).toMatch(new RegExp(`ended without finishing it .*its input file was removed; SIGKILL sent to 2 process\\(es\\) it left running: .*${main} .*main\\.mjs`))
    expect(log).toContain(`${child} sleep 300`)
    // The file registered before the kill was in the index's journal only: it is kept.
    expect(await call(restarted.url, `/api/v1/jobs/${job.id}/files`)).toMatchObject({ count: 1, items: [{ fileName: 'partial.pdf' }] })
    expect((await fetch(`${restarted.url}/health`)).status).toBe(200)
    started.splice(started.indexOf(restarted), 1)
    expect(await restarted.stop()).toBe(0)
  })
})

/** Writes input.count small files in its job folder and registers each. */
const MANY = `
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
let stdin = ''
for await (const chunk of process.stdin) stdin += chunk
const { count } = JSON.parse(stdin)
for (let i = 0; i < count; i++) {
  const path = join(process.env.AGENT_JOB_DIR, 'f' + String(i).padStart(4, '0') + '.txt')
  writeFileSync(path, 'file ' + i)
  console.log('AGENT_FILE_JSON=' + JSON.stringify({ path }))
}
console.log('AGENT_RESULT_JSON={"ok":true}')
`

describe('a file index of many records (issue 32, item 10)', () => {
  it('registers a file at the same cost however many the index holds: 4 runs of 300 files write the same bytes each, the index survives a restart', async () => {
    const s = await start()
    await installPackage(root(s), { id: 'many', script: MANY })
    await reload(s)
    const perRun: number[] = []
    const jobs: string[] = []
    for (let run = 0; run < 4; run++) {
      const before = s.app.agent.files.storeStats.writtenBytes
      const job = await untilJob(s, (await post(s, 'many', '{"input":{"count":300}}')).body.id, isTerminal, 60_000)
      expect(job).toMatchObject({ status: 'SUCCEEDED' })
      expect(job.files).toHaveLength(300)
      jobs.push(job.id)
      perRun.push(s.app.agent.files.storeStats.writtenBytes - before)
    }
    // One journal line a file: 534 bytes here as of 32, 160,200 bytes every run. Rewriting the
    // index at every registration (about 470 bytes a record) wrote 21 MB in the 1st run and
    // 148 MB in the 4th, about 340 MB over the four.
    for (const bytes of perRun) expect(bytes / perRun[0]!).toBeCloseTo(1, 1)
    expect(perRun[0]! / 300).toBeLessThan(1024)
    expect((await s.call(`/api/v1/jobs/${jobs[0]!}`)).status).toBe(200)

    await s.app.close()
    open.splice(open.indexOf(s), 1)
    const snapshot = JSON.parse(await readFile(join(s.dir, 'runtime', 'files', 'index.json'), 'utf8'))
    expect(snapshot.files).toHaveLength(1200)
    const again = await startAgent(s.dir, {})
    open.push(again)
    for (const id of jobs) expect((await again.call(`/api/v1/jobs/${id}/files`)).body.count).toBe(300)
  })
})

/**
 * input.mode 'hardlink': a hard link in the job folder to input.target, registered.
 * 'other-job': a symbolic link to input.target (another job's file), registered, and the
 * target registered by its own path. 'own': a file of its own, registered.
 */
const LINKS = `
import { linkSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
let stdin = ''
for await (const chunk of process.stdin) stdin += chunk
const { mode, target } = JSON.parse(stdin)
const dir = process.env.AGENT_JOB_DIR
const register = (path) => console.log('AGENT_FILE_JSON=' + JSON.stringify({ path }))
if (mode === 'hardlink') {
  linkSync(target, join(dir, 'shadow'))
  register(join(dir, 'shadow'))
} else if (mode === 'other-job') {
  symlinkSync(target, join(dir, 'theirs.pdf'))
  register(join(dir, 'theirs.pdf'))
  register(target)
} else {
  writeFileSync(join(dir, 'mine.pdf'), '%PDF-1.4 mine')
  register(join(dir, 'mine.pdf'))
}
console.log('AGENT_RESULT_JSON={"ok":true}')
`

describe('FILE_ALLOWED_ROOTS and links (issue 32, item 11)', () => {
  const refusals = (s: StartedAgent, jobId: string): string[] => s.logs.filter((l) => l.includes(jobId) && l.includes('file not registered')).map((l) => JSON.parse(l).msg)

  it('refuses a hard link to a file outside every allowed folder, and stops serving a registered file swapped for one', async () => {
    const s = await start()
    await installPackage(root(s), { id: 'links', script: LINKS })
    await reload(s)
    const secret = join(s.dir, 'outside', 'shadow')
    await mkdir(dirname(secret))
    await writeFile(secret, 'root:$6$not-for-download')
    const linked = await untilJob(s, (await post(s, 'links', JSON.stringify({ input: { mode: 'hardlink', target: secret } }))).body.id, isTerminal)
    expect(linked).toMatchObject({ status: 'SUCCEEDED', files: [] })
    expect(refusals(s, linked.id)).toEqual([expect.stringMatching(/^file not registered: the file has 2 hard links/)])

    const own = await untilJob(s, (await post(s, 'links', JSON.stringify({ input: { mode: 'own' } }))).body.id, isTerminal)
    const file = own.files[0]
    expect((await s.call(file.downloadUrl)).bytes.toString()).toBe('%PDF-1.4 mine')
    // The registered name now leads to the secret: another inode, answered 410.
    const path = join(s.dir, 'runtime', 'jobs', own.id, 'mine.pdf')
    await rm(path)
    await link(secret, path)
    const swapped = await s.call(file.downloadUrl)
    expect(swapped).toMatchObject({ status: 410, body: { error: 'File is no longer available.' } })
    expect(swapped.bytes.toString()).not.toContain('not-for-download')
    expect(s.logs.some((l) => l.includes(file.fileId) && l.includes('the file was replaced since it was registered'))).toBe(true)
    expect((await s.call('/health')).status).toBe(200)
  })

  it('refuses another job\'s file, through a symbolic link or by its path, and serves it only under its own job', async () => {
    const s = await start()
    await installPackage(root(s), { id: 'links', script: LINKS })
    await reload(s)
    const owner = await untilJob(s, (await post(s, 'links', JSON.stringify({ input: { mode: 'own' } }))).body.id, isTerminal)
    const target = join(s.dir, 'runtime', 'jobs', owner.id, 'mine.pdf')
    const thief = await untilJob(s, (await post(s, 'links', JSON.stringify({ input: { mode: 'other-job', target } }))).body.id, isTerminal)
    expect(thief).toMatchObject({ status: 'SUCCEEDED', files: [] })
    expect(refusals(s, thief.id)).toEqual([
      'file not registered: the file is in another job\'s folder',
      'file not registered: the file is in another job\'s folder'
    ])
    expect((await s.call(`/api/v1/jobs/${thief.id}/files/${owner.files[0].fileId}`)).status).toBe(404)
    expect((await s.call(owner.files[0].downloadUrl)).status).toBe(200)
  })
})

/**
 * Registers files under the names of input.names (one file each), and a sparse file of
 * input.sparseBytes bytes when given.
 */
const NAMES = `
import { closeSync, ftruncateSync, openSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
let stdin = ''
for await (const chunk of process.stdin) stdin += chunk
const { names, sparseBytes } = JSON.parse(stdin)
const dir = process.env.AGENT_JOB_DIR
names.forEach((fileName, i) => {
  writeFileSync(join(dir, 'file' + i), 'content ' + i)
  console.log('AGENT_FILE_JSON=' + JSON.stringify({ path: join(dir, 'file' + i), fileName }))
})
if (sparseBytes !== undefined) {
  const fd = openSync(join(dir, 'big.bin'), 'w')
  ftruncateSync(fd, sparseBytes)
  closeSync(fd)
  console.log('AGENT_FILE_JSON=' + JSON.stringify({ path: join(dir, 'big.bin') }))
}
console.log('AGENT_RESULT_JSON={"ok":true}')
`

describe('file names and downloads (issue 32, item 12)', () => {
  it('cuts names between code points, within 200 characters and 255 bytes, keeping the extension; every download answers 200', async () => {
    const s = await start()
    await installPackage(root(s), { id: 'names', script: NAMES })
    await reload(s)
    const names = ['a'.repeat(199) + '📄', 'a'.repeat(200) + '📄', '📄'.repeat(100) + '.pdf', 'half \ud83d.txt']
    const job = await untilJob(s, (await post(s, 'names', JSON.stringify({ input: { names } }))).body.id, isTerminal)
    expect(job.files.map((f: any) => f.fileName)).toEqual(['a'.repeat(199) + '📄', 'a'.repeat(200), '📄'.repeat(62) + '.pdf', 'half \ufffd.txt'])
    expect(Buffer.byteLength(job.files[2].fileName)).toBe(252)
    for (const file of job.files) {
      const res = await s.call(file.downloadUrl)
      expect(res.status, file.fileName).toBe(200)
      const name: string = file.fileName
      expect(res.headers.get('content-disposition')).toContain(/^[\x20-\x7e]*$/.test(name) ? `attachment; filename="${name}"` : `filename*=UTF-8''${encodeURIComponent(name)}`)
    }
    expect((await s.call(`/api/v1/jobs/${job.id}`)).body.files.every((f: any) => f.downloadedAt !== null)).toBe(true)
  })

  it('sets downloadedAt only when the whole file was sent: not for a download the client cut, nor for a HEAD', async () => {
    const s = await start()
    await installPackage(root(s), { id: 'names', script: NAMES })
    await reload(s)
    // 256 MiB (sparse): more than the sockets' buffers can take from a client that reads nothing.
    const job = await untilJob(s, (await post(s, 'names', JSON.stringify({ input: { names: [], sparseBytes: 256 * 2 ** 20 } }))).body.id, isTerminal)
    const file = job.files[0]
    const downloadedAt = async (): Promise<string | null> => (await s.call(`/api/v1/jobs/${job.id}`)).body.files[0].downloadedAt
    const get = async (method: string, cut: boolean): Promise<number> => await new Promise((resolve, reject) => {
      const req = request(`${s.url}${file.downloadUrl as string}`, { method, headers: { 'x-agent-api-key': AGENT_TEST_KEY } }, (res) => {
        if (cut) {
          res.destroy()
          resolve(res.statusCode ?? 0)
          return
        }
        res.resume()
        res.on('end', () => resolve(res.statusCode ?? 0))
      })
      req.on('error', reject)
      req.end()
    })
    expect(await get('GET', true)).toBe(200)
    await expect.poll(() => s.logs.some((l) => l.includes(file.fileId) && l.includes('file download interrupted'))).toBe(true)
    expect(await downloadedAt()).toBeNull()
    expect(await get('HEAD', false)).toBe(200)
    expect(await downloadedAt()).toBeNull()
    expect(await get('GET', false)).toBe(200)
    expect(Date.parse(await downloadedAt() ?? '')).toBeGreaterThan(0)
  })
})

describe('a job tells the truth (issue 36, item 4)', () => {
  // The DEC package's descriptor as shipped: its inputSchema is what the agent checks runs against.
  const decDescriptor = JSON.parse(readFileSync(new URL('../../plugins/automations/dec-issqn-poa/automation.json', import.meta.url), 'utf8')) as { inputSchema: unknown }
  const company = { razaoSocial: 'Clínica', cnpj: '11222333000181', senha: 'p"ortal-secret-1', competenciaAno: '2026', competenciaMes: '7' }

  /** A package speaking the contract: prints `lines` (result lines and log lines), waits for input.release when given, exits 0. */
  const SCRIPTED = `
import { existsSync } from 'node:fs'
let stdin = ''
for await (const chunk of process.stdin) stdin += chunk
const { steps = [], release } = JSON.parse(stdin)
for (const step of steps) {
  if (step.wait) while (!existsSync(release)) await new Promise((r) => setTimeout(r, 20))
  if (step.result) console.log('AGENT_RESULT_JSON=' + JSON.stringify(step.result))
  if (step.log) console.error(step.log)
}
`

  it('refuses an input that breaks the package\'s declared shape with 400 naming the field, before queueing; the shape is shown', async () => {
    const s = await start()
    const dir = await installPackage(root(s), { id: 'dec-shape', script: ECHO })
    const descriptor = JSON.parse(await readFile(join(dir, 'automation.json'), 'utf8')) as Record<string, unknown>
    await writeFile(join(dir, 'automation.json'), JSON.stringify({ ...descriptor, inputSchema: decDescriptor.inputSchema }))
    await installPackage(root(s), { id: 'bad-shape', script: ECHO })
    const bad = JSON.parse(await readFile(join(root(s), 'bad-shape', 'automation.json'), 'utf8')) as Record<string, unknown>
    await writeFile(join(root(s), 'bad-shape', 'automation.json'), JSON.stringify({ ...bad, inputSchema: { type: 'object', requried: ['x'] } }))
    await reload(s)
    expect(s.logs.some((l) => l.includes('automation package skipped') && l.includes('bad-shape') && l.includes('inputSchema') && l.includes('requried'))).toBe(true)

    const refusals: Array<[unknown, string]> = [
      [{}, 'input.empresas is required (the companies to declare, 1 to 500).'],
      [{ empresas: [] }, 'input.empresas must hold at least 1 item(s) (the companies to declare, 1 to 500).'],
      [{ empresas: [company, { ...company, cnpj: '123' }] }, 'input.empresas[1].cnpj is not valid (a CNPJ: 14 characters, digits or (alphanumeric CNPJ) letters then 2 digits, punctuation allowed).'],
      [{ empresas: [{ ...company, senha: undefined }] }, 'input.empresas[0].senha is required (the company\'s portal password).'],
      [{ empresas: [company], headless: 'no' }, 'input.headless must be a boolean (false opens a browser window).']
    ]
    for (const [input, message] of refusals) {
      const res = await post(s, 'dec-shape', JSON.stringify({ input }))
      expect(res.status, JSON.stringify(input)).toBe(400)
      expect(res.body).toEqual({ error: message, code: expect.any(String), requestId: expect.any(String) })
    }
    // No body at all is the input {}: refused the same way.
    expect((await s.call('/api/v1/automations/dec-shape/run', { method: 'POST' })).body).toEqual({ error: refusals[0]![1], code: expect.any(String), requestId: expect.any(String) })
    // Nothing was queued, nothing was spawned, no input file (with its passwords) was written.
    expect(s.app.agent.recentJobs(10)).toHaveLength(0)
    expect(await readdir(join(s.dir, 'runtime', 'inputs'))).toEqual([])
    expect(s.logs.join('\n')).not.toContain('p"ortal-secret-1')

    const shown = await s.call('/api/v1/automations/dec-shape')
    expect(shown.body).toMatchObject({ id: 'dec-shape', inputSchema: decDescriptor.inputSchema })
    expect((await s.call('/api/v1/automations')).body.items.every((p: any) => !('inputSchema' in p))).toBe(true)
    const ok = await post(s, 'dec-shape', JSON.stringify({ input: { empresas: [company] } }))
    expect(ok.status).toBe(202)
    expect((await untilJob(s, ok.body.id, isTerminal)).result.result.input.empresas[0].senha).toBe(company.senha)
  })

  it('ends a job FAILED (AGENT_REPORTED_FAILURE) when the package reports success: false, keeping its result', async () => {
    const s = await start()
    await installPackage(root(s), { id: 'scripted', script: SCRIPTED })
    await reload(s)
    const item = { success: false, cnpj: company.cnpj, competencia: '07/2026', download: null, mode: null, error: 'login: refused' }
    const cases: Array<[Record<string, unknown>, string, string | null]> = [
      [{ success: false, total: 1, succeeded: 0, failed: 1, items: [item] }, 'FAILED', 'The package reported that 1 of 1 item(s) failed; result.result says which and why, and what succeeded is kept.'],
      [{ success: false, total: 2, succeeded: 1, failed: 1, items: [{ ...item, success: true }, item] }, 'FAILED', 'The package reported that 1 of 2 item(s) failed; result.result says which and why, and what succeeded is kept.'],
      [{ success: false, error: 'no companies' }, 'FAILED', 'The package reported that it did not succeed (success: false in its result); result.result says why.'],
      [{ success: true, total: 1, succeeded: 1, failed: 0 }, 'SUCCEEDED', null],
      [{ done: 1 }, 'SUCCEEDED', null]
    ]
    for (const [result, status, message] of cases) {
      const queued = await post(s, 'scripted', JSON.stringify({ input: { steps: [{ result }] } }))
      const job = await untilJob(s, queued.body.id, isTerminal)
      expect(job.status, JSON.stringify(result)).toBe(status)
      expect(job.error).toEqual(message === null ? null : { code: 'AGENT_REPORTED_FAILURE', message })
      expect(job.result).toMatchObject({ success: status === 'SUCCEEDED', status, exitCode: 0, result })
    }
  })

  it('shows the package\'s intermediate results and its log while the job runs', async () => {
    const s = await start()
    await installPackage(root(s), { id: 'scripted', script: SCRIPTED })
    await reload(s)
    const release = join(s.dir, 'release')
    const first = { success: false, total: 2, succeeded: 1, failed: 0, pending: 1, items: [{ success: true, cnpj: company.cnpj }] }
    const last = { success: true, total: 2, succeeded: 2, failed: 0, items: [{ success: true, cnpj: company.cnpj }, { success: true, cnpj: '11444777000161' }] }
    const queued = await post(s, 'scripted', JSON.stringify({ input: { release, steps: [{ log: '[1/2] done' }, { result: first }, { wait: true, log: '[2/2] done' }, { result: last }] } }))
    const running = await untilJob(s, queued.body.id, (j) => j.result !== null)
    expect(running).toMatchObject({ status: 'RUNNING', finishedAt: null, error: null, result: { success: false, status: 'RUNNING', exitCode: null, signal: null, result: first } })
    expect((await s.call('/api/v1/jobs')).body.items[0].result.result).toEqual(first)
    // The log so far (held in memory while it is small), both streams by default. Two pipes
    // are read in no set order: the stderr line may come in just after the result line.
    let log = await s.call(`/api/v1/jobs/${queued.body.id}/log`)
    for (let i = 0; i < 400 && !String(log.body).includes('[1/2] done'); i++) {
      await new Promise((r) => setTimeout(r, 25))
      log = await s.call(`/api/v1/jobs/${queued.body.id}/log`)
    }
    expect(log.status).toBe(200)
    expect(log.headers.get('content-type')).toBe('text/plain; charset=utf-8')
    expect(log.body).toBe(`==> stdout <==\nAGENT_RESULT_JSON=${JSON.stringify(first)}\n==> stderr <==\n[1/2] done\n`)
    await writeFile(release, '')
    const done = await untilJob(s, queued.body.id, isTerminal)
    expect(done).toMatchObject({ status: 'SUCCEEDED', result: { success: true, status: 'SUCCEEDED', result: last } })
    expect((await s.call(`/api/v1/jobs/${queued.body.id}/log?stream=stderr`)).body).toBe('[1/2] done\n[2/2] done\n')
    expect((await s.call(`/api/v1/jobs/${queued.body.id}/log?stream=stdout`)).body).toBe(`AGENT_RESULT_JSON=${JSON.stringify(first)}\nAGENT_RESULT_JSON=${JSON.stringify(last)}\n`)
    const badStream = await s.call(`/api/v1/jobs/${queued.body.id}/log?stream=both`)
    expect([badStream.status, badStream.body]).toEqual([400, { error: 'stream must be stdout, stderr or all (the default).', code: expect.any(String), requestId: expect.any(String) }])
    for (const id of ['00000000-0000-0000-0000-000000000000', '..%2F..%2Fetc%2Fpasswd', 'x']) {
      const missing = await s.call(`/api/v1/jobs/${id}/log`)
      expect([missing.status, missing.body], id).toEqual([404, { error: 'Job not found.', code: 'JOB_NOT_FOUND', requestId: expect.any(String) }])
    }
    expect((await s.call(`/api/v1/jobs/${queued.body.id}/log`, { key: null })).status).toBe(401)
  })

  it.runIf(linux)('cancels a queued job at once and a running one by killing its process tree, escapees included; the queue moves on', async () => {
    const s = await start({ MAX_CONCURRENT_JOBS: '1' })
    await installPackage(root(s), { id: 'escape', script: ESCAPE })
    await installPackage(root(s), { id: 'echo', script: ECHO })
    await reload(s)
    const { job: running, pid } = await escapee(s, 'cancel', { stay: true })
    const queued = await post(s, 'echo', JSON.stringify({ input: {} }))
    const after = await post(s, 'echo', JSON.stringify({ input: { after: true } }))
    await untilJob(s, running.id, (j) => j.status === 'RUNNING')

    const cancelledQueued = await s.call(`/api/v1/jobs/${queued.body.id}`, { method: 'DELETE' })
    expect(cancelledQueued.status).toBe(200)
    expect(cancelledQueued.body).toMatchObject({ id: queued.body.id, status: 'FAILED', startedAt: null, result: null, error: { code: 'AGENT_CANCELLED' } })
    expect(Date.parse(cancelledQueued.body.finishedAt)).toBeGreaterThan(0)

    const cancelled = await s.call(`/api/v1/jobs/${running.id}`, { method: 'DELETE' })
    expect(cancelled.status).toBe(200)
    expect(cancelled.body).toMatchObject({ status: 'FAILED', error: { code: 'AGENT_CANCELLED', message: 'The job was cancelled (DELETE /api/v1/jobs/:id); its processes were stopped.' }, result: { success: false, status: 'FAILED' } })
    // The setsid grandchild (outside the job's process group) went with it: the answer came after the kill.
    expect(await untilDead(pid)).toBe(true)
    expect(await stderrLog(s, running.id)).toMatch(/\[agent\] the job was cancelled: SIGTERM sent to \d process\(es\): .*outside the job's process group/)
    // Again: the same answer; a job that ended on its own: 409; an unknown one: 404.
    expect((await s.call(`/api/v1/jobs/${running.id}`, { method: 'DELETE' })).body).toMatchObject({ status: 'FAILED', error: { code: 'AGENT_CANCELLED' } })
    const next = await untilJob(s, after.body.id, isTerminal)
    expect(next.status).toBe('SUCCEEDED')
    expect(s.app.agent.job(queued.body.id)?.startedAt).toBeNull()
    const ended = await s.call(`/api/v1/jobs/${after.body.id}`, { method: 'DELETE' })
    expect([ended.status, ended.body]).toEqual([409, { error: 'The job already ended (SUCCEEDED); there is nothing to cancel.', code: expect.any(String), requestId: expect.any(String) }])
    expect((await s.call('/api/v1/jobs/00000000-0000-0000-0000-000000000000', { method: 'DELETE' })).status).toBe(404)
    expect((await s.call(`/api/v1/jobs/${after.body.id}`, { method: 'DELETE', key: null })).status).toBe(401)
  })
})
