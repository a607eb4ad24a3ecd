import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { writeTinyXlsx } from '../../fixtures/tiny-xlsx.js'
import type { TinyWorkbook } from '../../fixtures/tiny-xlsx.js'
import { DateCell, ErrorCell, UncomputedFormula } from './cells.js'
import type { Cell } from './cells.js'
import { readXlsxFirstSheet } from './read-xlsx.js'

let dir: string
let n = 0
beforeAll(async () => { dir = await mkdtemp(join(tmpdir(), 'razao-xlsx-')) })
afterAll(async () => { await rm(dir, { recursive: true, force: true }) })

async function read (wb: TinyWorkbook): Promise<{ rows: Array<[number, Cell[]]>, sheetName: string }> {
  const path = join(dir, `wb-${n++}.xlsx`)
  await writeTinyXlsx(path, wb)
  const rows: Array<[number, Cell[]]> = []
  const summary = await readXlsxFirstSheet(path, (r, cells) => { rows.push([r, cells]) }, { maxInflatedBytes: 1 << 26 })
  expect(summary.rowsRead).toBe(rows.length)
  return { rows, sheetName: summary.sheetName }
}

describe('readXlsxFirstSheet', () => {
  it('decodes shared strings with rich text runs, skipping phonetic runs', async () => {
    const { rows } = await read({
      sharedStrings: '<sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><si><t>plain</t></si><si><r><t>bo</t></r><r><rPr><b/></rPr><t>ld</t></r></si><si><t>漢字</t><rPh sb="0" eb="2"><t>かんじ</t></rPh></si><si><t xml:space="preserve"> spaced </t></si><si/></sst>',
      sheet: '<row r="1"><c r="A1" t="s"><v>0</v></c><c r="B1" t="s"><v>1</v></c><c r="C1" t="s"><v>2</v></c><c r="D1" t="s"><v>3</v></c><c r="E1" t="s"><v>4</v></c></row>'
    })
    expect(rows).toEqual([[1, ['plain', 'bold', '漢字', ' spaced ', '']]])
  })

  it('detects dates from built-in and custom formats through the cell style', async () => {
    const { rows } = await read({
      styles: { numFmts: { 164: 'dd/mm/yyyy', 165: '#,##0.00', 166: '[$-416]d" de "mmmm" de "yyyy' }, cellXfs: [0, 14, 164, 165, 22, 166, 4] },
      sheet: '<row r="1">' + [0, 1, 2, 3, 4, 5, 6].map((s, i) => `<c r="${String.fromCharCode(65 + i)}1" s="${s}"><v>45000.25</v></c>`).join('') + '</row>'
    })
    expect(rows[0]![1]).toEqual([45000.25, new DateCell(45000.25), new DateCell(45000.25), 45000.25, new DateCell(45000.25), new DateCell(45000.25), 45000.25])
  })

  it('shifts 1904-system dates into the 1900 system', async () => {
    const { rows } = await read({ date1904: true, styles: { cellXfs: [0, 14] }, sheet: '<row r="1"><c s="1"><v>0</v></c><c><v>0</v></c></row>' })
    expect(rows[0]![1]).toEqual([new DateCell(1462), 0])
    expect((rows[0]![1][0] as DateCell).toISO()).toBe('1904-01-01')
  })

  it('finds the first sheet by workbook order and relationships, not by part name', async () => {
    const NS = 'http://schemas.openxmlformats.org/spreadsheetml/2006/main'
    const { rows, sheetName } = await read({
      sheetPath: 'xl/worksheets/razao-dados.xml',
      sheet: '<row r="1"><c t="inlineStr"><is><t>first in order</t></is></c></row>',
      workbookXml: `<workbook xmlns="${NS}" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><sheets><sheet name="Lançamentos" sheetId="7" r:id="rId1"/><sheet name="Other" sheetId="1" r:id="rId9"/></sheets></workbook>`,
      extraParts: {
        'xl/worksheets/sheet1.xml': `<worksheet xmlns="${NS}"><sheetData><row r="1"><c t="inlineStr"><is><t>wrong sheet</t></is></c></row></sheetData></worksheet>`
      }
    })
    expect(sheetName).toBe('Lançamentos')
    expect(rows).toEqual([[1, ['first in order']]])
  })

  it('reads cells without r attributes, skipped rows and columns, booleans and errors', async () => {
    const { rows } = await read({
      sheet: '<row><c><v>1</v></c><c><v>2</v></c></row><row r="5"><c r="C5" t="b"><v>0</v></c><c t="e"><v>#N/A</v></c></row><row><c r="B6" t="str"><v></v></c></row>'
    })
    expect(rows).toEqual([[1, [1, 2]], [5, [null, null, false, new ErrorCell('#N/A')]], [6, [null, '']]])
  })

  it('reads a stored (uncompressed) archive', async () => {
    const { rows } = await read({ store: true, sheet: '<row r="1"><c><v>42</v></c></row>' })
    expect(rows).toEqual([[1, [42]]])
  })

  it('reports an empty worksheet as no rows', async () => {
    const { rows } = await read({ sheet: '' })
    expect(rows).toEqual([])
  })

  it('keeps the 1904 date system when Excel 2013+ adds an x15:workbookPr without date1904 (issue 11)', async () => {
    const NS = 'http://schemas.openxmlformats.org/spreadsheetml/2006/main'
    const { rows } = await read({
      styles: { cellXfs: [0, 14] },
      sheet: '<row r="1"><c s="1"><v>43466</v></c></row>',
      workbookXml: `<workbook xmlns="${NS}" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships" xmlns:mc="http://schemas.openxmlformats.org/markup-compatibility/2006" mc:Ignorable="x15" xmlns:x15="http://schemas.microsoft.com/office/spreadsheetml/2010/11/main">` +
        '<fileVersion appName="xl" lastEdited="7"/><workbookPr date1904="1" defaultThemeVersion="166925"/>' +
        '<sheets><sheet name="Razao" sheetId="1" r:id="rId1"/></sheets>' +
        '<extLst><ext uri="{140A7094-0E35-4892-8432-C4D2E57EDEB5}" xmlns:x15="http://schemas.microsoft.com/office/spreadsheetml/2010/11/main"><x15:workbookPr chartTrackingRefBase="1"/></ext></extLst></workbook>'
    })
    // 43466 in the 1904 system is 2023-01-02 (in the 1900 system it would be 2019-01-01).
    expect((rows[0]![1][0] as DateCell).toISO()).toBe('2023-01-02')
  })

  it('reads a workbook whose SpreadsheetML elements all carry an x: prefix', async () => {
    const NS = 'http://schemas.openxmlformats.org/spreadsheetml/2006/main'
    const { rows, sheetName } = await read({
      styles: `<x:styleSheet xmlns:x="${NS}"><x:numFmts count="1"><x:numFmt numFmtId="164" formatCode="dd/mm/yyyy"/></x:numFmts><x:cellXfs count="2"><x:xf numFmtId="0"/><x:xf numFmtId="164"/></x:cellXfs></x:styleSheet>`,
      sharedStrings: `<x:sst xmlns:x="${NS}" count="1"><x:si><x:t>Caixa</x:t></x:si></x:sst>`,
      workbookXml: `<x:workbook xmlns:x="${NS}" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><x:workbookPr date1904="true"/><x:sheets><x:sheet name="Dados" sheetId="1" r:id="rId1"/></x:sheets></x:workbook>`,
      sheet: `<x:worksheet xmlns:x="${NS}"><x:sheetData><x:row r="1"><x:c r="A1" s="1"><x:v>0</x:v></x:c><x:c r="B1" t="s"><x:v>0</x:v></x:c></x:row></x:sheetData></x:worksheet>`
    })
    expect(sheetName).toBe('Dados')
    expect(rows).toEqual([[1, [new DateCell(1462), 'Caixa']]])
  })

  it('takes number formats from numFmts only, not from a differential format reusing the id', async () => {
    const NS = 'http://schemas.openxmlformats.org/spreadsheetml/2006/main'
    const { rows } = await read({
      styles: `<styleSheet xmlns="${NS}"><numFmts count="1"><numFmt numFmtId="164" formatCode="dd/mm/yyyy"/></numFmts>` +
        '<cellXfs count="2"><xf numFmtId="0"/><xf numFmtId="164"/></cellXfs>' +
        '<dxfs count="1"><dxf><numFmt numFmtId="164" formatCode="#,##0.00"/></dxf></dxfs>' +
        '<extLst><ext uri="{x}" xmlns:x14="http://schemas.microsoft.com/office/spreadsheetml/2009/9/main"><x14:cellXfs><x14:xf numFmtId="0"/></x14:cellXfs></ext></extLst></styleSheet>',
      sheet: '<row r="1"><c s="1"><v>45000</v></c></row>'
    })
    expect(rows).toEqual([[1, [new DateCell(45000)]]])
  })

  it('ignores shared-string items outside SpreadsheetML and in extension lists', async () => {
    const NS = 'http://schemas.openxmlformats.org/spreadsheetml/2006/main'
    const { rows } = await read({
      sharedStrings: `<sst xmlns="${NS}" xmlns:o="urn:other"><si><t>zero</t></si><o:si><o:t>not an item</o:t></o:si><si><t>one</t></si><extLst><ext uri="{y}"><si><t>nor this</t></si></ext></extLst></sst>`,
      sheet: '<row r="1"><c t="s"><v>0</v></c><c t="s"><v>1</v></c></row>'
    })
    expect(rows).toEqual([[1, ['zero', 'one']]])
  })

  it('reads relationships only from the package relationships namespace', async () => {
    const NS = 'http://schemas.openxmlformats.org/spreadsheetml/2006/main'
    const REL = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships'
    const { rows } = await read({
      sheetPath: 'xl/worksheets/real.xml',
      sheet: '<row r="1"><c><v>7</v></c></row>',
      extraParts: {
        'xl/_rels/workbook.xml.rels': '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships" xmlns:o="urn:other">' +
          `<Relationship Id="rId1" Type="${REL}/worksheet" Target="worksheets/real.xml"/><o:Relationship Id="rId1" Type="${REL}/worksheet" Target="worksheets/decoy.xml"/></Relationships>`,
        'xl/worksheets/decoy.xml': `<worksheet xmlns="${NS}"><sheetData><row r="1"><c><v>1</v></c></row></sheetData></worksheet>`
      }
    })
    expect(rows).toEqual([[1, [7]]])
  })

  it('reads a formula saved without its value as uncomputed, never as empty; a cached value is what counts (issue 11)', async () => {
    const { rows } = await read({
      sheet: '<row r="1"><c r="A1"><f>SUM(B1:B3)</f></c><c r="B1"><f>1+1</f><v>2</v></c><c r="C1"><f t="shared" ref="C1:D1" si="0">A1*2</f></c>' +
        '<c r="D1"><f t="shared" si="0"/></c><c r="E1" t="str"><f>"a"&amp;"b"</f></c><c r="F1" t="str"><f>""</f><v></v></c><c r="G1"><f>X1</f><v></v></c>' +
        '<c r="H1"><v>5</v><extLst><ext uri="{z}"><x:v xmlns:x="urn:other">99</x:v></ext></extLst></c></row>' +
        '<row r="2"><c r="A2"><v>1</v></c><extLst><ext uri="{r}"><c r="B2"><v>7</v></c></ext></extLst></row>'
    })
    expect(rows).toEqual([
      [1, [new UncomputedFormula('SUM(B1:B3)'), 2, new UncomputedFormula('A1*2'), new UncomputedFormula(''), new UncomputedFormula('"a"&"b"'), '', new UncomputedFormula('X1'), 5]],
      [2, [1]]
    ])
    expect(JSON.stringify(rows[0]![1][0])).toBe('null')
    expect(String(rows[0]![1][3])).toBe('=(shared formula)')
  })

  it('turns literal CR LF and lone CR in text into LF before decoding _x000D_ and &#13; (issue 11)', async () => {
    const { rows } = await read({
      sharedStrings: '<sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><si><t>ABC_x000D_\r\nDEF</t></si><si><r><t>um\rdois</t></r><r><t><![CDATA[três\r\nquatro]]></t></r></si></sst>',
      sheet: '<row r="1"><c t="s"><v>0</v></c><c t="s"><v>1</v></c><c t="inlineStr"><is><t>in&#13;\r\nline</t></is></c><c t="str"><f>A1</f><v>f_x000D_\r\nx\r</v></c></row>'
    })
    expect(rows).toEqual([[1, ['ABC\r\nDEF', 'um\ndoistrês\nquatro', 'in\r\nline', 'f\r\nx\n']]])
  })
})
