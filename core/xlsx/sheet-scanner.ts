/**
 * The worksheet hot path: a hand-written scan over the bytes of the sheet XML as
 * it inflates, with no DOM and no general XML parser. A general SAX parser spends
 * most of its time on events we never use; this scanner jumps between `<` bytes
 * with Buffer.indexOf (memchr) and decodes only cell values.
 *
 * Chunks arrive in any size; whatever element is cut at the end of a chunk is kept
 * and retried with the next chunk, so the element grammar never sees a partial tag.
 *
 * Rows and cells in the shapes nearly every writer produces go through fastRows, which
 * compares fixed markup four bytes at a time and keeps its state in locals; any other
 * element falls back to the general element-by-element path below it, which handles
 * the whole grammar.
 *
 * Grammar covered (ECMA-376 Part 1, 18.3.1): `<sheetData>` holding `<row r?>`
 * holding `<c r? s? t?>` with `<v>`, `<f>` and `<is>` children; element prefixes
 * such as `x:` are accepted. Anything else in the part is skipped.
 */
import { EngineError } from '../errors.js'
import { DATE1904_OFFSET_DAYS, DateCell, ErrorCell, UncomputedFormula, dateToSerial } from './cells.js'
import type { Cell } from './cells.js'
import type { SharedStrings } from './shared-strings.js'
import type { RowVisitor } from './types.js'
import {
  BANG, GT, LT, QMARK, SLASH, attributeRange, closingTag, decodeText, isName, localStart, nameEnd, richText
} from './xml-text.js'

/** Excel's last column is XFD (16,384 columns; ECMA-376 Part 1, 18.3.1.4). */
const MAX_COLUMNS = 16_384
const CH_0 = 0x30
const CH_9 = 0x39
const CH_A = 0x41
const CH_Z = 0x5a
const CH_MINUS = 0x2d
const CH_DOT = 0x2e
const CH_C = 0x63
const CH_F = 0x66
const CH_I = 0x69
const CH_R = 0x72
const CH_S = 0x73
const CH_T = 0x74
const CH_V = 0x76
const EQ = 0x3d
const QUOTE = 0x22
const APOS = 0x27
const COLON = 0x3a

/** Starting size of the work buffer; it grows to the largest chunk (plus carry-over) it is given. */
const WORK_BYTES = 512 * 1024
/** A work buffer grown past this for one huge element is given back once that element is done. */
const WORK_KEEP_BYTES = 8 << 20
/**
 * An unfinished element longer than this is scanned again only once the data held has
 * doubled: each scan starts at the element's `<`, so scanning it again on every chunk
 * would cost the square of its length (a crafted 34 KB upload of one unterminated tag
 * held a thread for half a minute).
 */
const RESCAN_AFTER_BYTES = 256 * 1024
/** No element of a worksheet comes near this (a cell holds at most 32,767 characters); longer is crafted or broken. */
const MAX_ELEMENT_BYTES = 16 << 20
/** Excel's last row (ECMA-376 Part 1, 18.3.1.73: r is at most 1,048,576). */
const MAX_ROW = 1_048_576
/** Fixed markup of the fast path as little-endian integers (DataView reads). */
const C_OPEN = le('<c')
const ATTR_R = le(' r="')
const ATTR_S = le(' s="')
const ATTR_T = le(' t="')
const TYPE_S = le('s"')
const TYPE_N = le('n"')
const GT_V_OPEN = le('><v>')
const V_CLOSE = le('</v>')
const C_CLOSE = le('</c>')
const EMPTY_CLOSE = le('/>')
const CLOSE_OPEN = le('</')
const ROW_CLOSE = le('row>')
const ROW_OPEN_HEAD = le('<r')
const ROW_OPEN_MID = le('ow r')
const EQ_QUOTE = le('="')

function le (text: string): number {
  let n = 0
  for (let i = text.length - 1; i >= 0; i--) n = n * 256 + text.charCodeAt(i)
  return n
}

/**
 * Written right after the data in the work buffer. `<` ends the fast path's search for
 * the next element and `>` its skip over a row's attributes; neither is a digit or a
 * letter, so the number and column loops stop there too. The zeros cover the four-byte
 * reads. A row or cell is taken only when its last byte lies before the sentinel, so
 * what the loops read of it (or of stale bytes after it) never reaches a result.
 */
