/**
 * The shared string table (ECMA-376 Part 1, 18.4.9), decoded only as far as the sheet
 * being read needs it.
 *
 * The table belongs to the whole workbook, and its size says nothing about the sheet: a
 * 580 KB upload can hold 14 million items (`<si><t>a</t></si>` compresses about 400 to
 * 1). Decoding every item up front took 13 to 32 s and 0.7 to 1 GB before the first row
 * was read, even for a file refused for its header. So:
 *
 * - Items are decoded when a cell first asks for one, never before. A writer that builds
 *   the table as it writes the cells (LibreOffice does) numbers the items in the order the
 *   cells first use them, so the header row needs only the first few: a header that the
 *   ledger refuses costs a few items, however large the table. A table in another order
 *   costs more walking (below), never a wrong value.
 * - A large table (past one synchronous step, see ZipArchive) is also inflated only as far
 *   as the cells have asked: a cell whose item is not inflated yet makes the sheet
 *   scanner stop before it (`SheetScanner.wantedString`); the reader awaits `fill` and
 *   resumes. The archive's order does not matter: the upload is a file, and parts are
 *   read where the central directory says they are.
 * - Items are kept in an array read directly by the scanner's hot path (`items`), in
 *   order from 0, but only up to what the sheet can use: a cell naming a shared string
 *   takes at least MIN_SHARED_CELL_BYTES bytes of sheet XML, so the sheet bytes scanned so
 *   far can name at most that many items. An item past that bound is found by walking
 *   the table (without decoding) and decoded alone, into a map; the walk leaves a
 *   checkpoint every CHECKPOINT_ITEMS items, so finding any item later reads at most that
 *   many. Decoded strings are thus bounded by what the sheet can name, not by the table.
 *
 * What remains proportional to the table is its inflated bytes, up to the last item the
 * sheet names (bounded like every metadata part, by maxMetadataBytes), and the time to
 * inflate and walk them: a cell naming the last of 14 million items costs about 3 s
 * (0.1 us an item to walk) and the 238 MB of the table.
 */
import { EngineError } from '../errors.js'
import { BANG, GT, LT, MAIN_NAMESPACES, QMARK, SLASH, closingTag, hasDoctype, isName, localStart, nameEnd, richText, tagEnd } from './xml-text.js'

/** `<c t="s"><v>0</v></c>`: the shortest cell that names a shared string. */
export const MIN_SHARED_CELL_BYTES = 21
/** Items kept in order whatever the sheet's size so far: a header row never needs the slow path. */
const DENSE_FLOOR = 1024
const CHECKPOINT_ITEMS = 16
/** nextItem's answers besides a position: the bytes at hand end inside an item, or the table ended. */
const NEED_MORE = -1
const NO_MORE = -2

export class SharedStrings {
  /** Items 0..n-1, decoded; the scanner reads it directly and calls `get` on a miss. */
  readonly items: string[] = []
  /** True once every byte of the table is at hand: a missing item is then missing from the file. */
  complete: boolean
  private readonly xml: Buffer
  /** The bytes of `xml` inflated so far: searches must never see past them. */
  private data: Buffer
  private readonly source: AsyncGenerator<Buffer> | undefined
  private readonly part: string
  /** Most items `items` may hold: what the sheet bytes scanned so far can name. */
  private maxDense = DENSE_FLOOR
  /** Where items are searched from: just after the root element's start tag (-1 until it is at hand). */
  private firstItem = -1
  private mainPrefixes = new Set<string>([''])
  /** Items are unprefixed `<si>` elements (the default namespace is SpreadsheetML's). */
  private plainItems = true
  /** Where the search for item `items.length` starts. */
  private densePos = -1
  /** The walk past the dense items: items counted so far, and where the next one is searched from. */
  private walked = 0
  private walkPos = -1
  /** checkpoints[k]: where the search for item k * CHECKPOINT_ITEMS starts. */
  private readonly checkpoints: number[] = []
  private readonly sparse = new Map<number, string>()
  /** Set by nextItem: the item's content range; -1 for an empty `<si/>`. */
  private itemStart = -1
  private itemEnd = -1

  private constructor (part: string, xml: Buffer, length: number, source: AsyncGenerator<Buffer> | undefined) {
    this.part = part
    this.xml = xml
    this.data = xml.subarray(0, length)
    this.source = source
    this.complete = source === undefined
  }

  /** A workbook without a shared string table. */
  static none (): SharedStrings {
    return new SharedStrings('', Buffer.alloc(0), 0, undefined)
  }

