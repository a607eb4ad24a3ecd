/**
 * The peers, each reading every row and touching every cell like our reader's
 * consumers do. The SAX parsers get the sheet XML from our own ZipArchive, so
 * their rows differ from the inflate-only row by parsing alone. Each library is
 * imported only by its own pass, so a child's RSS holds one library's code.
 */
import { StringDecoder } from 'node:string_decoder'
import type { CellObject } from 'xlsx'
import { MAX_INFLATED_BYTES, importDist, type Zip } from './dist.js'
import type { Pass, SheetTarget } from './protocol.js'

type DenseSheet = Array<Array<CellObject | undefined> | undefined>

/** SheetJS builds the whole workbook in memory first: that is the point of comparing with it. */
export async function sheetjsPass (job: SheetTarget): Promise<Pass> {
  const { default: XLSX } = await import('xlsx')
  return async () => {
    const book = XLSX.readFile(job.file, { dense: true })
    const name = book.SheetNames[0]
    // In 0.18 a dense sheet is itself the array of rows (later versions moved it to "!data").
    const sheet = (name === undefined ? [] : book.Sheets[name]) as unknown as DenseSheet
    let rows = 0
    let cells = 0
    for (const row of sheet) {
      if (row === undefined) continue
      rows++
      for (const cell of row) if (cell?.v !== undefined) cells++
    }
    return { rows, cells, xmlBytes: 0 }
  }
}

/**
 * styles: 'cache' so ExcelJS, like our reader, knows which numbers are dates;
 * hyperlinks and non-sheet entries are skipped as our reader skips them.
 */
export async function exceljsPass (job: SheetTarget): Promise<Pass> {
  const { default: ExcelJS } = await import('exceljs')
  return async () => {
    const workbook = new ExcelJS.stream.xlsx.WorkbookReader(job.file, {
      sharedStrings: 'cache', worksheets: 'emit', styles: 'cache', hyperlinks: 'ignore', entries: 'ignore'
    })
    let rows = 0
    let cells = 0
    for await (const sheet of workbook) {
      for await (const row of sheet) {
        rows++
        row.eachCell(() => { cells++ })
      }
    }
    return { rows, cells, xmlBytes: 0 }
  }
}

interface TagCounter {
  rows: number
  cells: number
}

/** Feeds decoded text of the inflated sheet to `write`, as a SAX pipeline would. */
async function feedSheetText (job: SheetTarget, ZipArchive: Zip['ZipArchive'], write: (text: string) => void): Promise<number> {
  const zip = await ZipArchive.open(job.file, { maxInflatedBytes: MAX_INFLATED_BYTES })
  // A chunk may end inside a multi-byte character; the decoder carries it over.
  const decoder = new StringDecoder('utf8')
  let xmlBytes = 0
  try {
    for await (const chunk of zip.streamPart(job.sheetPart)) {
      xmlBytes += chunk.length
      write(decoder.write(chunk))
    }
    write(decoder.end())
  } finally {
    zip.close()
  }
  return xmlBytes
}

function countTag (counter: TagCounter, name: string): void {
  if (name === 'row') counter.rows++
  else if (name === 'c') counter.cells++
}

export async function saxPass (job: SheetTarget): Promise<Pass> {
  const { ZipArchive } = await importDist<Zip>(job.distDir, 'core/xlsx/zip.js')
  const { default: sax } = await import('sax')
  return async () => {
    const counter: TagCounter = { rows: 0, cells: 0 }
    const parser = sax.parser(true)
    parser.onopentag = (tag) => { countTag(counter, tag.name) }
    parser.onerror = (err) => { throw err }
    const xmlBytes = await feedSheetText(job, ZipArchive, (text) => { parser.write(text) })
    parser.close()
    return { ...counter, xmlBytes }
  }
}

export async function saxesPass (job: SheetTarget): Promise<Pass> {
  const { ZipArchive } = await importDist<Zip>(job.distDir, 'core/xlsx/zip.js')
  const { SaxesParser } = await import('saxes')
  return async () => {
    const counter: TagCounter = { rows: 0, cells: 0 }
    const parser = new SaxesParser()
    parser.on('opentag', (tag) => { countTag(counter, tag.name) })
    parser.on('error', (err) => { throw err })
    const xmlBytes = await feedSheetText(job, ZipArchive, (text) => { parser.write(text) })
    parser.close()
    return { ...counter, xmlBytes }
  }
}