const SENTINEL = Buffer.from([LT, GT, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0])

const enum CellType { Number, Shared, Inline, Str, Bool, Error, IsoDate }

export interface ScannerContext {
  sharedStrings: SharedStrings
  dateStyles: Uint8Array
  date1904: boolean
  onRow: RowVisitor
}

export class SheetScanner {
  /**
   * Chunks are copied into this buffer behind the unfinished element of the previous
   * chunk, and followed by SENTINEL: every loop of the fast path stops at a byte of it,
   * so the fast path needs no end-of-buffer test per byte (see fastRows).
   */
  private work = Buffer.allocUnsafe(WORK_BYTES + SENTINEL.length)
  /** The work buffer as a DataView, to compare fixed markup four bytes at a time. */
  private view = viewOf(this.work)
  /** Bytes at the start of `work` carried over from the previous chunk. */
  private carried = 0
  /** While an element longer than RESCAN_AFTER_BYTES arrives: the data length at which to scan it again. */
  private rescanAt = 0
  private inSheetData = false
  private finished = false
  private rowNumber = 0
  private cells: Cell[] = []
  private nextColumn = 0
  /** Decimal length of rowNumber: a cell reference's digits are usually exactly that. */
  private rowDigits = 1
  private readonly dateOffset: number
  /** Set by end(): once the data held is scanned, the sheet must be complete. */
  private ending = false
  rowsRead = 0
  /**
   * A shared string a cell names that is not inflated yet (-1 when none): the scan stopped
   * before that cell. The caller awaits `sharedStrings.fill(wantedString)`, then `resume()`.
   */
  wantedString = -1

  constructor (private readonly ctx: ScannerContext) {
    this.dateOffset = ctx.date1904 ? DATE1904_OFFSET_DAYS : 0
  }

  /** True once `</sheetData>` was seen or the visitor asked to stop: the caller may stop inflating. */
  get done (): boolean {
    return this.finished
  }

  /**
   * Scans a chunk. The element cut at the end of the previous chunk stays at the start
   * of the work buffer and the chunk is copied after it, so no element is ever seen cut
   * except at the very end. One copy (a memcpy) per byte is far cheaper than the bounds
   * tests it saves in the scan. The buffer grows only for an element longer than a
   * chunk (a huge inline string) and shrinks back afterwards.
   */
  push (chunk: Buffer): void {
    if (this.finished) return
    const carried = this.carried
    const len = carried + chunk.length
    let work = this.work
    if (len + SENTINEL.length > work.length) {
      // Doubling keeps an element that spans many chunks from being copied once per chunk.
      const grown = Buffer.allocUnsafe(Math.max(len + SENTINEL.length, 2 * work.length))
      work.copy(grown, 0, 0, carried)
      work = this.work = grown
      this.view = viewOf(grown)
    }
    chunk.copy(work, carried)
    if (len < this.rescanAt) {
      this.carried = len
      return
    }
    this.scanHeld(len)
  }

  /** Scans the `len` bytes held in the work buffer, keeping the unfinished tail for the next chunk. */
  private scanHeld (len: number): void {
    const work = this.work
    SENTINEL.copy(work, len)
    const stop = this.scan(work.subarray(0, len), work, 0)
    this.carried = len - stop
    if (this.carried > MAX_ELEMENT_BYTES) {
      throw new EngineError('SHEET_CORRUPT', `The worksheet has an XML element longer than ${MAX_ELEMENT_BYTES >> 20} MiB, which no workbook writes; the file is damaged or crafted.`)
    }
    this.rescanAt = this.carried > RESCAN_AFTER_BYTES ? 2 * this.carried : 0
    if (stop < len && stop > 0) {
      if (work.length > WORK_KEEP_BYTES && this.carried <= WORK_BYTES) {
        const small = Buffer.allocUnsafe(WORK_BYTES + SENTINEL.length)
        work.copy(small, 0, stop, len)
        this.work = small
        this.view = viewOf(small)
      } else {
        work.copyWithin(0, stop, len)
      }
    }
  }

  /** Call after the last chunk; a sheet cut before `</sheetData>` is a truncated file. */
  end (): void {
    if (this.finished) return
    this.ending = true
    // Data held back while a long element arrived is scanned now, once.
    if (this.rescanAt > 0) {
      this.rescanAt = 0
      this.scanHeld(this.carried)
      if (this.finished || this.wantedString >= 0) return
    }
    this.checkEnd()
  }

