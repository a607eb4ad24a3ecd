/**
 * The worksheet hot path: a hand-written scan over the bytes of the sheet XML as
 * it inflates, with no DOM and no general XML parser. A general SAX parser spends
 * most of its time on events we never use; this scanner jumps between `<` bytes
 * with Buffer.indexOf (memchr) and decodes only cell values.
 *
 * Chunks arrive in any size; whatever element is cut at the end of a chunk is kept
 * and retried with the next chunk, so the element grammar never sees a partial tag.
 *
 * Grammar covered (ECMA-376 Part 1, 18.3.1): `<sheetData>` holding `<row r?>`
 * holding `<c r? s? t?>` with `<v>`, `<f>` and `<is>` children; element prefixes
 * such as `x:` are accepted. Anything else in the part is skipped.
 */
import { EngineError } from '../errors.js'
import { DATE1904_OFFSET_DAYS, DateCell, ErrorCell, dateToSerial } from './cells.js'
import type { Cell } from './cells.js'
import type { RowVisitor } from './types.js'
import {
  BANG, GT, LT, QMARK, SLASH, attributeRange, decodeText, isName, localStart, nameEnd, richText
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
const CH_I = 0x69
const CH_R = 0x72
const CH_S = 0x73
const CH_T = 0x74
const CH_V = 0x76
const EQ = 0x3d
const QUOTE = 0x22
const APOS = 0x27
const COLON = 0x3a

/** How much of a new chunk is joined to the previous chunk's unfinished element. */
const JOIN_HEAD_BYTES = 64 * 1024

const enum CellType { Number, Shared, Inline, Str, Bool, Error, IsoDate }

export interface ScannerContext {
  sharedStrings: string[]
  dateStyles: Uint8Array
  date1904: boolean
  onRow: RowVisitor
}

export class SheetScanner {
  private pending: Buffer | undefined
  private readonly join = Buffer.allocUnsafe(2 * JOIN_HEAD_BYTES)
  private inSheetData = false
  private finished = false
  private rowNumber = 0
  private cells: Cell[] = []
  private nextColumn = 0
  /** Decimal length of rowNumber: a cell reference's digits are usually exactly that. */
  private rowDigits = 1
  private readonly dateOffset: number
  rowsRead = 0

  constructor (private readonly ctx: ScannerContext) {
    this.dateOffset = ctx.date1904 ? DATE1904_OFFSET_DAYS : 0
  }

  /** True once `</sheetData>` was seen or the visitor asked to stop: the caller may stop inflating. */
  get done (): boolean {
    return this.finished
  }

  /**
   * Scans a chunk. The element cut at the end of the previous chunk is completed by
   * joining it with the head of this chunk in a reused buffer; the rest of the chunk
   * is scanned in place. Joining whole chunks (Buffer.concat) would allocate as many
   * bytes as the sheet inflates to, and V8 answers that much external memory with a
   * full garbage collection every few megabytes.
   */
  push (chunk: Buffer): void {
    if (this.finished) return
    let from = 0
    const pending = this.pending
    if (pending !== undefined) {
      this.pending = undefined
      const take = Math.min(chunk.length, JOIN_HEAD_BYTES)
      if (pending.length + take <= this.join.length) {
        pending.copy(this.join, 0)
        chunk.copy(this.join, pending.length, 0, take)
        const joined = this.join.subarray(0, pending.length + take)
        const stop = this.scan(joined, 0)
        if (take === chunk.length) {
          if (stop < joined.length) this.pending = Buffer.from(joined.subarray(stop))
          return
        }
        if (stop > pending.length) {
          from = stop - pending.length
        } else {
          // An element longer than the joined head (a huge inline string): join it all.
          return this.scanWhole(Buffer.concat([pending, chunk]))
        }
      } else {
        return this.scanWhole(Buffer.concat([pending, chunk]))
      }
    }
    const stop = this.scan(chunk, from)
    if (stop < chunk.length) this.pending = Buffer.from(chunk.subarray(stop))
  }

  private scanWhole (data: Buffer): void {
    const stop = this.scan(data, 0)
    if (stop < data.length) this.pending = Buffer.from(data.subarray(stop))
  }

  /** Call after the last chunk; a sheet cut before `</sheetData>` is a truncated file. */
  end (): void {
    if (this.finished) return
    if (!this.inSheetData && this.rowsRead === 0 && this.pending === undefined) {
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
  private scan (data: Buffer, from: number): number {
    const len = data.length
    let pos = from
    while (!this.finished) {
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
        if (ne - ls === 2 && data[ls] === CH_I && data[ls + 1] === CH_S) inlineStart = gt + 1
      }
      i = gt + 1
    }
    this.nextColumn = column + 1
    let value: Cell
    // Numbers and shared strings are nearly every cell; they skip the general decoder.
    if (type === CellType.Number && valueStart >= 0 && valueEnd > valueStart) {
      const n = digits >= 0 ? digits : parseNumber(data, valueStart, valueEnd)
      value = this.ctx.dateStyles[style] === 1 ? new DateCell(n + this.dateOffset) : n
    } else if (type === CellType.Shared && valueStart >= 0) {
      const index = digits >= 0 && Number.isInteger(digits) ? digits : parseUnsigned(data, valueStart, valueEnd)
      const text = this.ctx.sharedStrings[index]
      if (text === undefined) throw new EngineError('SHEET_CORRUPT', `A cell refers to shared string ${index}, which the workbook does not have.`)
      value = text
    } else if (type === CellType.Inline) {
      value = inlineStart < 0 ? null : richText(data, inlineStart, closeStart)
    } else {
      value = valueStart < 0 ? (type === CellType.Str ? '' : null) : this.decodeValue(data, valueStart, valueEnd, type, style)
    }
    if (value === null) return i
    const cells = this.cells
    if (column === cells.length) cells.push(value)
    else this.place(column, value)
    return i
  }

  private place (column: number, value: Cell): void {
    const cells = this.cells
    if (column < cells.length) {
      cells[column] = value
      return
    }
    while (cells.length < column) cells.push(null)
    cells.push(value)
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
      case CellType.Shared: {
        const index = parseUnsigned(data, start, end)
        const text = this.ctx.sharedStrings[index]
        if (text === undefined) throw new EngineError('SHEET_CORRUPT', `A cell refers to shared string ${index}, which the workbook does not have.`)
        return text
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
