/**
 * `razao serve agent` as an operator starts it: a process of its own, configured by the
 * environment, stopped by SIGTERM with its running job killed and marked.
 */
import { spawn } from 'node:child_process'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ECHO, installPackage, WAIT_FOR_RELEASE } from '../../fixtures/agent/packages.js'
import { razaoArgs } from '../../fixtures/razao-cli.js'
import { runEnvironment } from '../../fixtures/suite/run-env.js'

const ROOT = join(import.meta.dirname, '..', '..')

let dir: string
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'razao-agent-serve-'))
  await installPackage(join(dir, 'automations'), { id: 'echo', script: ECHO })
  await installPackage(join(dir, 'automations'), { id: 'wait', script: WAIT_FOR_RELEASE })
})
afterAll(async () => { await rm(dir, { recursive: true, force: true }) })

/** The terminal messages (stderr) and the JSON log (stdout). */
interface Served { code: number | null, stderr: string, log: string }

/** Starts the agent, runs `use` against its URL, then sends SIGTERM and waits for the exit. */
async function serve (env: Record<string, string>, use: (url: string) => Promise<void>): Promise<Served> {
  const child = spawn(process.execPath, [...razaoArgs(), 'serve', 'agent'], {
    // The repository's folder, where `--import tsx` resolves when the sources run (the service's worker threads load it too).
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? '', ...runEnvironment(), RAZAO_DATA_DIR: join(dir, '.data'), PORT: '0', AUTOMATIONS_ROOT: join(dir, 'automations'), LOG_LEVEL: 'warn',
      RUNTIME_DIR: join(dir, 'runtime'), LOG_DIR: join(dir, 'logs'), FILE_STORAGE_ROOT: join(dir, 'runtime', 'files'), ...env
    },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  let stderr = ''
  let log = ''
  child.stdout.on('data', (c: Buffer) => { log += c.toString() })
  const exited = new Promise<number | null>((resolve) => child.on('close', resolve))
  const url = await new Promise<string>((resolve, reject) => {
    child.stderr.on('data', (c: Buffer) => {
      stderr += c.toString()
      const found = /agent service listening on (http:\/\/\S+)/.exec(stderr)?.[1]
      if (found !== undefined) resolve(found)
    })
    void exited.then(() => reject(new Error(`the agent exited: ${stderr}`)))
  })
  try {
    await use(url)
  } finally {
    child.kill('SIGTERM')
  }
  return { code: await exited, stderr, log }
}

async function until (url: string, key: string, id: string, done: (status: string) => boolean): Promise<any> {
  for (;;) {
    const job = await (await fetch(`${url}/api/v1/jobs/${id}`, { headers: { 'x-agent-api-key': key } })).json() as any
    if (done(job.status)) return job
    await new Promise((r) => setTimeout(r, 25))
  }
}

describe('razao serve agent', () => {
  it('generates a development key once, runs jobs, and on SIGTERM kills the running job and exits 0', async () => {
    let running = ''
    const first = await serve({}, async (url) => {
      const key = (await readFile(join(dir, '.data', 'agent-api-key'), 'utf8')).trim()
      const health = await (await fetch(`${url}/health`)).json()
      expect(health).toMatchObject({ status: 'UP', version: '1.1.0', executor: 'RPA_LOCAL_01', automationsLoaded: 2 })
      const post = async (id: string, input: object): Promise<any> => await (await fetch(`${url}/api/v1/automations/${id}/run`, {
        method: 'POST', headers: { 'x-agent-api-key': key, 'content-type': 'application/json' }, body: JSON.stringify({ input })
      })).json()
      const echo = await until(url, key, (await post('echo', { a: 1 })).id, (s) => s === 'SUCCEEDED')
      expect(echo.result.result.input).toEqual({ a: 1 })
      running = (await post('wait', { release: join(dir, 'never') })).id
      await until(url, key, running, (s) => s === 'RUNNING')
    })
    expect(first.code).toBe(0)
    expect(first.stderr).toMatch(/Generated a development API key for the agent service/)
    expect(first.stderr).toMatch(/X-AGENT-API-KEY/)
    expect(first.stderr).toContain((await readFile(join(dir, '.data', 'agent-api-key'), 'utf8')).trim())
    expect(first.log).toMatch(/stopping 1 running job/)
    expect(first.log).toContain(running)
    expect(first.log).toMatch(/"status":"FAILED","code":"AGENT_SHUTDOWN"/)

    const second = await serve({ AGENT_API_KEY: '' }, async (url) => {
      const key = (await readFile(join(dir, '.data', 'agent-api-key'), 'utf8')).trim()
      expect((await fetch(`${url}/api/v1/automations`, { headers: { 'x-agent-api-key': key } })).status).toBe(401)
    })
    expect(second.code).toBe(0)
    expect(second.stderr).toMatch(/AGENT_API_KEY is set but empty/)
    expect(second.stderr).not.toMatch(/Generated/)
  })
})
