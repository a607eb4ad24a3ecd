/**
 * The scanner's fast path (fastRows) against values written down beside the XML,
 * fed in every way a stream can cut it: each split point of two chunks, fixed small
 * sizes, and big chunks mixed with tiny ones, so that the work buffer holds stale
 * markup from an earlier chunk right after the sentinel.
 */
import { describe, expect, it } from 'vitest'
import type { Cell } from './cells.js'
import { DateCell, ErrorCell } from './cells.js'
import { SharedStrings } from './shared-strings.js'
import { SheetScanner } from './sheet-scanner.js'

const SHARED = ['zero', 'one', 'two', 'três']
/** Style 1 is a date format; 0, 2 and 3 are not. */
const DATE_STYLES = Uint8Array.from([0, 1, 0, 0])

type Row = [number, Cell[]]

function scanChunks (xml: string | Buffer, sizes: (index: number) => number): Row[] {
  const rows: Row[] = []
  const scanner = new SheetScanner({ sharedStrings: SharedStrings.fromItems(SHARED), dateStyles: DATE_STYLES, date1904: false, onRow: (n, cells) => { rows.push([n, cells]) } })
  const bytes = typeof xml === 'string' ? Buffer.from(xml, 'utf8') : xml
  let at = 0
  for (let k = 0; at < bytes.length && !scanner.done; k++) {
    const size = Math.max(1, sizes(k))
    // A fresh copy, as zlib hands over: the scanner must not keep a view of a chunk.
    scanner.push(Buffer.from(bytes.subarray(at, at + size)))
    at += size
  }
  scanner.end()
  return rows
}

const sheet = (body: string): string =>
  `<?xml version="1.0" encoding="UTF-8"?>\n<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>${body}</sheetData></worksheet>`

/** Cells in the shapes the fast path takes, and the ones it must hand to the general path. */
const CASES: Array<[string, Cell]> = [
  ['<c r="A{r}" s="1" t="n"><v>45000</v></c>', new DateCell(45000)],
  ['<c r="B{r}" t="s"><v>3</v></c>', 'três'],
  ['<c r="C{r}" s="2"><v>-1234.56</v></c>', -1234.56],
  ['<c r="D{r}"><v>0.1</v></c>', 0.1],
  ['<c r="E{r}" s="3"/>', null],
  ['<c r="F{r}"><v>123456789012345</v></c>', 123456789012345],
  ['<c r="G{r}"><v>1234567890123456789</v></c>', 1234567890123456789],
  ['<c r="H{r}"><v>1.5E-7</v></c>', 1.5e-7],
  ['<c r="I{r}" t="str"><v>a&amp;b</v></c>', 'a&b'],
  ['<c r="J{r}" t="b"><v>1</v></c>', true],
  ['<c r="K{r}" t="e"><v>#N/A</v></c>', new ErrorCell('#N/A')],
  ['<c r="L{r}"><f>SUM(A1:A2)</f><v>42</v></c>', 42],
  ['<c r="M{r}" t="inlineStr"><is><t>inline</t></is></c>', 'inline'],
  ['<c t="s" r="N{r}" s="1"><v>1</v></c>', 'one'],
  ['<c><v>-0</v></c>', -0],
  ['<c s="1"><v>45000.5</v></c>', new DateCell(45000.5)],
  ['<c r="Q{r}" s="0"><v>.5</v></c>', 0.5],
  ['<c r="R{r}"><v>7.</v></c>', 7],
  ['<c r="S{r}"><v>00012</v></c>', 12],
  ['<c r="T{r}" t="s"><v>2.0</v></c>', 'two'],
  ['<c r="U{r}" t="n"><v></v></c>', null],
  ['<c r="V{r}"  s="2"><v>5</v></c>', 5],
  ['<c r="W{r}"\n s="2"><v>6</v></c>', 6],
  ['<c r="X{r}" s="2" ><v>8</v></c>', 8],
  ['<c r="AB{r}" s="2"><v>99.25</v></c>', 99.25],
  ['<c r="AC{r}"><v> 3</v></c>', 3],
  ['<c r="AD{r}" cm="1"><v>4</v></c>', 4],
  ['<x:c r="AE{r}"><x:v>5</x:v></x:c>', 5]
]

/** The row the CASES make, at row number `r`: columns from the references, in order. */
function expectedRow (): Cell[] {
  const cells: Cell[] = []
  let next = 0
  CASES.forEach(([xml, value]) => {
    const ref = /r="([A-Z]+)\{r\}"/.exec(xml)
    const column = ref === null ? next : [...ref[1]!].reduce((n, ch) => n * 26 + ch.charCodeAt(0) - 64, 0) - 1
    if (value !== null) {
      while (cells.length < column) cells.push(null)
      cells[column] = value
    }
    next = column + 1
  })
  return cells
}

function rowsXml (rowNumbers: number[]): string {
  return rowNumbers.map((r, k) => {
    const cells = CASES.map(([xml]) => xml.replaceAll('{r}', String(r))).join(k % 3 === 0 ? '\n  ' : '')
    const open = k % 4 === 1 ? `<row r="${r}" spans="1:31" ht="15" customHeight="1">` : `<row r="${r}">`
    return `${open}${cells}</row>`
  }).join(k2(rowNumbers.length))
}
const k2 = (n: number): string => (n % 2 === 0 ? '\n' : '')

function columnName (index: number): string {
  let name = ''
  for (let n = index + 1; n > 0; n = Math.floor((n - 1) / 26)) name = String.fromCharCode(65 + ((n - 1) % 26)) + name
  return name
}

const ROWS = [1, 2, 9, 10, 99, 100, 12345, 1048576]
const XML = sheet(rowsXml(ROWS))
const EXPECTED: Row[] = ROWS.map((r) => [r, expectedRow()])

