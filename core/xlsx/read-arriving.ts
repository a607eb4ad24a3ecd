/**
 * Reading the first sheet of an XLSX upload while the upload is still arriving.
 *
 * A ZIP archive's directory is at its end, so the ordinary reader (read-xlsx.ts)
 * must wait for the whole file. But each part is also preceded by a local header
 * that names it and gives its sizes, so a reader can walk the parts in file order
 * as their bytes land. When the workbook, its relationships, the styles and the
 * shared strings all come before the sheet (our generator's order, and that of
 * some writers), the sheet is inflated and scanned while the rest of it is still
 * on the wire, and the answer is ready about when the upload ends.
 *
 * This is an optimisation that must never change an answer, so it is strict:
 *  - It gives up (EarlyReadUnavailable) on anything but the plain case: ZIP64,
 *    names that are not plain ASCII, a part of unknown size (data descriptor)
 *    that it would have to inflate only to step over, a dependency of the sheet that comes after it (Excel writes
 *    the shared strings after the sheets), a damaged part, any error at all, a
 *    writer that cancels, or an upload too slow to read along with.
 *  - Once the upload is complete, the central directory is read as the ordinary
 *    reader reads it, and every part this read used must be listed there under
 *    the same name, at the same offset, with the same sizes and method. Otherwise
 *    (duplicate names, a directory that disagrees with the local headers) the
 *    result is thrown away.
 * The caller then runs the ordinary reader on the complete file, which gives the
 * answer or the error the file deserves.
 *
 * Parts whose local header leaves the sizes to a data descriptor (bit 3, written
 * by streaming ZIP writers such as yazl and archiver) are followed by inflating
 * them: the deflate stream ends itself, zlib says how many bytes it took, and the
 * descriptor after it must repeat those sizes.
 *
 * Rows reach `onRow` before that final check: a caller must not act on them
 * (write them anywhere) before this function resolves.
 */
import { open } from 'node:fs/promises'
import type { FileHandle } from 'node:fs/promises'
import { inflateRawSync } from 'node:zlib'
import { NotArriving } from '../files/arrival.js'
import type { ArrivalReader } from '../files/arrival.js'
import { inflateEntry, nativeInflateAvailable } from './inflate.js'
import { DEFAULT_MAX_METADATA_BYTES } from './read-xlsx.js'
import { SheetScanner } from './sheet-scanner.js'
import type { ReadOptions, ReadSummary, RowVisitor } from './types.js'
import { loadWorkbookParts } from './workbook.js'
import type { PartSource, WorkbookParts } from './workbook.js'
import { FLAG_ENCRYPTED, LOCAL_HEADER_BYTES, LOCAL_HEADER_SIGNATURE, MAX_ENTRIES, ZipArchive } from './zip.js'
import type { EntryFacts } from './zip.js'

/** Parts kept whole as they pass (workbook, relationships, styles, shared strings) must be under this, compressed... */
const KEEP_PART_BYTES = 16 << 20
/** ...and all of them together under this. */
const KEEP_TOTAL_BYTES = 64 << 20
/** General purpose flag bit 3: sizes and CRC follow the data instead of being in the local header. */
const FLAG_DATA_DESCRIPTOR = 0x8
const SIZE_IN_ZIP64 = 0xffffffff

/** The arriving read cannot give a sure answer; read the complete file the ordinary way. */
export class EarlyReadUnavailable extends Error {
  constructor (readonly reason: string, options?: ErrorOptions) {
    super(`reading along with the upload stopped: ${reason}`, options)
    this.name = 'EarlyReadUnavailable'
  }
}

export interface ArrivingReadOptions extends ReadOptions {
  arrival: ArrivalReader
}

interface LocalEntry extends EntryFacts {
  name: string
  /** Lower-cased name: part names compare case-insensitively, as in ZipArchive. */
  key: string
  dataStart: number
  /** Sizes come after the data, in a data descriptor: compressedSize and uncompressedSize are known once it is read. */
  sizedAfter: boolean
  /** A kept part, inflated. */
  content?: Buffer
}

