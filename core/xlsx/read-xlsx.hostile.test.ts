import { readFile, writeFile, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import XLSX from 'xlsx'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { deflatedEntry, rawZip, repeatedEntry } from '../../fixtures/raw-zip.js'
import type { RawEntry } from '../../fixtures/raw-zip.js'
import { tinyXlsxParts, writeTinyXlsx, writeZip } from '../../fixtures/tiny-xlsx.js'
import type { TinyWorkbook } from '../../fixtures/tiny-xlsx.js'
import { DateCell } from './cells.js'
import { detectFormat } from './detect.js'
import { readFirstSheet } from './read-first-sheet.js'
import { DEFAULT_MAX_METADATA_BYTES } from './read-xlsx.js'
import { MAX_CELL_FORMATS, MAX_SHEETS, loadWorkbookParts } from './workbook.js'
import { ZipArchive } from './zip.js'

let dir: string
let n = 0
beforeAll(async () => { dir = await mkdtemp(join(tmpdir(), 'razao-hostile-')) })
afterAll(async () => { await rm(dir, { recursive: true, force: true }) })

const file = (ext = 'xlsx'): string => join(dir, `f-${n++}.${ext}`)
const readAll = (path: string, maxInflatedBytes = 1 << 24) => readFirstSheet(path, () => {}, { maxInflatedBytes })
const code = (c: string) => expect.objectContaining({ code: c })

/**
 * Rewrites a field of the central-directory headers (signature PK\1\2, APPNOTE 4.3.12)
 * of the entries named `entry` (all when omitted): offset 8 is the 16-bit flags, 24 the
 * 32-bit uncompressed size.
 */
function patchCentral (zip: Buffer, offset: number, value: number, entry?: string): Buffer {
  const out = Buffer.from(zip)
  for (let i = out.indexOf('PK\x01\x02'); i !== -1; i = out.indexOf('PK\x01\x02', i + 4)) {
    const name = out.toString('utf8', i + 46, i + 46 + out.readUInt16LE(i + 28))
    if (entry !== undefined && name !== entry) continue
    if (offset === 8) out.writeUInt16LE(value, i + offset)
    else out.writeUInt32LE(value, i + offset)
  }
  return out
}

const bigSheet = (): TinyWorkbook => ({ sheet: `<row r="1"><c><v>1</v></c></row>${' '.repeat(4 << 20)}` })

describe('hostile and foreign files', () => {
  it('refuses a part whose declared size passes the limit', async () => {
    const path = file()
    await writeTinyXlsx(path, bigSheet())
    await expect(readAll(path, 1 << 20)).rejects.toThrow(code('XLSX_ZIP_BOMB'))
  })

  it('refuses a part that inflates beyond what it declares', async () => {
    const path = file()
    await writeTinyXlsx(path, bigSheet())
    await writeFile(path, patchCentral(await readFile(path), 24, 1000, 'xl/worksheets/sheet1.xml'))
    await expect(readAll(path, 1 << 24)).rejects.toThrow(code('XLSX_ZIP_BOMB'))
  })

  it('checks the small parts read in one step as it checks the sheet: sizes that lie, damaged data', async () => {
    const wb: TinyWorkbook = { sharedStrings: ['a', 'b', 'c'], sheet: '<row r="1"><c t="s"><v>2</v></c></row>' }
    const sst = 'xl/sharedStrings.xml'
    const good = file()
    await writeTinyXlsx(good, wb)
    const rows: unknown[] = []
    await readFirstSheet(good, (_r, cells) => { rows.push(cells) }, { maxInflatedBytes: 1 << 24 })
    expect(rows).toEqual([['c']])
    const bytes = await readFile(good)
    // Declared smaller than it inflates: refused as a bomb; declared larger: truncated.
    const under = file()
    await writeFile(under, patchCentral(bytes, 24, 10, sst))
    await expect(readAll(under)).rejects.toThrow(code('XLSX_ZIP_BOMB'))
    const over = file()
    await writeFile(over, patchCentral(bytes, 24, 100_000, sst))
    await expect(readAll(over)).rejects.toThrow(code('SHEET_CORRUPT'))
    // The part's deflate data overwritten with junk.
    const damaged = Buffer.from(bytes)
    const at = damaged.indexOf(sst) + sst.length
    for (let i = at; i < at + 12; i++) damaged[i] = 0xff
    const broken = file()
    await writeFile(broken, damaged)
    await expect(readAll(broken)).rejects.toThrow(code('SHEET_CORRUPT'))
    // Stored (uncompressed) parts are read the same way.
    const stored = file()
    await writeZip(stored, tinyXlsxParts(wb), true)
    rows.length = 0
    await readFirstSheet(stored, (_r, cells) => { rows.push(cells) }, { maxInflatedBytes: 1 << 24 })
    expect(rows).toEqual([['c']])
  })

  it('reports a damaged local header of the streamed sheet as a damaged file', async () => {
    const path = file()
    await writeTinyXlsx(path, { sheet: '<row r="1"><c><v>1</v></c></row>' })
    const bytes = Buffer.from(await readFile(path))
    const name = bytes.indexOf('xl/worksheets/sheet1.xml')
    // The local header starts 30 bytes before its file name (APPNOTE 4.3.7).
    expect(bytes.readUInt32LE(name - 30)).toBe(0x04034b50)
    bytes.writeUInt32LE(0x12345678, name - 30)
    await writeFile(path, bytes)
    await expect(readAll(path)).rejects.toThrow(code('SHEET_CORRUPT'))
  })

  it('refuses to read from an archive after it was closed', async () => {
    const path = file()
    await writeTinyXlsx(path, { sheet: '<row r="1"><c><v>1</v></c></row>' })
    const zip = await ZipArchive.open(path, { maxInflatedBytes: 1 << 20 })
    expect((await zip.readPart('xl/workbook.xml', 1 << 20))?.length).toBeGreaterThan(0)
    zip.close()
    await expect(zip.readPart('xl/workbook.xml', 1 << 20)).rejects.toThrow(/after close/)
  })

  it('streams a shared-strings part too big to read in one step, with the same checks', async () => {
    // Random strings: more than 1 MiB even compressed.
    const strings = Array.from({ length: 120_000 }, (_, i) => `${i}-${Math.random().toString(36).slice(2)}${Math.random().toString(36).slice(2)}`)
    const wb: TinyWorkbook = { sharedStrings: strings, sheet: '<row r="1"><c t="s"><v>59999</v></c></row>' }
    const path = file()
    await writeTinyXlsx(path, wb)
    expect((await readFile(path)).length).toBeGreaterThan(1.5 * (1 << 20))
    const rows: unknown[] = []
    await readFirstSheet(path, (_r, cells) => { rows.push(cells) }, { maxInflatedBytes: 1 << 26 })
    expect(rows).toEqual([[strings[59_999]]])
    const lying = file()
    await writeFile(lying, patchCentral(await readFile(path), 24, 1000, 'xl/sharedStrings.xml'))
    await expect(readAll(lying, 1 << 26)).rejects.toThrow(code('XLSX_ZIP_BOMB'))
  })

  it('refuses DTDs and entity declarations in any XML part', async () => {
    const dtd = '<?xml version="1.0"?><!DOCTYPE lol [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;">]>'
    const NS = 'http://schemas.openxmlformats.org/spreadsheetml/2006/main'
    for (const wb of [
      { sheet: `${dtd}<worksheet><sheetData><row r="1"><c t="inlineStr"><is><t>&lol2;</t></is></c></row></sheetData></worksheet>` },
      { sheet: '<row r="1"><c t="s"><v>0</v></c></row>', sharedStrings: `${dtd}<sst xmlns="${NS}"><si><t>&lol2;</t></si></sst>` },
      { sheet: '', workbookXml: `${dtd}<workbook xmlns="${NS}"><sheets><sheet name="a" r:id="rId1" xmlns:r="x"/></sheets></workbook>` }
    ] satisfies TinyWorkbook[]) {
      const path = file()
      await writeTinyXlsx(path, wb)
      await expect(readAll(path)).rejects.toThrow(code('XLSX_DTD_FORBIDDEN'))
    }
  })

  it('refuses a ZIP entry flagged as encrypted', async () => {
    const path = file()
    await writeTinyXlsx(path, { sheet: '<row r="1"><c><v>1</v></c></row>' })
    await writeFile(path, patchCentral(await readFile(path), 8, 0x0001))
    await expect(readAll(path)).rejects.toThrow(code('SHEET_ENCRYPTED'))
  })

  it('refuses a password-protected workbook (an OLE2 file holding an EncryptedPackage)', async () => {
    const cfb = XLSX.CFB.utils.cfb_new()
    XLSX.CFB.utils.cfb_add(cfb, 'EncryptionInfo', Buffer.alloc(64, 1))
    XLSX.CFB.utils.cfb_add(cfb, 'EncryptedPackage', Buffer.alloc(4096, 7))
    const path = file('xlsx')
    await writeFile(path, XLSX.CFB.write(cfb, { type: 'buffer' }) as Buffer)
    expect(await detectFormat(path)).toBe('xls')
    await expect(readAll(path)).rejects.toThrow(code('SHEET_ENCRYPTED'))
  })

  it('refuses a workbook without sheets', async () => {
    const path = file()
    await writeTinyXlsx(path, { sheet: '', workbookXml: '<workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheets/></workbook>' })
    await expect(readAll(path)).rejects.toThrow(code('SHEET_NO_SHEETS'))
  })

  it('refuses a ZIP that is not a workbook, and files that are neither ZIP, OLE2 nor text', async () => {
    const path = file()
    await writeZip(path, { 'word/document.xml': '<w:document/>' })
    await expect(readAll(path)).rejects.toThrow(code('SHEET_UNSUPPORTED_FORMAT'))
    // Text is read as CSV (core/csv); bytes that are not text are refused.
    const binary = file('xlsx')
    await writeFile(binary, Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]))
    await expect(readAll(binary)).rejects.toThrow(code('SHEET_UNSUPPORTED_FORMAT'))
    const empty = file('xls')
    await writeFile(empty, '')
    await expect(readAll(empty)).rejects.toThrow(code('SHEET_UNSUPPORTED_FORMAT'))
  })

  it('refuses an OLE2 file that is not a workbook', async () => {
    const cfb = XLSX.CFB.utils.cfb_new()
    XLSX.CFB.utils.cfb_add(cfb, 'WordDocument', Buffer.alloc(512, 3))
    const path = file('xls')
    await writeFile(path, XLSX.CFB.write(cfb, { type: 'buffer' }) as Buffer)
    await expect(readAll(path)).rejects.toThrow(code('SHEET_UNSUPPORTED_FORMAT'))
  })

  it('refuses truncated archives as damaged', async () => {
    const path = file()
    await writeTinyXlsx(path, { sheet: Array.from({ length: 2000 }, (_, i) => `<row r="${i + 1}"><c><v>${i}</v></c></row>`).join('') })
    const bytes = await readFile(path)
    await writeFile(path, bytes.subarray(0, Math.floor(bytes.length / 2)))
    await expect(readAll(path)).rejects.toThrow(code('SHEET_CORRUPT'))
  })

  it('reads a cell of several MiB arriving over many chunks, then the cells after it', async () => {
    const long = 'ã'.repeat(3 << 20)
    const path = file()
    await writeTinyXlsx(path, { sheet: `<row r="1"><c t="inlineStr"><is><t>${long}</t></is></c><c><v>7</v></c></row><row r="2"><c><v>8</v></c></row>` })
    const rows: unknown[][] = []
    await readFirstSheet(path, (_r, cells) => { rows.push(cells) }, { maxInflatedBytes: 1 << 28 })
    expect(rows).toHaveLength(2)
    expect((rows[0]![0] as string).length).toBe(long.length)
    expect(rows[0]![1]).toBe(7)
    expect(rows[1]).toEqual([8])
  })

  it('refuses an element longer than any workbook writes, without rescanning it chunk after chunk', async () => {
    const path = file()
    // A tag that never ends: scanned again from its start on every chunk, 20 MiB took minutes.
    await writeTinyXlsx(path, { sheet: `<worksheet><x ${'a'.repeat(20 << 20)}` })
    await expect(readAll(path, 1 << 28)).rejects.toThrow(code('SHEET_CORRUPT'))
    await expect(readAll(path, 1 << 28)).rejects.toThrow(/longer than 16 MiB/)
  })

  it('refuses a row number beyond Excel\'s last row instead of storing it wrapped', async () => {
    const path = file()
    await writeTinyXlsx(path, { sheet: '<row r="1"><c><v>1</v></c></row><row r="3000000000"><c><v>2</v></c></row>' })
    await expect(readAll(path)).rejects.toThrow(/row 3000000000, beyond Excel's last row/)
    const slow = file()
    await writeTinyXlsx(slow, { sheet: '<row r="1"><c><v>1</v></c></row><row spans="1:1" r="1048577"><c><v>2</v></c></row>' })
    await expect(readAll(slow)).rejects.toThrow(code('SHEET_CORRUPT'))
  })

  it('keeps the search for an unclosed phonetic run inside its string item', async () => {
    // Each <rPh> without its end tag made the search run to the end of the whole part: 50k items took 16 s.
    const NS = 'http://schemas.openxmlformats.org/spreadsheetml/2006/main'
    const items = '<si><t>a</t><rPh>x</si>'.repeat(50_000)
    const path = file()
    await writeTinyXlsx(path, { sharedStrings: `<sst xmlns="${NS}">${items}<si><t>last</t></si></sst>`, sheet: '<row r="1"><c t="s"><v>50000</v></c><c t="s"><v>0</v></c></row>' })
    const rows: unknown[] = []
    await readFirstSheet(path, (_r, cells) => { rows.push(cells) }, { maxInflatedBytes: 1 << 28 })
    expect(rows).toEqual([['last', 'a']])
  })

  it('reads a million shared strings in bounded time', async () => {
    const strings = Array.from({ length: 1_000_000 }, (_, i) => `s${i}`)
    const path = file()
    await writeZip(path, tinyXlsxParts({ sharedStrings: strings, sheet: '<row r="1"><c t="s"><v>999999</v></c></row>' }))
    const rows: unknown[] = []
    const started = Date.now()
    await readFirstSheet(path, (_r, cells) => { rows.push(cells) }, { maxInflatedBytes: 1 << 28 })
    expect(rows).toEqual([['s999999']])
    // A hang catcher: the point is "not quadratic" (a million squared would not end), not a
    // speed figure (bench/ measures speed). 1.1 s at a load of 3, 2.7 s at 13.
    expect(Date.now() - started).toBeLessThan(40_000)
  }, 90_000)
})