  /** A table read whole (a small part). */
  static whole (part: string, xml: Buffer): SharedStrings {
    if (hasDoctype(xml)) throw dtdForbidden(part)
    return new SharedStrings(part, xml, xml.length, undefined)
  }

  /**
   * A table inflated on demand from `chunks` (each valid until the next is asked for), into
   * one buffer of its declared size, which the inflater guarantees it never passes. Pages
   * of that buffer take memory only once written.
   */
  static streamed (part: string, declaredBytes: number, chunks: AsyncGenerator<Buffer>): SharedStrings {
    return new SharedStrings(part, Buffer.allocUnsafe(declaredBytes), 0, chunks)
  }

  /** Items given in full (tests of the scanner). */
  static fromItems (items: readonly string[]): SharedStrings {
    const table = SharedStrings.none()
    table.items.push(...items)
    table.maxDense = items.length
    return table
  }

  /** The sheet scanned so far is `sheetBytes` long: it can name at most that many items over the minimum cell. */
  allowFor (sheetBytes: number): void {
    const max = Math.floor(sheetBytes / MIN_SHARED_CELL_BYTES) + DENSE_FLOOR
    if (max > this.maxDense) this.maxDense = max
  }

  /** Item `index`, or undefined when it is not at hand (see `complete`). */
  get (index: number): string | undefined {
    const items = this.items
    if (index < items.length) return items[index]
    if (this.firstItem < 0 && !this.findRoot()) return undefined
    if (index < this.maxDense) {
      let pos = this.densePos
      while (items.length <= index) {
        const next = this.nextItem(pos)
        if (next < 0) break
        items.push(this.decoded())
        pos = next
      }
      this.densePos = pos
      return items[index]
    }
    const known = this.sparse.get(index)
    if (known !== undefined) return known
    while (this.walked <= index) {
      if (this.walked % CHECKPOINT_ITEMS === 0 && this.checkpoints.length === this.walked / CHECKPOINT_ITEMS) this.checkpoints.push(this.walkPos)
      const next = this.nextItem(this.walkPos)
      if (next < 0) return undefined
      this.walkPos = next
      this.walked++
    }
    let pos = this.checkpoints[Math.floor(index / CHECKPOINT_ITEMS)]!
    for (let skip = index % CHECKPOINT_ITEMS; skip > 0; skip--) pos = this.nextItem(pos)
    this.nextItem(pos)
    const text = this.decoded()
    this.sparse.set(index, text)
    return text
  }

  /** Items decoded so far, and bytes of the table at hand. */
  get usage (): { decoded: number, inflatedBytes: number } {
    return { decoded: this.items.length + this.sparse.size, inflatedBytes: this.data.length }
  }

  /** Inflates the table until item `index` is at hand or the table ends. */
  async fill (index: number): Promise<void> {
    const source = this.source
    while (!this.complete && this.get(index) === undefined) {
      const { value, done } = await source!.next()
      if (done === true) {
        this.complete = true
        break
      }
      const before = this.data.length
      value.copy(this.xml, before)
      this.data = this.xml.subarray(0, before + value.length)
      // From a little before the new bytes: a declaration may straddle two chunks.
      if (hasDoctype(this.data, Math.max(0, before - 8))) throw dtdForbidden(this.part)
    }
  }

  /** Stops inflating (the read is over); the inflater's finally closes the file. */
  async close (): Promise<void> {
    if (!this.complete) await this.source?.return(undefined)
  }

  private decoded (): string {
    return this.itemStart < 0 ? '' : richText(this.data, this.itemStart, this.itemEnd)
  }

  /** Reads the root element's start tag: which prefixes (or none) name SpreadsheetML in this part. */
  private findRoot (): boolean {
    const xml = this.data
    const end = xml.length
    let pos = 0
    while (pos < end) {
      const lt = xml.indexOf(LT, pos)
      if (lt === -1 || lt + 1 >= end) break
      const next = xml[lt + 1]
      if (next === SLASH || next === QMARK || next === BANG) { pos = lt + 2; continue }
      const gt = tagEnd(xml, lt, end)
      if (gt === -1) break
      this.mainPrefixes = mainPrefixesOf(xml.toString('utf8', lt, gt))
      this.plainItems = this.mainPrefixes.has('')
      this.firstItem = this.densePos = this.walkPos = gt + 1
      return true
    }
    // A part with no root element at all holds no items.
    if (this.complete) this.firstItem = this.densePos = this.walkPos = end
    return this.complete
  }

