/**
 * The agent's configuration (spec 3 §8 C), with the spec's variable names (no prefix:
 * HOST, PORT, ...), read once at start-up with the shared EnvReader. NODE_ENV and
 * LOG_LEVEL are the shared ones (server/config.ts). Relative paths are taken from the
 * working directory, as the spec's defaults (`runtime/files`, `logs`, `runtime`) are.
 */
import { existsSync, readFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { EnvReader } from '../config.js'

export interface AgentConfig {
  host: string
  port: number
  executorId: string
  /** Undefined: generated once into the data folder (`agent-api-key`), unless `refuseAll`. */
  apiKey: string | undefined
  /** AGENT_API_KEY is set but empty: every /api/v1 route refuses every caller. */
  refuseAll: boolean
  jsonLimitBytes: number
  /** AGENT_MAX_INPUT_BYTES: a job's `input`, as JSON; a larger one is refused (413). */
  maxInputBytes: number
  automationsRoot: string
  maxConcurrentJobs: number
  /** AGENT_MAX_QUEUED_JOBS: jobs waiting to start; a run past it is refused (429). */
  maxQueuedJobs: number
  defaultTimeoutMs: number
  fileStorageRoot: string
  /** Where packages may register output files from; the agent's own job folders are allowed too. */
  allowedRoots: string[]
  retentionDays: number
  logDir: string
  runtimeDir: string
}

/** The spec's default; it holds on Windows only. */
export const WINDOWS_AUTOMATIONS_ROOT = 'C:\\AGENT\\Automacoes'

export function loadAgentConfig (env: NodeJS.ProcessEnv, cwd = process.cwd()): AgentConfig {
  const read = new EnvReader(env)
  const path = (name: string, fallback: string): string => resolve(cwd, read.string(name, fallback))
  const automationsRoot = path('AUTOMATIONS_ROOT', defaultAutomationsRoot())
  const allowed = read.string('FILE_ALLOWED_ROOTS', '').split(';').map((p) => p.trim()).filter((p) => p !== '')
  // EnvReader reads an empty value as unset; here the two differ (spec 3 §5 C: the key is
  // required, so a key set to nothing lets nobody in, while an unset one gets a generated key).
  const rawKey = env.AGENT_API_KEY
  const refuseAll = rawKey !== undefined && rawKey.trim() === ''
  const config: AgentConfig = {
    host: read.string('HOST', '127.0.0.1'),
    port: read.integer('PORT', 3000, 0, 65_535),
    executorId: read.string('EXECUTOR_ID', 'RPA_LOCAL_01'),
    apiKey: refuseAll ? undefined : read.optionalSecret('AGENT_API_KEY', 16),
    refuseAll,
    jsonLimitBytes: read.byteSize('JSON_LIMIT', 1024 * 1024, 1024, 100 * 1024 * 1024),
    maxInputBytes: read.byteSize('AGENT_MAX_INPUT_BYTES', 256 * 1024, 1024, 100 * 1024 * 1024),
    automationsRoot,
    maxConcurrentJobs: read.integer('MAX_CONCURRENT_JOBS', 1, 1, 64),
    maxQueuedJobs: read.integer('AGENT_MAX_QUEUED_JOBS', 100, 1, 100_000),
    defaultTimeoutMs: read.integer('DEFAULT_AUTOMATION_TIMEOUT_MS', 300_000, 1000, 86_400_000),
    fileStorageRoot: path('FILE_STORAGE_ROOT', join('runtime', 'files')),
    allowedRoots: allowed.length > 0 ? allowed.map((p) => resolve(cwd, p)) : [automationsRoot],
    retentionDays: read.integer('FILE_RETENTION_DAYS', 7, 1, 3650),
    logDir: path('LOG_DIR', 'logs'),
    runtimeDir: path('RUNTIME_DIR', 'runtime')
  }
  read.throwIfInvalid()
  return config
}

/**
 * Windows: the spec's `C:\AGENT\Automacoes`. Elsewhere: the repository's own
 * `plugins/automations`, where the packages we ship live, so `razao serve` runs them with
 * no configuration (found from this module's location, from the sources or from dist/).
 */
function defaultAutomationsRoot (): string {
  if (process.platform === 'win32') return WINDOWS_AUTOMATIONS_ROOT
  let dir = dirname(fileURLToPath(import.meta.url))
  for (let i = 0; i < 5; i++) {
    const manifest = join(dir, 'package.json')
    if (existsSync(manifest)) {
      try {
        if ((JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string }).name === 'razao') return join(dir, 'plugins', 'automations')
      } catch { /* not ours; keep walking up */ }
    }
    dir = dirname(dir)
  }
  return join(process.cwd(), 'plugins', 'automations')
}