const NS_MAIN = 'http://schemas.openxmlformats.org/spreadsheetml/2006/main'
const NS_REL = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships'
const rawEntries = (parts: Record<string, string | Buffer>): RawEntry[] => Object.entries(parts).map(([name, content]) => deflatedEntry(name, content))

/**
 * Issue 32, item 4: a 580 KB upload whose shared string table holds 14 million items
 * (`<si><t>a</t></si>`, 238 MB inflated). Decoding them all before the first row took
 * 13 to 32 s and 0.7 to 1 GB, even when the header was then refused.
 */
describe('a small XLSX with a huge shared string table', () => {
  const ITEMS = 14_000_000
  const hugeTable = (sheet: string, items = ITEMS): Buffer => rawZip([
    ...rawEntries(tinyXlsxParts({ sheet })),
    repeatedEntry('xl/sharedStrings.xml', `<sst xmlns="${NS_MAIN}"><si><t>id</t></si><si><t>nome</t></si>`, '<si><t>a</t></si>', items, '<si><t>last</t></si></sst>')
  ])

  it('reads the header having decoded only the items it names, and inflated a sliver of the table', async () => {
    const path = file()
    const bytes = hugeTable('<row r="1"><c t="s"><v>0</v></c><c t="s"><v>1</v></c></row><row r="2"><c t="s"><v>2</v></c></row>')
    expect(bytes.length).toBeLessThan(700_000)
    await writeFile(path, bytes)
    const rows: unknown[] = []
    // The ledger throws at a header it refuses; stopping after it is the same for the reader.
    const summary = await readFirstSheet(path, (_r, cells) => { rows.push(cells); return false }, { maxInflatedBytes: 1 << 30 })
    expect(rows).toEqual([['id', 'nome']])
    expect(summary.sharedStrings?.decoded).toBe(2)
    expect(summary.sharedStrings?.inflatedBytes).toBeLessThan(4 << 20)
  })

  it('finds an item far past what the sheet can name without decoding the items before it', async () => {
    const items = 4_000_000
    const path = file()
    await writeFile(path, hugeTable(`<row r="1"><c t="s"><v>0</v></c><c t="s"><v>${items + 2}</v></c><c t="s"><v>5000</v></c><c t="s"><v>${items + 2}</v></c></row>`, items))
    const rows: unknown[] = []
    const started = Date.now()
    const summary = await readFirstSheet(path, (_r, cells) => { rows.push(cells) }, { maxInflatedBytes: 1 << 30 })
    expect(rows).toEqual([['id', 'last', 'a', 'last']])
    // Item 0 in order, the other two found by walking the table: three strings, not 4 million.
    expect(summary.sharedStrings?.decoded).toBe(3)
    // A hang catcher, not a speed figure: 2.2 s at a load of 14 (14 million items: 8 to 11 s
    // in this file's run; decoding all 14 million took 19 s alone before).
    expect(Date.now() - started).toBeLessThan(60_000)
  }, 120_000)

  it('still refuses a cell naming an item the table does not have', async () => {
    const path = file()
    await writeFile(path, hugeTable('<row r="1"><c t="s"><v>1000003</v></c></row>', 1_000_000))
    await expect(readAll(path, 1 << 30)).rejects.toThrow(/shared string 1000003, which the workbook does not have/)
  })

  it('decodes a table streamed in pieces the same as one read whole, whatever order the cells name its items in', async () => {
    // Past 16 MiB inflated, so streamed; items named out of order, some twice, the last one first.
    const strings = Array.from({ length: 400_000 }, (_, i) => `texto ${i} ${'x'.repeat(i % 40)}`)
    const order = [399_999, 0, 1, 123_456, 2, 399_998, 123_456, 7, 250_000, 0]
    const sheet = order.map((index, r) => `<row r="${r + 1}"><c t="s"><v>${index}</v></c></row>`).join('')
    const path = file()
    await writeZip(path, tinyXlsxParts({ sharedStrings: strings, sheet }))
    const rows: unknown[] = []
    for (const engine of ['native-handle', 'stream'] as const) {
      rows.length = 0
      await readFirstSheet(path, (_r, cells) => { rows.push(cells[0]) }, { maxInflatedBytes: 1 << 30, inflateEngine: engine })
      expect(rows).toEqual(order.map((i) => strings[i]))
    }
  }, 120_000)
})

