import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { availableParallelism, tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ConfigError, loadConfig } from './config.js'
import { runEnvironment } from '../fixtures/suite/run-env.js'

const MIB = 1024 * 1024

describe('loadConfig', () => {
  it('runs on defaults alone, with the documented values', () => {
    const config = loadConfig({}, '/srv/razao')
    expect(config.shared).toEqual({
      environment: 'development',
      dataDir: '/srv/razao/.data',
      databaseUrl: undefined,
      logLevel: 'info',
      poolSize: availableParallelism(),
      tmpDir: join(tmpdir(), 'razao'),
      maxConnections: undefined,
      headersTimeoutMs: 10_000,
      drainMaxMs: 10_000
    })
    expect(config.import).toEqual({ host: '127.0.0.1', port: 8081, apiKey: undefined, maxUploadBytes: 512 * MIB, maxInflatedBytes: 2048 * MIB, maxJobs: 16 })
  })

  it('takes every variable, relative paths from the working folder', () => {
    const config = loadConfig({
      NODE_ENV: 'production',
      RAZAO_DATA_DIR: 'state',
      RAZAO_TMP_DIR: '/var/tmp/up',
      DATABASE_URL: 'postgresql://u:p@db:5432/razao',
      LOG_LEVEL: 'warn',
      RAZAO_POOL_SIZE: '3',
      RAZAO_MAX_CONNECTIONS: '500',
      RAZAO_HEADERS_TIMEOUT_MS: '2500',
      RAZAO_DRAIN_MAX_MS: '750',
      IMPORT_HOST: '0.0.0.0',
      IMPORT_PORT: '9000',
      IMPORT_API_KEY: 'k'.repeat(32),
      IMPORT_MAX_UPLOAD_BYTES: '1048576',
      IMPORT_MAX_INFLATED_BYTES: '2097152',
      IMPORT_MAX_JOBS: '4'
    }, '/srv/razao')
    expect(config.shared).toEqual({ environment: 'production', dataDir: '/srv/razao/state', databaseUrl: 'postgresql://u:p@db:5432/razao', logLevel: 'warn', poolSize: 3, tmpDir: '/var/tmp/up', maxConnections: 500, headersTimeoutMs: 2500, drainMaxMs: 750 })
    expect(config.import).toEqual({ host: '0.0.0.0', port: 9000, apiKey: 'k'.repeat(32), maxUploadBytes: MIB, maxInflatedBytes: 2 * MIB, maxJobs: 4 })
  })

  it('names every bad variable at once and never echoes a secret', () => {
    let error: unknown
    try {
      loadConfig({ RAZAO_POOL_SIZE: '0', RAZAO_MAX_CONNECTIONS: '0', RAZAO_HEADERS_TIMEOUT_MS: '5s', RAZAO_DRAIN_MAX_MS: '600000', IMPORT_PORT: 'http', DATABASE_URL: 'mysql://u:s3cret@db/x', IMPORT_API_KEY: 'short-s3cret', LOG_LEVEL: 'loud' })
    } catch (err) {
      error = err
    }
    expect(error).toBeInstanceOf(ConfigError)
    const message = (error as Error).message
    for (const name of ['RAZAO_POOL_SIZE', 'RAZAO_MAX_CONNECTIONS', 'RAZAO_HEADERS_TIMEOUT_MS', 'RAZAO_DRAIN_MAX_MS', 'IMPORT_PORT', 'DATABASE_URL', 'IMPORT_API_KEY', 'LOG_LEVEL']) expect(message).toContain(name)
    expect(message).not.toContain('s3cret')
  })
})

describe('.env', () => {
  let dir: string
  const cli = join(import.meta.dirname, '..', 'dist', 'server', 'cli.js')
  beforeAll(async () => { dir = await mkdtemp(join(tmpdir(), 'razao-dotenv-')) })
  afterAll(async () => { await rm(dir, { recursive: true, force: true }) })

  function razao (args: string[], env: Record<string, string>): Promise<{ code: number | null, stderr: string }> {
    return new Promise((resolve) => {
      const child = spawn(process.execPath, [cli, ...args], { cwd: dir, env: { PATH: process.env.PATH ?? '', ...runEnvironment(), ...env }, stdio: ['ignore', 'ignore', 'pipe'] })
      let stderr = ''
      child.stderr.on('data', (c: Buffer) => { stderr += c.toString() })
      child.on('close', (code) => resolve({ code, stderr }))
    })
  }

  it('is read from the working folder, and the environment wins over it', async () => {
    // The built CLI: `npm test` builds before it runs the tests.
    expect(existsSync(cli), 'dist/ is built').toBe(true)
    await writeFile(join(dir, '.env'), 'IMPORT_MAX_INFLATED_BYTES=lots\n')
    const fromFile = await razao(['analyze', 'none.xlsx'], {})
    expect(fromFile.code).toBe(2)
    expect(fromFile.stderr).toMatch(/IMPORT_MAX_INFLATED_BYTES must be a whole number/)
    const overridden = await razao(['analyze', 'none.xlsx'], { IMPORT_MAX_INFLATED_BYTES: '4096' })
    expect(overridden.stderr).not.toMatch(/IMPORT_MAX_INFLATED_BYTES/)
    expect(overridden.stderr).toMatch(/none\.xlsx/)
  })
})
