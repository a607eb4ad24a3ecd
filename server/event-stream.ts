/**
 * A server-sent event stream on a route's reply: the reply taken over from Fastify, the head
 * written at once, and a sender that numbers the events (`id:`) from 1. The import service's
 * progress stream and the gateway's admin events both answer this way.
 */
import type { FastifyReply, FastifyRequest } from 'fastify'

export interface EventStreamOptions {
  /**
   * Close the socket with the stream (`connection: close`): a stream the app ends at its close
   * then leaves no keep-alive connection for close() to wait on.
   */
  closeConnection?: boolean
}

/** Opens the stream; the sender writes one event, `data` already serialized (one line). */
export function openEventStream (request: FastifyRequest, reply: FastifyReply, options: EventStreamOptions = {}): (event: string, data: string) => void {
  reply.hijack()
  const raw = reply.raw
  raw.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-store',
    // nginx would otherwise hold the events back in its buffer.
    'x-accel-buffering': 'no',
    ...(options.closeConnection === true ? { connection: 'close' } : {}),
    'x-request-id': request.id
  })
  let sequence = 0
  return (event, data) => { raw.write(`event: ${event}\nid: ${++sequence}\ndata: ${data}\n\n`) }
}
