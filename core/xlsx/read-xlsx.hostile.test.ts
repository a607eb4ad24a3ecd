import { readFile, writeFile, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import XLSX from 'xlsx'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { tinyXlsxParts, writeTinyXlsx, writeZip } from '../../fixtures/tiny-xlsx.js'
import type { TinyWorkbook } from '../../fixtures/tiny-xlsx.js'
import { detectFormat } from './detect.js'
import { readFirstSheet } from './read-first-sheet.js'
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
