/**
 * Receives a multipart upload: the one file part goes to a private temporary
 * directory as it arrives (never buffered whole), hashed on the way; the text
 * fields are collected whatever their order relative to the file. The caller must
 * call `remove()` in a finally block, so the file is gone on every path.
 */
import { createHash } from 'node:crypto'
import { createWriteStream } from 'node:fs'
import { lstat, mkdir, mkdtemp, readdir, rm, stat } from 'node:fs/promises'
import { join } from 'node:path'
import { Transform } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import type { FastifyRequest } from 'fastify'
import { EngineError } from '../core/errors.js'
import { ConfigError } from './config.js'

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

/**
 * Creates the uploads folder when missing and checks that it is ours alone: a real
 * folder (not a link), owned by this process's user, writable by nobody else. The
 * default sits in the shared /tmp: another local user who made /tmp/razao first could
 * otherwise swap an upload between its receipt and its reading. Throws a message
 * naming RAZAO_TMP_DIR.
 */
export async function ensurePrivateDir (dir: string): Promise<void> {
  await mkdir(dir, { recursive: true, mode: 0o700 })
  const facts = await lstat(dir)
  const problem = !facts.isDirectory()
    ? 'is not a folder (a link or a file)'
    : process.getuid !== undefined && facts.uid !== process.getuid()
      ? `belongs to another user (uid ${facts.uid})`
      : (facts.mode & 0o022) !== 0
          ? `can be written by other users (mode ${(facts.mode & 0o777).toString(8)})`
          : undefined
  if (problem !== undefined) throw new ConfigError('RAZAO_TMP_DIR', `RAZAO_TMP_DIR ${dir} ${problem}; point it at a private folder or fix its owner and mode (chmod 700)`)
}

const UPLOAD_PREFIX = 'upload-'
/**
 * Uploads untouched for this long belong to no live request (see sweepStaleUploads): a
 * day, far beyond any upload or any wait in the pool's queue of a sibling instance.
 */
export const STALE_UPLOAD_MS = 24 * 60 * 60 * 1000

/**
 * Removes the upload folders that a process which died mid-request left in `tmpDir`
 * (a crash runs no finally block). Only folders whose newest file is older than
 * `staleMs` go: another instance sharing the folder may be receiving one right now.
 * Returns how many were removed.
 */
export async function sweepStaleUploads (tmpDir: string, staleMs = STALE_UPLOAD_MS, now = Date.now()): Promise<number> {
  let names: string[]
  try {
    names = await readdir(tmpDir)
  } catch {
    return 0
  }
  let removed = 0
  for (const name of names) {
    if (!name.startsWith(UPLOAD_PREFIX)) continue
    const dir = join(tmpDir, name)
    try {
      let newest = (await stat(dir)).mtimeMs
      for (const entry of await readdir(dir)) newest = Math.max(newest, (await stat(join(dir, entry))).mtimeMs)
      if (now - newest < staleMs) continue
      await rm(dir, { recursive: true, force: true })
      removed++
    } catch {
      // Gone already, or not ours to read: leave it.
    }
  }
  return removed
}

export async function receiveUpload (request: FastifyRequest, tmpDir: string, fileField = 'file'): Promise<Upload> {
  // Checked on every upload, not only at start: a folder removed meanwhile (tmp cleaners)
  // could be made again by someone else.
  await ensurePrivateDir(tmpDir)
  const dir = await mkdtemp(join(tmpDir, UPLOAD_PREFIX))
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
      let size = 0
      const tap = new Transform({
        transform (chunk: Buffer, _enc, done) {
          hash.update(chunk)
          size += chunk.length
          done(null, chunk)
        }
      })
      // A deep write queue: with the default 16 KiB the socket waits for each 64 KiB
      // write's round trip through the thread pool (a 28 MB upload took ~50 ms instead of ~38).
      await pipeline(part.file, tap, createWriteStream(path, { mode: 0o600, highWaterMark: WRITE_QUEUE_BYTES }))
      upload.path = path
      upload.fileName = part.filename
      upload.sha256 = hash.digest('hex')
      upload.sizeBytes = size
    }
    return upload
  } catch (err) {
    await upload.remove()
    throw malformedOrAsIs(err)
  }
}

/**
 * busboy's parse errors ("Boundary not found", "Unexpected end of form", a malformed
 * part header) carry no code and would be answered 500: they are the client's malformed
 * body, a 400. Errors with a code (multipart limits, file system, a client that hung up:
 * ECONNRESET, FST_MP_PREMATURE_CLOSE) and our own pass through.
 */
export function malformedOrAsIs (err: unknown): unknown {
  // busboy throws plain Errors; a TypeError, a RangeError (memory) or anything coded is not the body's fault.
  if (!(err instanceof Error) || err.constructor !== Error || (err as { code?: unknown }).code !== undefined) return err
  return new EngineError('REQUEST_INVALID', 'The multipart body is malformed: send the file as multipart/form-data, with its boundary in the Content-Type header.', undefined, { cause: err })
}