export async function readXlsxAsItArrives (path: string, onRow: RowVisitor, options: ArrivingReadOptions): Promise<ReadSummary> {
  try {
    return await readAlong(path, onRow, options)
  } catch (err) {
    if (err instanceof EarlyReadUnavailable) throw err
    if (err instanceof NotArriving) throw new EarlyReadUnavailable(err.message)
    throw new EarlyReadUnavailable('the file needs the ordinary reader', { cause: err })
  }
}

async function readAlong (path: string, onRow: RowVisitor, options: ArrivingReadOptions): Promise<ReadSummary> {
  const maxMetadataBytes = options.maxMetadataBytes ?? DEFAULT_MAX_METADATA_BYTES
  const keepLimit = Math.min(maxMetadataBytes, options.maxInflatedBytes)
  const file = await open(path, 'r')
  try {
    const kept = new Map<string, LocalEntry>()
    let keptBytes = 0
    let resolved: Resolved | undefined
    let at = 0
    for (let count = 0; count < MAX_ENTRIES; count++) {
      const entry = await readLocalHeader(file, options.arrival, at)
      if (kept.has(entry.key)) throw new EarlyReadUnavailable(`the part "${entry.name}" appears twice`)
      const small = !entry.key.startsWith('xl/worksheets/') && (entry.sizedAfter || entry.compressedSize <= KEEP_PART_BYTES)
      if (small) {
        at = await keepPart(file, options.arrival, entry, keepLimit)
        keptBytes += entry.compressedSize
        if (keptBytes > KEEP_TOTAL_BYTES) throw new EarlyReadUnavailable('the parts before the sheet are too large to keep')
        kept.set(entry.key, entry)
        continue
      }
      // A worksheet or a large part: is it the first sheet, with all it needs already here?
      resolved ??= await resolveSheet(kept, maxMetadataBytes)
      if (resolved.parts.sheetPart.toLowerCase() !== entry.key) {
        if (entry.sizedAfter) throw new EarlyReadUnavailable(`the part "${entry.name}" would have to be inflated to be skipped`)
        at = entry.dataStart + entry.compressedSize
        continue
      }
      const rowsRead = await scanSheet(path, file, entry, onRow, options, resolved.parts)
      await options.arrival.whenComplete()
      await confirmWithDirectory(path, options, [...resolved.used, entry])
      return { format: 'xlsx', sheetName: resolved.parts.sheetName, rowsRead }
    }
    throw new EarlyReadUnavailable('too many parts')
  } finally {
    await file.close()
  }
}

interface Resolved { parts: WorkbookParts, used: LocalEntry[] }

/**
 * Which part is the first sheet, and what it needs, from the parts kept so far. Any
 * part it needs that has not passed yet ends the arriving read.
 */
async function resolveSheet (kept: Map<string, LocalEntry>, maxMetadataBytes: number): Promise<Resolved> {
  const used: LocalEntry[] = []
  const source: PartSource = {
    // Only asked of the sheet's own part, which may well be still to come.
    has: () => true,
    readPart: async (name, maxBytes) => {
      const part = kept.get(name.toLowerCase())
      if (part === undefined) throw new EarlyReadUnavailable(`the part "${name}" is not before the sheet`)
      if (part.content!.length > maxBytes) throw new EarlyReadUnavailable(`the part "${name}" is larger than the limit`)
      used.push(part)
      return part.content
    }
  }
  return { parts: await loadWorkbookParts(source, maxMetadataBytes), used }
}