describe('SheetScanner fast path', () => {
  it('decodes the fast shapes and hands the others to the general path', () => {
    expect(scanChunks(XML, () => 1 << 20)).toEqual(EXPECTED)
  })

  it('gives the same rows for every split of the sheet into two chunks', () => {
    const bytes = Buffer.from(XML)
    const whole = JSON.stringify(EXPECTED)
    for (let cut = 1; cut < bytes.length; cut++) {
      const rows = scanChunks(bytes, (k) => (k === 0 ? cut : bytes.length))
      const text = JSON.stringify(rows)
      if (text !== whole) expect({ cut, rows }).toEqual({ cut, rows: EXPECTED })
    }
    // toEqual tells -0 from 0 and DateCell from a number, which JSON does not.
    expect(scanChunks(bytes, (k) => (k === 0 ? 1000 : bytes.length))).toEqual(EXPECTED)
  })

  it('gives the same rows for small fixed chunk sizes', () => {
    for (const size of [1, 2, 3, 4, 5, 6, 7, 8, 11, 16, 17, 31, 64, 100]) {
      expect(scanChunks(XML, () => size)).toEqual(EXPECTED)
    }
  })

  it('is not misled by stale markup after the end of a short chunk', () => {
    // Big chunks fill the work buffer with cells; the tiny chunks after them leave
    // well-formed cells from earlier data just past the sentinel.
    const many = sheet(rowsXml(Array.from({ length: 400 }, (_, i) => i + 1)))
    const expected: Row[] = Array.from({ length: 400 }, (_, i) => [i + 1, expectedRow()])
    for (const pattern of [[40_000, 1, 2, 3], [9000, 5, 13], [70_000, 7], [1 << 20]]) {
      expect(scanChunks(many, (k) => pattern[k % pattern.length]!)).toEqual(expected)
    }
  })

  it('reads a cell reference that is not on its own row the slow way, by its letters', () => {
    // rowDigits is 1 for row 5; these references have more digits, fewer and none.
    const xml = sheet('<row r="5"><c r="B123" s="2"><v>1</v></c><c r="D5"><v>2</v></c><c r="F"><v>3</v></c></row>' +
      '<row r="10"><c r="A1" t="s"><v>0</v></c><c r="C10"><v>4</v></c></row>')
    const expected: Row[] = [[5, [null, 1, null, 2, null, 3]], [10, ['zero', null, 4]]]
    for (const size of [1, 3, 1 << 20]) expect(scanChunks(xml, () => size)).toEqual(expected)
  })

  it('keeps an element longer than the work buffer whole across chunks, then goes on', () => {
    const long = 'x'.repeat(1_500_000)
    const xml = sheet(`<row r="1"><c r="A1" t="inlineStr"><is><t>${long}</t></is></c><c r="B1"><v>2</v></c></row>` +
      '<row r="2"><c r="A2" t="s"><v>1</v></c></row>')
    for (const size of [65_536, 262_144, 1 << 20]) {
      expect(scanChunks(xml, () => size)).toEqual([[1, [long, 2]], [2, ['one']]])
    }
  })

  it('refuses what the general path refuses, wherever the chunks end', () => {
    const bad = [
      '<row r="1"><c r="A1" t="s"><v>9</v></c></row>', // no shared string 9
      '<row r="1"><c r="XFE1"><v>1</v></c></row>', // past the last column
      '<row r="1"><c r="A1"><v>1x</v></c></row>', // not a number
      '<row r="1"><c r="A1" t="q"><v>1</v></c></row>' // unknown type
    ]
    for (const body of bad) {
      for (const size of [1, 7, 1 << 20]) {
        expect(() => scanChunks(sheet(body), () => size)).toThrow(expect.objectContaining({ code: 'SHEET_CORRUPT' }))
      }
    }
  })

  it('reads numbers of every length exactly as Number() does', () => {
    // Digits are read four at a time: every count of integer and fraction digits
    // around that width, signs, leading and trailing zeros, and 15 versus 16 digits.
    let seed = 7
    const random = (): number => { seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648; return seed / 2_147_483_648 }
    const digits = (count: number): string => Array.from({ length: count }, () => String(Math.floor(random() * 10))).join('')
    const texts: string[] = ['0', '00', '0000', '00000', '9999', '10000', '-9999.9999', '0.0001', '1.0000', '.0', '5.5']
    for (let whole = 0; whole <= 16; whole++) {
      for (let fraction = -1; fraction <= 16 - whole; fraction++) {
        if (whole === 0 && fraction <= 0) continue
        const text = digits(whole) + (fraction < 0 ? '' : `.${digits(fraction)}`)
        texts.push(text, `-${text}`)
      }
    }
    const row = texts.map((text, k) => `<c r="${columnName(k)}1"><v>${text}</v></c>`).join('')
    const rows = scanChunks(sheet(`<row r="1">${row}</row>`), () => 1 << 20)
    expect(rows[0]![1]).toEqual(texts.map(Number))
    expect(scanChunks(sheet(`<row r="1">${row}</row>`), () => 5)[0]![1]).toEqual(texts.map(Number))
  })

  it('stops at the row where the visitor says so, in the middle of a chunk', () => {
    const seen: number[] = []
    const scanner = new SheetScanner({ sharedStrings: SharedStrings.fromItems(SHARED), dateStyles: DATE_STYLES, date1904: false, onRow: (n) => { seen.push(n); return n < 10 } })
    scanner.push(Buffer.from(XML))
    expect(scanner.done).toBe(true)
    expect(seen).toEqual([1, 2, 9, 10])
  })
})
