import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { LedgerAnalyzer, REQUIRED_COLUMNS } from '../ledger/index.js'
import { detectFormat } from '../xlsx/index.js'
import { readCsv, readCsvChunks, sniffText } from './index.js'
import type { CsvField, CsvReadOptions, CsvReadSummary } from './index.js'

let dir: string
let n = 0
beforeAll(async () => { dir = await mkdtemp(join(tmpdir(), 'razao-csv-')) })
afterAll(async () => { await rm(dir, { recursive: true, force: true }) })

const code = (c: string, message?: RegExp) => expect.objectContaining(message === undefined ? { code: c } : { code: c, message: expect.stringMatching(message) })

async function file (bytes: string | Uint8Array): Promise<string> {
  const path = join(dir, `f-${n++}.csv`)
  await writeFile(path, bytes)
  return path
}

interface Read { rows: Array<[number, CsvField[]]>, summary: CsvReadSummary }

async function readPath (path: string, options: CsvReadOptions = {}): Promise<Read> {
  const rows: Array<[number, CsvField[]]> = []
  const summary = await readCsv(path, (row, cells) => { rows.push([row, cells]) }, options)
  return { rows, summary }
}

/** The same bytes handed over in chunks of `size` bytes. */
async function readInChunks (bytes: Uint8Array, size: number, options: CsvReadOptions = {}): Promise<Read> {
  async function * chunks (): AsyncGenerator<Uint8Array> {
    for (let at = 0; at < bytes.length; at += size) yield bytes.subarray(at, at + size)
  }
  const rows: Array<[number, CsvField[]]> = []
  const summary = await readCsvChunks(chunks(), bytes.length, (row, cells) => { rows.push([row, cells]) }, options)
  return { rows, summary }
}

/** Windows-1252 bytes of a text (test inputs only hold Latin-1 letters and the punctuation below). */
function cp1252 (text: string): Buffer {
  const high: Record<string, number> = { '€': 0x80, '‚': 0x82, '„': 0x84, '…': 0x85, '‘': 0x91, '’': 0x92, '“': 0x93, '”': 0x94, '•': 0x95, '–': 0x96, '—': 0x97, '™': 0x99 }
  return Buffer.from([...text].map((ch) => high[ch] ?? ch.charCodeAt(0)))
}

describe('quoting (RFC 4180, read as spreadsheet programs read it)', () => {
  const text = 'id;nome;valor\r\n' +
    '1;"Silva; Souza & Cia";"1.234,56"\r\n' +
    '2;"Diz ""olá"" e sai";10\r\n' +
    '3;"Linha 1\r\nLinha 2\nLinha 3";"x"\r\n' +
    '4;fim;\r\n'

  it('keeps separators, doubled quotes and line breaks inside quoted fields, one row each', async () => {
    const { rows, summary } = await readPath(await file(text))
    expect(rows).toEqual([
      [1, ['id', 'nome', 'valor']],
      [2, ['1', 'Silva; Souza & Cia', '1.234,56']],
      [3, ['2', 'Diz "olá" e sai', '10']],
      // Line breaks inside a cell become LF, as the XLSX reader reads them.
      [4, ['3', 'Linha 1\nLinha 2\nLinha 3', 'x']],
      [5, ['4', 'fim', null]]
    ])
    expect(summary).toMatchObject({ format: 'csv', rowsRead: 5, delimiter: ';', encoding: 'utf-8', bom: false })
  })

  it('reads the same rows whatever the chunks the bytes arrive in (every split point)', async () => {
    const bytes = Buffer.from(text, 'utf8')
    const whole = await readInChunks(bytes, bytes.length)
    for (const size of [1, 2, 3, 4, 5, 7, 11, 13]) {
      expect({ size, rows: (await readInChunks(bytes, size)).rows }).toEqual({ size, rows: whole.rows })
    }
  })

  it('reads a quote inside an unquoted field, and text after a closing quote, as they are', async () => {
    const { rows } = await readPath(await file('a;b\n5" tela;"abc"def\n'))
    expect(rows[1]).toEqual([2, ['5" tela', 'abcdef']])
  })

  it('counts rows as a spreadsheet shows them: blank lines and separator-only lines skipped but counted', async () => {
    const { rows } = await readPath(await file('a;b\n\n1;2\n;;\n\r\n3;"x\ny"\n4;4'))
    expect(rows.map(([row]) => row)).toEqual([1, 3, 6, 7])
    expect(rows[3]).toEqual([7, ['4', '4']])
  })

  it('reads LF, CRLF and lone-CR line ends alike', async () => {
    const lines = ['a;b', '1;"x"', '2;y']
    const read = async (end: string) => (await readPath(await file(lines.join(end) + end))).rows
    expect(await read('\r\n')).toEqual(await read('\n'))
    expect(await read('\r')).toEqual(await read('\n'))
  })
})

