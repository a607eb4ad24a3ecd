/**
 * A counting gate: at most `limit` holders at once, the others wait in arrival order.
 * The sign service keeps requests here before their bodies are read, so that a burst
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

  /** Holders now, and callers waiting (for tests). */
  get state (): { holders: number, waiting: number } {
    return { holders: this.holders, waiting: this.waiting.length }
  }
}
