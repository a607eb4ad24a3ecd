/**
 * A file that is still being written, shared between the thread that writes it
 * (the server, receiving an upload) and a thread that reads it as it grows (a pool
 * worker reading the spreadsheet while the rest of it arrives).
 *
 * The two threads share a SharedArrayBuffer: how many bytes are on disk, and
 * whether the upload is still open, complete or failed. The writer publishes after
 * each write has completed, so every byte below `written` can be read from the file.
 * A reader waits with Atomics.waitAsync, which costs no thread and no polling.
 *
 * Layout: Int32 [0] sequence (bumped on every change, what readers wait on),
 * Int32 [1] state, then a Float64 of bytes written (a double: uploads may pass 2 GiB).
 * The plain Float64 store happens before the Atomics.add on the sequence, and the
 * reader loads the sequence atomically before reading it, so it never sees a count
 * ahead of the data.
 */

const OPEN = 0
const COMPLETE = 1
const FAILED = 2

const SEQ = 0
const STATE = 1
/** Byte offset of the Float64 count of bytes written. */
const WRITTEN_AT = 8

/** Atomics.waitAsync (Node 16+), which the ES2023 lib this project compiles against does not declare. */
type WaitAsync = (array: Int32Array, index: number, value: number, timeoutMs: number) =>
  { async: false, value: 'not-equal' | 'timed-out' } | { async: true, value: Promise<'ok' | 'timed-out'> }
const waitAsync = (Atomics as unknown as { waitAsync: WaitAsync }).waitAsync

export type ArrivalState = 'open' | 'complete' | 'failed'

/** The writer's side, in the thread that writes the file. */
export class ArrivalWriter {
  readonly shared = new SharedArrayBuffer(WRITTEN_AT + 8)
  private readonly flags = new Int32Array(this.shared, 0, 2)
  private readonly written = new Float64Array(this.shared, WRITTEN_AT, 1)

  /** Bytes on disk so far. */
  get bytes (): number {
    return this.written[0]!
  }

  /** `bytes` more are on disk, readable by another thread. */
  advance (bytes: number): void {
    this.written[0] = this.written[0]! + bytes
    this.publish()
  }

  /** The file is whole: nothing more will be written. */
  complete (): void {
    if (Atomics.load(this.flags, STATE) === OPEN) this.settle(COMPLETE)
  }

  /** The upload broke off or was refused: readers must stop. */
  fail (): void {
    if (Atomics.load(this.flags, STATE) === OPEN) this.settle(FAILED)
  }

  /** The request no longer needs the reader's work, even after a complete upload. */
  cancel (): void {
    if (Atomics.load(this.flags, STATE) !== FAILED) this.settle(FAILED)
  }

  private settle (state: number): void {
    Atomics.store(this.flags, STATE, state)
    this.publish()
  }

  private publish (): void {
    Atomics.add(this.flags, SEQ, 1)
    Atomics.notify(this.flags, SEQ)
  }
}

/** Thrown by ArrivalReader.waitFor when the bytes asked for will not come (in time). */
export class NotArriving extends Error {
  constructor (readonly reason: 'failed' | 'short' | 'slow') {
    super(reason === 'failed' ? 'the upload failed' : reason === 'short' ? 'the file ended before that offset' : 'the upload arrives too slowly to read along')
  }
}

export interface ArrivalReaderOptions {
  /**
   * How long, in total, this reader may wait for bytes beyond the time it spends
   * working: waits give up with NotArriving('slow') once the time waited passes
   * maxIdleMs plus the time worked since the reader was made. A reader holds a pool
   * thread while it waits; an upload that arrives much slower than it can be read
   * must not park threads that other requests need, while one that arrives about as
   * fast as it is read keeps its reader.
   */
  maxIdleMs: number
}

/** The reader's side, in the thread that reads the growing file. */
export class ArrivalReader {
  private readonly flags: Int32Array
  private readonly written: Float64Array
  private waitedMs = 0
  private readonly startedAt = performance.now()

  constructor (shared: SharedArrayBuffer, private readonly options: ArrivalReaderOptions) {
    this.flags = new Int32Array(shared, 0, 2)
    this.written = new Float64Array(shared, WRITTEN_AT, 1)
  }

  /** Throws NotArriving('failed') once the writer has failed or cancelled: a cheap check for long loops. */
  checkCancelled (): void {
    if (Atomics.load(this.flags, STATE) === FAILED) throw new NotArriving('failed')
  }

  state (): ArrivalState {
    const state = Atomics.load(this.flags, STATE)
    return state === OPEN ? 'open' : state === COMPLETE ? 'complete' : 'failed'
  }

  /** Bytes on disk now. */
  available (): number {
    Atomics.load(this.flags, SEQ)
    return this.written[0]!
  }

  /** Resolves once the file holds at least `end` bytes. */
  async waitFor (end: number): Promise<void> {
    for (;;) {
      const seq = Atomics.load(this.flags, SEQ)
      const state = Atomics.load(this.flags, STATE)
      if (state === FAILED) throw new NotArriving('failed')
      if (this.written[0]! >= end) return
      if (state === COMPLETE) throw new NotArriving('short')
      await this.sleep(seq)
    }
  }

  /** How many of the `length` bytes at `position` can be read now: at least one, waiting for it when need be. */
  async readable (position: number, length: number): Promise<number> {
    await this.waitFor(position + Math.min(1, length))
    return Math.min(length, this.written[0]! - position)
  }

  /** Resolves once the upload is complete; NotArriving when it failed or takes too long. */
  async whenComplete (): Promise<void> {
    for (;;) {
      const seq = Atomics.load(this.flags, SEQ)
      const state = Atomics.load(this.flags, STATE)
      if (state === FAILED) throw new NotArriving('failed')
      if (state === COMPLETE) return
      await this.sleep(seq)
    }
  }

  /** Waits for the sequence to move on from `seq`, charging the wait to the budget. */
  private async sleep (seq: number): Promise<void> {
    const worked = performance.now() - this.startedAt - this.waitedMs
    const left = this.options.maxIdleMs + worked - this.waitedMs
    if (left <= 0) throw new NotArriving('slow')
    const started = performance.now()
    const wait = waitAsync(this.flags, SEQ, seq, left)
    if (wait.async) await wait.value
    this.waitedMs += performance.now() - started
  }
}