describe('separator', () => {
  const header = REQUIRED_COLUMNS.join('|')
  const row = '1|10|01/02/2024|3001|"Conta; com, tudo"|77|Plano|AJUSTE|1.2.3|"100,00"|'

  it.each([[';', ';'], [',', ','], ['\t', 'tab']])('is found from the header: %j (%s)', async (delimiter) => {
    const { rows, summary } = await readPath(await file(`${header.replaceAll('|', delimiter)}\n${row.replaceAll('|', delimiter)}\n`), { headerColumns: REQUIRED_COLUMNS })
    expect(summary.delimiter).toBe(delimiter)
    expect(rows[0]![1]).toEqual([...REQUIRED_COLUMNS])
    expect(rows[1]![1]).toEqual(['1', '10', '01/02/2024', '3001', 'Conta; com, tudo', '77', 'Plano', 'AJUSTE', '1.2.3', '100,00', null])
  })

  it('is the one that yields the ledger columns, not the most frequent one', async () => {
    // The commas of an extra column's name outnumber the semicolons that separate the columns.
    const names = [...REQUIRED_COLUMNS, '"observação, conferida, por, quem, quando, onde, como, e, por, que, não"']
    const { rows, summary } = await readPath(await file(`${names.join(';')}\n`), { headerColumns: REQUIRED_COLUMNS })
    expect(summary.delimiter).toBe(';')
    expect(rows[0]![1]).toHaveLength(12)
  })

  it('follows Excel\'s sep= hint line, which is not a row', async () => {
    const { rows, summary } = await readPath(await file('sep=,\r\na;b;c,d\r\n1;2;3,4\r\n'))
    expect(summary.delimiter).toBe(',')
    expect(rows).toEqual([[1, ['a;b;c', 'd']], [2, ['1;2;3', '4']]])
  })

  it('refuses a text file whose first line has none of the ledger columns, showing that line', async () => {
    const path = await file('Data;Histórico;Valor\n01/02/2024;Tarifa;10,00\n')
    await expect(readPath(path, { headerColumns: REQUIRED_COLUMNS })).rejects.toThrow(code('LEDGER_MISSING_COLUMNS', /first line is not a ledger header: it has only 1 of the 11 required columns.*"Data;Histórico;Valor"/))
    const none = await file('Nome,Valor\nJoão,10\n')
    await expect(readPath(none, { headerColumns: REQUIRED_COLUMNS })).rejects.toThrow(code('LEDGER_MISSING_COLUMNS', /it has none of the 11/))
  })

  it('names the missing columns of a header that has most of them, with the separator it was read with', async () => {
    const path = await file(`${REQUIRED_COLUMNS.filter((c) => c !== 'debito' && c !== 'tipo').join(',')}\n`)
    await expect(readPath(path, { headerColumns: REQUIRED_COLUMNS })).rejects.toThrow(code('LEDGER_MISSING_COLUMNS', /^The first line of the CSV file \(separated by ","\) lacks the required columns: tipo, debito\. First line: "id,/))
  })

  it('says a header with a few of the columns is not a ledger header', async () => {
    const path = await file('id;id_movim_finan;data\n1;2;01/01/2024\n')
    await expect(readPath(path, { headerColumns: REQUIRED_COLUMNS })).rejects.toThrow(code('LEDGER_MISSING_COLUMNS', /only 3 of the 11 required columns/))
  })

  it('refuses a file of blank lines as having no header', async () => {
    await expect(readPath(await file('\r\n\r\n;;\r\n'), { headerColumns: REQUIRED_COLUMNS })).rejects.toThrow(code('LEDGER_EMPTY'))
  })
})

describe('encodings', () => {
  const text = 'id;descrição;obs\n1;Ação “especial” – 10 €;Não\n2;Çà;º ª\n'

  it('reads UTF-8 with and without a BOM', async () => {
    const plain = await readPath(await file(Buffer.from(text, 'utf8')))
    const bom = await readPath(await file(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(text, 'utf8')])))
    expect(plain.rows[1]).toEqual([2, ['1', 'Ação “especial” – 10 €', 'Não']])
    expect(bom.rows).toEqual(plain.rows)
    expect(plain.summary).toMatchObject({ encoding: 'utf-8', bom: false })
    expect(bom.summary).toMatchObject({ encoding: 'utf-8', bom: true })
  })

  it('reads Windows-1252, whose 0x80-0x9F bytes are punctuation and €, and ISO-8859-1 as the same', async () => {
    const bytes = cp1252(text)
    expect(bytes.includes(0x93) && bytes.includes(0x80)).toBe(true)
    const read = await readPath(await file(bytes))
    expect(read.rows).toEqual((await readPath(await file(Buffer.from(text, 'utf8')))).rows)
    expect(read.summary).toMatchObject({ encoding: 'windows-1252', bom: false })
    // ISO-8859-1 proper has no characters there: its files read the same as Windows-1252.
    const latin1 = await readPath(await file(Buffer.from('a;b\nJoão;Çà\n', 'latin1')))
    expect(latin1.rows[1]).toEqual([2, ['João', 'Çà']])
  })

  it('settles the encoding at the first non-ASCII character wherever it falls, whatever the chunks', async () => {
    const ascii = 'a;b\n' + 'x;y\n'.repeat(50)
    for (const [bytes, encoding] of [[Buffer.from(ascii + 'ã;ç\n', 'utf8'), 'utf-8'], [cp1252(ascii + 'ã;ç\n'), 'windows-1252']] as const) {
      for (const size of [1, 2, 3, 5, 64, bytes.length]) {
        const read = await readInChunks(bytes, size)
        expect({ size, last: read.rows.at(-1), encoding: read.summary.encoding }).toEqual({ size, last: [52, ['ã', 'ç']], encoding })
      }
    }
  })

  it('reports a file of ASCII only as UTF-8', async () => {
    expect((await readPath(await file('a;b\n1;2\n'))).summary.encoding).toBe('utf-8')
  })

  it('refuses UTF-8 followed by bytes that are not UTF-8, naming the line', async () => {
    const bytes = Buffer.concat([Buffer.from('a;b\n1;ação\n2;x\n', 'utf8'), cp1252('3;João\n')])
    await expect(readPath(await file(bytes))).rejects.toThrow(code('CSV_ENCODING', /^Line 4 .*not UTF-8 \(0xE3.*mixes encodings/))
  })

  it('refuses Windows-1252 followed by UTF-8 text, naming the line', async () => {
    const bytes = Buffer.concat([cp1252('a;b\n1;ação\n'), Buffer.from('2;x\n3;João\n', 'utf8')])
    await expect(readPath(await file(bytes))).rejects.toThrow(code('CSV_ENCODING', /^Line 4 .*UTF-8 text \(bytes 0xC3 0xA3\).*Windows-1252/))
    // Also when the UTF-8 sequence is split between two chunks.
    for (const size of [1, 2, 3, 7]) {
      await expect(readInChunks(bytes, size)).rejects.toThrow(code('CSV_ENCODING', /UTF-8 text/))
    }
  })

  it('refuses a file cut inside a UTF-8 character', async () => {
    const bytes = Buffer.from('a;b\n1;çã', 'utf8').subarray(0, -1)
    await expect(readPath(await file(bytes))).rejects.toThrow(code('CSV_ENCODING', /cut short/))
  })

  it('refuses UTF-16 text (Excel\'s "Unicode Text") with what to do instead', async () => {
    const utf16 = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('id\tdata\r\n1\t01/01/2024\r\n', 'utf16le')])
    await expect(readPath(await file(utf16))).rejects.toThrow(code('CSV_ENCODING', /UTF-16.*CSV UTF-8/))
    await expect(readPath(await file(utf16.subarray(2)))).rejects.toThrow(code('CSV_ENCODING', /UTF-16/))
  })
})