  /** Scans again what is held, once the shared string in `wantedString` is at hand. */
  resume (): void {
    this.wantedString = -1
    this.scanHeld(this.carried)
    if (this.ending && !this.finished && this.wantedString < 0) this.checkEnd()
  }

  private checkEnd (): void {
    if (!this.inSheetData && this.rowsRead === 0 && this.carried === 0) {
      // A worksheet with no sheetData element at all: an empty sheet.
      this.finished = true
      return
    }
    throw new EngineError('SHEET_CORRUPT', 'The worksheet XML ends before its data does; the file is probably truncated.')
  }

  /**
   * Scans complete elements of `data`; returns where the unfinished tail starts.
   * Short hops use plain byte loops: a cell is ~30 bytes, and a Buffer.indexOf call
   * costs more in its JS-to-C++ crossing than the loop costs to walk that far.
   */
  private scan (data: Buffer, padded: Buffer, from: number): number {
    const len = data.length
    let pos = from
    while (!this.finished) {
      if (this.inSheetData) {
        pos = this.fastRows(padded, pos, len)
        if (this.finished) break
      }
      let lt = pos
      if (this.inSheetData) {
        while (lt < len && data[lt] !== LT) lt++
      } else {
        lt = data.indexOf(LT, pos)
        if (lt === -1) return len
      }
      if (lt + 2 >= len) return lt
      const first = data[lt + 1]!

      // Fast path: an unprefixed cell, the element that makes up most of a sheet.
      if (first === CH_C && this.inSheetData && isNameEndByte(data[lt + 2]!)) {
        const next = this.cell(data, lt + 2, len)
        if (next < 0) return lt
        pos = next
        continue
      }
      if (first === SLASH) {
        let gt = lt + 2
        while (gt < len && data[gt] !== GT) gt++
        if (gt >= len) return lt
        const ls = localStart(data, lt + 2, gt)
        if (isName(data, ls, gt, 'row')) this.finishRow()
        else if (isName(data, ls, gt, 'sheetData')) this.finished = true
        pos = gt + 1
        continue
      }
      if (first === BANG || first === QMARK) {
        const next = this.skipMarkup(data, lt)
        if (next === -1) return lt
        pos = next
        continue
      }

      const ne = nameEnd(data, lt + 1, len)
      if (ne >= len) return lt
      const ls = localStart(data, lt + 1, ne)
      if (this.inSheetData && ne - ls === 1 && data[ls] === CH_C) {
        const next = this.cell(data, ne, len)
        if (next < 0) return lt
        pos = next
        continue
      }
      let gt = ne
      while (gt < len && data[gt] !== GT) gt++
      if (gt >= len) return lt
      const selfClosing = data[gt - 1] === SLASH
      if (this.inSheetData && !selfClosing && isName(data, ls, ne, 'extLst')) {
        // A row's extension data (ECMA-376 Part 1, 18.3.1.73): skipped whole, so no cell is read from it.
        const close = data.indexOf(closingTag(data, lt + 1, ne), gt + 1)
        if (close === -1) return lt
        pos = close
        continue
      }
      if (!this.inSheetData) {
        if (isName(data, ls, ne, 'sheetData')) {
          this.inSheetData = true
          if (selfClosing) this.finished = true
        }
      } else if (isName(data, ls, ne, 'row')) {
        this.startRow(data, ne, gt)
        if (selfClosing) this.finishRow()
      }
      pos = gt + 1
    }
    return len
  }

