/**
 * How many connections each service of a process takes, and how long a connection may stay
 * silent (issue 32, item 3). Every service of `razao serve all` lives in one process and so
 * shares one table of file descriptors: before these limits, 20,200 idle connections to the
 * import port used up its 20,000 descriptors, and the four other services could accept
 * nothing (not even a balancer's health check) until Node's default header timeout closed
 * them, 61 to 88 s later.
 *
 * - Each service takes at most `maxConnections` connections (net.Server#maxConnections);
 *   Node closes a connection above the cap as soon as it is accepted, so it holds no
 *   descriptor. The default shares the open-file limit among the services started, two
 *   descriptors a connection (its socket, and an upload's file or an outbound call), after a
 *   reserve for everything else (the database pools, worker threads, an agent job's pipes).
 * - A connection that has not sent a whole request head within `headersTimeoutMs` of opening
 *   (or of the first byte of its next request) is answered 408 and closed
 *   (http.Server#headersTimeout, checked every `connectionsCheckingInterval`).
 *
 * Node itself raises the soft RLIMIT_NOFILE to the hard limit when it starts (src/node.cc,
 * before any JavaScript runs), so there is nothing left to raise from here: this reads the
 * limit in force from /proc/self/limits and says it at start.
 */
import { readFileSync } from 'node:fs'
import type { FastifyInstance } from 'fastify'
import { ConfigError } from './config.js'
import type { SharedConfig } from './config.js'

/** The open-file limit of this process; `hard` is Infinity for "unlimited". */
export interface OpenFileLimit { soft: number, hard: number }

/** What no client connection may take: the base of the process (stdio, the event loop, the listeners, the main database pool, logs). */
export const RESERVED_DESCRIPTORS = 128
/** A worker thread's event loop and its database connection, counted generously (a bare thread opens four). */
export const DESCRIPTORS_PER_THREAD = 8
/** Descriptors a connection may hold: its socket and an upload's temporary file or a call to an outside service. */
export const DESCRIPTORS_PER_CONNECTION = 2
/** The default cap of one service however high the limit: enough for a firm's clients and a balancer's pool. */
export const DEFAULT_MAX_CONNECTIONS = 4096
/** The cap when the limit cannot be read (no /proc: not Linux). */
export const UNKNOWN_LIMIT_MAX_CONNECTIONS = 1024

/** The `Max open files` line of /proc/self/limits (or of `text`); undefined where there is none. */
export function readOpenFileLimit (text?: string): OpenFileLimit | undefined {
  let limits = text
  if (limits === undefined) {
    try { limits = readFileSync('/proc/self/limits', 'utf8') } catch { return undefined }
  }
  const match = /^Max open files\s+(\d+|unlimited)\s+(\d+|unlimited)/m.exec(limits)
  if (match === null) return undefined
  const value = (v: string): number => v === 'unlimited' ? Infinity : Number(v)
  return { soft: value(match[1]!), hard: value(match[2]!) }
}

export interface ConnectionLimits {
  /** Open connections each service takes. */
  maxConnections: number
  headersTimeoutMs: number
  /** Undefined where it cannot be read. */
  openFiles: OpenFileLimit | undefined
  /** True when RAZAO_MAX_CONNECTIONS was not set. */
  derived: boolean
}

export interface ProcessShape {
  /** Services started in this process. */
  services: number
  /** Worker threads the process may run at once (each pool's size, summed). */
  threads: number
}

/**
 * The caps for the services of one process. A RAZAO_MAX_CONNECTIONS that cannot fit the
 * open-file limit is refused (ConfigError): it would let one service starve the others again.
 */
export function connectionLimits (shape: ProcessShape, shared: Pick<SharedConfig, 'maxConnections' | 'headersTimeoutMs'>, openFiles: OpenFileLimit | undefined): ConnectionLimits {
  const reserved = RESERVED_DESCRIPTORS + DESCRIPTORS_PER_THREAD * shape.threads
  const fits = openFiles === undefined ? Infinity : Math.floor((openFiles.soft - reserved) / (DESCRIPTORS_PER_CONNECTION * shape.services))
  const raise = 'raise the hard limit of open files (ulimit -Hn in the shell that starts it, LimitNOFILE= in a systemd unit, --ulimit nofile= for docker run)'
  if (fits < 1) {
    throw new ConfigError('RAZAO_MAX_CONNECTIONS', `cannot be met: this process may open ${openFiles!.soft} files, and ${shape.services} service(s) with ${shape.threads} worker thread(s) keep ${reserved} of them; start fewer services or ${raise}`)
  }
  const configured = shared.maxConnections
  if (configured !== undefined && configured > fits) {
    throw new ConfigError('RAZAO_MAX_CONNECTIONS', `is ${configured}, but this process may open ${openFiles!.soft} files: ${shape.services} service(s) fit ${fits} connections each (${DESCRIPTORS_PER_CONNECTION} descriptors a connection, ${reserved} kept for the database and worker threads). Lower it, or ${raise}`)
  }
  const maxConnections = configured ?? (openFiles === undefined ? UNKNOWN_LIMIT_MAX_CONNECTIONS : Math.min(DEFAULT_MAX_CONNECTIONS, fits))
  return { maxConnections, headersTimeoutMs: shared.headersTimeoutMs, openFiles, derived: configured === undefined }
}

/** The start-up line that says what is in force. */
export function describeLimits (limits: ConnectionLimits): string {
  const { openFiles: files } = limits
  const cap = `each service takes at most ${limits.maxConnections} connections (${limits.derived ? 'derived from the open-file limit; RAZAO_MAX_CONNECTIONS sets it' : 'RAZAO_MAX_CONNECTIONS'}) and closes one that sends no request within ${limits.headersTimeoutMs / 1000} s (RAZAO_HEADERS_TIMEOUT_MS)`
  if (files === undefined) return `Open files: the limit could not be read (no /proc/self/limits); ${cap}.`
  const hard = files.hard === Infinity ? 'unlimited' : String(files.hard)
  const raised = files.soft === files.hard
    ? 'the hard limit: Node raises the soft limit to it at start'
    : `hard limit ${hard}: Node raises the soft limit at start as far as the kernel lets it, at most 1048576 when the hard one is unlimited`
  return `Open files: ${files.soft} (${raised}); ${cap}.`
}

/**
 * Applies the limits to one service's server, before it listens. Connections refused at the
 * cap are logged at most once a minute, with how many since the last line.
 */
export function limitConnections (app: FastifyInstance, limits: ConnectionLimits): void {
  const server = app.server
  server.maxConnections = limits.maxConnections
  // Node refuses a header timeout longer than a (non-zero) request timeout.
  const requestTimeout = server.requestTimeout
  server.headersTimeout = requestTimeout > 0 ? Math.min(limits.headersTimeoutMs, requestTimeout) : limits.headersTimeoutMs
  // Node looks for expired connections on this period (30 s by default), so a silent one
  // lasts up to the timeout plus one period; read by the server when it starts listening.
  const checking = server as typeof server & { connectionsCheckingInterval: number }
  checking.connectionsCheckingInterval = Math.min(1000, Math.max(25, Math.floor(server.headersTimeout / 4)))
  let dropped = 0
  let loggedAt = -Infinity
  server.on('drop', () => {
    dropped++
    if (performance.now() - loggedAt < 60_000) return
    loggedAt = performance.now()
    app.log.warn({ refused: dropped, maxConnections: limits.maxConnections }, 'connections refused: this service has RAZAO_MAX_CONNECTIONS open')
    dropped = 0
  })
}
