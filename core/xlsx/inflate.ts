/**
 * Inflating one ZIP entry into a few reused buffers.
 *
 * A zlib stream (`createInflateRaw`) allocates a fresh output buffer for every chunk
 * it produces. On a 1M-row sheet that is ~375 MB of short-lived buffers per read,
 * memory outside the JavaScript heap that V8 only gives back when its external-memory
 * limit (about 64 MB above the last full collection) forces a major GC: the reader's
 * peak RSS then grows with the file until it meets that limit (103 MB at 100k rows,
 * 148 MB at 1M), and the extra collections slow the scan.
 *
 * Here the same zlib code runs through the native handle that Node's zlib streams are
 * built on (`handle.init` / `handle.write`, asynchronous on libuv's thread pool, output
 * written into a buffer the caller passes). We keep three 1 MiB output buffers and two
 * input buffers per read and cycle them, so a read allocates nothing per chunk, and
 * zlib fills the next buffer on the pool while this thread scans the current one.
 *
 * Chunks are handed out in pieces of at most PIECE_BYTES; between pieces, while a zlib
 * write or a file read is in flight, the generator steps through the event loop once
 * (setImmediate), so that zlib's completion is seen and its next write issued without
 * waiting for the whole buffer to be scanned. Measured on a 1M-row ledger (Node 20): 208 ms
 * against 245 ms for the stream path, peak RSS 95 MB against 142 MB. On Node 22, 24 and 26
 * (2026-11-25, README "Node.js lines") the stream path is about as fast at 1M rows, but its
 * peak RSS still grows with the file (139 to 164 MB from 100k to 1M rows on Node 24) while the
 * handle's does not: the handle is kept on every line where its tests pass.
 *
 * The handle is not a documented API. It is used only on the Node majors it was checked
 * on (NATIVE_HANDLE_NODE_MAJORS) and, there, only after `nativeInflateAvailable()` has inflated
 * a known sample through it; otherwise reads take the plain zlib stream
 * (`streamInflate`), which gives the same bytes.
 *
 * A yielded chunk is valid only until the consumer asks for the next one: its memory
 * is written again afterwards. Consumers copy what they keep.
 */
import { createReadStream } from 'node:fs'
import { open, stat } from 'node:fs/promises'
import type { FileHandle } from 'node:fs/promises'
import zlib from 'node:zlib'

/** Where an entry's stored bytes are, and how they are stored. */
export interface EntryData {
  path: string
  /** Offset of the first data byte (after the local header). */
  start: number
  compressedSize: number
  /** 8: deflate; 0: stored. */
  method: number
}

export type InflateEngine = 'native-handle' | 'stream'

const OUT_BYTES = 1 << 20
const OUT_BUFFERS = 3
const IN_BYTES = 256 * 1024
/**
 * Largest piece of an output buffer handed out at once (see the header). Compared on
 * the 100k and 1M ledgers, interleaved over many processes: 32 KiB gave the steadiest
 * times (100k: 27-29 ms, against 24-35 ms with 128 KiB pieces); the extra event-loop
 * turns cost less than zlib waiting for a whole 128 KiB to be scanned.
 */
const PIECE_BYTES = 32 * 1024
/** Stream fallback: file slices and inflate chunks, as measured for the stream path. */
const STREAM_READ_BYTES = 1 << 20
const STREAM_CHUNK_BYTES = 256 * 1024
const SELF_TEST_MS = 5_000

const { INFLATERAW, Z_NO_FLUSH, Z_FINISH } = zlib.constants as typeof zlib.constants & { INFLATERAW: number }

/** The native zlib context behind Node's zlib streams (lib/zlib.js drives it the same way). */
interface NativeZlib {
  init: (windowBits: number, level: number, memLevel: number, strategy: number, writeState: Uint32Array, onWritten: () => void, dictionary: undefined) => unknown
  /** Inflates asynchronously; afterwards writeState holds [output bytes left, input bytes left]. */
  write: (flush: number, input: Uint8Array, inOffset: number, inLength: number, output: Uint8Array, outOffset: number, outLength: number) => void
  close: () => void
  onerror: (message: string, errno: number) => void
}
type NativeZlibClass = new (mode: number) => NativeZlib

function nativeZlibClass (): NativeZlibClass | undefined {
  try {
    const probe = zlib.createInflateRaw()
    const handle = (probe as unknown as { _handle?: object })._handle
    probe.close()
    const ctor = handle?.constructor as NativeZlibClass | undefined
    const proto = ctor?.prototype as Partial<NativeZlib> | undefined
    if (typeof ctor !== 'function' || typeof proto?.init !== 'function' || typeof proto.write !== 'function' || typeof proto.close !== 'function') return undefined
    return ctor
  } catch {
    return undefined
  }
}

