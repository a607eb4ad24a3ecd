/**
 * Reading a sheet while its upload arrives must give exactly the ordinary reader's
 * rows, or decline (EarlyReadUnavailable) and leave the answer to it: never a
 * different answer, never an answer for a file the ordinary reader refuses.
 * The upload is played into a real file by an ArrivalWriter, in pieces, as the
 * server writes one.
 */
import { closeSync, createWriteStream, openSync, readFileSync, writeSync } from 'node:fs'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { basename, join } from 'node:path'
import yazl from 'yazl'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildCorpus } from '../../fixtures/corpus/build.js'
import { generateLedger } from '../../fixtures/ledger/generate.js'
import { tinyXlsxParts, writeZip } from '../../fixtures/tiny-xlsx.js'
import type { TinyWorkbook } from '../../fixtures/tiny-xlsx.js'
import { ArrivalReader, ArrivalWriter } from '../files/arrival.js'
import { DateCell, ErrorCell } from './cells.js'
import type { Cell } from './cells.js'
import { EarlyReadUnavailable, readXlsxAsItArrives } from './read-arriving.js'
import { readXlsxFirstSheet } from './read-xlsx.js'

const LIMIT = 1 << 26
let dir: string
let n = 0
const file = (): string => join(dir, `f-${n++}.xlsx`)

beforeAll(async () => { dir = await mkdtemp(join(tmpdir(), 'razao-arriving-')) })
afterAll(async () => { await rm(dir, { recursive: true, force: true }) })

/** A tiny workbook with its sheet as the last part, the order the arriving read can follow. */
async function writeSheetLast (path: string, wb: TinyWorkbook): Promise<Record<string, string | Buffer>> {
  const { [wb.sheetPath ?? 'xl/worksheets/sheet1.xml']: sheet, ...rest } = tinyXlsxParts({ styles: { cellXfs: [0] }, sharedStrings: [], ...wb })
  const parts = { ...rest, [wb.sheetPath ?? 'xl/worksheets/sheet1.xml']: sheet! }
  await writeZip(path, parts)
  return parts
}

type Row = [number, unknown[]]
const plain = (cell: Cell): unknown => cell instanceof DateCell ? { date: cell.serial } : cell instanceof ErrorCell ? { error: cell.text } : cell

async function ordinaryRows (path: string): Promise<Row[]> {
  const rows: Row[] = []
  await readXlsxFirstSheet(path, (r, cells) => { rows.push([r, cells.map(plain)]) }, { maxInflatedBytes: LIMIT })
  return rows
}

interface Playback {
  /** Bytes played before stopping; the whole file when omitted. */
  stopAt?: number
  /** What happens at stopAt: the upload fails, completes short, or just stalls. */
  then?: 'fail' | 'complete' | 'stall'
  chunkBytes?: number
  /** Pause between pieces, as a network would leave. */
  pauseMs?: number
}

/**
 * Plays `source` into a new file piece by piece through an ArrivalWriter while
 * readXlsxAsItArrives reads it. Resolves with the outcome and how many rows had
 * been read when the last byte landed.
 */
async function readAlong (source: string, playback: Playback = {}, maxIdleMs = 5_000): Promise<{ rows?: Row[], declined?: string, rowsBeforeComplete: number }> {
  const bytes = readFileSync(source)
  const target = file()
  const fd = openSync(target, 'w')
  const writer = new ArrivalWriter()
  const rows: Row[] = []
  const reading = readXlsxAsItArrives(target, (r, cells) => { rows.push([r, cells.map(plain)]) }, {
    maxInflatedBytes: LIMIT,
    arrival: new ArrivalReader(writer.shared, { maxIdleMs })
  }).then(() => undefined, (err: unknown) => err)
  const end = playback.stopAt ?? bytes.length
  const piece = playback.chunkBytes ?? 64 * 1024
  for (let at = 0; at < end; at += piece) {
    writer.advance(writeSync(fd, bytes, at, Math.min(piece, end - at), at))
    await new Promise((resolve) => setTimeout(resolve, playback.pauseMs ?? 0))
  }
  closeSync(fd)
  const rowsBeforeComplete = rows.length
  if (playback.stopAt === undefined || playback.then === 'complete') writer.complete()
  else if (playback.then === 'fail') writer.fail()
  const err = await reading
  if (err === undefined) return { rows, rowsBeforeComplete }
  if (err instanceof EarlyReadUnavailable) return { declined: err.reason, rowsBeforeComplete }
  throw err
}

