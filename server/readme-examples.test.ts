/**
 * The README's "first ten minutes", run as a newcomer runs it: `razao serve all` from dist/
 * in a fresh folder, then every shell block of that section in bash, in order, as written.
 * Two things differ from a newcomer's terminal: each service listens on a free port (the
 * README's default ports are rewritten to them), and `npx razao` runs the built CLI of this
 * checkout. curl is made to fail on an HTTP error, so every call must succeed.
 */
import { execFile, spawn } from 'node:child_process'
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freshDatabase } from '../fixtures/db/test-database.js'
import type { TestDatabase } from '../fixtures/db/test-database.js'
import { runEnvironment } from '../fixtures/suite/run-env.js'

const run = promisify(execFile)
const root = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const cli = join(root, 'dist', 'server', 'cli.js')

/** The shell blocks of the README's walk-through, in order. */
async function walkThrough (): Promise<string[]> {
  const readme = await readFile(join(root, 'README.md'), 'utf8')
  const start = readme.indexOf('## The first ten minutes')
  const section = readme.slice(start, readme.indexOf('\n## ', start + 1))
  return [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1] as string)
}

async function freePort (): Promise<number> {
  const server = createServer()
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok))
  const { port } = server.address() as { port: number }
  await new Promise((ok) => server.close(ok))
  return port
}

async function waitFor (url: string, deadline: number): Promise<void> {
  for (;;) {
    try {
      if ((await fetch(url)).ok) return
    } catch { /* not listening yet */ }
    if (Date.now() > deadline) throw new Error(`${url} did not answer in time`)
    await new Promise((r) => setTimeout(r, 250))
  }
}

// The README's default ports, in the order of this table, and the variables that move them.
const SERVICES = [
  { port: 8081, variable: 'IMPORT_PORT', health: '/health' },
  { port: 8082, variable: 'SIGN_PORT', health: '/api/v1/health' },
  { port: 8083, variable: 'EXTRACT_PORT', health: '/api/v1/health' },
  { port: 8084, variable: 'GATEWAY_PORT', health: '/health' },
  { port: 3000, variable: 'PORT', health: '/health' }
] as const

const PRELUDE = `set -euo pipefail
npx () { if [ "$1" = razao ]; then shift; node "$RAZAO_CLI" "$@"; else command npx "$@"; fi; }
curl () { command curl --fail-with-body "$@"; }
`

describe('the README walk-through', () => {
  let dir: string
  let db: TestDatabase
  let env: Record<string, string>
  let ports: Map<number, number>
  let server: ReturnType<typeof spawn>
  let stderr = ''

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'razao-readme-'))
    db = await freshDatabase()
    ports = new Map()
    for (const s of SERVICES) ports.set(s.port, await freePort())
    env = {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? dir,
      ...runEnvironment(),
      DATABASE_URL: db.url,
      LOG_LEVEL: 'warn',
      RAZAO_POOL_SIZE: '1',
      RAZAO_CLI: cli,
      ...Object.fromEntries(SERVICES.map((s) => [s.variable, String(ports.get(s.port))]))
    }
    server = spawn(process.execPath, [cli, 'serve', 'all'], { cwd: dir, env, stdio: ['ignore', 'ignore', 'pipe'] })
    server.stderr!.on('data', (c: Buffer) => { stderr += c.toString() })
    const deadline = Date.now() + 150_000
    for (const s of SERVICES) await waitFor(`http://127.0.0.1:${ports.get(s.port)!}${s.health}`, deadline)
  }, 180_000)

  afterAll(async () => {
    if (server !== undefined && server.exitCode === null) {
      const exited = new Promise((ok) => server.once('close', ok))
      server.kill('SIGTERM')
      await exited
    }
    await db?.drop()
    await rm(dir, { recursive: true, force: true })
  }, 60_000)

  it('runs every shell block of "The first ten minutes" as written, each call answered with success', async () => {
    const blocks = await walkThrough()
    expect(blocks.length).toBeGreaterThanOrEqual(5)
    const outputs: string[] = []
    for (const block of blocks) {
      let script = block
      for (const [from, to] of ports) script = script.replaceAll(`127.0.0.1:${from}`, `127.0.0.1:${to}`)
      try {
        const { stdout } = await run('bash', ['-c', PRELUDE + script], { cwd: dir, env, maxBuffer: 64 * 1024 * 1024 })
        outputs.push(stdout)
      } catch (err) {
        const e = err as { stdout?: string, stderr?: string }
        throw new Error(`README block failed:\n${block}\nstdout: ${e.stdout?.slice(-2000) ?? ''}\nstderr: ${e.stderr?.slice(-2000) ?? ''}\nservices: ${stderr.slice(-2000)}`)
      }
    }
    const all = outputs.join('\n')
    // The import: the balanced ledger imported, then replaced by its reimport.
    expect(all.match(/"status":"VALIDADO"/g)?.length).toBe(2)
    expect(all).toMatch(/"diagnostico":"ARQUIVO_DESBALANCEADO"/)
    expect(all).toMatch(/"replaced_importacao_id":"[0-9a-f-]{36}"/)
    // The extraction: the named documents, recognised.
    for (const type of ['DAS', 'PGDAS_EXTRATO', 'DARF', 'NFSE_DANFSE', 'DAS_MEI']) expect(all).toContain(`"documentType":"${type}"`)
    // The signature: a signed PDF written where the README says.
    const signed = await readFile(join(dir, 'samples', 'signed.pdf'))
    expect(signed.subarray(0, 5).toString()).toBe('%PDF-')
    expect(signed.toString('latin1')).toContain('/ETSI.CAdES.detached')
    // The gateway and the agent.
    expect(all).toMatch(/"empresa_codigo":"EMP[0-9A-F]{10}"/)
    expect(all).toContain('"id":"dec-issqn-poa"')
  }, 300_000)

  it('writes, run from a checkout, only into what the repository ignores', async () => {
    // The walk-through ran in `dir` as it runs in a clone: whatever it left there would show
    // in `git status` unless .gitignore names it (a top-level entry, as `samples/` or `.data/`).
    const ignored = (await readFile(join(root, '.gitignore'), 'utf8')).split('\n').map((l) => l.trim()).filter((l) => l !== '' && !l.startsWith('#'))
    const written = await readdir(dir)
    expect(written).toEqual(expect.arrayContaining(['.data', 'samples']))
    for (const name of written) expect(ignored.some((l) => l.replace(/^\//, '').replace(/\/$/, '') === name), `${name} is git-ignored`).toBe(true)
  })
})
