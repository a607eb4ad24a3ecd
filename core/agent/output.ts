/**
 * What a package's output turns into: its standard streams kept in bounded log files,
 * and the protocol lines of its standard output (`AGENT_FILE_JSON=`, `AGENT_RESULT_JSON=`).
 */
import { createWriteStream } from 'node:fs'
import type { WriteStream } from 'node:fs'
import { readdir, rm, stat } from 'node:fs/promises'
import { join } from 'node:path'

export const RESULT_PREFIX = 'AGENT_RESULT_JSON='
export const FILE_PREFIX = 'AGENT_FILE_JSON='
/** A protocol line longer than this is not read (a result is a JSON summary, not a payload). */
export const MAX_LINE_CHARS = 16 * 1024 * 1024

/**
 * One stream of one job on disk, opened on the first byte (most trivial packages never
 * write to stderr) and cut at `maxBytes` with one closing note saying how much was dropped.
 */
export class BoundedLog {
  private stream: WriteStream | undefined
  private written = 0
  private dropped = 0

  constructor (private readonly path: string, private readonly maxBytes: number) {}

  write (chunk: Buffer): void {
    const room = this.maxBytes - this.written
    if (room <= 0) {
      this.dropped += chunk.length
      return
    }
    this.stream ??= createWriteStream(this.path, { flags: 'a', mode: 0o600 })
    const part = chunk.length <= room ? chunk : chunk.subarray(0, room)
    this.stream.write(part)
    this.written += part.length
    this.dropped += chunk.length - part.length
  }

  async close (): Promise<void> {
    const stream = this.stream
    if (stream === undefined) return
    if (this.dropped > 0) stream.write(`\n[agent: log cut at ${this.maxBytes} bytes; ${this.dropped} more bytes were not kept]\n`)
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