  /**
   * The fast path over the shapes Excel and most libraries write, element after
   * element, with the scanner's state in locals:
   *   `<row r="N" ...>`, `</row>`, `<c r="AB12" s="3" t="s"><v>42</v></c>`, `<c .../>`
   * (attributes r, s and t in any order, each optional; t one of s, n; a value that is
   * a plain decimal of up to 15 digits). Anything else (prefixed names, other types,
   * formulas, inline strings, exponents, odd spacing, an element cut by the end of the
   * data) returns the position of its `<`, and the general path takes that element.
   *
   * `d` is the work buffer with SENTINEL at `len`: loops stop there without testing the
   * index, and an element is taken only when its last byte is before `len`, so the
   * sentinel (or stale bytes after it) can never reach a result. Nothing is written to
   * the scanner's state before an element is known to be complete.
   */
  private fastRows (d: Buffer, from: number, len: number): number {
    const v = this.view
    const strings = this.ctx.sharedStrings
    const shared = strings.items
    const dateStyles = this.ctx.dateStyles
    const dateOffset = this.dateOffset
    let cells = this.cells
    let next = this.nextColumn
    let rowDigits = this.rowDigits
    let pos = from
    let lt = from
    rows: for (;;) {
      lt = pos
      let head = v.getUint16(lt, true)
      if ((head & 0xff) !== LT) {
        // Between elements of sheetData there is only white space, if anything.
        do lt++; while (d[lt] !== LT)
        if (lt >= len) break
        head = v.getUint16(lt, true)
      }
      if (head === C_OPEN) {
        let i = lt + 2
        let column = next
        let style = 0
        let shared_ = false
        let x = v.getUint32(i, true)
        // Attributes r, s and t, each written ` r="`; one four-byte read tells which.
        for (;;) {
          if (x === ATTR_R) {
            i += 4
            let col = 0
            let b = 0
            while ((b = d[i]!) >= CH_A && b <= CH_Z) { col = col * 26 + (b - CH_A + 1); i++ }
            // The digits are normally the current row number: jump over them at once.
            if (d[i + rowDigits] === QUOTE) {
              i += rowDigits
            } else {
              while ((b = d[i]!) >= CH_0 && b <= CH_9) i++
              if (b !== QUOTE) break rows
            }
            if (col === 0 || col > MAX_COLUMNS) break rows
            column = col - 1
          } else if (x === ATTR_S) {
            i += 4
            const start = i
            let n = 0
            let b = 0
            while ((b = d[i]!) >= CH_0 && b <= CH_9) { n = n * 10 + (b - CH_0); i++ }
            if (b !== QUOTE || i === start || i - start > 9) break rows
            style = n
          } else if (x === ATTR_T) {
            const t = v.getUint16(i + 4, true)
            if (t === TYPE_S) shared_ = true
            else if (t === TYPE_N) shared_ = false
            else break rows
            i += 5
          } else {
            break
          }
          // Stale bytes past the sentinel may have carried the attribute loop anywhere.
          if (++i >= len) break rows
          x = v.getUint32(i, true)
        }
        if (x === GT_V_OPEN) {
          // <v>value</v></c>
          let j = i + 4
          let b = d[j]!
          const negative = b === CH_MINUS
          if (negative) b = d[++j]!
          const digitsStart = j
          let n = 0
          while (b >= CH_0 && b <= CH_9) { n = n * 10 + (b - CH_0); b = d[++j]! }
          let count = j - digitsStart
          if (b === CH_DOT) {
            const dot = j
            b = d[++j]!
            while (b >= CH_0 && b <= CH_9) { n = n * 10 + (b - CH_0); b = d[++j]! }
            const scale = j - dot - 1
            count += scale
            // Dividing the exact integer by an exact power of ten rounds once, as Number() does.
            if (scale > 0 && count <= 15 && !shared_) n = n / POW10[scale]!
            else count = 0
          }
          if (b !== LT || count === 0 || count > 15 || (negative && shared_)) break rows
          if (v.getUint32(j, true) !== V_CLOSE || v.getUint32(j + 4, true) !== C_CLOSE) break rows
          pos = j + 8
          if (pos > len) break rows
          let value: Cell
          if (shared_) {
            // A miss decodes the item; one not inflated yet goes to the general path, which waits for it.
            const text = shared[n] ?? strings.get(n)
            if (text === undefined) break rows
            value = text
          } else {
            if (negative) n = -n
            value = dateStyles[style] === 1 ? new DateCell(n + dateOffset) : n
          }
          if (column === cells.length) cells.push(value)
          else place(cells, column, value)
          next = column + 1
          continue
        }
        if ((x & 0xffff) === EMPTY_CLOSE) {
          // An empty cell (a style without a value): it only moves the column on.
          pos = i + 2
          if (pos > len) break
          next = column + 1
          continue
        }
        break
      }
      if (head === CLOSE_OPEN) {
        if (v.getUint32(lt + 2, true) !== ROW_CLOSE) break
        pos = lt + 6
        if (pos > len) break
        this.cells = cells
        this.finishRow()
        if (this.finished) return pos
        cells = this.cells
        next = 0
        continue
      }
      if (head === ROW_OPEN_HEAD) {
        // <row r="N" ...>: the attributes after r (spans, ht, ...) are not used.
        if (v.getUint32(lt + 2, true) !== ROW_OPEN_MID || v.getUint16(lt + 6, true) !== EQ_QUOTE) break
        let i = lt + 8
        let n = 0
        let b = 0
        while ((b = d[i]!) >= CH_0 && b <= CH_9) { n = n * 10 + (b - CH_0); i++ }
        const digits = i - lt - 8
        if (b !== QUOTE || digits === 0 || digits > 9) break
        while (d[i] !== GT) i++
        pos = i + 1
        if (pos > len) break
        this.rowNumber = n
        rowDigits = this.rowDigits = digits
        cells = this.cells = []
        next = 0
        if (d[i - 1] === SLASH) {
          this.finishRow()
          if (this.finished) return pos
          cells = this.cells
        }
        continue
      }
      break
    }
    this.cells = cells
    this.nextColumn = next
    return lt
  }

