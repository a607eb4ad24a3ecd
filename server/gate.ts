import type { IncomingMessage, ServerResponse } from 'node:http'

/**
 * An upload that sends nothing for this long while others wait for a place gives its place
 * up (see BodyWatch), ms: long enough for a link's hiccup, short beside any real wait.
 */
export const BODY_STALL_MS = 1_000

/** How a held request's body is watched while it arrives (see Gate.holdFor). */
export interface BodyWatch {
  /**
   * No body bytes for this long while others wait: the request gives its place to the next
   * in line and waits for another turn, its body paused (TCP holds the rest back), ms.
   */
  stallMs: number
  /** No body bytes for this long while it holds a place: the upload is cut with `timeoutError()`, ms. */
  idleTimeoutMs: number
  /** The service's own 408 error, raised to whatever reads the body. */
  timeoutError: () => Error
}

/**
 * A counting gate: at most `limit` holders at once, the others wait in arrival order.
 * The sign and extraction services keep requests here before their bodies are read, so that a burst
 * of large requests waits on the socket (TCP holds it back) instead of piling up
 * parsed bodies in memory behind a busy pool; the extraction also takes a pool thread's turn here.
 */
export class Gate {
  private holders = 0
  private readonly waiting: Array<{ admit: () => void, ahead: boolean }> = []

  constructor (private readonly limit: number) {
    if (!Number.isInteger(limit) || limit < 1) throw new RangeError(`a gate needs a limit of at least 1, got ${limit}`)
  }

  /**
   * Resolves once the caller holds a place; call `leave` exactly once afterwards. Rejects
   * with the signal's reason (holding nothing) when `signal` aborts first. A caller `ahead`
   * waits in front of every caller that is not (the extraction's text-layer reads before
   * scans waiting for their OCR turn), in arrival order among its own kind.
   */
  async enter (signal?: AbortSignal, ahead = false): Promise<void> {
    signal?.throwIfAborted()
    if (this.holders < this.limit) {
      this.holders++
      return
    }
    await new Promise<void>((resolve, reject) => {
      const onAbort = (): void => {
        const at = this.waiting.indexOf(entry)
        if (at >= 0) this.waiting.splice(at, 1)
        reject(signal!.reason)
      }
      const entry = {
        admit: (): void => {
          signal?.removeEventListener('abort', onAbort)
          resolve()
        },
        ahead
      }
      const behind = ahead ? this.waiting.findIndex((w) => !w.ahead) : -1
      if (behind < 0) this.waiting.push(entry)
      else this.waiting.splice(behind, 0, entry)
      signal?.addEventListener('abort', onAbort, { once: true })
    })
  }

  leave (): void {
    const next = this.waiting.shift()
    // The place passes straight to the next in line; otherwise it is free.
    if (next !== undefined) next.admit()
    else this.holders--
  }

  /**
   * Enters for one HTTP request and gives the place back, once, when its reply closes or its
   * connection does: a pipelined request whose connection drops before its turn never gets
   * a reply that closes. A client that went away while it waited gives its place back at once.
   *
   * With `watch`, a place is held for a body that arrives, not for a client that stopped
   * sending: see BodyWatch. Once the body is complete the place is held until the reply closes.
   */
  async holdFor (request: IncomingMessage, reply: ServerResponse, watch?: BodyWatch): Promise<void> {
    await this.enter()
    const place = { holding: true, closed: false }
    const socket = request.socket
    const release = (): void => {
      if (!place.holding) return
      place.holding = false
      this.leave()
    }
    let stopWatching = (): void => {}
    const onSocketClose = (): void => { finish() }
    const finish = (): void => {
      if (place.closed) return
      place.closed = true
      socket.off('close', onSocketClose)
      stopWatching()
      release()
    }
    if (reply.closed || socket.destroyed) {
      finish()
      return
    }
    socket.once('close', onSocketClose)
    reply.once('close', finish)
    if (watch !== undefined) stopWatching = this.watchBody(request, watch, place, release)
  }

  /** Watches a held request's body (see BodyWatch) until it is complete; returns the stop. */
  private watchBody (request: IncomingMessage, watch: BodyWatch, place: { holding: boolean, closed: boolean }, release: () => void): () => void {
    const socket = request.socket
    let seen = socket.bytesRead
    let quietSince = performance.now()
    const yieldPlace = (): void => {
      // Only a body being read is paused (and resumed), so no byte is dropped.
      request.pause()
      release()
      this.enter().then(() => {
        place.holding = true
        if (place.closed) {
          release()
          return
        }
        quietSince = performance.now()
        request.resume()
      }, () => undefined)
    }
    const check = (): void => {
      if (request.complete) {
        clearInterval(timer)
        return
      }
      if (!place.holding || request.readableFlowing !== true) return
      const now = performance.now()
      if (socket.bytesRead !== seen) {
        seen = socket.bytesRead
        quietSince = now
        return
      }
      if (now - quietSince >= watch.idleTimeoutMs) {
        clearInterval(timer)
        // Whatever reads the body (the multipart parser, Fastify's body reader) fails with
        // the service's 408 and the service answers it; with nobody listening, just close.
        if (request.listenerCount('error') > 0) request.emit('error', watch.timeoutError())
        else request.destroy()
        return
      }
      if (now - quietSince >= watch.stallMs && this.waiting.length > 0) yieldPlace()
    }
    const timer = setInterval(check, Math.max(10, Math.min(watch.stallMs, watch.idleTimeoutMs) / 4))
    timer.unref()
    return () => { clearInterval(timer) }
  }

  /** Holders now, and callers waiting (for tests). */
  get state (): { holders: number, waiting: number } {
    return { holders: this.holders, waiting: this.waiting.length }
  }
}