/** The local header at `at` (APPNOTE 4.3.7), when it is one this reader can follow. */
async function readLocalHeader (file: FileHandle, arrival: ArrivalReader, at: number): Promise<LocalEntry> {
  const header = await readBytes(file, arrival, at, LOCAL_HEADER_BYTES)
  // Anything else here (the central directory, most often) ends the walk without the sheet.
  if (header.readUInt32LE(0) !== LOCAL_HEADER_SIGNATURE) throw new EarlyReadUnavailable('the first sheet was not found before the directory')
  const flags = header.readUInt16LE(6)
  const method = header.readUInt16LE(8)
  const compressedSize = header.readUInt32LE(18)
  const uncompressedSize = header.readUInt32LE(22)
  const nameLength = header.readUInt16LE(26)
  const extraLength = header.readUInt16LE(28)
  const sizedAfter = (flags & FLAG_DATA_DESCRIPTOR) !== 0
  if ((flags & FLAG_ENCRYPTED) !== 0) throw new EarlyReadUnavailable('a part is encrypted')
  if (method !== 0 && method !== 8) throw new EarlyReadUnavailable('a part uses an unusual compression method')
  // A stored part has no end marker of its own: without its size it cannot be followed.
  if (sizedAfter && method !== 8) throw new EarlyReadUnavailable('a stored part is sized only after its data')
  if (compressedSize === SIZE_IN_ZIP64 || uncompressedSize === SIZE_IN_ZIP64) throw new EarlyReadUnavailable('a part is sized in a ZIP64 field')
  const nameBytes = await readBytes(file, arrival, at + LOCAL_HEADER_BYTES, nameLength)
  // Plain ASCII decodes the same as UTF-8 and as CP437, whatever bit 11 says.
  if (nameBytes.some((b) => b < 0x20 || b > 0x7e)) throw new EarlyReadUnavailable('a part name is not plain ASCII')
  const name = nameBytes.toString('latin1')
  return {
    name,
    key: name.toLowerCase(),
    headerOffset: at,
    dataStart: at + LOCAL_HEADER_BYTES + nameLength + extraLength,
    compressedSize: sizedAfter ? Number.POSITIVE_INFINITY : compressedSize,
    uncompressedSize: sizedAfter ? Number.POSITIVE_INFINITY : uncompressedSize,
    method,
    flags,
    sizedAfter
  }
}

async function readBytes (file: FileHandle, arrival: ArrivalReader, at: number, length: number): Promise<Buffer> {
  await arrival.waitFor(at + length)
  const buffer = Buffer.allocUnsafe(length)
  const { bytesRead } = await file.read(buffer, 0, length, at)
  if (bytesRead !== length) throw new EarlyReadUnavailable('the file is shorter than it said')
  return buffer
}

/**
 * Reads and inflates a small part whole, with the ordinary reader's checks (within
 * the limit, exactly its declared size), and fills in the sizes of one that left
 * them to its data descriptor. Where the next local header starts.
 */
async function keepPart (file: FileHandle, arrival: ArrivalReader, entry: LocalEntry, limit: number): Promise<number> {
  if (!entry.sizedAfter) {
    if (entry.uncompressedSize > limit) throw new EarlyReadUnavailable(`the part "${entry.name}" is larger than the limit`)
    const data = await readBytes(file, arrival, entry.dataStart, entry.compressedSize)
    const content = entry.method === 8 && data.length > 0 ? inflateRawSync(data, { maxOutputLength: entry.uncompressedSize + 1 }) : data
    if (content.length !== entry.uncompressedSize) throw new EarlyReadUnavailable(`the part "${entry.name}" is not the size it declares`)
    entry.content = content
    return entry.dataStart + entry.compressedSize
  }
  // Sized after the data: inflate a growing window until the deflate stream ends in it.
  let window = SIZED_AFTER_FIRST_WINDOW
  for (;;) {
    const length = await arrival.readable(entry.dataStart, window)
    const data = await readBytes(file, arrival, entry.dataStart, length)
    let inflated: { buffer: Buffer, engine: { bytesWritten: number } }
    try {
      inflated = inflateRawSync(data, { info: true, maxOutputLength: limit + 1 }) as unknown as typeof inflated
    } catch (err) {
      // Anything but "the stream goes on past these bytes" is damage.
      if ((err as { code?: string }).code !== 'Z_BUF_ERROR') throw err
      if (length >= KEEP_PART_BYTES) throw new EarlyReadUnavailable(`the part "${entry.name}" is too large to keep`)
      if (length === window) window *= 2
      else await arrival.waitFor(entry.dataStart + window)
      continue
    }
    if (inflated.buffer.length > limit) throw new EarlyReadUnavailable(`the part "${entry.name}" is larger than the limit`)
    entry.content = inflated.buffer
    entry.compressedSize = inflated.engine.bytesWritten
    entry.uncompressedSize = inflated.buffer.length
    return await afterDescriptor(file, arrival, entry)
  }
}

const SIZED_AFTER_FIRST_WINDOW = 64 * 1024
/** A data descriptor with its optional signature: signature, CRC-32, compressed size, size (APPNOTE 4.3.9). */
const DESCRIPTOR_BYTES = 16
const DESCRIPTOR_SIGNATURE = 0x08074b50

