/**
 * The parts of the scale-out test (scale-out.test.ts), each a real program on loopback:
 * Debian's PostgreSQL 15, PgBouncer in session pooling in front of it (and one in
 * transaction pooling, which razao must refuse), HAProxy
 * (least connections) in front of the razao instances, and the instances themselves
 * (`razao serve import|gateway`, one process each). Every process is started here and
 * stopped by its own pid; nothing listens beyond 127.0.0.1.
 *
 * PostgreSQL and PgBouncer refuse to run as root; under root (CI) they run as the
 * system user `postgres`, as the embedded server does (core/db/embedded.ts).
 */
import { execFile, spawn } from 'node:child_process'
import type { ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { access, chown, mkdir, writeFile } from 'node:fs/promises'
import { connect, createServer } from 'node:net'
import { join } from 'node:path'
import { promisify } from 'node:util'

const run = promisify(execFile)

export const PG_BIN = '/usr/lib/postgresql/15/bin'
const PGBOUNCER = '/usr/sbin/pgbouncer'
const HAPROXY = '/usr/sbin/haproxy'

/** The Debian packages the test needs, by the program each provides. */
export const TOOLS: Record<string, string> = { [`${PG_BIN}/postgres`]: 'postgresql-15', [PGBOUNCER]: 'pgbouncer', [HAPROXY]: 'haproxy' }

export async function missingTools (): Promise<string[]> {
  const missing: string[] = []
  for (const [path, pkg] of Object.entries(TOOLS)) await access(path).catch(() => missing.push(pkg))
  return missing
}

export async function freePort (): Promise<number> {
  return await new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      server.close(() => resolve(typeof address === 'object' && address !== null ? address.port : 0))
    })
  })
}

/** Every process started here and not yet stopped, so that a failed start leaves none behind. */
const started = new Set<Proc>()

/** Stops every process still running, the balancer and instances first, the database last. */
export async function stopAll (): Promise<void> {
  const order = ['haproxy', 'razao', 'pgbouncer', 'postgres']
  const procs = [...started].sort((a, b) => order.findIndex((o) => a.name.startsWith(o)) - order.findIndex((o) => b.name.startsWith(o)))
  for (const proc of procs) await proc.stop(proc.name === 'postgres' ? 'SIGINT' : 'SIGTERM')
}

/** A process we started: its output kept for the failure message, stopped by its pid. */
export class Proc {
  output = ''
  readonly exited: Promise<number | null>

  constructor (readonly name: string, readonly child: ChildProcess) {
    const keep = (c: Buffer): void => { this.output = (this.output + c.toString()).slice(-20_000) }
    child.stdout?.on('data', keep)
    child.stderr?.on('data', keep)
    started.add(this)
    this.exited = new Promise((resolve) => child.once('exit', (code, signal) => {
      started.delete(this)
      resolve(code ?? (signal === null ? null : -1))
    }))
  }

  get pid (): number {
    return this.child.pid!
  }

  get running (): boolean {
    return this.child.exitCode === null && this.child.signalCode === null
  }

  /** Sends `signal` to this pid and waits for the exit; SIGKILL after `graceMs`. */
  async stop (signal: NodeJS.Signals = 'SIGTERM', graceMs = 10_000): Promise<void> {
    if (!this.running) return
    process.kill(this.pid, signal)
    const timer = setTimeout(() => { if (this.running) process.kill(this.pid, 'SIGKILL') }, graceMs)
    await this.exited
    clearTimeout(timer)
  }

