/**
 * The ZIP side of XLSX: yauzl lists the central directory lazily, and we inflate
 * each part ourselves from the file (inflate.ts): yauzl's own read stream inflates
 * in 16 KiB pieces and allocates every one of them.
 */
import { closeSync, openSync, readSync } from 'node:fs'
import { inflateRawSync } from 'node:zlib'
import yauzl from 'yauzl'
import type { Entry, ZipFile } from 'yauzl'
import { EngineError } from '../errors.js'
import { inflateEntry } from './inflate.js'
import type { InflateEngine } from './inflate.js'

/**
 * Parts this small (compressed) are read and inflated in one synchronous step: the
 * workbook, its relationships and styles, and usually the shared strings. Through the
 * streaming path each cost about 0.26 ms of thread-pool round trips (open, read,
 * inflate, close), ~1.3 ms of a 100k-row read; this way about 0.02 ms.
 */
const SMALL_PART_BYTES = 1 << 20
/** ...and inflating to at most this, so that one step never blocks the thread for long. */
const SMALL_PART_INFLATED_BYTES = 16 << 20
/** Local file header signature and fixed length (APPNOTE 4.3.7). */
const LOCAL_HEADER_SIGNATURE = 0x04034b50
const LOCAL_HEADER_BYTES = 30
const LOCAL_HEADER_MAGIC = Buffer.from([0x50, 0x4b, 0x03, 0x04])
/** A 32-bit size field holding this defers to the ZIP64 extra field (APPNOTE 4.5.3). */
const ZIP64_SIZE = 0xffffffff
/** Read size when looking through bytes between entries. */
const GAP_PIECE_BYTES = 64 * 1024
/** A workbook has a few dozen parts; thousands of entries mean a hostile or foreign archive. */
const MAX_ENTRIES = 10_000
/** General purpose flag bit 0 (APPNOTE 4.4.4): the entry is encrypted. */
const FLAG_ENCRYPTED = 0x1
/** Bit 3: sizes and CRC follow the data in a descriptor; the local header has zeros. */
const FLAG_DATA_DESCRIPTOR = 0x8

export interface ZipLimits {
  /** Most bytes one part may declare or inflate to (zip-bomb guard). */
  maxInflatedBytes: number
  signal?: AbortSignal | undefined
  /** Tests choose the zlib stream path here; everything else takes the default. */
  engine?: InflateEngine | undefined
}

/** What openPart hands over: the bytes, or a stream of them. */
export type OpenedPart = { bytes: Buffer } | { declaredBytes: number, chunks: AsyncGenerator<Buffer> }

export class ZipArchive {
  private constructor (
    private readonly path: string,
    private readonly zip: ZipFile,
    /** Keyed by lower-cased name: OPC part names compare case-insensitively (ECMA-376 Part 2, 6.2.2.3). */
    private readonly entries: Map<string, Entry>,
    private readonly limits: ZipLimits
  ) {}

  /** Our own descriptor for the synchronous small-part reads, opened on first use. */
  private fd: number | undefined
  private closed = false
  private inflated = 0

  /** Bytes inflated so far, every part together: what a refusal cost before it was made. */
  get inflatedBytes (): number {
    return this.inflated
  }

  private checkOpen (): void {
    if (this.closed) throw new Error('ZipArchive used after close()')
  }

  static async open (path: string, limits: ZipLimits): Promise<ZipArchive> {
    let zip: ZipFile
    try {
      zip = await openZip(path)
    } catch (err) {
      throw new EngineError('SHEET_CORRUPT', 'The file starts like a ZIP (XLSX) archive but its directory cannot be read; it may be truncated or damaged.', undefined, { cause: err })
    }
    // Where the central directory starts: yauzl's cursor before the first entry is read
    // (typed loosely by @types/yauzl); without it the bytes after the last entry go unchecked.
    const cursor: unknown = zip.readEntryCursor
    const directoryOffset = typeof cursor === 'number' ? cursor : undefined
    let archive: ZipArchive | undefined
    try {
      const entries = await listEntries(zip)
      archive = new ZipArchive(path, zip, entries, limits)
      archive.checkLocalHeaders(directoryOffset)
      return archive
    } catch (err) {
      if (archive === undefined) zip.close()
      else archive.close()
      if (err instanceof EngineError) throw err
      throw new EngineError('SHEET_CORRUPT', 'The ZIP (XLSX) directory is damaged and cannot be listed.', undefined, { cause: err })
    }
  }

