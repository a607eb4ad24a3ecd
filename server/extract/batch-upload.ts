/**
 * Receives a batch upload (spec 3 §4 B `extract-batch`): every part of the field `files`
 * streams to its own file in one private temporary folder as it arrives, never buffered
 * whole. A file over the size limit is cut off and marked, not fatal: the rest of the
 * batch is still received and read. More than `maxFiles` files refuses the whole request
 * (400) at the first file too many, before its bytes are stored. The caller must call
 * `remove()` in a finally block.
 */
import { createWriteStream } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { join } from 'node:path'
import { pipeline } from 'node:stream/promises'
import type { FastifyRequest } from 'fastify'
import { EngineError } from '../../core/errors.js'
import { ensurePrivateDir, malformedOrAsIs } from '../upload.js'

export interface BatchFile {
  /** The name the client gave, as sent. */
  fileName: string
  /** Where the bytes are; undefined when the file was over the limit (nothing kept). */
  path: string | undefined
  tooLarge: boolean
}

export interface BatchUpload {
  files: BatchFile[]
  remove: () => Promise<void>
}

export async function receiveBatch (request: FastifyRequest, tmpDir: string, field: string, maxFiles: number, maxFileBytes: number): Promise<BatchUpload> {
  await ensurePrivateDir(tmpDir)
  const dir = await mkdtemp(join(tmpDir, 'upload-'))
  const batch: BatchUpload = { files: [], remove: () => rm(dir, { recursive: true, force: true }) }
  try {
    // One more file than allowed reaches us, so that the refusal names the real problem
    // instead of busboy's silent skip; its bytes are drained, not stored.
    // throwFileSizeLimit (the plugin's, not busboy's, so outside the declared type): a file
    // over the limit is truncated and flagged rather than failing the request.
    const options = { limits: { files: maxFiles + 1, fileSize: maxFileBytes, parts: maxFiles + 20 }, throwFileSizeLimit: false }
    const parts = request.parts(options)
    for await (const part of parts) {
      if (part.type === 'field') continue
      if (part.fieldname !== field) {
        part.file.resume()
        throw new EngineError('REQUEST_INVALID', `Send the PDFs in the form field "${field}" (one part per file); "${part.fieldname}" is not read here.`)
      }
      if (batch.files.length === maxFiles) {
        part.file.resume()
        throw new EngineError('REQUEST_INVALID', `A batch holds at most ${maxFiles} files; this request has more. Send the rest in another request.`, { maxFiles })
      }
      const path = join(dir, `file-${batch.files.length + 1}`)
      await pipeline(part.file, createWriteStream(path, { mode: 0o600 }))
      const tooLarge = part.file.truncated
      // A cut-off file is useless: its bytes go at once rather than at the end of the request.
      if (tooLarge) await rm(path, { force: true })
      batch.files.push({ fileName: part.filename, path: tooLarge ? undefined : path, tooLarge })
    }
    return batch
  } catch (err) {
    await batch.remove()
    throw malformedOrAsIs(err)
  }
}