describe('readXlsxAsItArrives', () => {
  it('gives the ordinary reader\'s rows for files of every writer, or declines', async () => {
    const corpus = await buildCorpus(join(dir, 'corpus'), { openpyxl: 'samples' })
    const ledger = join(dir, 'ledger.xlsx')
    await generateLedger({ path: ledger, format: 'xlsx', rows: 2_000, seed: 5, unbalancedGroups: 2, textAmountEvery: 11, dateStyle: 'mixed', extraColumns: true })
    const sized = join(dir, 'sized.xlsx')
    await writeSheetLast(sized, { sharedStrings: ['a', 'b'], styles: { cellXfs: [0, 14] }, sheet: '<row r="1"><c t="s"><v>1</v></c><c s="1"><v>45000</v></c></row><row r="3"><c><v>2.5</v></c></row>' })
    const outcomes: Record<string, string> = {}
    for (const path of [...corpus, ledger, sized]) {
      const along = await readAlong(path, { chunkBytes: 4096 })
      if (along.rows !== undefined) {
        expect(along.rows, basename(path)).toEqual(await ordinaryRows(path))
        outcomes[basename(path)] = 'read along'
      } else {
        outcomes[basename(path)] = along.declined!
      }
    }
    if (process.env.SHOW_OUTCOMES !== undefined) console.log(outcomes)
    // Our generator streams the sheet after its shared strings, sized by data descriptors (yazl);
    // the tiny workbooks have their sizes in the local headers. Both are read along.
    expect(outcomes['ledger.xlsx']).toBe('read along')
    expect(outcomes['sized.xlsx']).toBe('read along')
    // The writers that put the shared strings after the sheet are declined for that reason.
    const declinedForOrder = Object.values(outcomes).filter((o) => /is not before the sheet/.test(o))
    expect(declinedForOrder.length).toBeGreaterThan(0)
  })

  it('reads rows while the upload is still arriving', async () => {
    const ledger = join(dir, 'slow-ledger.xlsx')
    await generateLedger({ path: ledger, format: 'xlsx', rows: 20_000, seed: 9 })
    const along = await readAlong(ledger, { chunkBytes: 32 * 1024, pauseMs: 2 })
    expect(along.rows).toEqual(await ordinaryRows(ledger))
    expect(along.rowsBeforeComplete).toBeGreaterThan(10_000)
  })

  it('declines a workbook whose shared strings come after the sheet', async () => {
    const wb: TinyWorkbook = { sharedStrings: ['x'], styles: { cellXfs: [0] }, sheet: '<row r="1"><c t="s"><v>0</v></c></row>' }
    const { 'xl/sharedStrings.xml': sst, 'xl/styles.xml': styles, 'xl/worksheets/sheet1.xml': sheet, ...rest } = tinyXlsxParts(wb)
    const path = file()
    await writeZip(path, { ...rest, 'xl/styles.xml': styles!, 'xl/worksheets/sheet1.xml': sheet!, 'xl/sharedStrings.xml': sst! })
    expect(await ordinaryRows(path)).toEqual([[1, ['x']]])
    expect((await readAlong(path)).declined).toMatch(/sharedStrings.xml" is not before the sheet/)
  })

  it('declines when the directory does not describe a part as its local header does, where the ordinary reader refuses', async () => {
    const path = file()
    await writeSheetLast(path, { sheet: `<row r="1"><c><v>1</v></c></row>${' '.repeat(100_000)}` })
    const zip = await readFile(path)
    // The sheet's uncompressed size in its central-directory header (APPNOTE 4.3.12, offset 24).
    let at = zip.indexOf('PK\x01\x02')
    while (zip.toString('utf8', at + 46, at + 46 + zip.readUInt16LE(at + 28)) !== 'xl/worksheets/sheet1.xml') at = zip.indexOf('PK\x01\x02', at + 4)
    zip.writeUInt32LE(1000, at + 24)
    await writeFile(path, zip)
    await expect(ordinaryRows(path)).rejects.toThrow(expect.objectContaining({ code: 'XLSX_ZIP_BOMB' }))
    expect((await readAlong(path)).declined).toMatch(/directory does not describe "xl\/worksheets\/sheet1.xml"/)
  })

  it('declines a sheet whose name appears twice: the directory names the last one, the walk finds the first', async () => {
    const path = file()
    const parts = await writeSheetLast(file(), { sheet: '<row r="1"><c><v>2</v></c></row>' })
    await new Promise<void>((resolve, reject) => {
      const zip = new yazl.ZipFile()
      for (const [name, content] of Object.entries(parts)) {
        if (name === 'xl/worksheets/sheet1.xml') zip.addBuffer(Buffer.from(String(content).replace('<v>2</v>', '<v>666</v>')), name)
        zip.addBuffer(Buffer.from(content), name)
      }
      zip.end()
      zip.outputStream.pipe(createWriteStream(path)).on('finish', resolve).on('error', reject)
    })
    expect(await ordinaryRows(path)).toEqual([[1, [2]]])
    const along = await readAlong(path)
    expect(along.rows).toBeUndefined()
    expect(along.declined).toMatch(/directory does not describe/)
  })

  it('stops when the upload fails, when it ends short, and when it stalls past the idle allowance', async () => {
    const ledger = join(dir, 'stop-ledger.xlsx')
    await generateLedger({ path: ledger, format: 'xlsx', rows: 5_000, seed: 4 })
    const half = Math.floor(readFileSync(ledger).length / 2)
    expect((await readAlong(ledger, { stopAt: half, then: 'fail' })).declined).toMatch(/upload failed/)
    expect((await readAlong(ledger, { stopAt: half, then: 'complete' })).declined).toMatch(/ended before|shorter|not found/)
    const started = performance.now()
    expect((await readAlong(ledger, { stopAt: half, then: 'stall' }, 100)).declined).toMatch(/too slowly/)
    expect(performance.now() - started).toBeLessThan(5_000)
  })
})
