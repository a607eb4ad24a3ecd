/**
 * The binary COPY encoder, judged by PostgreSQL itself: every test COPYs what the
 * encoder wrote into a real `movimentos` table and reads the values back as text.
 */
import pg from 'pg'
import { from as copyFrom } from 'pg-copy-streams'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freshDatabase } from '../../fixtures/db/test-database.js'
import type { TestDatabase } from '../../fixtures/db/test-database.js'
import { centsToDecimal } from '../money/index.js'
import { mapColumns } from '../ledger/index.js'
import type { LedgerRow } from '../ledger/index.js'
import { DateCell, ErrorCell } from '../xlsx/index.js'
import type { Cell } from '../xlsx/index.js'
import { COPY_HEADER, COPY_MOVEMENTS_SQL, COPY_TRAILER, MOVEMENT_COLUMNS, MovementEncoder } from './movement-rows.js'

const HEADER = ['id', 'id_movim_finan', 'data', 'id_conta', 'planejamento_analitico', 'id_planejamento', 'planejamento', 'tipo', 'cod_planejamento', 'credito', 'debito', 'historico']
const columns = mapColumns(HEADER)
const withoutHistory = mapColumns(HEADER.slice(0, -1))

let db: TestDatabase
let client: pg.Client

beforeAll(async () => {
  db = await freshDatabase()
  client = new pg.Client({ connectionString: db.url })
  await client.connect()
})
afterAll(async () => {
  await client?.end()
  await db?.drop()
})

function row (over: Partial<LedgerRow> = {}): LedgerRow {
  return { rowNumber: 9, rowId: 41, groupId: 7, date: '2024-01-01', debitCents: 1250, creditCents: 0, unknownAmount: false, ...over }
}

/** COPYs the batches, returns every stored row as text (NULL as null) by source row number, and rolls back. */
async function roundTrip (batches: Buffer[]): Promise<Array<Array<string | null>>> {
  await client.query('BEGIN')
  try {
    await new Promise<void>((resolve, reject) => {
      const copy = client.query(copyFrom(COPY_MOVEMENTS_SQL))
      copy.on('finish', resolve)
      copy.on('error', reject)
      copy.write(COPY_HEADER)
      for (const batch of batches) copy.write(batch)
      copy.end(COPY_TRAILER)
    })
    const { rows } = await client.query<Record<string, string | null>>(
      `SELECT ${MOVEMENT_COLUMNS.map((c) => `${c}::text`).join(', ')} FROM movimentos ORDER BY movimentos.linha_origem`)
    return rows.map((r) => Object.values(r))
  } finally {
    await client.query('ROLLBACK')
  }
}

