/**
 * The ZIP side of XLSX: yauzl lists the central directory lazily, and we inflate
 * each part ourselves from a plain file stream. yauzl's own read stream inflates in
 * 16 KiB pieces; reading the raw deflate data in 1 MiB slices and inflating into
 * 256 KiB chunks roughly halves the inflate time on large sheets (bench/xlsx-read).
 */
import { createReadStream } from 'node:fs'
import { createInflateRaw } from 'node:zlib'
import type { ZlibOptions } from 'node:zlib'
import yauzl from 'yauzl'
import type { Entry, ZipFile } from 'yauzl'
import { EngineError } from '../errors.js'

const READ_SLICE_BYTES = 1 << 20
const INFLATE_CHUNK_BYTES = 256 * 1024
/**
 * How far inflation may run ahead of the scanner. zlib works on the libuv thread
 * pool, so with a few chunks of slack it inflates the next chunks while this thread
 * scans the current one, and the read costs about max(inflate, scan), not the sum.
 */
const INFLATE_AHEAD_BYTES = 4 * INFLATE_CHUNK_BYTES
// highWaterMark is a Transform option that zlib's own option type does not list.
const INFLATE_OPTIONS: ZlibOptions = Object.assign({ chunkSize: INFLATE_CHUNK_BYTES }, { highWaterMark: INFLATE_AHEAD_BYTES })
/** A workbook has a few dozen parts; thousands of entries mean a hostile or foreign archive. */
const MAX_ENTRIES = 10_000
/** General purpose flag bit 0 (APPNOTE 4.4.4): the entry is encrypted. */
const FLAG_ENCRYPTED = 0x1

export interface ZipLimits {
  /** Most bytes one part may declare or inflate to (zip-bomb guard). */
  maxInflatedBytes: number
  signal?: AbortSignal | undefined
}

export class ZipArchive {
  private constructor (
    private readonly path: string,
    private readonly zip: ZipFile,
    /** Keyed by lower-cased name: OPC part names compare case-insensitively (ECMA-376 Part 2, 6.2.2.3). */
    private readonly entries: Map<string, Entry>,
    private readonly limits: ZipLimits
  ) {}

  static async open (path: string, limits: ZipLimits): Promise<ZipArchive> {
    let zip: ZipFile
    try {
      zip = await openZip(path)
    } catch (err) {
      throw new EngineError('SHEET_CORRUPT', 'The file starts like a ZIP (XLSX) archive but its directory cannot be read; it may be truncated or damaged.', undefined, { cause: err })
    }
    try {
      const entries = await listEntries(zip)
      return new ZipArchive(path, zip, entries, limits)
    } catch (err) {
      zip.close()
      if (err instanceof EngineError) throw err
      throw new EngineError('SHEET_CORRUPT', 'The ZIP (XLSX) directory is damaged and cannot be listed.', undefined, { cause: err })
    }
  }

  has (name: string): boolean {
    return this.entries.has(name.toLowerCase())
  }

  close (): void {
    this.zip.close()
  }

  /** Declared inflated size of a part (0 when absent). */
  sizeOf (name: string): number {
    return this.entries.get(name.toLowerCase())?.uncompressedSize ?? 0
  }

  /** Reads a small part whole. `maxBytes` caps it below the general zip-bomb limit. */
  async readPart (name: string, maxBytes: number): Promise<Buffer | undefined> {
    const entry = this.entries.get(name.toLowerCase())
    if (entry === undefined) return undefined
    const chunks: Buffer[] = []
    for await (const chunk of this.streamEntry(entry, Math.min(maxBytes, this.limits.maxInflatedBytes))) chunks.push(chunk)
    return Buffer.concat(chunks)
  }

  /** Inflates a part chunk by chunk; throws XLSX_ZIP_BOMB the moment it passes the limit. */
  streamPart (name: string): AsyncGenerator<Buffer> {
    const entry = this.entries.get(name.toLowerCase())
    if (entry === undefined) throw new EngineError('SHEET_CORRUPT', `The workbook refers to a part "${name}" that is not in the archive.`)
    return this.streamEntry(entry, this.limits.maxInflatedBytes)
  }

