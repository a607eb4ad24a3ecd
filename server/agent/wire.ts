/**
 * The agent's answers outside the Job resource (which core/agent keeps in the spec's
 * shape already): packages, lists, error bodies, download headers.
 */
import { depthWithin, MAX_JSON_DEPTH } from '../../core/agent/index.js'
import type { AutomationPackage, Job, LogStream } from '../../core/agent/index.js'

/** Spec 3 §6 C: every error body is `{ "error": "..." }`. */
export const MESSAGES = {
  notFound: 'Route not found.',
  unauthorized: 'Invalid or missing API key.',
  automationNotFound: 'Automation not found.',
  automationDisabled: 'Automation is disabled.',
  jobNotFound: 'Job not found.',
  fileNotFound: 'File not found.',
  fileGone: 'File is no longer available.',
  badLimit: 'limit must be a whole number from 1 to 200.',
  badUrl: 'The request URL is malformed.',
  badLogStream: 'stream must be stdout, stderr or all (the default).'
} as const

/** Seconds a client is asked to wait when the queue is full (Retry-After). */
export const QUEUE_FULL_RETRY_AFTER_S = 10

/** A refusal decided in a route: its status, the `error` text and any headers it needs. */
export class HttpRefusal extends Error {
  constructor (readonly status: number, message: string, readonly headers: Record<string, string> = {}) {
    super(message)
    this.name = 'HttpRefusal'
  }
}

/** The package as the API shows it (spec 3 §2 C): the command and directory stay private. */
export function toPackage (pkg: AutomationPackage): Record<string, unknown> {
  return { schemaVersion: pkg.schemaVersion, id: pkg.id, name: pkg.name, version: pkg.version, enabled: pkg.enabled }
}

/** One package (`GET /api/v1/automations/:id`): the list's fields and the shape it declares for its input (null: any object). */
export function toPackageDetail (pkg: AutomationPackage): Record<string, unknown> {
  return { ...toPackage(pkg), inputSchema: pkg.inputSchema ?? null }
}

export function toPackageList (packages: AutomationPackage[]): { count: number, items: Array<Record<string, unknown>> } {
  return { count: packages.length, items: packages.map(toPackage) }
}

export interface RunRequestBody {
  requestId: string | undefined
  input: Record<string, unknown>
  /** Size of the input's JSON. */
  inputBytes: number
}

/**
 * The run endpoint's body: `requestId` (optional string), `input` (object; absent: `{}`),
 * nested at most MAX_JSON_DEPTH levels and at most `maxInputBytes` as JSON. Checked
 * before anything is stored: a refused run leaves no job behind.
 */
export function parseRunBody (body: unknown, maxInputBytes: number): RunRequestBody {
  if (body === undefined || body === null) return { requestId: undefined, input: {}, inputBytes: 2 }
  if (typeof body !== 'object' || Array.isArray(body)) throw new HttpRefusal(400, 'The body must be a JSON object with "input" (an object) and optionally "requestId" (a string).')
  const b = body as Record<string, unknown>
  if (b.requestId !== undefined && b.requestId !== null && (typeof b.requestId !== 'string' || b.requestId.trim() === '' || b.requestId.length > 200)) {
    throw new HttpRefusal(400, 'requestId must be a non-empty string of at most 200 characters.')
  }
  if (b.input !== undefined && (typeof b.input !== 'object' || b.input === null || Array.isArray(b.input))) {
    throw new HttpRefusal(400, 'input must be a JSON object.')
  }
  const input = (b.input as Record<string, unknown> | undefined) ?? {}
  // Depth first: serializing (to measure) recurses.
  if (!depthWithin(input, MAX_JSON_DEPTH)) throw new HttpRefusal(400, `input must not nest objects and arrays more than ${MAX_JSON_DEPTH} levels deep.`)
  const inputBytes = Buffer.byteLength(JSON.stringify(input))
  if (inputBytes > maxInputBytes) throw new HttpRefusal(413, `input is ${inputBytes} bytes as JSON; this agent accepts at most ${maxInputBytes} (AGENT_MAX_INPUT_BYTES).`)
  return { requestId: typeof b.requestId === 'string' ? b.requestId : undefined, input, inputBytes }
}

/**
 * The job list's body, `{ count, items }`, serialized one job at a time: a job that
 * cannot be serialized (it should not exist: inputs and results are checked on the way
 * in) is listed without its input and result instead of failing the whole list.
 */
export function serializeJobList (items: Job[]): string {
  const parts = items.map((job) => {
    try {
      return JSON.stringify(job)
    } catch {
      return JSON.stringify({ ...job, input: { _unserializable: true }, result: job.result === null ? null : { ...job.result, result: { _unserializable: true } } })
    }
  })
  return `{"count":${items.length},"items":[${parts.join(',')}]}`
}

/** `limit` of the job list: 1 to 200, 50 when absent (spec 3 §8 C). */
export function parseLimit (value: unknown): number {
  if (value === undefined) return 50
  const text = Array.isArray(value) ? undefined : String(value)
  if (text === undefined || !/^\d{1,3}$/.test(text)) throw new HttpRefusal(400, MESSAGES.badLimit)
  const n = Number(text)
  if (n < 1 || n > 200) throw new HttpRefusal(400, MESSAGES.badLimit)
  return n
}

/** `stream` of the job log: `stdout`, `stderr`, or `all` (the default, both). */
export function parseLogStream (value: unknown): LogStream {
  if (value === undefined) return 'all'
  if (value === 'stdout' || value === 'stderr' || value === 'all') return value
  throw new HttpRefusal(400, MESSAGES.badLogStream)
}

/**
 * Content-Disposition of a download: a plain-ASCII `filename` every client reads, and
 * the exact name in `filename*` (RFC 6266 §4.3 with RFC 5987 encoding) when it has more.
 */
export function contentDisposition (fileName: string): string {
  const ascii = fileName.normalize('NFKD').replace(/[\u0300-\u036f]/g, '').replace(/[^\x20-\x7e]|["\\]/g, '_')
  const header = `attachment; filename="${ascii}"`
  if (ascii === fileName) return header
  const encoded = encodeURIComponent(fileName).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
  return `${header}; filename*=UTF-8''${encoded}`
}

/** Stable codes of the bodies above (beside `error`, with `requestId`: server/http-errors.ts stampErrorBodies); others by status. */
const CODES: Record<string, string> = {
  [MESSAGES.notFound]: 'ROUTE_NOT_FOUND',
  [MESSAGES.automationNotFound]: 'AUTOMATION_NOT_FOUND',
  [MESSAGES.automationDisabled]: 'AUTOMATION_DISABLED',
  [MESSAGES.jobNotFound]: 'JOB_NOT_FOUND',
  [MESSAGES.fileNotFound]: 'FILE_NOT_FOUND',
  [MESSAGES.fileGone]: 'FILE_GONE',
  [MESSAGES.badLimit]: 'INVALID_LIMIT',
  [MESSAGES.badUrl]: 'INVALID_URL'
}

export function errorCodeOf (_status: number, body: Record<string, unknown>): string | undefined {
  return typeof body.error === 'string' ? CODES[body.error] : undefined
}