/**
 * Node majors whose zlib binding this file was checked against: inflate.test.ts (the
 * self-test, every engine test, the memory test) passes on the newest release of each,
 * run by .ci/run through .ci/node-line. A different binding can abort the process in a
 * native assertion rather than fail politely, which no self-test could catch, so other
 * lines take the stream path until someone runs the tests there and adds them here.
 */
export const NATIVE_HANDLE_NODE_MAJORS: ReadonlySet<number> = new Set([20, 22, 24, 26])
const nodeMajor = Number(process.versions.node.split('.')[0])

const NativeZlib = NATIVE_HANDLE_NODE_MAJORS.has(nodeMajor) ? nativeZlibClass() : undefined
let nativeChecked: Promise<boolean> | undefined

/**
 * True when the native handle inflates a known sample exactly (checked once per thread).
 * Anything unexpected (a changed signature, an exception, other bytes) answers false.
 */
export function nativeInflateAvailable (): Promise<boolean> {
  nativeChecked ??= selfTest()
  return nativeChecked
}

/** The engine reads of this thread take when none is forced: the handle where it passed its self-test. */
export async function defaultInflateEngine (): Promise<InflateEngine> {
  return await nativeInflateAvailable() ? 'native-handle' : 'stream'
}

async function selfTest (): Promise<boolean> {
  if (NativeZlib === undefined) return false
  try {
    const text = Buffer.from('<row r="1"><c r="A1" t="s"><v>0</v></c></row>'.repeat(50))
    const out = Buffer.alloc(text.length + 64)
    const state = new Uint32Array(2)
    const handle = new NativeZlib(INFLATERAW)
    const produced = await new Promise<number>((resolve, reject) => {
      // A handle that never answers must not hang every read behind it.
      const timer = setTimeout(() => reject(new Error('no answer')), SELF_TEST_MS)
      timer.unref()
      handle.onerror = (message) => reject(new Error(message))
      handle.init(15, -1, 8, 0, state, () => { clearTimeout(timer); resolve(out.length - state[0]!) }, undefined)
      const input = zlib.deflateRawSync(text)
      handle.write(Z_FINISH, input, 0, input.length, out, 0, out.length)
    }).finally(() => handle.close())
    return produced === text.length && out.subarray(0, produced).equals(text)
  } catch {
    return false
  }
}

/** Buffers of finished reads, kept for the next read of this thread (a pool thread reads one file at a time). */
const spare: Buffer[][] = []

function takeBuffers (): Buffer[] {
  return spare.pop() ?? [...Array.from({ length: OUT_BUFFERS }, () => Buffer.allocUnsafe(OUT_BYTES)), Buffer.allocUnsafe(IN_BYTES), Buffer.allocUnsafe(IN_BYTES)]
}

function giveBack (buffers: Buffer[]): void {
  if (spare.length < 2) spare.push(buffers)
}

const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve))

/** The entry's bytes, inflated when it is deflated, chunk by chunk (each valid until the next is asked for). */
export async function * inflateEntry (entry: EntryData, engine: InflateEngine = 'native-handle'): AsyncGenerator<Buffer> {
  if (entry.compressedSize === 0) return
  // Stored (uncompressed) parts are rare in workbooks; the plain file stream serves them.
  if (engine === 'stream' || entry.method !== 8 || !(await nativeInflateAvailable())) {
    yield * streamInflate(entry)
    return
  }
  const file = await open(entry.path, 'r')
  const buffers = takeBuffers()
  try {
    yield * nativeInflate(file, entry, buffers)
  } finally {
    await file.close()
  }
  // Only a read that ended cleanly gives its buffers back: after an early exit or an
  // error, a zlib write may still be filling one of them.
  giveBack(buffers)
}

interface Filled { buffer: Buffer, length: number }

