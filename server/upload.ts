/**
 * Receives a multipart upload: the one file part goes to a private temporary
 * directory as it arrives (never buffered whole), hashed on the way; the text
 * fields are collected whatever their order relative to the file. The caller must
 * call `remove()` in a finally block, so the file is gone on every path.
 */
import { createHash } from 'node:crypto'
import type { Hash } from 'node:crypto'
import { mkdir, mkdtemp, open, rm } from 'node:fs/promises'
import type { FileHandle } from 'node:fs/promises'
import { join } from 'node:path'
import { Writable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import type { FastifyRequest } from 'fastify'
import { EngineError } from '../core/errors.js'
import { ArrivalWriter } from '../core/files/arrival.js'

const WRITE_QUEUE_BYTES = 4 << 20

export interface Upload {
  /** Path of the stored file, or undefined when the request had no file part. */
  path: string | undefined
  fileName: string
  sha256: string
  sizeBytes: number
  fields: Record<string, string>
  remove: () => Promise<void>
}

export interface UploadOptions {
  /** The form field holding the file (default "file"). */
  fileField?: string
  /**
   * Called when the file part starts, before its first byte is on disk: the path and
   * the ArrivalWriter that tells another thread how much of it can be read so far
   * (see core/files/arrival.ts). The upload completes or fails it.
   */
  onFile?: (path: string, arrival: ArrivalWriter) => void
}

export async function receiveUpload (request: FastifyRequest, tmpDir: string, options: UploadOptions = {}): Promise<Upload> {
  const fileField = options.fileField ?? 'file'
  await mkdir(tmpDir, { recursive: true, mode: 0o700 })
  const dir = await mkdtemp(join(tmpDir, 'upload-'))
  const upload: Upload = {
    path: undefined,
    fileName: '',
    sha256: '',
    sizeBytes: 0,
    fields: {},
    remove: () => rm(dir, { recursive: true, force: true })
  }
  try {
    for await (const part of request.parts()) {
      if (part.type === 'field') {
        if (typeof part.value === 'string') upload.fields[part.fieldname] = part.value
        continue
      }
      if (part.fieldname !== fileField || upload.path !== undefined) {
        part.file.resume()
        throw new EngineError('REQUEST_INVALID', `Send exactly one file, in the form field "${fileField}".`)
      }
      const path = join(dir, 'upload')
      const hash = createHash('sha256')
      const arrival = new ArrivalWriter()
      const file = await open(path, 'wx', 0o600)
      upload.path = path
      try {
        options.onFile?.(path, arrival)
        await pipeline(part.file, fileWriter(file, hash, arrival))
        arrival.complete()
      } catch (err) {
        arrival.fail()
        throw err
      } finally {
        await file.close()
      }
      upload.fileName = part.filename
      upload.sha256 = hash.digest('hex')
      upload.sizeBytes = arrival.bytes
    }
    return upload
  } catch (err) {
    await upload.remove()
    throw err
  }
}

/**
 * Hashes the upload and writes it to `file` in arrival order, telling `arrival` after
 * each write has landed. Queued chunks go down in one writev. A deep queue: with the
 * default 16 KiB the socket waits for each 64 KiB write's round trip through the
 * thread pool (a 28 MB upload took ~50 ms instead of ~38).
 */
function fileWriter (file: FileHandle, hash: Hash, arrival: ArrivalWriter): Writable {
  const land = (chunks: Buffer[], done: (err?: Error | null) => void): void => {
    for (const chunk of chunks) hash.update(chunk)
    writeAll(file, chunks, arrival).then(() => done(), done)
  }
  return new Writable({
    highWaterMark: WRITE_QUEUE_BYTES,
    write (chunk: Buffer, _enc, done) { land([chunk], done) },
    writev (chunks, done) { land(chunks.map((c) => c.chunk as Buffer), done) }
  })
}

/** writev until every byte is down: a short write must not leave a hole in the file. */
async function writeAll (file: FileHandle, chunks: Buffer[], arrival: ArrivalWriter): Promise<void> {
  let rest = chunks
  while (rest.length > 0) {
    const { bytesWritten } = await file.writev(rest)
    arrival.advance(bytesWritten)
    let skip = bytesWritten
    while (rest.length > 0 && skip >= rest[0]!.length) {
      skip -= rest[0]!.length
      rest = rest.slice(1)
    }
    if (skip > 0) rest = [rest[0]!.subarray(skip), ...rest.slice(1)]
  }
}
