/**
 * Configuration is read from the environment (and an optional `.env`, loaded by the
 * CLI) once, at start-up, and validated whole: a bad value stops the process with a
 * message naming the variable. Nothing else in the code reads process.env.
 */
import { availableParallelism, tmpdir } from 'node:os'
import { join, resolve } from 'node:path'

export interface SharedConfig {
  /** NODE_ENV, reported by /health as `environment`. */
  environment: string
  dataDir: string
  databaseUrl: string | undefined
  logLevel: string
  poolSize: number
  tmpDir: string
  /** RAZAO_MAX_CONNECTIONS: open connections each service takes; undefined: derived from the open-file limit (server/connections.ts). */
  maxConnections: number | undefined
  /** RAZAO_HEADERS_TIMEOUT_MS: how long a connection may take to send a request's head before it is closed. */
  headersTimeoutMs: number
  /** RAZAO_DRAIN_MAX_MS: how long the rest of a body answered before it was read is read and thrown away, at most (server/early-answer.ts). */
  drainMaxMs: number
}

export interface ImportConfig {
  host: string
  port: number
  /** Undefined: generated once and kept in the data folder. */
  apiKey: string | undefined
  maxUploadBytes: number
  maxInflatedBytes: number
  /** Import jobs (POST /v1/imports) one instance holds at most, waiting or running; past it, 503. */
  maxJobs: number
}

export interface Config {
  shared: SharedConfig
  import: ImportConfig
}

/** A bad configuration value; the message names the variable(s) and never echoes secrets. */
export class ConfigError extends Error {
  constructor (readonly variable: string, message: string) {
    super(message.startsWith(variable) ? message : `${variable} ${message}`)
    this.name = 'ConfigError'
  }
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']
const MIB = 1024 * 1024

export function loadConfig (env: NodeJS.ProcessEnv, cwd = process.cwd()): Config {
  const read = new EnvReader(env)
  const config: Config = {
    shared: {
      environment: read.string('NODE_ENV', 'development'),
      dataDir: resolve(cwd, read.string('RAZAO_DATA_DIR', '.data')),
      databaseUrl: read.optionalUrl('DATABASE_URL', ['postgres:', 'postgresql:']),
      logLevel: read.oneOf('LOG_LEVEL', LOG_LEVELS, 'info'),
      poolSize: read.integer('RAZAO_POOL_SIZE', availableParallelism(), 1, 256),
      tmpDir: resolve(cwd, read.string('RAZAO_TMP_DIR', join(tmpdir(), 'razao'))),
      maxConnections: read.optionalInteger('RAZAO_MAX_CONNECTIONS', 1, 1_000_000),
      headersTimeoutMs: read.integer('RAZAO_HEADERS_TIMEOUT_MS', 10_000, 100, 300_000),
      drainMaxMs: read.integer('RAZAO_DRAIN_MAX_MS', 10_000, 100, 60_000)
    },
    import: {
      host: read.string('IMPORT_HOST', '127.0.0.1'),
      port: read.integer('IMPORT_PORT', 8081, 0, 65_535),
      apiKey: read.optionalSecret('IMPORT_API_KEY', 16),
      maxUploadBytes: read.integer('IMPORT_MAX_UPLOAD_BYTES', 512 * MIB, 1024, Number.MAX_SAFE_INTEGER),
      maxInflatedBytes: read.integer('IMPORT_MAX_INFLATED_BYTES', 2048 * MIB, 1024, Number.MAX_SAFE_INTEGER),
      maxJobs: read.integer('IMPORT_MAX_JOBS', 16, 1, 10_000)
    }
  }
  read.throwIfInvalid()
  return config
}

/** Collects every bad variable before failing, so one start-up reports them all. Each service's own config loader uses one. */
export class EnvReader {
  private readonly errors: ConfigError[] = []
  constructor (private readonly env: NodeJS.ProcessEnv) {}

  private raw (name: string): string | undefined {
    const value = this.env[name]
    return value === undefined || value.trim() === '' ? undefined : value.trim()
  }

  string (name: string, fallback: string): string {
    return this.raw(name) ?? fallback
  }

  integer (name: string, fallback: number, min: number, max: number): number {
    const value = this.raw(name)
    if (value === undefined) return fallback
    const n = Number(value)
    if (!/^\d+$/.test(value) || !Number.isSafeInteger(n) || n < min || n > max) {
      this.errors.push(new ConfigError(name, `must be a whole number from ${min} to ${max}, got "${value}"`))
      return fallback
    }
    return n
  }

  optionalInteger (name: string, min: number, max: number): number | undefined {
    return this.raw(name) === undefined ? undefined : this.integer(name, NaN, min, max)
  }

  oneOf (name: string, allowed: string[], fallback: string): string {
    const value = this.raw(name)
    if (value === undefined) return fallback
    if (!allowed.includes(value)) {
      this.errors.push(new ConfigError(name, `must be one of ${allowed.join(', ')}, got "${value}"`))
      return fallback
    }
    return value
  }

  /** A size such as `1mb`, `512kb` or `1048576` (bytes; k/m/g are powers of 1024, as body-parser reads them). */
  byteSize (name: string, fallback: number, min: number, max: number): number {
    const value = this.raw(name)
    if (value === undefined) return fallback
    const match = /^(\d+(?:\.\d+)?)\s*(b|kb|mb|gb)?$/i.exec(value)
    const n = match === null ? NaN : Math.floor(Number(match[1]) * 1024 ** ['b', 'kb', 'mb', 'gb'].indexOf((match[2] ?? 'b').toLowerCase()))
    if (!Number.isSafeInteger(n) || n < min || n > max) {
      this.errors.push(new ConfigError(name, `must be a size from ${min} to ${max} bytes such as 1mb, 512kb or 1048576, got "${value}"`))
      return fallback
    }
    return n
  }

  optionalUrl (name: string, protocols: string[]): string | undefined {
    const value = this.raw(name)
    if (value === undefined) return undefined
    let url: URL | undefined
    try { url = new URL(value) } catch { url = undefined }
    if (url === undefined || !protocols.includes(url.protocol)) {
      // Never echo the value: a connection string carries a password.
      this.errors.push(new ConfigError(name, `must be a URL starting with ${protocols.map((p) => `${p}//`).join(' or ')}`))
      return undefined
    }
    return value
  }

  optionalSecret (name: string, minLength: number): string | undefined {
    const value = this.raw(name)
    if (value !== undefined && value.length < minLength) {
      this.errors.push(new ConfigError(name, `must be at least ${minLength} characters long`))
      return undefined
    }
    return value
  }

  throwIfInvalid (): void {
    if (this.errors.length === 1) throw this.errors[0]!
    if (this.errors.length > 1) {
      throw new ConfigError(this.errors.map((e) => e.variable).join(', '), `invalid configuration: ${this.errors.map((e) => e.message).join('; ')}`)
    }
  }
}