  /**
   * Finds the next `<si>` from `pos`; sets itemStart/itemEnd and returns where the search
   * for the one after it starts, or NEED_MORE / NO_MORE. Elements of other namespaces and
   * extension lists are skipped, as the table's grammar allows them. Plain `<si>` items,
   * nearly all of them, take a short path: a walk over 14 million items cost 1 us each
   * through the general one (three native calls and two allocations per item).
   */
  private nextItem (from: number): number {
    const xml = this.data
    const end = xml.length
    let pos = from
    for (;;) {
      let lt = pos
      while (lt < end && xml[lt] !== LT) lt++
      if (lt + 1 >= end) return this.complete ? NO_MORE : NEED_MORE
      const next = xml[lt + 1]
      if (next === SLASH || next === QMARK || next === BANG) { pos = lt + 2; continue }
      if (next === CH_S && xml[lt + 2] === CH_I && xml[lt + 3] === GT && this.plainItems) {
        const close = findItemClose(xml, lt + 4, end)
        if (close === -1) return this.cut()
        this.itemStart = lt + 4
        this.itemEnd = close
        return close + ITEM_CLOSE.length
      }
      const ne = nameEnd(xml, lt + 1, end)
      const gt = ne >= end ? -1 : tagEnd(xml, ne, end)
      if (gt === -1) return this.complete ? NO_MORE : NEED_MORE
      const ls = localStart(xml, lt + 1, ne)
      const selfClosing = xml[gt - 1] === SLASH
      if (isName(xml, ls, ne, 'extLst') && !selfClosing) {
        const close = xml.indexOf(closingTag(xml, lt + 1, ne), gt + 1)
        if (close === -1) return this.complete ? NO_MORE : NEED_MORE
        pos = close
        continue
      }
      if (!isName(xml, ls, ne, 'si') || !this.mainPrefixes.has(ls === lt + 1 ? '' : xml.toString('latin1', lt + 1, ls - 1))) { pos = gt + 1; continue }
      if (selfClosing) {
        this.itemStart = this.itemEnd = -1
        return gt + 1
      }
      const close = xml.indexOf(closingTag(xml, lt + 1, ne), gt + 1)
      if (close === -1) return this.cut()
      this.itemStart = gt + 1
      this.itemEnd = close
      return close
    }
  }

  /** The bytes at hand end inside an item: wait for more, or the part is truncated. */
  private cut (): number {
    if (this.complete) throw new EngineError('SHEET_CORRUPT', 'The shared strings part of the workbook is truncated.')
    return NEED_MORE
  }
}

const CH_S = 0x73
const CH_I = 0x69
const ITEM_CLOSE = Buffer.from('</si>')
/** Items up to this long are searched for their end by a byte loop, cheaper than a native call for a few dozen bytes. */
const SHORT_ITEM_BYTES = 128

/** Start of the `</si>` closing an unprefixed item whose content starts at `from`; -1 when not at hand. */
function findItemClose (xml: Buffer, from: number, end: number): number {
  const last = end - ITEM_CLOSE.length
  const stop = Math.min(last + 1, from + SHORT_ITEM_BYTES)
  for (let i = from; i < stop; i++) {
    if (xml[i] === LT && xml[i + 1] === SLASH && xml[i + 2] === CH_S && xml[i + 3] === CH_I && xml[i + 4] === GT) return i
  }
  return stop > last ? -1 : xml.indexOf(ITEM_CLOSE, stop)
}

function dtdForbidden (part: string): EngineError {
  return new EngineError('XLSX_DTD_FORBIDDEN', `The part "${part}" declares a DTD or XML entities, which workbooks never need; the file is refused.`)
}

const NAMESPACE_DECLARATION = /\sxmlns(?::([^\s=]+))?\s*=\s*(?:"([^"]*)"|'([^']*)')/g

/** Prefixes bound to SpreadsheetML on a root tag ('' for the default namespace, or when nothing is declared). */
function mainPrefixesOf (rootTag: string): Set<string> {
  const prefixes = new Set<string>()
  let defaultDeclared = false
  for (const m of rootTag.matchAll(NAMESPACE_DECLARATION)) {
    const prefix = m[1] ?? ''
    if (prefix === '') defaultDeclared = true
    if (MAIN_NAMESPACES.has(m[2] ?? m[3] ?? '')) prefixes.add(prefix)
  }
  if (!defaultDeclared) prefixes.add('')
  return prefixes
}