  /**
   * A ZIP archive says twice what it holds: a local header before each entry's data, and
   * the central directory at the end. We read through the directory; a reader that walks
   * the local headers from the start of the file (streaming unzippers do) would read what
   * the local headers say. Where the two disagree the file means different things to
   * different programs, and a person checking it in one of them would not see what we
   * import: such archives are refused (XLSX_AMBIGUOUS_ARCHIVE). Compared for every entry:
   * the name, the compression method, the encryption flag and, when the local header
   * carries it, the compressed size, that is everything that decides which bytes are read
   * as which part. Entries must not overlap, and no local header may hide between them
   * (or before the first) without being listed. Sizes after inflation and CRCs are left to
   * the reads, which check them (zip-bomb and truncation checks).
   */
  private checkLocalHeaders (directoryOffset: number | undefined): void {
    const sorted = [...this.entries.values()].sort((a, b) => a.relativeOffsetOfLocalHeader - b.relativeOffsetOfLocalHeader)
    this.fd ??= openSync(this.path, 'r')
    let cursor = 0
    let previous: Entry | undefined
    for (const entry of sorted) {
      const offset = entry.relativeOffsetOfLocalHeader
      if (offset < cursor) throw ambiguous(`its entries "${previous?.fileName ?? ''}" and "${entry.fileName}" overlap`)
      this.checkGap(cursor, offset)
      const header = Buffer.alloc(LOCAL_HEADER_BYTES + entry.fileNameLength)
      const read = readSync(this.fd, header, 0, header.length, offset)
      if (read < header.length || header.readUInt32LE(0) !== LOCAL_HEADER_SIGNATURE) {
        throw new EngineError('SHEET_CORRUPT', `The part "${entry.fileName}" of the archive is damaged: its local header is missing.`)
      }
      const nameLength = header.readUInt16LE(26)
      const flags = header.readUInt16LE(6)
      const compressedSize = header.readUInt32LE(18)
      if (nameLength !== entry.fileNameLength || !header.subarray(LOCAL_HEADER_BYTES).equals(entry.fileNameRaw)) {
        // A local name of another length is not read: it may run past the end of the file.
        const local = nameLength === entry.fileNameLength ? `is named "${header.toString('utf8', LOCAL_HEADER_BYTES)}"` : `has a ${nameLength}-byte name`
        throw ambiguous(`the entry its directory calls "${entry.fileName}" ${local} in its local header`)
      }
      if (header.readUInt16LE(8) !== entry.compressionMethod) throw ambiguous(`the entry "${entry.fileName}" has one compression method in the directory and another in its local header`)
      if ((flags & FLAG_ENCRYPTED) !== 0 && (entry.generalPurposeBitFlag & FLAG_ENCRYPTED) === 0) throw ambiguous(`the entry "${entry.fileName}" is encrypted by its local header but not by the directory`)
      // With a data descriptor (bit 3) the local sizes are zero; 0xFFFFFFFF defers to a ZIP64 field.
      if ((flags & FLAG_DATA_DESCRIPTOR) === 0 && compressedSize !== ZIP64_SIZE && compressedSize !== entry.compressedSize) {
        throw ambiguous(`the entry "${entry.fileName}" has one size in the directory and another in its local header`)
      }
      cursor = offset + LOCAL_HEADER_BYTES + nameLength + header.readUInt16LE(28) + entry.compressedSize
      previous = entry
    }
    if (directoryOffset === undefined) return
    if (cursor > directoryOffset) throw ambiguous(`its entry "${previous?.fileName ?? ''}" runs into the central directory`)
    this.checkGap(cursor, directoryOffset)
  }