  /**
   * One `<c>` element from just after its name: attributes, then the children up to
   * the cell's closing tag. Returns the index after the element, or -1 when the
   * element continues past the end of the buffer.
   */
  private cell (data: Buffer, from: number, len: number): number {
    let i = from
    let column = this.nextColumn
    let style = 0
    let type = CellType.Number
    // Attributes: r (reference), s (style index), t (type); others are skipped.
    for (;;) {
      if (i >= len) return -1
      const ch = data[i]!
      if (ch === GT) { i++; break }
      if (ch === SLASH) {
        if (i + 1 >= len) return -1
        this.nextColumn = column + 1
        return i + 2
      }
      if (ch <= 0x20) { i++; continue }
      // Fast path for the one-letter attributes Excel writes: r="A1", s="3", t="s".
      // Each value is decoded in the same pass that looks for its closing quote.
      if (i + 2 < len && data[i + 1] === EQ && data[i + 2] === QUOTE) {
        i += 3
        if (ch === CH_R) {
          let col = 0
          let b = 0
          while (i < len && (b = data[i]!) >= CH_A && b <= CH_Z) { col = col * 26 + (b - CH_A + 1); i++ }
          // The digits are normally the current row number: jump over them at once.
          if (i + this.rowDigits < len && data[i + this.rowDigits] === QUOTE) i += this.rowDigits
          else while (i < len && data[i] !== QUOTE) i++
          if (i >= len) return -1
          if (col === 0 || col > MAX_COLUMNS) throw badReference(data, from, i)
          column = col - 1
        } else if (ch === CH_S) {
          let n = 0
          let b = 0
          while (i < len && (b = data[i]!) !== QUOTE) { n = n * 10 + (b - CH_0); i++ }
          if (i >= len) return -1
          style = n
        } else {
          const valueStart = i
          while (i < len && data[i] !== QUOTE) i++
          if (i >= len) return -1
          if (ch === CH_T) type = cellType(data, valueStart, i)
        }
        i++
        continue
      }
      const nameStart = i
      while (i < len && data[i] !== EQ) i++
      const nameLength = i - nameStart
      while (i < len && data[i] !== QUOTE && data[i] !== APOS) i++
      if (i >= len) return -1
      const quote = data[i]!
      const valueStart = ++i
      while (i < len && data[i] !== quote) i++
      if (i >= len) return -1
      const valueEnd = i++
      if (nameLength === 1) {
        const name = data[nameStart]!
        if (name === CH_R) column = columnFromReference(data, valueStart, valueEnd)
        else if (name === CH_S) style = parseUnsigned(data, valueStart, valueEnd)
        else if (name === CH_T) type = cellType(data, valueStart, valueEnd)
      }
    }
    // Children: find <v> (or <is>) and the closing </c>.
    let valueStart = -1
    let valueEnd = -1
    let inlineStart = -1
    let closeStart = -1
    /** [start, end) of the formula text when the cell has an `<f>`; start -1 when it has none. */
    let formulaStart = -1
    let formulaEnd = -1
    // Fast path for the layout nearly every writer uses: <v>text</v></c>.
    // A plain unsigned number of up to 15 digits (shared-string indexes, ids, most
    // amounts) is assembled on the way; anything else is parsed afterwards.
    let digits = -1
    if (i + 3 < len && data[i] === LT && data[i + 1] === CH_V && data[i + 2] === GT) {
      valueStart = i + 3
      valueEnd = valueStart
      let n = 0
      let b = 0
      while (valueEnd < len && (b = data[valueEnd]!) >= CH_0 && b <= CH_9) { n = n * 10 + (b - CH_0); valueEnd++ }
      let digitCount = valueEnd - valueStart
      let scale = 0
      if (b === CH_DOT) {
        const dot = valueEnd++
        while (valueEnd < len && (b = data[valueEnd]!) >= CH_0 && b <= CH_9) { n = n * 10 + (b - CH_0); valueEnd++ }
        scale = valueEnd - dot - 1
        digitCount += scale
      }
      // Dividing the exact integer by an exact power of ten rounds once, as Number() does.
      if (valueEnd < len && b === LT && digitCount > 0 && digitCount <= 15) {
        digits = scale === 0 ? n : n / POW10[scale]!
      }
      while (valueEnd < len && data[valueEnd] !== LT) valueEnd++
      if (valueEnd + 7 >= len) return -1
      if (data[valueEnd + 1] === SLASH && data[valueEnd + 2] === CH_V && data[valueEnd + 3] === GT &&
          data[valueEnd + 4] === LT && data[valueEnd + 5] === SLASH && data[valueEnd + 6] === CH_C && data[valueEnd + 7] === GT) {
        closeStart = valueEnd + 4
        i = valueEnd + 8
      } else {
        i = valueEnd
      }
    }
    while (closeStart < 0) {
      while (i < len && data[i] !== LT) i++
      if (i + 1 >= len) return -1
      if (data[i + 1] === SLASH) {
        let gt = i + 2
        while (gt < len && data[gt] !== GT) gt++
        if (gt >= len) return -1
        if (data[gt - 1] === CH_C && (data[gt - 2] === SLASH || data[gt - 2] === COLON)) {
          closeStart = i
          i = gt + 1
          break
        }
        i = gt + 1
        continue
      }
      const ne = nameEnd(data, i + 1, len)
      let gt = ne
      while (gt < len && data[gt] !== GT) gt++
      if (gt >= len) return -1
      const ls = localStart(data, i + 1, ne)
      if (data[gt - 1] !== SLASH) {
        if (ne - ls === 1 && data[ls] === CH_V) {
          valueStart = gt + 1
          valueEnd = valueStart
          while (valueEnd < len && data[valueEnd] !== LT) valueEnd++
          if (valueEnd >= len) return -1
          i = valueEnd
          continue
        }
        if (ne - ls === 1 && data[ls] === CH_F) {
          formulaStart = gt + 1
          formulaEnd = formulaStart
          while (formulaEnd < len && data[formulaEnd] !== LT) formulaEnd++
          if (formulaEnd >= len) return -1
          i = formulaEnd
          continue
        }
        if (ne - ls === 2 && data[ls] === CH_I && data[ls + 1] === CH_S) inlineStart = gt + 1
        if (isName(data, ls, ne, 'extLst')) {
          // An application's extension data: nothing in it is the cell's value.
          const close = data.subarray(0, len).indexOf(closingTag(data, i + 1, ne), gt + 1)
          if (close === -1) return -1
          i = close
          continue
        }
      } else if (ne - ls === 1 && data[ls] === CH_F) {
        // <f t="shared" si="0"/>: the formula of another cell, shared.
        formulaStart = formulaEnd = gt
      }
      i = gt + 1
    }
    let value: Cell
    // Numbers and shared strings are nearly every cell; they skip the general decoder.
    if (formulaStart >= 0 && (valueStart < 0 || (valueEnd === valueStart && type !== CellType.Str))) {
      // A formula whose value was never computed: its value is unknown, not empty.
      value = new UncomputedFormula(decodeText(data, formulaStart, formulaEnd))
    } else if (type === CellType.Number && valueStart >= 0 && valueEnd > valueStart) {
      const n = digits >= 0 ? digits : parseNumber(data, valueStart, valueEnd)
      value = this.ctx.dateStyles[style] === 1 ? new DateCell(n + this.dateOffset) : n
    } else if (type === CellType.Shared && valueStart >= 0) {
      const index = digits >= 0 && Number.isInteger(digits) ? digits : parseUnsigned(data, valueStart, valueEnd)
      const strings = this.ctx.sharedStrings
      const text = strings.items[index] ?? strings.get(index)
      if (text === undefined) {
        if (strings.complete) throw new EngineError('SHEET_CORRUPT', `A cell refers to shared string ${index}, which the workbook does not have.`)
        // Not inflated yet: the cell is left unread, as if cut by the end of the data.
        this.wantedString = index
        return -1
      }
      value = text
    } else if (type === CellType.Inline) {
      value = inlineStart < 0 ? null : richText(data, inlineStart, closeStart)
    } else {
      value = valueStart < 0 ? (type === CellType.Str ? '' : null) : this.decodeValue(data, valueStart, valueEnd, type, style)
    }
    this.nextColumn = column + 1
    if (value === null) return i
    const cells = this.cells
    if (column === cells.length) cells.push(value)
    else place(cells, column, value)
    return i
  }