/**
 * Issue 32, item 5: archives that programs read differently. LibreOffice 7.4 and openpyxl
 * 3.0 read 100 from these, or refuse them, or read nothing; we read 999. Of a workbook whose
 * first sheet is hidden, Excel shows the visible one; we read the hidden one.
 */
describe('archives that read differently in different programs', () => {
  const sheetXml = (v: number): string => `<?xml version="1.0" encoding="UTF-8"?><worksheet xmlns="${NS_MAIN}"><sheetData><row r="1"><c r="A1"><v>${v}</v></c></row></sheetData></worksheet>`
  const twoSheets = (first: string, second: string): Record<string, string> => ({
    ...tinyXlsxParts({ sheet: '' }),
    'xl/workbook.xml': `<?xml version="1.0" encoding="UTF-8"?><workbook xmlns="${NS_MAIN}" xmlns:r="${NS_REL}"><sheets>${first.replace('/>', ' r:id="rId1"/>')}${second.replace('/>', ' r:id="rId4"/>')}</sheets></workbook>`,
    'xl/_rels/workbook.xml.rels': `<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="${NS_REL}/worksheet" Target="worksheets/sheet1.xml"/><Relationship Id="rId4" Type="${NS_REL}/worksheet" Target="worksheets/sheet2.xml"/></Relationships>`
  })
  const firstCells = async (path: string): Promise<unknown> => {
    const rows: unknown[] = []
    await readFirstSheet(path, (_r, cells) => { rows.push(cells) }, { maxInflatedBytes: 1 << 24 })
    return rows
  }

  it('refuses two entries whose names differ only in case', async () => {
    const path = file()
    await writeZip(path, { ...tinyXlsxParts({ sheet: '' }), 'xl/worksheets/sheet1.xml': sheetXml(100), 'XL/WORKSHEETS/SHEET1.XML': sheetXml(999) })
    await expect(readAll(path)).rejects.toThrow(code('XLSX_AMBIGUOUS_ARCHIVE'))
    await expect(readAll(path)).rejects.toThrow(/"xl\/worksheets\/sheet1.xml" and "XL\/WORKSHEETS\/SHEET1.XML"/)
  })

  it('refuses a central directory whose names are swapped against the local headers', async () => {
    const parts = { ...twoSheets('<sheet name="A" sheetId="1"/>', '<sheet name="B" sheetId="2"/>'), 'xl/worksheets/sheet1.xml': sheetXml(100), 'xl/worksheets/sheet2.xml': sheetXml(999) }
    const honest = file()
    await writeFile(honest, rawZip(rawEntries(parts)))
    expect(await firstCells(honest)).toEqual([[100]])
    const swap: Record<string, string> = { 'xl/worksheets/sheet1.xml': 'xl/worksheets/sheet2.xml', 'xl/worksheets/sheet2.xml': 'xl/worksheets/sheet1.xml' }
    const path = file()
    await writeFile(path, rawZip(rawEntries(parts).map((e) => ({ ...e, localName: e.name, name: swap[e.name] ?? e.name }))))
    await expect(readAll(path)).rejects.toThrow(code('XLSX_AMBIGUOUS_ARCHIVE'))
    await expect(readAll(path)).rejects.toThrow(/directory calls "xl\/worksheets\/sheet\d.xml" is named "xl\/worksheets\/sheet\d.xml" in its local header/)
  })

  it('refuses a local header the central directory does not list, and sizes that disagree', async () => {
    const parts = { ...tinyXlsxParts({ sheet: '<row r="1"><c><v>100</v></c></row>' }) }
    // A streaming unzipper meets the unlisted sheet first and takes it.
    const hidden = file()
    await writeFile(hidden, rawZip([{ ...deflatedEntry('xl/worksheets/sheet1.xml', sheetXml(999)), unlisted: true }, ...rawEntries(parts)]))
    await expect(readAll(hidden)).rejects.toThrow(code('XLSX_AMBIGUOUS_ARCHIVE'))
    await expect(readAll(hidden)).rejects.toThrow(/local header at byte 0 that its central directory does not list/)
    const trailing = file()
    await writeFile(trailing, rawZip([...rawEntries(parts), { ...deflatedEntry('xl/worksheets/sheet1.xml', sheetXml(999)), unlisted: true }]))
    await expect(readAll(trailing)).rejects.toThrow(code('XLSX_AMBIGUOUS_ARCHIVE'))
    const sized = file()
    await writeFile(sized, patchCentral(rawZip(rawEntries(parts)), 20, 1, 'xl/worksheets/sheet1.xml'))
    await expect(readAll(sized)).rejects.toThrow(/one size in the directory and another in its local header/)
  })

  it.each(['veryHidden', 'hidden'])('reads the first visible sheet when the first one is %s', async (state) => {
    const path = file()
    await writeZip(path, { ...twoSheets(`<sheet name="Oculta" sheetId="1" state="${state}"/>`, '<sheet name="Razao" sheetId="2"/>'), 'xl/worksheets/sheet1.xml': sheetXml(999), 'xl/worksheets/sheet2.xml': sheetXml(100) })
    const rows: unknown[] = []
    const summary = await readFirstSheet(path, (_r, cells) => { rows.push(cells) }, { maxInflatedBytes: 1 << 24 })
    expect(rows).toEqual([[100]])
    expect(summary.sheetName).toBe('Razao')
  })

  it('refuses a workbook whose every sheet is hidden, naming them', async () => {
    const path = file()
    await writeZip(path, { ...twoSheets('<sheet name="Oculta" sheetId="1" state="veryHidden"/>', '<sheet name="Outra" sheetId="2" state="hidden"/>'), 'xl/worksheets/sheet1.xml': sheetXml(999), 'xl/worksheets/sheet2.xml': sheetXml(100) })
    await expect(readAll(path)).rejects.toThrow(code('SHEET_NO_SHEETS'))
    await expect(readAll(path)).rejects.toThrow(/Every sheet of the workbook is hidden \("Oculta", "Outra"\)/)
  })

  it('reads the first visible sheet of an XLS workbook too', async () => {
    const book = XLSX.utils.book_new()
    XLSX.utils.book_append_sheet(book, XLSX.utils.aoa_to_sheet([[999]]), 'Oculta')
    XLSX.utils.book_append_sheet(book, XLSX.utils.aoa_to_sheet([[100]]), 'Razao')
    book.Workbook = { Sheets: [{ name: 'Oculta', Hidden: 2 }, { name: 'Razao', Hidden: 0 }] }
    const path = file('xls')
    await writeFile(path, XLSX.write(book, { bookType: 'biff8', type: 'buffer' }) as Buffer)
    const rows: unknown[] = []
    const summary = await readFirstSheet(path, (_r, cells) => { rows.push(cells) }, { maxInflatedBytes: 1 << 24 })
    expect(rows).toEqual([[100]])
    expect(summary.sheetName).toBe('Razao')
  })
})

