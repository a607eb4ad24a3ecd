/**
 * Reads a file only when it is a regular file of bounded size. A path found in a directory
 * listing (a package's `automation.json`, a migration) may name a FIFO, which blocks a
 * plain read until a writer appears (and with it a thread of the pool, and the shutdown
 * waiting on it), or a device that never ends. The file is opened without blocking,
 * checked through its open handle (no race with a swap of the name), and read up to the cap.
 */
import { constants } from 'node:fs'
import { open } from 'node:fs/promises'

/** Raised for a path that is not a regular file (`EFTYPE`) or is larger than allowed (`EFBIG`). */
export class FileRefusedError extends Error {
  constructor (readonly code: 'EFTYPE' | 'EFBIG', message: string) {
    super(message)
    this.name = 'FileRefusedError'
  }
}

export async function readRegularFile (path: string, maxBytes: number): Promise<Buffer> {
  // O_NONBLOCK: opening a FIFO for reading returns at once instead of waiting for a writer.
  const handle = await open(path, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0))
  try {
    const info = await handle.stat()
    if (!info.isFile()) throw new FileRefusedError('EFTYPE', `${path} is not a regular file`)
    if (info.size > maxBytes) throw new FileRefusedError('EFBIG', `${path} is larger than ${maxBytes} bytes`)
    // Read to the end, not to the size seen: one byte more than the cap says it grew meanwhile.
    const buffer = Buffer.alloc(Math.min(info.size, maxBytes) + 1)
    let length = 0
    for (;;) {
      const { bytesRead } = await handle.read(buffer, length, buffer.length - length, null)
      if (bytesRead === 0) break
      length += bytesRead
      if (length === buffer.length) {
        if (length > maxBytes) throw new FileRefusedError('EFBIG', `${path} is larger than ${maxBytes} bytes`)
        break
      }
    }
    return buffer.subarray(0, length)
  } finally {
    await handle.close()
  }
}
