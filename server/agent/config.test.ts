import { join, resolve } from 'node:path'
import { describe, expect, it } from 'vitest'
import { ConfigError } from '../config.js'
import { loadAgentConfig, WINDOWS_AUTOMATIONS_ROOT } from './config.js'

const CWD = '/srv/agent'

describe('loadAgentConfig', () => {
  it('gives the spec defaults, relative paths taken from the working directory', () => {
    const config = loadAgentConfig({}, CWD)
    expect(config).toMatchObject({
      host: '127.0.0.1',
      port: 3000,
      executorId: 'RPA_LOCAL_01',
      apiKey: undefined,
      refuseAll: false,
      jsonLimitBytes: 1024 * 1024,
      maxInputBytes: 256 * 1024,
      maxConcurrentJobs: 1,
      maxQueuedJobs: 100,
      defaultTimeoutMs: 300_000,
      fileStorageRoot: join(CWD, 'runtime', 'files'),
      retentionDays: 7,
      logDir: join(CWD, 'logs'),
      runtimeDir: join(CWD, 'runtime')
    })
    // Off Windows the default root is the repository's own packages folder; allowed roots default to it.
    if (process.platform !== 'win32') expect(config.automationsRoot).toBe(resolve(import.meta.dirname, '..', '..', 'plugins', 'automations'))
    else expect(config.automationsRoot).toBe(WINDOWS_AUTOMATIONS_ROOT)
    expect(config.allowedRoots).toEqual([config.automationsRoot])
  })

  it('reads every variable', () => {
    const config = loadAgentConfig({
      HOST: '0.0.0.0', PORT: '3100', EXECUTOR_ID: 'RPA_2', AGENT_API_KEY: 'k'.repeat(20), JSON_LIMIT: '512kb', AUTOMATIONS_ROOT: 'pkgs',
      MAX_CONCURRENT_JOBS: '3', DEFAULT_AUTOMATION_TIMEOUT_MS: '60000', FILE_STORAGE_ROOT: '/var/idx', FILE_ALLOWED_ROOTS: 'pkgs; /data/out ;',
      FILE_RETENTION_DAYS: '30', LOG_DIR: '/var/log/agent', RUNTIME_DIR: 'rt', AGENT_MAX_INPUT_BYTES: '64kb', AGENT_MAX_QUEUED_JOBS: '20'
    }, CWD)
    expect(config).toEqual({
      host: '0.0.0.0', port: 3100, executorId: 'RPA_2', apiKey: 'k'.repeat(20), refuseAll: false, jsonLimitBytes: 512 * 1024, maxInputBytes: 64 * 1024,
      automationsRoot: join(CWD, 'pkgs'), maxConcurrentJobs: 3, maxQueuedJobs: 20, defaultTimeoutMs: 60_000, fileStorageRoot: '/var/idx',
      allowedRoots: [join(CWD, 'pkgs'), '/data/out'], retentionDays: 30, logDir: '/var/log/agent', runtimeDir: join(CWD, 'rt')
    })
  })

  it('tells an empty AGENT_API_KEY (nobody gets in) from an unset one (a generated key)', () => {
    expect(loadAgentConfig({ AGENT_API_KEY: '' }, CWD)).toMatchObject({ apiKey: undefined, refuseAll: true })
    expect(loadAgentConfig({ AGENT_API_KEY: '  ' }, CWD)).toMatchObject({ apiKey: undefined, refuseAll: true })
    expect(loadAgentConfig({}, CWD)).toMatchObject({ apiKey: undefined, refuseAll: false })
  })

  it('reads JSON_LIMIT as body-parser does', () => {
    expect(loadAgentConfig({ JSON_LIMIT: '2MB' }, CWD).jsonLimitBytes).toBe(2 * 1024 * 1024)
    expect(loadAgentConfig({ JSON_LIMIT: '4096' }, CWD).jsonLimitBytes).toBe(4096)
    expect(loadAgentConfig({ JSON_LIMIT: '1.5kb' }, CWD).jsonLimitBytes).toBe(1536)
  })

  it('names every bad variable at once and never echoes the key', () => {
    let error: unknown
    try {
      loadAgentConfig({ PORT: '70000', JSON_LIMIT: 'lots', MAX_CONCURRENT_JOBS: '0', AGENT_API_KEY: 'short-secret' }, CWD)
    } catch (err) { error = err }
    expect(error).toBeInstanceOf(ConfigError)
    const message = (error as Error).message
    for (const name of ['PORT', 'JSON_LIMIT', 'MAX_CONCURRENT_JOBS', 'AGENT_API_KEY']) expect(message).toContain(name)
    expect(message).not.toContain('short-secret')
  })
})