  /** Comments, processing instructions and declarations; a DTD is refused outright. */
  private skipMarkup (data: Buffer, lt: number): number {
    if (data[lt + 1] === QMARK) {
      const end = data.indexOf('?>', lt + 2)
      return end === -1 ? -1 : end + 2
    }
    if (data.length - lt < 9) return -1
    if (data[lt + 2] === CH_MINUS && data[lt + 3] === CH_MINUS) {
      const end = data.indexOf('-->', lt + 4)
      return end === -1 ? -1 : end + 3
    }
    const head = data.toString('latin1', lt + 2, lt + 9).toUpperCase()
    if (head.startsWith('DOCTYPE') || head.startsWith('ENTITY')) {
      throw new EngineError('XLSX_DTD_FORBIDDEN', 'The worksheet declares a DTD or XML entities, which workbooks never need; the file is refused.')
    }
    throw new EngineError('SHEET_CORRUPT', 'The worksheet holds XML markup (such as CDATA) that Excel does not write; save the file from Excel or LibreOffice and try again.')
  }

  private startRow (data: Buffer, from: number, gt: number): void {
    // Excel writes r first: ` r="12"`; read it directly, else search the attributes.
    if (data[from] === 0x20 && data[from + 1] === CH_R && data[from + 2] === EQ && data[from + 3] === QUOTE) {
      let n = 0
      let i = from + 4
      let b = 0
      while (i < gt && (b = data[i]!) >= CH_0 && b <= CH_9) { n = n * 10 + (b - CH_0); i++ }
      if (b === QUOTE && i > from + 4) {
        this.rowNumber = n
        this.rowDigits = i - from - 4
        this.cells = []
        this.nextColumn = 0
        return
      }
    }
    const r = attributeRange(data, from, gt, 'r')
    this.rowNumber = r === undefined ? this.rowNumber + 1 : parseUnsigned(data, r[0], r[1])
    this.rowDigits = String(this.rowNumber).length
    this.cells = []
    this.nextColumn = 0
  }

