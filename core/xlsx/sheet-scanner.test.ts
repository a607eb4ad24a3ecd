import { describe, expect, it } from 'vitest'
import type { Cell } from './cells.js'
import { DateCell, ErrorCell } from './cells.js'
import { SharedStrings } from './shared-strings.js'
import { SheetScanner } from './sheet-scanner.js'

const SHEET = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<!-- written by hand -->
<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><dimension ref="A1:F4"/>
<sheetData>
<row r="1" spans="1:6"><c r="A1" t="s"><v>0</v></c><c r="B1" t="inlineStr"><is><r><t>Ri</t></r><r><rPr><b/></rPr><t xml:space="preserve">ch &amp; co</t></r><rPh sb="0" eb="1"><t>ignored</t></rPh></is></c><c r="D1" t="str"><f>CONCAT("a","b")</f><v>ab</v></c></row>
<row r="3"><c r="A3" s="1"><v>45000</v></c><c r="B3" t="b"><v>1</v></c><c r="C3" t="e"><v>#DIV/0!</v></c><c r="D3"><v>-1234.5</v></c><c r="E3" s="1"/><c r="F3"><v>1.5E-7</v></c></row>
<row r="4"><c t="n"><v>7</v></c><c><v>8</v></c><c r="E4"><v>9</v></c><c><v>10</v></c></row>
<row r="5"><c r="A5" s="1"/></row>
<row r="6"/>
<row r="7"><c r="A7" t="d"><v>2024-02-29T06:30:00</v></c><c r="B7" t="str"><v>a_x000D_b &#231;&#x00E3;</v></c></row>
</sheetData><mergeCells count="0"/></worksheet>`

function scan (xml: string, chunkSize: number, date1904 = false): Array<[number, Cell[]]> {
  const rows: Array<[number, Cell[]]> = []
  const scanner = new SheetScanner({
    sharedStrings: SharedStrings.fromItems(['Olá']),
    dateStyles: Uint8Array.from([0, 1]),
    date1904,
    onRow: (n, cells) => { rows.push([n, cells]) }
  })
  const bytes = Buffer.from(xml, 'utf8')
  for (let i = 0; i < bytes.length && !scanner.done; i += chunkSize) scanner.push(bytes.subarray(i, i + chunkSize))
  scanner.end()
  return rows
}

describe('SheetScanner', () => {
  it('decodes every cell type, gaps and references', () => {
    expect(scan(SHEET, 1 << 20)).toEqual([
      [1, ['Olá', 'Rich & co', null, 'ab']],
      [3, [new DateCell(45000), true, new ErrorCell('#DIV/0!'), -1234.5, null, 1.5e-7]],
      [4, [7, 8, null, null, 9, 10]],
      [7, [new DateCell(45351 + 0.2708333333333333), 'a\rb çã']]
    ])
  })

  it('gives the same rows whatever the chunk boundaries', () => {
    const whole = JSON.stringify(scan(SHEET, 1 << 20))
    for (const size of [1, 2, 3, 5, 7, 13, 64, 333]) expect(JSON.stringify(scan(SHEET, size))).toBe(whole)
  })

  it('adds the 1904 offset to date cells only', () => {
    const rows = scan(SHEET, 4096, true)
    expect(rows[1]![1][0]).toEqual(new DateCell(45000 + 1462))
    expect(rows[1]![1][3]).toBe(-1234.5)
  })

  it('accepts prefixed element names', () => {
    const xml = '<x:worksheet xmlns:x="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><x:sheetData><x:row r="2"><x:c r="B2" t="s"><x:v>0</x:v></x:c><x:c r="C2"><x:v>3</x:v></x:c></x:row></x:sheetData></x:worksheet>'
    expect(scan(xml, 7)).toEqual([[2, [null, 'Olá', 3]]])
  })

  it('stops when the visitor returns false', () => {
    const seen: number[] = []
    const scanner = new SheetScanner({ sharedStrings: SharedStrings.fromItems(['x']), dateStyles: new Uint8Array(0), date1904: false, onRow: (n) => { seen.push(n); return false } })
    scanner.push(Buffer.from(SHEET))
    expect(scanner.done).toBe(true)
    expect(seen).toEqual([1])
  })

  it('refuses a sheet cut before the end of its data', () => {
    expect(() => scan(SHEET.slice(0, SHEET.indexOf('<row r="4"')), 100)).toThrow(expect.objectContaining({ code: 'SHEET_CORRUPT' }))
  })

  it('refuses a DTD in the sheet', () => {
    const xml = '<?xml version="1.0"?><!DOCTYPE worksheet [<!ENTITY a "aaaa">]><worksheet><sheetData><row r="1"><c t="inlineStr"><is><t>&a;</t></is></c></row></sheetData></worksheet>'
    expect(() => scan(xml, 50)).toThrow(expect.objectContaining({ code: 'XLSX_DTD_FORBIDDEN' }))
  })

  it('refuses a reference to a shared string that does not exist', () => {
    const xml = '<worksheet><sheetData><row r="1"><c t="s"><v>5</v></c></row></sheetData></worksheet>'
    expect(() => scan(xml, 50)).toThrow(expect.objectContaining({ code: 'SHEET_CORRUPT' }))
  })

  it('parses numbers exactly as Number() does', () => {
    const values = ['0', '-0.5', '1234.56', '0.1', '123456789012345', '1234567890123456789', '3.14159265358979', '1E+20', '-2.5e-3', '0.30000000000000004', '45000.999988425923']
    const xml = `<worksheet><sheetData><row r="1">${values.map((v) => `<c><v>${v}</v></c>`).join('')}</row></sheetData></worksheet>`
    expect(scan(xml, 9)[0]![1]).toEqual(values.map(Number))
  })
})