  private async * streamEntry (entry: Entry, maxBytes: number): AsyncGenerator<Buffer> {
    checkEntry(entry, maxBytes)
    const { fileDataStart } = await this.zip.readLocalFileHeaderPromise(entry, { minimal: true })
    if (entry.compressedSize === 0) return
    const raw = createReadStream(this.path, {
      start: fileDataStart,
      end: fileDataStart + entry.compressedSize - 1,
      highWaterMark: READ_SLICE_BYTES
    })
    const source = entry.compressionMethod === 8
      ? raw.pipe(createInflateRaw(INFLATE_OPTIONS))
      : raw
    // pipe() does not forward errors from the file stream to the inflater.
    if (source !== raw) raw.on('error', (err) => source.destroy(err))
    let total = 0
    try {
      for await (const chunk of source as AsyncIterable<Buffer>) {
        if (this.limits.signal?.aborted === true) throw new EngineError('ABORTED', 'The read was cancelled.')
        total += chunk.length
        if (total > maxBytes) throw zipBomb(entry.fileName, maxBytes)
        // A part that inflates past its declared size is lying about itself, the
        // classic trick of zip bombs that pass header checks.
        if (total > entry.uncompressedSize) {
          throw new EngineError('XLSX_ZIP_BOMB', `The part "${entry.fileName}" inflates to more bytes than the archive declares; the file is refused as a possible zip bomb.`, { part: entry.fileName })
        }
        yield chunk
      }
    } catch (err) {
      if (err instanceof EngineError) throw err
      throw new EngineError('SHEET_CORRUPT', `The part "${entry.fileName}" of the archive is damaged and cannot be inflated.`, undefined, { cause: err })
    } finally {
      raw.destroy()
      if (source !== raw) source.destroy()
    }
    if (total !== entry.uncompressedSize) {
      throw new EngineError('SHEET_CORRUPT', `The part "${entry.fileName}" is shorter than the archive declares; the file is probably truncated.`)
    }
  }
}

function checkEntry (entry: Entry, maxBytes: number): void {
  if ((entry.generalPurposeBitFlag & FLAG_ENCRYPTED) !== 0) {
    throw new EngineError('SHEET_ENCRYPTED', 'The workbook is encrypted. Save it without a password and upload it again.')
  }
  if (entry.compressionMethod !== 0 && entry.compressionMethod !== 8) {
    throw new EngineError('SHEET_CORRUPT', `The part "${entry.fileName}" uses ZIP compression method ${entry.compressionMethod}, which Excel never writes.`)
  }
  if (entry.uncompressedSize > maxBytes) throw zipBomb(entry.fileName, maxBytes)
}

function zipBomb (name: string, maxBytes: number): EngineError {
  return new EngineError('XLSX_ZIP_BOMB', `The part "${name}" inflates beyond the limit of ${maxBytes} bytes; the file is refused as a possible zip bomb.`, { part: name, maxBytes })
}

function openZip (path: string): Promise<ZipFile> {
  return new Promise((resolve, reject) => {
    yauzl.open(path, { lazyEntries: true, autoClose: false, validateEntrySizes: true, decodeStrings: true }, (err, zip) => {
      if (err !== null) reject(err)
      else resolve(zip)
    })
  })
}

function listEntries (zip: ZipFile): Promise<Map<string, Entry>> {
  return new Promise((resolve, reject) => {
    const entries = new Map<string, Entry>()
    zip.on('entry', (entry: Entry) => {
      if (entries.size >= MAX_ENTRIES) {
        reject(new EngineError('SHEET_CORRUPT', `The archive has more than ${MAX_ENTRIES} entries; it is not a workbook we accept.`))
        return
      }
      entries.set(entry.fileName.toLowerCase(), entry)
      zip.readEntry()
    })
    zip.once('end', () => resolve(entries))
    zip.once('error', reject)
    zip.readEntry()
  })
}