  private finishRow (): void {
    if (this.rowNumber > MAX_ROW) {
      throw new EngineError('SHEET_CORRUPT', `The worksheet names row ${this.rowNumber}, beyond Excel's last row (${MAX_ROW}); the file is damaged or crafted.`)
    }
    if (this.cells.length > 0) {
      this.rowsRead++
      if (this.ctx.onRow(this.rowNumber, this.cells) === false) this.finished = true
    }
    this.cells = []
    this.nextColumn = 0
  }

  private decodeValue (data: Buffer, start: number, end: number, type: CellType, style: number): Cell {
    switch (type) {
      case CellType.Number: {
        if (start === end) return null
        const n = parseNumber(data, start, end)
        return this.ctx.dateStyles[style] === 1 ? new DateCell(n + this.dateOffset) : n
      }
      case CellType.Str:
        return decodeText(data, start, end)
      case CellType.Bool:
        return data[start] === 0x31 || isName(data, start, end, 'true')
      case CellType.Error:
        return new ErrorCell(decodeText(data, start, end))
      case CellType.IsoDate:
        return isoDateCell(data.toString('latin1', start, end))
      default:
        return null
    }
  }
}

function viewOf (buffer: Buffer): DataView {
  return new DataView(buffer.buffer, buffer.byteOffset, buffer.length)
}