describe('refusals that name the line', () => {
  it('a quote opened and never closed, at the line where it opens', async () => {
    const lines = ['a;b', '1;x', '2;"aberta', '3;y', '4;z']
    await expect(readPath(await file(lines.join('\n')))).rejects.toThrow(code('CSV_MALFORMED', /^Line 3 of the CSV file opens a quoted field/))
  })

  it('a NUL byte', async () => {
    await expect(readPath(await file('a;b\n1;x\n2;y\u0000z\n'))).rejects.toThrow(code('CSV_MALFORMED', /^Line 3 .*NUL byte/))
  })

  it('more fields than a spreadsheet has columns', async () => {
    const path = await file(`a;b\n${';'.repeat(20)}x\n1;"q"${';'.repeat(20)}\n`)
    await expect(readPath(path, { limits: { maxFields: 16 } })).rejects.toThrow(code('CSV_MALFORMED', /^Line 2 .*more than 16 fields/))
    await expect(readPath(await file(`a;b\n1;"q"${';'.repeat(20)}\n`), { limits: { maxFields: 16 } })).rejects.toThrow(code('CSV_MALFORMED', /^Line 2 .*more than 16 fields/))
  })
})

describe('streaming', () => {
  it('awaits afterChunk after every chunk, reports progress to the end, and stops when the visitor says so', async () => {
    const bytes = Buffer.from('a;b\n' + '1;2\n'.repeat(5000))
    const path = await file(bytes)
    let chunks = 0
    let lastProgress: [number, number] = [0, 0]
    const { summary } = await readPath(path, {
      limits: { chunkBytes: 1024 },
      afterChunk: async () => { chunks++ },
      onProgress: (done, total) => { lastProgress = [done, total] }
    })
    expect(summary.rowsRead).toBe(5001)
    expect(chunks).toBe(Math.ceil(bytes.length / 1024))
    expect(lastProgress).toEqual([bytes.length, bytes.length])

    let seen = 0
    const stopped = await readCsv(path, () => ++seen < 10, { limits: { chunkBytes: 1024 } })
    expect(stopped.rowsRead).toBe(10)
  })
})

