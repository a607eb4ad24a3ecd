/**
 * Hostile CSVs: a gigabyte on one line, a quote never closed, NUL bytes, encodings that
 * change mid-file, a line of a million separators. Each is refused with the line it is
 * on, after reading a bounded number of bytes: the sources count what the reader pulled,
 * and a reader that buffered the line would pull it all.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { REQUIRED_COLUMNS } from '../ledger/index.js'
import { DEFAULT_CSV_LIMITS, readCsv, readCsvChunks } from './index.js'

let dir: string
beforeAll(async () => { dir = await mkdtemp(join(tmpdir(), 'razao-csv-hostile-')) })
afterAll(async () => { await rm(dir, { recursive: true, force: true }) })

const GIB = 1024 ** 3
const CHUNK = DEFAULT_CSV_LIMITS.chunkBytes
const HEADER = `${REQUIRED_COLUMNS.join(';')}\r\n`
const LINE = (i: number): string => `${i};10;01/02/2024;3001;Conta;77;Plano;AJUSTE;1.2.3;;10,00\r\n`
const code = (c: string, message: RegExp) => expect.objectContaining({ code: c, message: expect.stringMatching(message) })

/**
 * `head`, then `filler` repeated up to `total` bytes, made as the reader asks for it.
 * `pulled` counts the bytes handed over.
 */
function generated (head: string, filler: Buffer, total: number): { chunks: AsyncGenerator<Uint8Array>, pulled: () => number } {
  let pulled = 0
  const block = Buffer.alloc(CHUNK, filler)
  async function * chunks (): AsyncGenerator<Uint8Array> {
    const first = Buffer.from(head)
    pulled += first.length
    yield first
    while (pulled < total) {
      const piece = block.subarray(0, Math.min(CHUNK, total - pulled))
      pulled += piece.length
      yield piece
    }
  }
  return { chunks: chunks(), pulled: () => pulled }
}

async function readGenerated (source: { chunks: AsyncGenerator<Uint8Array> }, total: number): Promise<number> {
  let rows = 0
  await readCsvChunks(source.chunks, total, () => { rows++ }, { headerColumns: REQUIRED_COLUMNS })
  return rows
}

describe('a 1 GiB single line', () => {
  it('as the first line: refused once the line passes the bound, having read 4 MiB of it', async () => {
    const source = generated('id;', Buffer.from('x'), GIB)
    await expect(readGenerated(source, GIB)).rejects.toThrow(code('CSV_MALFORMED', /^The first line of the CSV file is longer than 4,194,304 characters/))
    expect(source.pulled()).toBeLessThanOrEqual(DEFAULT_CSV_LIMITS.maxRecordChars + 2 * CHUNK)
  })

  it('after a header and two rows: refused at line 4, having read 4 MiB of it', async () => {
    const source = generated(HEADER + LINE(1) + LINE(2) + '3;', Buffer.from('9'), GIB)
    await expect(readGenerated(source, GIB)).rejects.toThrow(code('CSV_MALFORMED', /^Line 4 of the CSV file is longer than 4,194,304 characters/))
    expect(source.pulled()).toBeLessThanOrEqual(DEFAULT_CSV_LIMITS.maxRecordChars + 2 * CHUNK + HEADER.length * 3)
  })

  it('inside a quote that never closes, over many lines: refused naming the line the quote opens on', async () => {
    const source = generated(HEADER + LINE(1) + '2;10;01/02/2024;3001;"Conta', Buffer.from('texto sem fim\r\n'), GIB)
    await expect(readGenerated(source, GIB)).rejects.toThrow(code('CSV_MALFORMED', /^The quoted field that opens on line 3 of the CSV file runs past 4,194,304 characters/))
    expect(source.pulled()).toBeLessThanOrEqual(DEFAULT_CSV_LIMITS.maxRecordChars + 2 * CHUNK + HEADER.length * 2)
  })

  it('of separators only: refused for its fields long before its length', async () => {
    const source = generated(HEADER + '1', Buffer.from(';'), GIB)
    await expect(readGenerated(source, GIB)).rejects.toThrow(code('CSV_MALFORMED', /^Line 2 .*more than 16,384 fields/))
    expect(source.pulled()).toBeLessThanOrEqual(2 * CHUNK + HEADER.length)
  })
})

describe('hostile files on disk', () => {
  /** A ledger file of `lines` lines (the header is line 1), each data line's bytes from `line`. */
  async function ledgerFile (name: string, lines: number, line: (n: number) => Buffer): Promise<string> {
    const parts: Buffer[] = [Buffer.from(HEADER)]
    for (let n = 2; n <= lines; n++) parts.push(line(n))
    const path = join(dir, name)
    await writeFile(path, Buffer.concat(parts))
    return path
  }
  /** Line `n` with `text` written into its description. */
  const withText = (n: number, text: Buffer): Buffer => {
    const [before, after] = LINE(n).split('Conta')
    return Buffer.concat([Buffer.from(before!), text, Buffer.from(after!)])
  }
  const plain = (n: number): Buffer => Buffer.from(LINE(n))
  const readAll = async (path: string): Promise<number> => (await readCsv(path, () => {}, { headerColumns: REQUIRED_COLUMNS })).rowsRead

  it('a quote opened on line 50,001 and never closed, in a file that ends within the bound', async () => {
    const path = await ledgerFile('quote.csv', 60_000, (n) => n === 50_001 ? withText(n, Buffer.from('"Conta')) : plain(n))
    await expect(readAll(path)).rejects.toThrow(code('CSV_MALFORMED', /^Line 50001 of the CSV file opens a quoted field \(".*never closed/))
  })

  it('a NUL byte on line 70,000', async () => {
    const path = await ledgerFile('nul.csv', 80_000, (n) => n === 70_000 ? withText(n, Buffer.from('Con\u0000ta')) : plain(n))
    await expect(readAll(path)).rejects.toThrow(code('CSV_MALFORMED', /^Line 70000 .*NUL byte/))
  })

  it('UTF-8 that turns into Windows-1252 on line 90,000, and the reverse', async () => {
    const utf8 = Buffer.from('Ação', 'utf8')
    const latin1 = Buffer.from('Ação', 'latin1')
    const utf8First = await ledgerFile('utf8-first.csv', 100_000, (n) => n === 5 ? withText(n, utf8) : n === 90_000 ? withText(n, latin1) : plain(n))
    await expect(readAll(utf8First)).rejects.toThrow(code('CSV_ENCODING', /^Line 90000 of the CSV file has bytes that are not UTF-8 \(0xE7/))
    const latin1First = await ledgerFile('latin1-first.csv', 100_000, (n) => n === 5 ? withText(n, latin1) : n === 90_000 ? withText(n, utf8) : plain(n))
    await expect(readAll(latin1First)).rejects.toThrow(code('CSV_ENCODING', /^Line 90000 of the CSV file holds UTF-8 text \(bytes 0xC3 0xA7\).*Windows-1252/))
    // Each half alone is read.
    expect(await readAll(await ledgerFile('utf8.csv', 100_000, (n) => n % 1000 === 5 ? withText(n, utf8) : plain(n)))).toBe(100_000)
    expect(await readAll(await ledgerFile('latin1.csv', 100_000, (n) => n % 1000 === 5 ? withText(n, latin1) : plain(n)))).toBe(100_000)
  })
})
