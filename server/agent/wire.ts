/**
 * The agent's answers outside the Job resource (which core/agent keeps in the spec's
 * shape already): packages, lists, error bodies, download headers.
 */
import type { AutomationPackage } from '../../core/agent/index.js'

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
  badUrl: 'The request URL is malformed.'
} as const

/** A refusal decided in a route: its status and the `error` text. */
export class HttpRefusal extends Error {
  constructor (readonly status: number, message: string) {
    super(message)
    this.name = 'HttpRefusal'
  }
}

/** The package as the API shows it (spec 3 §2 C): the command and directory stay private. */
export function toPackage (pkg: AutomationPackage): Record<string, unknown> {
  return { schemaVersion: pkg.schemaVersion, id: pkg.id, name: pkg.name, version: pkg.version, enabled: pkg.enabled }
}

export function toPackageList (packages: AutomationPackage[]): { count: number, items: Array<Record<string, unknown>> } {
  return { count: packages.length, items: packages.map(toPackage) }
}

export interface RunRequestBody {
  requestId: string | undefined
  input: Record<string, unknown>
}

/** The run endpoint's body: `requestId` (optional string), `input` (object; absent: `{}`). */
export function parseRunBody (body: unknown): RunRequestBody {
  if (body === undefined || body === null) return { requestId: undefined, input: {} }
  if (typeof body !== 'object' || Array.isArray(body)) throw new HttpRefusal(400, 'The body must be a JSON object with "input" (an object) and optionally "requestId" (a string).')
  const b = body as Record<string, unknown>
  if (b.requestId !== undefined && b.requestId !== null && (typeof b.requestId !== 'string' || b.requestId.trim() === '' || b.requestId.length > 200)) {
    throw new HttpRefusal(400, 'requestId must be a non-empty string of at most 200 characters.')
  }
  if (b.input !== undefined && (typeof b.input !== 'object' || b.input === null || Array.isArray(b.input))) {
    throw new HttpRefusal(400, 'input must be a JSON object.')
  }
  return { requestId: typeof b.requestId === 'string' ? b.requestId : undefined, input: (b.input as Record<string, unknown> | undefined) ?? {} }
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
