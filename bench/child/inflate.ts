/**
 * The raw limit: inflating the sheet XML and nothing else. `zipArchivePass` goes
 * through our ZipArchive exactly as the reader does (core/xlsx/inflate.ts: zlib's
 * native handle into reused buffers, overlapping the consumer); `yauzlPass` is
 * yauzl's own read stream with zlib's default 16 KiB chunks, for reference.
 */
import yauzl from 'yauzl'
import { MAX_INFLATED_BYTES, importDist, type Zip } from './dist.js'
import type { InflateEngine } from '../../core/xlsx/index.js'
import type { Pass, SheetTarget } from './protocol.js'
import { findEntry } from './zip-entry.js'

export async function zipArchivePass (job: SheetTarget, engine?: InflateEngine): Promise<Pass> {
  const { ZipArchive } = await importDist<Zip>(job.distDir, 'core/xlsx/zip.js')
  return async () => {
    const zip = await ZipArchive.open(job.file, { maxInflatedBytes: MAX_INFLATED_BYTES, engine })
    let xmlBytes = 0
    try {
      for await (const chunk of zip.streamPart(job.sheetPart)) xmlBytes += chunk.length
    } finally {
      zip.close()
    }
    return { rows: 0, cells: 0, xmlBytes }
  }
}

export function yauzlPass (job: SheetTarget): Pass {
  return async () => {
    const zip = await yauzl.openPromise(job.file, { lazyEntries: true, autoClose: false })
    let xmlBytes = 0
    try {
      const entry = await findEntry(zip, job.sheetPart)
      for await (const chunk of await zip.openReadStreamPromise(entry) as AsyncIterable<Buffer>) xmlBytes += chunk.length
    } finally {
      zip.close()
    }
    return { rows: 0, cells: 0, xmlBytes }
  }
}
