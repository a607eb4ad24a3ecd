import type { IncomingMessage, ServerResponse } from 'node:http'

/**
 * A counting gate: at most `limit` holders at once, the others wait in arrival order.
 * The sign and extraction services keep requests here before their bodies are read, so that a burst
 * of large requests waits on the socket (TCP holds it back) instead of piling up
 * parsed bodies in memory behind a busy pool.
 */
export class Gate {
  private holders = 0
  private readonly waiting: Array<() => void> = []

  constructor (private readonly limit: number) {
    if (!Number.isInteger(limit) || limit < 1) throw new RangeError(`a gate needs a limit of at least 1, got ${limit}`)
  }

  /** Resolves once the caller holds a place; call `leave` exactly once afterwards. */
  async enter (): Promise<void> {
    if (this.holders < this.limit) {
      this.holders++
      return
    }
    await new Promise<void>((resolve) => { this.waiting.push(resolve) })
  }

  leave (): void {
    const next = this.waiting.shift()
    // The place passes straight to the next in line; otherwise it is free.
    if (next !== undefined) next()
    else this.holders--
  }

  /**
   * Enters for one HTTP request and gives the place back, once, when its reply closes or its
   * connection does: a pipelined request whose connection drops before its turn never gets
   * a reply that closes. A client that went away while it waited gives its place back at once.
   */
  async holdFor (request: IncomingMessage, reply: ServerResponse): Promise<void> {
    await this.enter()
    let left = false
    const leave = (): void => {
      if (left) return
      left = true
      this.leave()
    }
    const socket = request.socket
    if (reply.closed || socket.destroyed) {
      leave()
      return
    }
    const onSocketClose = (): void => { leave() }
    socket.once('close', onSocketClose)
    reply.once('close', () => {
      socket.off('close', onSocketClose)
      leave()
    })
  }

  /** Holders now, and callers waiting (for tests). */
  get state (): { holders: number, waiting: number } {
    return { holders: this.holders, waiting: this.waiting.length }
  }
}