  /** Resolves with the first match of `pattern` in the output, or rejects when the process exits first. */
  async waitFor (pattern: RegExp, timeoutMs = 60_000): Promise<RegExpExecArray> {
    const started = Date.now()
    for (;;) {
      const match = pattern.exec(this.output)
      if (match !== null) return match
      if (!this.running) throw new Error(`${this.name} exited before printing ${String(pattern)}:\n${this.output}`)
      if (Date.now() - started > timeoutMs) throw new Error(`${this.name} did not print ${String(pattern)} within ${timeoutMs} ms:\n${this.output}`)
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
  }
}

/** Under root: the `postgres` system user's ids (Debian's postgresql package creates it). */
async function serviceUser (): Promise<{ uid: number, gid: number } | undefined> {
  if (process.getuid?.() !== 0) return undefined
  const uid = Number((await run('id', ['-u', 'postgres'])).stdout.trim())
  const gid = Number((await run('id', ['-g', 'postgres'])).stdout.trim())
  return { uid, gid }
}

export interface Postgres { proc: Proc, port: number, user: string, password: string, database: string }

/** A fresh PostgreSQL 15 cluster in `dir`, password authentication on loopback, and an empty database. */
export async function startPostgres (dir: string): Promise<Postgres> {
  const owner = await serviceUser()
  const data = join(dir, 'pg')
  await mkdir(data, { mode: 0o700 })
  const user = 'razao'
  const password = randomBytes(12).toString('hex')
  const pwfile = join(dir, 'pg-password')
  await writeFile(pwfile, `${password}\n`, { mode: 0o600 })
  if (owner !== undefined) {
    await chown(dir, owner.uid, owner.gid)
    await chown(data, owner.uid, owner.gid)
    await chown(pwfile, owner.uid, owner.gid)
  }
  const ids = owner === undefined ? {} : { uid: owner.uid, gid: owner.gid }
  await promisify(execFile)(`${PG_BIN}/initdb`, ['-D', data, '-U', user, `--pwfile=${pwfile}`, '--auth=scram-sha-256', '-E', 'UTF8', '--no-sync'], ids)
  const port = await freePort()
  const proc = new Proc('postgres', spawn(`${PG_BIN}/postgres`, [
    '-D', data, '-p', String(port), '-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories=', '-c', 'max_connections=100',
    '-c', 'fsync=off', '-c', 'max_wal_size=1GB'
  ], { ...ids, stdio: ['ignore', 'pipe', 'pipe'] }))
  await proc.waitFor(/database system is ready to accept connections/)
  const database = 'razao'
  const pg = (await import('pg')).default
  const client = new pg.Client({ host: '127.0.0.1', port, user, password, database: 'postgres' })
  await client.connect()
  try { await client.query(`CREATE DATABASE ${database}`) } finally { await client.end() }
  return { proc, port, user, password, database }
}

export interface Pooler { proc: Proc, port: number, settings: string }

/**
 * PgBouncer in front of `pg`. In session pooling (what razao needs) a session keeps its server
 * connection until it closes; transaction pooling, which razao refuses at start, is started
 * too, to show that refusal.
 */
export async function startPgBouncer (dir: string, pg: Postgres, mode: 'session' | 'transaction' = 'session'): Promise<Pooler> {
  const owner = await serviceUser()
  const port = await freePort()
  const settings = [
    `pool_mode = ${mode}`,
    'max_client_conn = 200',
    'default_pool_size = 40',
    'server_reset_query = DISCARD ALL',
    'auth_type = scram-sha-256',
    'ignore_startup_parameters = extra_float_digits'
  ]
  const ini = [
    '[databases]',
    `${pg.database} = host=127.0.0.1 port=${pg.port} dbname=${pg.database}`,
    '[pgbouncer]',
    'listen_addr = 127.0.0.1',
    `listen_port = ${port}`,
    'unix_socket_dir =',
    `auth_file = ${join(dir, 'userlist.txt')}`,
    ...settings,
    ''
  ].join('\n')
  const iniFile = join(dir, `pgbouncer-${mode}.ini`)
  await writeFile(join(dir, 'userlist.txt'), `"${pg.user}" "${pg.password}"\n`, { mode: 0o600 })
  await writeFile(iniFile, ini, { mode: 0o600 })
  if (owner !== undefined) for (const f of [join(dir, 'userlist.txt'), iniFile]) await chown(f, owner.uid, owner.gid)
  const proc = new Proc(`pgbouncer ${mode}`, spawn(PGBOUNCER, [iniFile], {
    ...(owner === undefined ? {} : { uid: owner.uid, gid: owner.gid }), stdio: ['ignore', 'pipe', 'pipe']
  }))
  await proc.waitFor(/process up|listening on 127\.0\.0\.1/)
  return { proc, port, settings: settings.filter((s) => !s.startsWith('auth_type')).join(', ') }
}

export function pgBouncerUrl (pg: Postgres, pooler: Pooler): string {
  return `postgres://${pg.user}:${pg.password}@127.0.0.1:${pooler.port}/${pg.database}`
}

export interface Balancer {
  proc: Proc
  ports: Record<string, number>
  settings: string
  /** Resolves once the balancer forwards to `group` again (a server passed its health check). */
  untilUp: (group: string) => Promise<void>
}

/** HAProxy: one front per group of instances, least connections, failed connections redispatched. */
export async function startHaproxy (dir: string, groups: Record<string, number[]>): Promise<Balancer> {
  const ports: Record<string, number> = {}
  const defaults = [
    'mode http',
    'balance leastconn',
    'option redispatch 1',
    'retries 3',
    'timeout connect 2s',
    'timeout client 120s',
    'timeout server 120s',
    'option httpchk GET /health',
    'default-server check inter 500ms fall 2 rise 2'
  ]
  const lines = ['global', '  maxconn 512', 'defaults', ...defaults.map((d) => `  ${d}`)]
  for (const [name, backends] of Object.entries(groups)) {
    const port = ports[name] = await freePort()
    lines.push(`listen ${name}`, `  bind 127.0.0.1:${port}`, ...backends.map((p, i) => `  server ${name}${i} 127.0.0.1:${p}`))
  }
  const cfg = join(dir, 'haproxy.cfg')
  await writeFile(cfg, `${lines.join('\n')}\n`)
  // -db: stay in the foreground (our child, stopped by its pid); -V: say when it is up.
  const proc = new Proc('haproxy', spawn(HAPROXY, ['-db', '-V', '-f', cfg], { stdio: ['ignore', 'pipe', 'pipe'] }))
  await proc.waitFor(/Using \S+ as the polling mechanism/)
  for (const port of Object.values(ports)) await untilListening(port, proc)
  const untilUp = async (group: string): Promise<void> => {
    for (let ok = 0, i = 0; ok < 2; i++) {
      const res = await fetch(`http://127.0.0.1:${ports[group]!}/health`).catch(() => undefined)
      ok = res?.status === 200 ? ok + 1 : 0
      if (i > 600) throw new Error(`HAProxy never saw ${group} up:\n${proc.output}`)
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
  }
  return { proc, ports, settings: defaults.join(', '), untilUp }
}

async function untilListening (port: number, proc: Proc): Promise<void> {
  for (let i = 0; ; i++) {
    const ok = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1', () => { socket.destroy(); resolve(true) })
      socket.once('error', () => resolve(false))
    })
    if (ok) return
    if (!proc.running || i > 200) throw new Error(`${proc.name} does not listen on ${port}:\n${proc.output}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

export interface Instance { proc: Proc, port: number, service: 'import' | 'gateway' }

/**
 * `razao serve <service>` in its own process, on `port` (0: a free one). `razao` is the node
 * arguments that run the command (the test passes fixtures/razao-cli.ts's choice, the built
 * CLI when it is current: this module may not import fixtures/).
 */
export async function startInstance (razao: string[], service: 'import' | 'gateway', env: Record<string, string>, port = 0): Promise<Instance> {
  const portVariable = service === 'import' ? 'IMPORT_PORT' : 'GATEWAY_PORT'
  const proc = new Proc(`razao ${service}`, spawn(process.execPath, [...razao, 'serve', service], {
    cwd: join(import.meta.dirname, '..', '..'),
    env: { ...process.env, LOG_LEVEL: 'warn', NODE_ENV: '', ...env, [portVariable]: String(port) },
    stdio: ['ignore', 'pipe', 'pipe']
  }))
  const match = await proc.waitFor(new RegExp(`${service} service listening on http://127\\.0\\.0\\.1:(\\d+)`), 90_000)
  return { proc, port: Number(match[1]), service }
}

/**
 * `razao serve <service>` expected to stop at start: its exit code and output once it has
 * exited, or `listening` (the instance stopped here) when it started instead.
 */
export async function runRefusedInstance (razao: string[], service: 'import' | 'gateway', env: Record<string, string>): Promise<{ code: number | null | 'listening', output: string }> {
  const proc = new Proc(`razao ${service} (refused)`, spawn(process.execPath, [...razao, 'serve', service], {
    cwd: join(import.meta.dirname, '..', '..'),
    env: { ...process.env, LOG_LEVEL: 'warn', NODE_ENV: '', IMPORT_PORT: '0', GATEWAY_PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe']
  }))
  const listening = proc.waitFor(/service listening on/, 90_000).then(() => 'listening' as const, () => undefined)
  const code = await Promise.race([proc.exited, listening])
  if (code === 'listening') await proc.stop()
  return { code: code ?? await proc.exited, output: proc.output }
}
