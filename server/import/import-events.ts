/**
 * GET /v1/imports/{id}/events: the import's state as Server-Sent Events (WHATWG HTML,
 * "Server-sent events"). The row is read every EVENTS_POLL_MS (a plain query: it works
 * behind PgBouncer's transaction pooling, which LISTEN/NOTIFY does not) and an `importacao`
 * event carrying the same JSON as GET /v1/imports/{id} goes out when anything in it
 * changed. At a final status that last event is followed by a `fim` event, and the stream
 * ends. A comment line every EVENTS_HEARTBEAT_MS keeps proxies from closing a quiet
 * stream. A client that goes away ends the polling at once; so does the app's close. An
instance keeps at most EVENTS_MAX_STREAMS open (503 past it).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { ImportationRecord } from '../../core/importer/import-jobs.js'
import { RUNNING_STATUSES } from '../../core/importer/import-jobs.js'
import { openEventStream } from '../event-stream.js'
import { toWireImportWithResult } from './jobs-wire.js'

export const EVENTS_POLL_MS = 500
export const EVENTS_HEARTBEAT_MS = 15_000
/** What EventSource waits before reconnecting after the stream ends, ms (it ends only at a final status). */
const RECONNECT_HINT_MS = 10_000

/**
 * Streams one instance keeps open at most; past it the route answers 503. Each costs a short
 * query every EVENTS_POLL_MS on the main thread's small database pool.
 */
export const EVENTS_MAX_STREAMS = 200

export interface EventsOptions {
  /**
   * Where the stream learns at once that a job of this instance has settled: it then reads
   * the row without waiting for the next poll (the client of a local job sees its end in
   * milliseconds). Returns how to stop listening.
   */
  onSettled?: ((id: string, listener: () => void) => () => void) | undefined
  pollMs?: number
  heartbeatMs?: number
  maxStreams?: number
}

const open = new WeakMap<FastifyInstance, Set<() => void>>()

/** Event streams the app has open now (tests check that a departed client leaves none). */
export function openEventStreams (app: FastifyInstance): number {
  return open.get(app)?.size ?? 0
}

/** Ends every open stream before the app closes (a stream would otherwise hold close() open). */
export function closeEventStreamsOnClose (app: FastifyInstance): void {
  const streams = new Set<() => void>()
  open.set(app, streams)
  app.addHook('preClose', async () => {
    for (const end of [...streams]) end()
  })
}

export function streamImportEvents (
  app: FastifyInstance,
  request: FastifyRequest,
  reply: FastifyReply,
  first: ImportationRecord,
  read: () => Promise<ImportationRecord | undefined>,
  options: EventsOptions = {}
): void {
  const streams = open.get(app)!
  const raw = reply.raw
  const send = openEventStream(request, reply)
  let last = ''
  let ended = false
  let polling = false
  const end = (): void => {
    if (ended) return
    ended = true
    clearInterval(poll)
    clearInterval(heartbeat)
    stopListening?.()
    streams.delete(end)
    raw.off('close', end)
    if (!raw.writableEnded) raw.end()
  }
  const show = (record: ImportationRecord): void => {
    const body = JSON.stringify(toWireImportWithResult(record))
    if (body !== last) {
      last = body
      send('importacao', body)
    }
    if (!RUNNING_STATUSES.includes(record.status)) {
      send('fim', JSON.stringify({ importacao_id: record.id, status: record.status }))
      end()
    }
  }
  const refresh = (): void => {
    if (polling || ended) return
    polling = true
    read().then((record) => {
      if (ended) return
      if (record === undefined) {
        send('fim', JSON.stringify({ importacao_id: first.id, status: null }))
        end()
      } else {
        show(record)
      }
    }, (err: unknown) => {
      request.log.warn({ err }, 'import events: the row could not be read')
    }).finally(() => {
      polling = false
      // A wake that came during this read must not be lost: read once more.
      if (woken && !ended) {
        woken = false
        refresh()
      }
    })
  }
  let woken = false
  const wake = (): void => {
    if (polling) woken = true
    else refresh()
  }
  const poll = setInterval(refresh, options.pollMs ?? EVENTS_POLL_MS)
  const stopListening = options.onSettled?.(first.id, wake)
  const heartbeat = setInterval(() => { raw.write(': keepalive\n\n') }, options.heartbeatMs ?? EVENTS_HEARTBEAT_MS)
  streams.add(end)
  raw.on('close', end)
  raw.write(`retry: ${RECONNECT_HINT_MS}\n\n`)
  show(first)
  // A job that settled between reading `first` and listening above called no one: read once more.
  if (stopListening !== undefined) refresh()
}
