/**
 * The thread hop is a wire: a task never lets an error escape, it returns
 * `{ ok: false, error }` with the plain WireError, and the calling thread rebuilds
 * it with fromWire. Class identity does not survive postMessage.
 */
import { toWire } from '../core/errors.js'
import type { WireError } from '../core/errors.js'

export type TaskResult<T> = { ok: true, value: T } | { ok: false, error: WireError }

export function defineTask<I, O> (run: (input: I) => Promise<O>): (input: I) => Promise<TaskResult<O>> {
  return async (input: I) => {
    try {
      return { ok: true, value: await run(input) }
    } catch (err) {
      return { ok: false, error: toWire(err) }
    }
  }
}
