/**
 * One PostgreSQL connection per worker thread, opened on first use and kept for
 * later tasks (a pool thread runs one task at a time). A connection that failed is
 * dropped and the next task opens a new one.
 */
import pg from 'pg'
import { EngineError } from '../core/errors.js'

let cached: { url: string, client: pg.Client, broken: boolean } | undefined

export async function threadConnection (url: string): Promise<pg.Client> {
  if (cached !== undefined && cached.url === url && !cached.broken) return cached.client
  if (cached !== undefined) {
    const old = cached.client
    cached = undefined
    await old.end().catch(() => undefined)
  }
  const client = await connect(url)
  const entry = { url, client, broken: false }
  client.on('error', () => { entry.broken = true })
  client.on('end', () => { entry.broken = true })
  cached = entry
  return client
}

/** Drops the thread's connection after a failure whose state we cannot trust. */
export async function discardThreadConnection (): Promise<void> {
  const old = cached
  cached = undefined
  await old?.client.end().catch(() => undefined)
}

export async function connect (url: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: url, application_name: 'razao-import-worker' })
  // A connection that dies between queries (server restart, admin termination) emits
  // 'error' on the client; the query in flight, if any, rejects on its own. Without a
  // listener the process would crash.
  client.on('error', () => undefined)
  try {
    await client.connect()
  } catch (err) {
    await client.end().catch(() => undefined)
    throw databaseUnavailable(err)
  }
  return client
}

/** A connection failure, worded for a person, never echoing the URL (it holds a password). */
export function databaseUnavailable (err: unknown): EngineError {
  const code = typeof err === 'object' && err !== null ? String((err as { code?: unknown }).code ?? '') : ''
  return new EngineError('DATABASE_UNAVAILABLE', `The database could not be reached or closed the connection${code === '' ? '' : ` (${code})`}; nothing was committed. Try again.`, undefined, { cause: err })
}