  /**
   * Bytes between entries are normally nothing, or a data descriptor (12 to 24 bytes). A
   * local header signature there is an entry the directory does not list.
   */
  private checkGap (from: number, to: number): void {
    if (to - from < 4) return
    const piece = Buffer.allocUnsafe(Math.min(to - from, GAP_PIECE_BYTES))
    for (let at = from; at + 4 <= to; at += piece.length - 3) {
      const n = readSync(this.fd!, piece, 0, Math.min(piece.length, to - at), at)
      const found = piece.subarray(0, n).indexOf(LOCAL_HEADER_MAGIC)
      if (found !== -1) throw ambiguous(`it holds a local header at byte ${at + found} that its central directory does not list`)
      if (n < piece.length) break
    }
  }

  has (name: string): boolean {
    return this.entries.has(name.toLowerCase())
  }

  close (): void {
    this.closed = true
    this.zip.close()
    if (this.fd !== undefined) closeSync(this.fd)
    this.fd = undefined
  }

  /** Declared inflated size of a part (0 when absent). */
  sizeOf (name: string): number {
    return this.entries.get(name.toLowerCase())?.uncompressedSize ?? 0
  }

  /**
   * A part to read: whole when one synchronous step can take it, else its inflated chunks
   * (each valid only until the next is asked for). `maxBytes` caps it below the general
   * zip-bomb limit; a part declaring more is refused here, before anything is read.
   */
  openPart (name: string, maxBytes: number): OpenedPart | undefined {
    const entry = this.entries.get(name.toLowerCase())
    if (entry === undefined) return undefined
    const limit = Math.min(maxBytes, this.limits.maxInflatedBytes)
    checkEntry(entry, limit)
    if (entry.compressedSize <= SMALL_PART_BYTES && entry.uncompressedSize <= SMALL_PART_INFLATED_BYTES) return { bytes: this.readSmallPart(entry, limit) }
    return { declaredBytes: entry.uncompressedSize, chunks: this.streamEntry(entry, limit) }
  }

  /** Reads a small part whole. `maxBytes` caps it below the general zip-bomb limit. */
  async readPart (name: string, maxBytes: number): Promise<Buffer | undefined> {
    const part = this.openPart(name, maxBytes)
    if (part === undefined || 'bytes' in part) return part?.bytes
    const chunks: Buffer[] = []
    // Copies: the inflater reuses a chunk's memory once the next one is asked for.
    for await (const chunk of part.chunks) chunks.push(Buffer.from(chunk))
    return Buffer.concat(chunks)
  }

  /**
   * Inflates a part chunk by chunk; throws XLSX_ZIP_BOMB the moment it passes the limit.
   * Each chunk is valid only until the next one is asked for: consumers copy what they keep.
   */
  streamPart (name: string): AsyncGenerator<Buffer> {
    const entry = this.entries.get(name.toLowerCase())
    if (entry === undefined) throw new EngineError('SHEET_CORRUPT', `The workbook refers to a part "${name}" that is not in the archive.`)
    return this.streamEntry(entry, this.limits.maxInflatedBytes)
  }

