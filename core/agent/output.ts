/**
 * What a package's output turns into: its standard streams kept in bounded log files,
 * and the protocol lines of its standard output (`AGENT_FILE_JSON=`, `AGENT_RESULT_JSON=`).
 */
import { createWriteStream, writeFileSync } from 'node:fs'
import type { WriteStream } from 'node:fs'
import { readdir, rm, stat } from 'node:fs/promises'
import { join } from 'node:path'

export const RESULT_PREFIX = 'AGENT_RESULT_JSON='
export const FILE_PREFIX = 'AGENT_FILE_JSON='
/** A protocol line longer than this is not read (a result is a JSON summary, not a payload). */
export const MAX_LINE_CHARS = 16 * 1024 * 1024
/** Output kept in memory before a job's log file is opened. */
const BUFFER_BYTES = 64 * 1024

/**
 * One stream of one job on disk, cut at `maxBytes` with one closing note saying how much
 * was dropped. The first BUFFER_BYTES stay in memory and are written in one synchronous
 * call when the job ends: most jobs print a few lines, and opening, writing and closing a
 * stream costs three thread-pool round trips a job (measured: about 1 ms a job of the
 * agent's overhead on 2 busy cores). Past that the file is opened and written as it comes,
 * so a long job's log can be followed while it runs.
 */
export class BoundedLog {
  private stream: WriteStream | undefined
  private pending: Buffer[] = []
  private pendingBytes = 0
  private written = 0
  private dropped = 0
  private closed = false

  constructor (private readonly path: string, private readonly maxBytes: number) {}

  write (chunk: Buffer): void {
    const room = this.maxBytes - this.written
    if (room <= 0) {
      this.dropped += chunk.length
      return
    }
    const part = chunk.length <= room ? chunk : chunk.subarray(0, room)
    this.written += part.length
    this.dropped += chunk.length - part.length
    if (this.stream !== undefined) {
      this.stream.write(part)
      return
    }
    this.pending.push(part)
    this.pendingBytes += part.length
    if (this.pendingBytes > BUFFER_BYTES) {
      this.stream = createWriteStream(this.path, { flags: 'a', mode: 0o600 })
      for (const p of this.pending) this.stream.write(p)
      this.pending = []
    }
  }

  /**
   * What a job still running has printed: the bytes held in memory, or undefined once
   * they went to the file (read the file then; a write in flight may not be there yet).
   */
  held (): Buffer | undefined {
    return this.stream === undefined && !this.closed ? Buffer.concat(this.pending) : undefined
  }

  async close (): Promise<void> {
    this.closed = true
    const note = this.dropped > 0 ? `\n[agent: log cut at ${this.maxBytes} bytes; ${this.dropped} more bytes were not kept]\n` : ''
    const stream = this.stream
    if (stream === undefined) {
      if (this.pendingBytes === 0) return
      writeFileSync(this.path, Buffer.concat([...this.pending, Buffer.from(note)]), { flag: 'a', mode: 0o600 })
      this.pending = []
      return
    }
    if (note !== '') stream.write(note)
    await new Promise<void>((resolve) => stream.end(resolve))
  }
}

/**
 * Splits a stream into lines and hands each complete one to `onLine`. A line past
 * MAX_LINE_CHARS is dropped whole (its start is not a usable protocol line either).
 */
export class LineSplitter {
  private buffer = ''
  private overlong = false

  constructor (private readonly onLine: (line: string) => void) {}

  push (text: string): void {
    let start = 0
    for (let nl = text.indexOf('\n'); nl !== -1; nl = text.indexOf('\n', start)) {
      const piece = text.slice(start, nl)
      if (!this.overlong && this.buffer.length + piece.length <= MAX_LINE_CHARS) this.emit(this.buffer + piece)
      this.buffer = ''
      this.overlong = false
      start = nl + 1
    }
    if (this.overlong) return
    const rest = text.slice(start)
    if (this.buffer.length + rest.length > MAX_LINE_CHARS) {
      this.buffer = ''
      this.overlong = true
    } else {
      this.buffer += rest
    }
  }

  end (): void {
    if (!this.overlong && this.buffer !== '') this.emit(this.buffer)
    this.buffer = ''
  }

  private emit (line: string): void {
    this.onLine(line.endsWith('\r') ? line.slice(0, -1) : line)
  }
}

/** Removes job logs older than `maxAgeMs`, so LOG_DIR does not grow for ever. */
export async function pruneJobLogs (dir: string, maxAgeMs: number, nowMs: number): Promise<number> {
  let names: string[]
  try {
    names = await readdir(dir)
  } catch {
    return 0
  }
  let removed = 0
  for (const name of names) {
    const path = join(dir, name)
    const info = await stat(path).catch(() => undefined)
    if (info?.isFile() === true && nowMs - info.mtimeMs > maxAgeMs) {
      await rm(path, { force: true })
      removed++
    }
  }
  return removed
}
