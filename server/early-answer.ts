/**
 * Answers given before a request's body was read: a refusal from a hook (401, 404), a
 * limit met part-way (413), a body cut for arriving too slowly (408). Closing the
 * connection right after such an answer resets a client that is still writing its body,
 * and some clients (Node 26's fetch) then report the broken pipe (EPIPE) instead of the
 * status they were sent. So before the answer goes out, the rest of the body is read and
 * thrown away, within bounds, and the connection is closed after the answer.
 */
import type { IncomingMessage } from 'node:http'
import type { FastifyInstance } from 'fastify'

/** A client that sends nothing for this long is not waited for any longer, ms. */
export const DRAIN_IDLE_MS = 1_000
/** Read beyond the largest body the service accepts, so that a 413's client sees it too. */
export const DRAIN_BEYOND_LIMIT_BYTES = 64 * 1024 * 1024

/**
 * On every answer of `app` whose request body is not fully read: read and discard the rest,
 * at most DRAIN_BEYOND_LIMIT_BYTES more than `largestBody` (the largest body the service
 * accepts; a client sending more gets the reset anyway), `maxMs` in all (RAZAO_DRAIN_MAX_MS,
 * SharedConfig.drainMaxMs) and DRAIN_IDLE_MS without a byte; then answer, with
 * `Connection: close` so that no more of it is read afterwards.
 */
export function drainUnreadBodies (app: FastifyInstance, largestBody: number, maxMs: number): void {
  const maxBytes = largestBody + DRAIN_BEYOND_LIMIT_BYTES
  app.addHook('onSend', async (request, reply, payload) => {
    const raw = request.raw
    if (!bodyLeftUnread(raw)) return payload
    void reply.header('connection', 'close')
    await drain(raw, maxBytes, maxMs)
    return payload
  })
}

/**
 * Whether some of the request's body may still be on its way. A request that declares no body
 * (neither Content-Length above 0 nor Transfer-Encoding: HTTP/1.1's rule) has none; a body
 * read to its end, over a socket (`complete`) or through fastify.inject (whose request stream
 * only ends: `readableEnded`), has nothing left. Without the last two checks every injected
 * request waited DRAIN_IDLE_MS for bytes that could not come.
 */
export function bodyLeftUnread (raw: IncomingMessage): boolean {
  if (raw.complete || raw.readableEnded || raw.destroyed) return false
  const length = raw.headers['content-length']
  if (raw.headers['transfer-encoding'] === undefined && (length === undefined || Number(length) === 0)) return false
  return true
}

async function drain (request: IncomingMessage, maxBytes: number, maxMs: number): Promise<void> {
  const declared = Number(request.headers['content-length'])
  // More announced than will ever be read: answer at once.
  if (Number.isFinite(declared) && declared > maxBytes) return
  await new Promise<void>((resolve) => {
    let read = 0
    const done = (): void => {
      clearTimeout(overall)
      clearTimeout(idle)
      request.off('data', onData)
      request.off('end', done)
      request.off('close', done)
      request.off('error', done)
      resolve()
    }
    const overall = setTimeout(done, maxMs)
    const idle = setTimeout(done, DRAIN_IDLE_MS)
    const onData = (chunk: Buffer): void => {
      read += chunk.length
      if (read > maxBytes) {
        done()
        return
      }
      idle.refresh()
    }
    request.on('data', onData)
    request.once('end', done)
    request.once('close', done)
    request.once('error', done)
    request.resume()
  })
}
