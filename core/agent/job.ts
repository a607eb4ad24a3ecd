/**
 * The Job resource (spec 3 §2 C) and its errors. A job is held in memory only, in
 * exactly the shape the API returns; its `files` are read from the file index when
 * answered, so a download's `downloadedAt` shows there too.
 */
import type { FileRecord } from './files.js'

export type JobStatus = 'QUEUED' | 'RUNNING' | 'SUCCEEDED' | 'FAILED' | 'TIMED_OUT'
export const TERMINAL_STATUSES: ReadonlySet<JobStatus> = new Set(['SUCCEEDED', 'FAILED', 'TIMED_OUT'])

/**
 * Why a job did not succeed: `error` of a FAILED or TIMED_OUT job. The spec leaves the
 * shape open; ours is `{ code, message }`, `code` from this list, `message` for people.
 */
export const JobErrorCode = {
  /** The program could not be started (not found, not executable); the runner result's status is FAILED_TO_START. */
  AGENT_FAILED_TO_START: 'AGENT_FAILED_TO_START',
  /** The package passed its time limit; its whole process tree was killed. */
  AGENT_TIMED_OUT: 'AGENT_TIMED_OUT',
  /** The process ended with a non-zero exit code or was killed by a signal. */
  AGENT_EXIT_NON_ZERO: 'AGENT_EXIT_NON_ZERO',
  /** The process ended cleanly but printed no `AGENT_RESULT_JSON=` line. */
  AGENT_NO_RESULT: 'AGENT_NO_RESULT',
  /** The last `AGENT_RESULT_JSON=` line does not hold a JSON object. */
  AGENT_RESULT_INVALID: 'AGENT_RESULT_INVALID',
  /** The agent stopped before the job could finish (or start); a running package was killed. */
  AGENT_SHUTDOWN: 'AGENT_SHUTDOWN',
  /** The package ran to its end (exit code 0) but its result says `success: false` (the DEC package: a company failed). */
  AGENT_REPORTED_FAILURE: 'AGENT_REPORTED_FAILURE',
  /** A client cancelled the job (DELETE /api/v1/jobs/:id): still queued, it never ran; running, its process tree was stopped. */
  AGENT_CANCELLED: 'AGENT_CANCELLED'
} as const
export type JobErrorCode = keyof typeof JobErrorCode

export interface JobError {
  code: JobErrorCode
  message: string
}

/**
 * `result` of a job: what the runner saw, with the package's own JSON (its
 * `AGENT_RESULT_JSON=` line) in `result`. `success` is true when the job SUCCEEDED;
 * `status` is FAILED_TO_START when the program could not be spawned (spec 3 §3 C), and
 * RUNNING while the job runs and has printed an intermediate result.
 */
export interface RunnerResult {
  success: boolean
  status: 'RUNNING' | 'SUCCEEDED' | 'FAILED' | 'TIMED_OUT' | 'FAILED_TO_START'
  exitCode: number | null
  signal: string | null
  durationMs: number
  /** The package's result object; kept even when the job failed afterwards (a partial result). */
  result: Record<string, unknown> | null
}

export interface Job {
  id: string
  jobId: string
  requestId: string
  automationId: string
  status: JobStatus
  createdAt: string
  startedAt: string | null
  finishedAt: string | null
  /** The request's input with every `senha`/`password` field masked; the package gets the real one. */
  input: Record<string, unknown>
  result: RunnerResult | null
  files: FileRecord[]
  error: JobError | null
}

/**
 * Deepest nesting a job's input or a package's result may have. Real inputs are three
 * levels deep (a list of companies of plain fields); a deep one only costs: recursion in
 * masking and serializing, and a job list that no longer serializes.
 */
export const MAX_JSON_DEPTH = 64

/** Whether `value` (parsed JSON) nests at most `maxDepth` arrays and objects; walked without recursion. */
export function depthWithin (value: unknown, maxDepth: number): boolean {
  const pending: Array<[unknown, number]> = [[value, 0]]
  while (pending.length > 0) {
    const [v, depth] = pending.pop()!
    if (typeof v !== 'object' || v === null) continue
    if (depth + 1 > maxDepth) return false
    for (const child of Object.values(v as Record<string, unknown>)) {
      if (typeof child === 'object' && child !== null) pending.push([child, depth + 1])
    }
  }
  return true
}

/** Field names whose values never leave the agent in a job (case-insensitive). */
const SECRET_FIELDS = new Set(['senha', 'password'])
export const MASK = '********'

/**
 * The echo of a job's input: a copy with every field named `senha` or `password`
 * replaced by MASK, at any depth and inside arrays. The spec's plain echo would hand the
 * portal passwords to anyone allowed to list jobs.
 */
export function maskSecrets<T> (value: T): T {
  if (Array.isArray(value)) return value.map((v: unknown) => maskSecrets(v)) as T
  if (typeof value !== 'object' || value === null) return value
  const out: Record<string, unknown> = {}
  for (const [key, v] of Object.entries(value as Record<string, unknown>)) {
    // defineProperty: a JSON key "__proto__" stays a plain field instead of setting the copy's prototype.
    Object.defineProperty(out, key, { value: SECRET_FIELDS.has(key.toLowerCase()) && v !== null && v !== undefined ? MASK : maskSecrets(v), enumerable: true, writable: true, configurable: true })
  }
  return out as T
}