describe('cells as text, read by the ledger as text cells of a workbook', () => {
  it('reads Brazilian and plain amounts, day-first and ISO dates, and reports what it cannot read', async () => {
    const header = REQUIRED_COLUMNS.join(';')
    const line = (id: number, date: string, credit: string, debit: string) => `${id};10;${date};3001;Conta;77;Plano;AJUSTE;1.2.3;${credit};${debit}`
    const path = await file([header,
      line(1, '05/03/2024', '', '1.234,56'),
      line(2, '2024-03-05', '1234.56', ''),
      line(3, '5/3/2024', '"-1.234,56"', '"R$ 1.234,56"'),
      line(4, '31/02/2024', '(1.234,56)', '1,234.56'),
      line(5, '05/03/24', '0,01', '10')
    ].join('\r\n'))
    const analyzer = new LedgerAnalyzer()
    await readCsv(path, analyzer.visit, { headerColumns: REQUIRED_COLUMNS })
    const a = analyzer.finish(100)
    expect(a).toMatchObject({ totalRows: 5, minDate: '2024-03-05', maxDate: '2024-03-05', totalDebitCents: 123456 + 123456 + 1000, totalCreditCents: 123456 - 123456 + 1 })
    expect(a.problemSamples.map((p) => [p.rowNumber, p.column, p.kind, p.value])).toEqual([
      [4, 'credito', 'NEGATIVE_AMOUNT', '-1.234,56'],
      [5, 'debito', 'INVALID_AMOUNT', '1,234.56'],
      [5, 'credito', 'INVALID_AMOUNT', '(1.234,56)'],
      [5, 'data', 'INVALID_DATE', '31/02/2024'],
      [6, 'data', 'INVALID_DATE', '05/03/24']
    ])
  })
})

describe('format detection by content', () => {
  it('takes text for CSV, and refuses binary, markup and empty files', async () => {
    expect(await detectFormat(await file('id;data\n1;01/01/2024\n'))).toBe('csv')
    expect(await detectFormat(await file(cp1252('id;descrição\n1;ação\n')))).toBe('csv')
    expect(await detectFormat(await file(Buffer.from([0xff, 0xfe, 0x69, 0x00])))).toBe('csv')
    await expect(detectFormat(await file(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13])))).rejects.toThrow(code('SHEET_UNSUPPORTED_FORMAT', /nor a CSV\/TXT text file/))
    await expect(detectFormat(await file('  <html><table><tr><td>id</td></tr></table></html>'))).rejects.toThrow(code('SHEET_UNSUPPORTED_FORMAT', /HTML or XML/))
    await expect(detectFormat(await file(''))).rejects.toThrow(code('SHEET_UNSUPPORTED_FORMAT'))
  })

  it('judges text from the first KiB: NUL and control bytes are binary, every other byte may be text', () => {
    expect(sniffText(Buffer.from('a;b\r\n\t1;2'))).toBe('text')
    expect(sniffText(Buffer.from([0x61, 0xe7, 0xe3, 0x80, 0x9f]))).toBe('text')
    expect(sniffText(Buffer.from('a;b\u0001'))).toBe('binary')
    expect(sniffText(Buffer.from('a;b\u0000c'))).toBe('binary')
    expect(sniffText(Buffer.from('id;x', 'utf16le'))).toBe('utf-16')
    expect(sniffText(Buffer.from('\ufeff<?xml version="1.0"?>', 'utf8'))).toBe('markup')
  })
})