async function * nativeInflate (file: FileHandle, entry: EntryData, buffers: Buffer[]): AsyncGenerator<Buffer> {
  const free = buffers.slice(0, OUT_BUFFERS)
  const inputs = buffers.slice(OUT_BUFFERS)
  const filled: Filled[] = []
  const state = new Uint32Array(2)
  const handle = new NativeZlib!(INFLATERAW)
  let failure: Error | undefined
  let wake: (() => void) | undefined
  const wakeUp = (): void => {
    const resume = wake
    wake = undefined
    resume?.()
  }

  // Input: the entry's compressed bytes, read in IN_BYTES slices into two buffers in turn.
  let readAt = 0
  let nextInput = 0
  let reading = false
  let prefetched: { buffer: Buffer, length: number } | undefined
  let input: Buffer = inputs[0]!
  let inOffset = 0
  let inLeft = 0
  let flush = Z_NO_FLUSH
  // Output: the buffer zlib is filling, and how much of it is full.
  let current: Buffer | undefined
  let currentLength = 0
  let writing = false
  let finished = false
  /** Set once the handle is closed: nothing may be written to it after that (Node asserts). */
  let closed = false
  let inBefore = 0
  let outBefore = 0

  const readSlice = (): void => {
    reading = true
    const buffer = inputs[nextInput]!
    nextInput ^= 1
    const length = Math.min(IN_BYTES, entry.compressedSize - readAt)
    const position = entry.start + readAt
    readAt += length
    file.read(buffer, 0, length, position).then(({ bytesRead }) => {
      reading = false
      if (bytesRead < length) throw new Error('the file ends inside the entry')
      prefetched = { buffer, length: bytesRead }
      step()
    }).catch((err: unknown) => {
      // A prefetch past the end of a stream that has already ended does not matter.
      if (!finished) failure ??= err instanceof Error ? err : new Error(String(err))
    }).finally(wakeUp)
  }

  /** Starts the next zlib write when it can: input at hand and an output buffer free. */
  const step = (): void => {
    if (closed || writing || finished || failure !== undefined) return
    if (inLeft === 0 && flush !== Z_FINISH) {
      if (prefetched === undefined) {
        if (!reading) readSlice()
        return
      }
      input = prefetched.buffer
      inOffset = 0
      inLeft = prefetched.length
      prefetched = undefined
      // The last slice goes with Z_FINISH, so that a stream cut short is an error.
      if (readAt >= entry.compressedSize) flush = Z_FINISH
      else readSlice()
    }
    if (current === undefined) {
      current = free.pop()
      currentLength = 0
      if (current === undefined) return
    }
    inBefore = inLeft
    outBefore = OUT_BYTES - currentLength
    writing = true
    handle.write(flush, input, inOffset, inLeft, current, currentLength, outBefore)
  }

  const written = (): void => {
    writing = false
    // A write that was running when the consumer stopped still reports here.
    if (closed) return
    const outLeft = state[0]!
    const inAfter = state[1]!
    inOffset += inBefore - inAfter
    inLeft = inAfter
    currentLength += outBefore - outLeft
    if (outLeft === 0) {
      filled.push({ buffer: current!, length: currentLength })
      current = undefined
    } else if (flush === Z_FINISH || inLeft > 0) {
      // Room left after Z_FINISH, or input left over with room to spare: the deflate
      // stream has ended (bytes after its end are ignored, as zlib streams do; the
      // caller's size checks judge the result).
      if (currentLength > 0) filled.push({ buffer: current!, length: currentLength })
      current = undefined
      finished = true
    }
    step()
    wakeUp()
  }

  handle.onerror = (message) => {
    failure ??= new Error(message)
    wakeUp()
  }
  handle.init(15, -1, 8, 0, state, written, undefined)
  try {
    step()
    for (;;) {
      if (failure !== undefined) throw failure
      const next = filled.shift()
      if (next === undefined) {
        if (finished) return
        await new Promise<void>((resolve) => { wake = resolve })
        continue
      }
      for (let at = 0; at < next.length; at += PIECE_BYTES) {
        if (at > 0 && (writing || reading)) await nextTurn()
        yield next.buffer.subarray(at, Math.min(next.length, at + PIECE_BYTES))
      }
      free.push(next.buffer)
      step()
    }
  } finally {
    // Closing while a write runs is safe: the native side closes once it is done, and
    // `closed` keeps its late completion from starting another write.
    closed = true
    handle.close()
  }
}

/** The same bytes through a plain zlib stream: the fallback, and the reference in tests. */
export async function * streamInflate (entry: EntryData): AsyncGenerator<Buffer> {
  if (entry.compressedSize === 0) return
  // A read stream given an end past the file's simply stops early, and zlib, having met
  // the end of the deflate data, raises nothing: without this check a truncated entry
  // read as complete on this path, while the native path reports it.
  if (entry.start + entry.compressedSize > (await stat(entry.path)).size) throw new Error('the file ends inside the entry')
  const raw = createReadStream(entry.path, { start: entry.start, end: entry.start + entry.compressedSize - 1, highWaterMark: STREAM_READ_BYTES })
  const source = entry.method === 8
    // highWaterMark lets zlib run a few chunks ahead of the consumer (a Transform option zlib's types omit).
    ? raw.pipe(zlib.createInflateRaw(Object.assign({ chunkSize: STREAM_CHUNK_BYTES }, { highWaterMark: 4 * STREAM_CHUNK_BYTES })))
    : raw
  // pipe() does not forward errors from the file stream to the inflater.
  if (source !== raw) raw.on('error', (err) => source.destroy(err))
  try {
    for await (const chunk of source as AsyncIterable<Buffer>) yield chunk
  } finally {
    raw.destroy()
    if (source !== raw) source.destroy()
  }
}