/** Puts a value at a column that is not the next one: over an earlier value, or after empty columns. */
function place (cells: Cell[], column: number, value: Cell): void {
  if (column < cells.length) {
    cells[column] = value
    return
  }
  while (cells.length < column) cells.push(null)
  cells.push(value)
}

function isNameEndByte (b: number): boolean {
  return b === 0x20 || b === GT || b === SLASH || b === 0x0a || b === 0x09 || b === 0x0d
}

/** Zero-based column of a reference such as `AB12` (ECMA-376 Part 1, 18.18.62). */
function columnFromReference (data: Buffer, start: number, end: number): number {
  let col = 0
  for (let i = start; i < end; i++) {
    const b = data[i]!
    if (b < CH_A || b > CH_Z) break
    col = col * 26 + (b - CH_A + 1)
  }
  if (col === 0 || col > MAX_COLUMNS) throw badReference(data, start, end)
  return col - 1
}

function badReference (data: Buffer, start: number, end: number): EngineError {
  return new EngineError('SHEET_CORRUPT', `The worksheet has an invalid cell reference near "${data.toString('latin1', start, Math.min(end, start + 24))}".`)
}

function cellType (data: Buffer, start: number, end: number): CellType {
  switch (data[start]) {
    case 0x73: return end - start === 1 ? CellType.Shared : CellType.Str // s | str
    case 0x6e: return CellType.Number // n
    case 0x69: return CellType.Inline // inlineStr
    case 0x62: return CellType.Bool // b
    case 0x65: return CellType.Error // e
    case 0x64: return CellType.IsoDate // d
    default:
      throw new EngineError('SHEET_CORRUPT', `The worksheet has a cell of unknown type "${data.toString('latin1', start, end)}".`)
  }
}

/** Non-negative integer from ASCII digits (row numbers, style and string indexes). */
function parseUnsigned (data: Buffer, start: number, end: number): number {
  let n = 0
  for (let i = start; i < end; i++) {
    const d = data[i]! - CH_0
    if (d < 0 || d > 9) throw new EngineError('SHEET_CORRUPT', `The worksheet has "${data.toString('latin1', start, end)}" where a number is required.`)
    n = n * 10 + d
  }
  return n
}

/**
 * A cell number. Short integers and plain decimals are assembled from the digits
 * without a string; anything else (exponents, long mantissas) goes through Number().
 * The fast path for decimals divides an exact integer by an exact power of ten,
 * which rounds once, like Number(); it is limited to 15 significant digits.
 */
function parseNumber (data: Buffer, start: number, end: number): number {
  let i = start
  const negative = data[i] === CH_MINUS
  if (negative) i++
  let mantissa = 0
  let digits = 0
  let fraction = -1
  for (; i < end; i++) {
    const b = data[i]!
    if (b >= CH_0 && b <= CH_9) {
      mantissa = mantissa * 10 + (b - CH_0)
      digits++
      if (fraction >= 0) fraction++
    } else if (b === CH_DOT && fraction < 0) {
      fraction = 0
    } else {
      return slowNumber(data, start, end)
    }
  }
  if (digits === 0 || digits > 15) return slowNumber(data, start, end)
  const value = fraction > 0 ? mantissa / POW10[fraction]! : mantissa
  return negative ? -value : value
}

const POW10 = [1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15]

function slowNumber (data: Buffer, start: number, end: number): number {
  const text = data.toString('latin1', start, end)
  const n = Number(text)
  if (Number.isNaN(n)) throw new EngineError('SHEET_CORRUPT', `The worksheet has a numeric cell with the value "${text}".`)
  return n
}

const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2}(?:\.\d+)?))?)?/

/** `t="d"` cells carry ISO 8601 text (ECMA-376 Part 1, 18.17.4); read as UTC wall time. */
function isoDateCell (text: string): Cell {
  const m = ISO_DATE.exec(text)
  if (m === null) return text
  const days = dateToSerial(Number(m[1]), Number(m[2]), Number(m[3]))
  const seconds = Number(m[4] ?? 0) * 3600 + Number(m[5] ?? 0) * 60 + Number(m[6] ?? 0)
  return new DateCell(days + seconds / 86_400)
}