describe('binary COPY rows', () => {
  it('stores every column in MOVEMENT_COLUMNS order: integers, the date, amounts from cents, texts trimmed', async () => {
    const cells: Cell[] = [' 42 ', 7, new DateCell(45292), 1001, '  Banco Itaú ', null, 'Tarifas', 'TARIFA', 3102, null, 12.5, 'linha 1']
    const encoder = new MovementEncoder('12', 16)
    encoder.add(row(), cells, columns)
    // The same strings again come from the cache, identically.
    encoder.add(row({ rowNumber: 10 }), cells, columns)
    expect(encoder.pending).toBe(2)
    const [first, second] = await roundTrip([encoder.take()])
    expect(first).toEqual(['12', '9', '42', '7', '2024-01-01', '1001', 'Banco Itaú', null, 'Tarifas', 'TARIFA', '3102', '0.00', '12.50', 'linha 1'])
    expect(second).toEqual(['12', '10', ...first!.slice(2)])
    expect(encoder.pending).toBe(0)
  })

  it('stores empty, blank and missing cells as NULL, and other cells as they print', async () => {
    const encoder = new MovementEncoder('1')
    encoder.add(row({ date: null }), [null, null, null, '', '   ', 'x', new ErrorCell('#N/A'), false], columns)
    encoder.add(row(), [1, 2, 3, 4, 5.5, 6, true, new DateCell(45000.5), 'c'], withoutHistory)
    const [empty, printed] = await roundTrip([encoder.take()])
    expect(empty).toEqual(['1', '9', null, '7', null, null, null, null, '#N/A', 'false', null, '0.00', '12.50', null])
    expect(printed!.slice(6, 10)).toEqual(['5.5', '6', 'true', '2023-03-15T12:00:00'])
    expect(printed![13]).toBeNull()
  })

  it('writes every amount exactly, signs and zeros included, up to the largest safe number of cents', async () => {
    const amounts = [0, 1, 9, 10, 99, 100, 101, 12345, 1_000_000, 1_000_001, 100_000_000, 100_000_100, 123_456_789, 1_000_000_000_000,
      10_000_000_000_000_000 / 1000, 9_007_199_254_740_991, 9_007_199_254_740_900]
    // And a spread of pseudo-random ones of every length.
    let x = 7
    for (let i = 0; i < 300; i++) {
      x = (x * 48271) % 2147483647
      amounts.push(Math.floor((x / 2147483647) * 10 ** (i % 16)))
    }
    const encoder = new MovementEncoder('1')
    amounts.forEach((cents, i) => encoder.add(row({ rowNumber: i, debitCents: cents, creditCents: -cents }), [], columns))
    const stored = await roundTrip([encoder.take()])
    expect(stored.map((r) => r[12])).toEqual(amounts.map(centsToDecimal))
    expect(stored.map((r) => r[11])).toEqual(amounts.map((c) => centsToDecimal(-c)))
  })

  it('keeps integers of every size and sign, and calendar dates from 1900 to 9999', async () => {
    const ids = [0, 1, -1, 255, 256, 65_536, 2 ** 31 - 1, 2 ** 31, -(2 ** 31), 2 ** 32, 2 ** 32 + 1, -(2 ** 32) - 1, 2 ** 53 - 1, -(2 ** 53 - 1)]
    const dates = ['1900-01-01', '1999-12-31', '2000-01-01', '2000-02-29', '2024-02-29', '9999-12-31']
    const encoder = new MovementEncoder('9007199254740991')
    ids.forEach((id, i) => encoder.add(row({ rowNumber: i + 2, groupId: -id, date: dates[i % dates.length]! }), [id, null, null, id], columns))
    const stored = await roundTrip([encoder.take()])
    expect(stored.map((r) => [r[0], r[1], r[2], r[3], r[4], r[5]])).toEqual(ids.map((id, i) =>
      ['9007199254740991', String(i + 2), String(id), String(-id), dates[i % dates.length], String(id)]))
  })

  it('needs no escaping: tabs, newlines, backslashes, a literal \\N, accents and emoji arrive as typed', async () => {
    const texts = ['a\tb', 'linha 1\nlinha 2\r\n', 'C:\\pasta\\', '\\N', 'Açúcar & Café', 'ok 👍🏽', '"aspas" \'simples\'']
    const encoder = new MovementEncoder('3')
    texts.forEach((text, i) => encoder.add(row({ rowNumber: i }), [1, 2, null, 3, text, 4, text, text, text, 0, 0, text], columns))
    const stored = await roundTrip([encoder.take()])
    // Cells are trimmed as the analyzer reads them; inner whitespace stays.
    expect(stored.map((r) => r[6])).toEqual(texts.map((t) => t.trim()))
    expect(stored.map((r) => r[13])).toEqual(texts.map((t) => t.trim()))
  })

  it('never loses a byte when the buffer grows at any point of a row, and starts each batch afresh', async () => {
    // Typed arrays drop writes past their end without a word: grow the buffer at
    // every offset (texts of many lengths, a tiny starting buffer) and read it all back.
    const batches: Buffer[] = []
    const expected: Array<Array<string | null>> = []
    for (let n = 0; n < 700; n += 7) {
      const encoder = new MovementEncoder('5', 16)
      const a = 'a'.repeat(n % 37)
      const b = 'ç'.repeat(n % 11)
      const h = `h${'x'.repeat(n)}`
      encoder.add(row({ rowNumber: n, groupId: n * 1_000_003 }), [n, 1, null, 2 ** 40 + n, a, 3, b, 'T', 'C', 0, 0, h], columns)
      encoder.add(row({ rowNumber: n + 1 }), [n, 1, null, 4, h, 3, b, 'T', 'C', 0, 0, a], columns)
      batches.push(encoder.take())
      encoder.add(row({ rowNumber: n + 2 }), [n, 1, null, 4, 'x', 3, 'y', 'T', 'C', 0, 0, 'z'], columns)
      batches.push(encoder.take())
      const nul = (s: string): string | null => s === '' ? null : s
      expected.push(
        ['5', String(n), String(n), String(n * 1_000_003), '2024-01-01', String(2 ** 40 + n), nul(a), '3', nul(b), 'T', 'C', '0.00', '12.50', h],
        ['5', String(n + 1), String(n), '7', '2024-01-01', '4', h, '3', nul(b), 'T', 'C', '0.00', '12.50', nul(a)],
        ['5', String(n + 2), String(n), '7', '2024-01-01', '4', 'x', '3', 'y', 'T', 'C', '0.00', '12.50', 'z'])
    }
    expect(await roundTrip(batches)).toEqual(expected)
    const long = 'é'.repeat(10_000)
    const encoder = new MovementEncoder('77', 64)
    for (let i = 0; i < 50; i++) encoder.add(row({ rowNumber: i + 2 }), [1, 2, 45000, 3, long, 4, 'p', 't', 'c', 0, 0, `${long}\\`], columns)
    const stored = await roundTrip([encoder.take()])
    expect(stored).toHaveLength(50)
    expect(stored.map((r) => [r[1], r[6]?.length, r[13]?.length])).toEqual(stored.map((_, i) => [String(i + 2), long.length, long.length + 1]))
    expect(stored.every((r) => r[6] === long && r[13] === `${long}\\`)).toBe(true)
  })

  it('refuses an importation key that is not a bigint (it goes into every row as is)', () => {
    expect(() => new MovementEncoder('1\t2')).toThrow(RangeError)
    expect(() => new MovementEncoder('1'.repeat(19))).toThrow(RangeError)
  })
})