/**
 * Checks the data descriptor after a part sized after its data against what inflating
 * it found, and gives where the next local header starts. The signature is optional,
 * so both layouts are tried; a ZIP64 descriptor (8-byte sizes) matches neither.
 */
async function afterDescriptor (file: FileHandle, arrival: ArrivalReader, entry: LocalEntry): Promise<number> {
  const at = entry.dataStart + entry.compressedSize
  const d = await readBytes(file, arrival, at, DESCRIPTOR_BYTES)
  const matches = (offset: number): boolean => d.readUInt32LE(offset) === entry.compressedSize && d.readUInt32LE(offset + 4) === entry.uncompressedSize
  if (d.readUInt32LE(0) === DESCRIPTOR_SIGNATURE && matches(8)) return at + 16
  if (matches(4)) return at + 12
  throw new EarlyReadUnavailable(`the data descriptor of "${entry.name}" does not match its data`)
}

/** Inflates and scans the sheet as its bytes land; the row count. */
async function scanSheet (path: string, file: FileHandle, entry: LocalEntry, onRow: RowVisitor, options: ArrivingReadOptions, parts: WorkbookParts): Promise<number> {
  const { arrival } = options
  if (entry.uncompressedSize > options.maxInflatedBytes && !entry.sizedAfter) throw new EarlyReadUnavailable('the sheet is larger than the limit')
  const native = entry.method === 8 && options.inflateEngine !== 'stream' && await nativeInflateAvailable()
  // Only the native engine reads along; the stream path gets the sheet once it is all there.
  if (!native) {
    if (entry.sizedAfter) throw new EarlyReadUnavailable('the sheet is sized only after its data')
    await arrival.waitFor(entry.dataStart + entry.compressedSize)
  }
  const scanner = new SheetScanner({ sharedStrings: parts.sharedStrings, dateStyles: parts.dateStyles, date1904: parts.date1904, onRow })
  let consumed: number | undefined
  const data = {
    path,
    start: entry.dataStart,
    compressedSize: entry.compressedSize,
    method: entry.method,
    arriving: native ? (position: number, length: number) => arrival.readable(position, length) : undefined,
    onEnd: (bytes: number) => { consumed = bytes }
  }
  const limit = Math.min(options.maxInflatedBytes, entry.uncompressedSize)
  let total = 0
  for await (const chunk of inflateEntry(data, options.inflateEngine)) {
    arrival.checkCancelled()
    if (options.signal?.aborted === true) throw new EarlyReadUnavailable('the read was cancelled')
    total += chunk.length
    if (total > limit) throw new EarlyReadUnavailable('the sheet inflates past its size or the limit')
    // After </sheetData> the rest is inflated unread: its end says where the part ends.
    if (!scanner.done) scanner.push(chunk)
    options.onProgress?.(total, entry.uncompressedSize)
  }
  scanner.end()
  if (entry.sizedAfter) {
    if (consumed === undefined) throw new EarlyReadUnavailable('the sheet\'s deflate stream has no end')
    entry.compressedSize = consumed
    entry.uncompressedSize = total
    await afterDescriptor(file, arrival, entry)
  } else if (total !== entry.uncompressedSize) {
    throw new EarlyReadUnavailable('the sheet is shorter than it declares')
  }
  return scanner.rowsRead
}

/**
 * The complete file's central directory must list every part this read used under
 * the same name, at the same local header, with the same sizes and method: then the
 * ordinary reader would have read the very same bytes.
 */
async function confirmWithDirectory (path: string, options: ArrivingReadOptions, used: LocalEntry[]): Promise<void> {
  const zip = await ZipArchive.open(path, { maxInflatedBytes: options.maxInflatedBytes })
  try {
    for (const part of used) {
      const listed = zip.describe(part.name)
      if (listed === undefined ||
        listed.headerOffset !== part.headerOffset ||
        listed.compressedSize !== part.compressedSize ||
        listed.uncompressedSize !== part.uncompressedSize ||
        listed.method !== part.method ||
        (listed.flags & FLAG_ENCRYPTED) !== 0) {
        throw new EarlyReadUnavailable(`the directory does not describe "${part.name}" as its local header does`)
      }
    }
  } finally {
    zip.close()
  }
}