  /** A small part whole, read and inflated synchronously, with the same checks as streamEntry. */
  private readSmallPart (entry: Entry, maxBytes: number): Buffer {
    checkEntry(entry, maxBytes)
    this.checkOpen()
    this.fd ??= openSync(this.path, 'r')
    const header = Buffer.alloc(LOCAL_HEADER_BYTES)
    if (readSync(this.fd, header, 0, LOCAL_HEADER_BYTES, entry.relativeOffsetOfLocalHeader) !== LOCAL_HEADER_BYTES ||
      header.readUInt32LE(0) !== LOCAL_HEADER_SIGNATURE) throw new EngineError('SHEET_CORRUPT', `The part "${entry.fileName}" of the archive is damaged: its local header is missing.`)
    // Name and extra field lengths of the local header, which may differ from the directory's.
    const start = entry.relativeOffsetOfLocalHeader + LOCAL_HEADER_BYTES + header.readUInt16LE(26) + header.readUInt16LE(28)
    const data = Buffer.allocUnsafe(entry.compressedSize)
    if (entry.compressedSize > 0 && readSync(this.fd, data, 0, data.length, start) !== data.length) {
      throw truncated(entry)
    }
    let out = data
    // An empty entry has no deflate data at all (as on the streaming path, it reads as empty).
    if (entry.compressionMethod === 8 && entry.compressedSize > 0) {
      try {
        // One byte more than declared: a part that inflates past its size is refused below.
        out = inflateRawSync(data, { maxOutputLength: entry.uncompressedSize + 1 })
      } catch (err) {
        if ((err as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') throw inflatesPastDeclared(entry)
        throw undecodable(entry, err)
      }
    }
    this.inflated += out.length
    if (out.length > entry.uncompressedSize) throw inflatesPastDeclared(entry)
    if (out.length !== entry.uncompressedSize) {
      throw truncated(entry)
    }
    return out
  }

  private async * streamEntry (entry: Entry, maxBytes: number): AsyncGenerator<Buffer> {
    checkEntry(entry, maxBytes)
    this.checkOpen()
    let total = 0
    try {
      // Inside the try: yauzl's own errors (a bad local header, data past the end of the
      // file) are damage to report as such, like every other failure below.
      const { fileDataStart } = await this.zip.readLocalFileHeaderPromise(entry, { minimal: true })
      const data = { path: this.path, start: fileDataStart, compressedSize: entry.compressedSize, method: entry.compressionMethod }
      for await (const chunk of inflateEntry(data, this.limits.engine)) {
        if (this.limits.signal?.aborted === true) throw new EngineError('ABORTED', 'The read was cancelled.')
        total += chunk.length
        this.inflated += chunk.length
        if (total > maxBytes) throw zipBomb(entry.fileName, maxBytes)
        // A part that inflates past its declared size is lying about itself, the
        // classic trick of zip bombs that pass header checks.
        if (total > entry.uncompressedSize) throw inflatesPastDeclared(entry)
        yield chunk
      }
    } catch (err) {
      if (err instanceof EngineError) throw err
      throw undecodable(entry, err)
    }
    if (total !== entry.uncompressedSize) {
      throw truncated(entry)
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

function truncated (entry: Entry): EngineError {
  return new EngineError('SHEET_CORRUPT', `The part "${entry.fileName}" is shorter than the archive declares; the file is probably truncated.`)
}

function undecodable (entry: Entry, cause: unknown): EngineError {
  return new EngineError('SHEET_CORRUPT', `The part "${entry.fileName}" of the archive is damaged and cannot be inflated.`, undefined, { cause })
}

function inflatesPastDeclared (entry: Entry): EngineError {
  return new EngineError('XLSX_ZIP_BOMB', `The part "${entry.fileName}" inflates to more bytes than the archive declares; the file is refused as a possible zip bomb.`, { part: entry.fileName })
}

function zipBomb (name: string, maxBytes: number): EngineError {
  return new EngineError('XLSX_ZIP_BOMB', `The part "${name}" inflates beyond the limit of ${maxBytes} bytes; the file is refused as a possible zip bomb.`, { part: name, maxBytes })
}

function ambiguous (what: string): EngineError {
  return new EngineError('XLSX_AMBIGUOUS_ARCHIVE', `The ZIP (XLSX) archive is ambiguous: ${what}. Spreadsheet programs would not all read the same data from it; save the workbook again from Excel or LibreOffice and upload that file.`)
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
      // Part names compare case-insensitively (ECMA-376 Part 2, 6.2.2.3), and a package must not
      // hold two equivalent names [M1.12]: which of the two a program reads is its own choice
      // (the last for a map keyed like ours, the exact spelling the relationships use for others).
      const key = entry.fileName.toLowerCase()
      const other = entries.get(key)
      if (other !== undefined) {
        reject(ambiguous(`it has two entries named "${other.fileName}" and "${entry.fileName}", which differ only in case or not at all`))
        return
      }
      entries.set(key, entry)
      zip.readEntry()
    })
    zip.once('end', () => resolve(entries))
    zip.once('error', reject)
    zip.readEntry()
  })
}