/**
 * A 0.46 MB upload whose styles part inflates to 190 MB of `<xf numFmtId="14"/>` (10 million
 * cell formats): read whole and walked with a general XML parser, it cost 47 s of CPU and
 * 1.1 GB before the first row was read (1 million: 7 s and 122 MB more).
 */
describe('a small XLSX whose metadata parts list millions of entries', () => {
  const stylesEntry = (head: string, unit: string, times: number, tail: string): RawEntry => repeatedEntry('xl/styles.xml', head, unit, times, tail)
  const withStyles = (sheet: string, styles: RawEntry): Buffer => rawZip([...rawEntries(tinyXlsxParts({ sheet })), styles])
  const cells = async (path: string): Promise<unknown[]> => {
    const rows: unknown[] = []
    await readFirstSheet(path, (_r, c) => { rows.push(c) }, { maxInflatedBytes: 1 << 30 })
    return rows
  }

  it('refuses ten million cell formats having inflated only the first few megabytes of them', async () => {
    const path = file()
    await writeFile(path, withStyles('<row r="1"><c s="1"><v>45000</v></c></row>',
      stylesEntry(`<styleSheet xmlns="${NS_MAIN}"><cellXfs count="10000000">`, '<xf numFmtId="14"/>', 10_000_000, '</cellXfs></styleSheet>')))
    expect((await readFile(path)).length).toBeLessThan(600_000)
    const started = Date.now()
    await expect(readAll(path, 1 << 30)).rejects.toThrow(code('SHEET_CORRUPT'))
    // A hang catcher, not a speed figure: 0.23 s at a load of 21 (47 s before).
    expect(Date.now() - started).toBeLessThan(20_000)
    await expect(readAll(path, 1 << 30)).rejects.toThrow(/styles list more than 262,144 cell formats; Excel keeps at most about 65,000/)
    // What the refusal cost: the reader stops inflating the part at the cap. Measured 5.2 MB
    // (262,145 entries of 19 bytes, and the chunk in hand); the whole part is 190 MB, which
    // the reader used to hold, then copy into a string, then walk.
    const zip = await ZipArchive.open(path, { maxInflatedBytes: 1 << 30 })
    try {
      await expect(loadWorkbookParts(zip, DEFAULT_MAX_METADATA_BYTES)).rejects.toThrow(code('SHEET_CORRUPT'))
      expect(zip.inflatedBytes).toBeLessThan(16 << 20)
      expect(zip.inflatedBytes).toBeGreaterThan(MAX_CELL_FORMATS * 19)
    } finally {
      zip.close()
    }
  }, 60_000)

  it('reads a workbook listing exactly as many cell formats as the cap allows, and refuses one more', async () => {
    const numFmts = '<numFmts count="1"><numFmt numFmtId="164" formatCode="dd/mm/yyyy"/></numFmts>'
    const sheet = `<row r="1"><c s="0"><v>45000</v></c><c s="${MAX_CELL_FORMATS - 1}"><v>45000</v></c></row>`
    const atCap = file()
    await writeFile(atCap, withStyles(sheet, stylesEntry(`<styleSheet xmlns="${NS_MAIN}">${numFmts}<cellXfs count="${MAX_CELL_FORMATS}">`, '<xf numFmtId="0"/>', MAX_CELL_FORMATS - 1, '<xf numFmtId="164"/></cellXfs></styleSheet>')))
    expect(await cells(atCap)).toEqual([[45000, new DateCell(45000)]])
    const overCap = file()
    await writeFile(overCap, withStyles(sheet, stylesEntry(`<styleSheet xmlns="${NS_MAIN}">${numFmts}<cellXfs>`, '<xf numFmtId="0"/>', MAX_CELL_FORMATS, '<xf numFmtId="164"/></cellXfs></styleSheet>')))
    await expect(readAll(overCap, 1 << 30)).rejects.toThrow(/more than 262,144 cell formats/)
  }, 60_000)

  it.each(['', 'x:'])('finds the date styles of a styles part read in many chunks, elements prefixed with "%s"', async (p) => {
    const declare = p === '' ? 'xmlns' : `xmlns:${p.slice(0, -1)}`
    // 20 MB of fonts ahead of the cell formats: the part is read as it inflates, in chunks
    // that cut tags anywhere. Cell formats outside SpreadsheetML or in an extension list do not count.
    const head = `<?xml version="1.0" encoding="UTF-8"?>\n<!-- written by hand --><${p}styleSheet ${declare}="${NS_MAIN}" xmlns:o="urn:other">` +
      `<${p}numFmts count="1"><${p}numFmt numFmtId="164" formatCode="dd/mm/yyyy"/></${p}numFmts><o:cellXfs><o:xf numFmtId="14"/></o:cellXfs><${p}fonts>`
    const font = `<${p}font><${p}sz val="11"/><${p}name val="Calibri &amp; &#x3e; &gt;"/></${p}font>`
    const tail = `</${p}fonts><${p}cellXfs count="3"><${p}xf numFmtId="0"/><${p}xf numFmtId="164" applyNumberFormat="1"><${p}alignment horizontal="left"/></${p}xf><${p}xf numFmtId="14"/></${p}cellXfs>` +
      `<${p}dxfs count="1"><${p}dxf><${p}numFmt numFmtId="164" formatCode="#,##0.00"/></${p}dxf></${p}dxfs>` +
      `<${p}extLst><${p}ext uri="{x}" xmlns:x14="http://schemas.microsoft.com/office/spreadsheetml/2009/9/main"><x14:cellXfs><x14:xf numFmtId="0"/></x14:cellXfs></${p}ext></${p}extLst></${p}styleSheet>`
    const styles = stylesEntry(head, font, 300_000, tail)
    expect(styles.uncompressedSize).toBeGreaterThan(16 << 20)
    const path = file()
    await writeFile(path, withStyles('<row r="1"><c s="0"><v>45000</v></c><c s="1"><v>45000</v></c><c s="2"><v>45001</v></c></row>', styles))
    expect(await cells(path)).toEqual([[45000, new DateCell(45000), new DateCell(45001)]])
  }, 60_000)

  it('refuses metadata parts that are not well-formed, or built to make the scan carry a tag from chunk to chunk', async () => {
    const styles = (xml: string): TinyWorkbook => ({ sheet: '<row r="1"><c><v>1</v></c></row>', styles: `<styleSheet xmlns="${NS_MAIN}">${xml}` })
    for (const [wb, refusal] of [
      [styles('<cellXfs><xf numFmtId="14"/></cellXfs>'), /"xl\/styles.xml" is not well-formed XML \(it ends inside an element\)/],
      [styles('<cellXfs></numFmts></styleSheet>'), /the end tag <\/numFmts> does not match/],
      [styles('<cellXfs><xf numFmtId=14/></cellXfs></styleSheet>'), /an unquoted attribute value/],
      [styles('</styleSheet><styleSheet/>'), /more than one root element/],
      [styles(`<a b="${'x'.repeat(1 << 20)}"/></styleSheet>`), /a tag or comment longer than 1 MiB/],
      [styles(`${'<a>'.repeat(300)}${'</a>'.repeat(300)}</styleSheet>`), /nests elements more than 256 deep/],
      [{ sheet: '', workbookXml: `<workbook xmlns="${NS_MAIN}"><sheets><sheet name="a"></sheets></workbook>` }, /"xl\/workbook.xml" is not well-formed XML/]
    ] as const) {
      const path = file()
      await writeTinyXlsx(path, wb)
      await expect(readAll(path), String(refusal)).rejects.toThrow(code('SHEET_CORRUPT'))
      await expect(readAll(path)).rejects.toThrow(refusal)
    }
    const dtd = file()
    await writeTinyXlsx(dtd, styles('</styleSheet>'.replace('</styleSheet>', '<!DOCTYPE x [<!ENTITY a "a">]></styleSheet>')))
    await expect(readAll(dtd)).rejects.toThrow(code('XLSX_DTD_FORBIDDEN'))
    // An attribute value that never ends, 200 MB of it: refused once the carried tag passes
    // 1 MiB, not scanned again for every chunk that follows.
    const endless = file()
    await writeFile(endless, withStyles('<row r="1"><c><v>1</v></c></row>', stylesEntry(`<styleSheet xmlns="${NS_MAIN}"><cellXfs><xf numFmtId="`, '1', 200 << 20, '"/></cellXfs></styleSheet>')))
    await expect(readAll(endless, 1 << 30)).rejects.toThrow(/a tag or comment longer than 1 MiB/)
    const zip = await ZipArchive.open(endless, { maxInflatedBytes: 1 << 30 })
    try {
      await expect(loadWorkbookParts(zip, DEFAULT_MAX_METADATA_BYTES)).rejects.toThrow(code('SHEET_CORRUPT'))
      expect(zip.inflatedBytes).toBeLessThan(8 << 20)
    } finally {
      zip.close()
    }
  }, 60_000)

  it('refuses a workbook listing more sheets than the cap, and finds what it needs among millions of names and relationships', async () => {
    const razao = '<sheet name="Razao" sheetId="1" r:id="rId1"/>'
    const parts = tinyXlsxParts({ sheet: '<row r="1"><c><v>7</v></c></row>' })
    delete parts['xl/workbook.xml']
    delete parts['xl/_rels/workbook.xml.rels']
    const rels = (times: number): RawEntry => repeatedEntry('xl/_rels/workbook.xml.rels', '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">',
      `<Relationship Id="rIdX" Type="${NS_REL}/customXml" Target="../customXml/item1.xml"/>`, times,
      `<Relationship Id="rId1" Type="${NS_REL}/worksheet" Target="worksheets/sheet1.xml"/></Relationships>`)
    const many = file()
    await writeFile(many, rawZip([...rawEntries(parts), rels(0),
      repeatedEntry('xl/workbook.xml', `<workbook xmlns="${NS_MAIN}" xmlns:r="${NS_REL}"><sheets>${razao}`, '<sheet name="s" sheetId="2" r:id="rId2"/>', MAX_SHEETS, '</sheets></workbook>')]))
    await expect(readAll(many, 1 << 30)).rejects.toThrow(code('SHEET_CORRUPT'))
    await expect(readAll(many, 1 << 30)).rejects.toThrow(/lists more than 262,144 sheets/)
    // A million defined names and 1.5 million relationships (225 MB) to parts the reader never opens.
    const names = repeatedEntry('xl/workbook.xml', `<workbook xmlns="${NS_MAIN}" xmlns:r="${NS_REL}"><sheets>${razao}</sheets><definedNames>`,
      '<definedName name="x">Razao!$A$1</definedName>', 1_000_000, '</definedNames></workbook>')
    const crowded = file()
    await writeFile(crowded, rawZip([...rawEntries(parts), names, rels(1_500_000)]))
    const started = Date.now()
    expect(await cells(crowded)).toEqual([[7]])
    // A hang catcher: 1.0 s at a load of 21.
    expect(Date.now() - started).toBeLessThan(30_000)
  }, 120_000)
})
