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

const enum CellType { Number, Shared, Inline, Str, Bool, Error, IsoDate }

export interface ScannerContext {
  sharedStrings: string[]
  dateStyles: Uint8Array
  date1904: boolean
  onRow: RowVisitor
}

export class SheetScanner {
  private pending: Buffer | undefined
  private inSheetData = false
  private finished = false
  private rowNumber = 0
  private cells: Cell[] = []
  private nextColumn = 0
  private cellClose: Buffer = Buffer.from('</c>')
  private readonly dateOffset: number
  rowsRead = 0

  constructor (private readonly ctx: ScannerContext) {
    this.dateOffset = ctx.date1904 ? DATE1904_OFFSET_DAYS : 0
  }

  /** True once `</sheetData>` was seen or the visitor asked to stop: the caller may stop inflating. */
  get done (): boolean {
    return this.finished
  }

  push (chunk: Buffer): void {
    if (this.finished) return
    const data = this.pending === undefined ? chunk : Buffer.concat([this.pending, chunk])
    const stop = this.scan(data)
    this.pending = stop < data.length ? data.subarray(stop) : undefined
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

  /** Scans complete elements of `data`; returns where the unfinished tail starts. */
  private scan (data: Buffer): number {
    const len = data.length
    let pos = 0
    while (!this.finished) {
      const lt = data.indexOf(LT, pos)
      if (lt === -1) return len
      if (lt + 2 >= len) return lt
      const first = data[lt + 1]!

      if (first === SLASH) {
        const ne = nameEnd(data, lt + 2, len)
        const gt = data.indexOf(GT, ne)
        if (gt === -1) return lt
        const ls = localStart(data, lt + 2, ne)
        if (isName(data, ls, ne, 'row')) this.finishRow()
        else if (isName(data, ls, ne, 'sheetData')) this.finished = true
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
      const gt = data.indexOf(GT, ne)
      if (gt === -1) return lt
      const selfClosing = data[gt - 1] === SLASH

      if (!this.inSheetData) {
        if (isName(data, ls, ne, 'sheetData')) {
          this.inSheetData = true
          if (selfClosing) this.finished = true
        }
        pos = gt + 1
        continue
      }
      if (ne - ls === 1 && data[ls] === 0x63 /* c */) {
        if (selfClosing) {
          this.placeEmptyCell(data, ne, gt)
          pos = gt + 1
          continue
        }
        if (data[ls - 1] !== LT && this.cellClose.length === 4) this.cellClose = closingTag(data, lt + 1, ne)
        const close = data.indexOf(this.cellClose, gt + 1)
        if (close === -1) return lt
        this.readCell(data, ne, gt, close)
        pos = close + this.cellClose.length
        continue
      }
      if (isName(data, ls, ne, 'row')) {
        this.startRow(data, ne, gt)
        if (selfClosing) this.finishRow()
        pos = gt + 1
        continue
      }
      pos = gt + 1
    }
    return len
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
    const r = attributeRange(data, from, gt, 'r')
    this.rowNumber = r === undefined ? this.rowNumber + 1 : parseUnsigned(data, r[0], r[1])
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

  /** Column index of a cell: from its `r` reference, or the one after the previous cell. */
  private columnOf (data: Buffer, from: number, gt: number): number {
    const r = attributeRange(data, from, gt, 'r')
    if (r === undefined) return this.nextColumn
    let col = 0
    let i = r[0]
    for (; i < r[1]; i++) {
      const b = data[i]!
      if (b < CH_A || b > CH_Z) break
      col = col * 26 + (b - CH_A + 1)
    }
    if (col === 0 || col > MAX_COLUMNS) {
      throw new EngineError('SHEET_CORRUPT', `The worksheet has an invalid cell reference "${data.toString('latin1', r[0], r[1])}".`)
    }
    return col - 1
  }

  private placeEmptyCell (data: Buffer, from: number, gt: number): void {
    this.nextColumn = this.columnOf(data, from, gt) + 1
  }

  private readCell (data: Buffer, from: number, gt: number, close: number): void {
    const column = this.columnOf(data, from, gt)
    this.nextColumn = column + 1
    const typeRange = attributeRange(data, from, gt, 't')
    const type = typeRange === undefined ? CellType.Number : cellType(data, typeRange[0], typeRange[1])
    const value = type === CellType.Inline
      ? richText(data, gt + 1, close)
      : this.decodeValue(data, from, gt, close, type)
    if (value === null) return
    const cells = this.cells
    if (column < cells.length) {
      cells[column] = value
      return
    }
    while (cells.length < column) cells.push(null)
    cells.push(value)
  }

  private decodeValue (data: Buffer, from: number, gt: number, close: number, type: CellType): Cell {
    const v = findValue(data, gt + 1, close)
    if (v === undefined) return type === CellType.Str ? '' : null
    const [start, end] = v
    switch (type) {
      case CellType.Number: {
        if (start === end) return null
        const n = parseNumber(data, start, end)
        const s = attributeRange(data, from, gt, 's')
        if (s !== undefined && this.ctx.dateStyles[parseUnsigned(data, s[0], s[1])] === 1) {
          return new DateCell(n + this.dateOffset)
        }
        return n
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

/** [start, end) of the text of the `<v>` child inside the cell content [from, to). */
function findValue (data: Buffer, from: number, to: number): [number, number] | undefined {
  let pos = from
  while (pos < to) {
    const lt = data.indexOf(LT, pos)
    if (lt === -1 || lt >= to) return undefined
    if (data[lt + 1] === SLASH) { pos = lt + 2; continue }
    const ne = nameEnd(data, lt + 1, to)
    const gt = data.indexOf(GT, ne)
    if (gt === -1 || gt >= to) return undefined
    const ls = localStart(data, lt + 1, ne)
    if (ne - ls === 1 && data[ls] === 0x76 /* v */) {
      if (data[gt - 1] === SLASH) return undefined
      const end = data.indexOf(LT, gt + 1)
      return [gt + 1, end === -1 || end > to ? to : end]
    }
    pos = gt + 1
  }
  return undefined
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
