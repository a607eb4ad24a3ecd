import { describe, expect, it } from 'vitest'
import { centsToDecimal } from '../money/index.js'
import { mapColumns } from '../ledger/index.js'
import type { LedgerRow } from '../ledger/index.js'
import { DateCell, ErrorCell } from '../xlsx/index.js'
import type { Cell } from '../xlsx/index.js'
import { MovementEncoder, copyText } from './movement-rows.js'

const HEADER = ['id', 'id_movim_finan', 'data', 'id_conta', 'planejamento_analitico', 'id_planejamento', 'planejamento', 'tipo', 'cod_planejamento', 'credito', 'debito', 'historico']
const columns = mapColumns(HEADER)

function row (over: Partial<LedgerRow> = {}): LedgerRow {
  return { rowNumber: 9, groupId: 7, date: '2024-01-01', debitCents: 1250, creditCents: 0, ...over }
}

function linesOf (encoder: MovementEncoder): string[][] {
  return encoder.take().toString('utf8').split('\n').slice(0, -1).map((line) => line.split('\t'))
}

describe('COPY text', () => {
  it('escapes what COPY would read as a separator or an escape', () => {
    expect(copyText(null)).toBe('\\N')
    expect(copyText('plain')).toBe('plain')
    expect(copyText('a\tb\nc\rd\\e')).toBe('a\\tb\\nc\\rd\\\\e')
    // A literal "\N" in a cell must stay text, not become NULL.
    expect(copyText('\\N')).toBe('\\\\N')
  })

  it('encodes typed columns in MOVEMENT_COLUMNS order, amounts from cents, texts escaped and trimmed', () => {
    const cells: Cell[] = [' 42 ', 7, new DateCell(45292), 1001, '  Banco\tItaú ', null, 'Tarifas', 'TARIFA', 3102, null, 12.5, 'linha 1\nlinha 2']
    const encoder = new MovementEncoder('12', 16)
    encoder.add(row(), cells, columns)
    // The same strings again come from the cache, identically.
    encoder.add(row({ rowNumber: 10 }), cells, columns)
    expect(encoder.pending).toBe(2)
    const [first, second] = linesOf(encoder)
    expect(first).toEqual(['12', '9', '42', '7', '2024-01-01', '1001', 'Banco\\tItaú', '\\N', 'Tarifas', 'TARIFA', '3102', '0.00', '12.50', 'linha 1\\nlinha 2'])
    expect(second).toEqual(['12', '10', ...first!.slice(2)])
    expect(encoder.pending).toBe(0)
  })

  it('writes signs, zeros and the largest safe amounts exactly; empty and missing values as \\N', () => {
    const encoder = new MovementEncoder('1', 8)
    const amounts = [0, 1, 9, 10, 99, 100, 101, 12345, -1, -99, -100, -12345, 9_007_199_254_740_991, -9_007_199_254_740_991]
    for (const cents of amounts) {
      encoder.add(row({ debitCents: cents, creditCents: -cents, groupId: null, date: null }), [null, null, null, '', '   ', 'x', new ErrorCell('#N/A'), false], columns)
    }
    const lines = linesOf(encoder)
    expect(lines.map((l) => l[12])).toEqual(amounts.map(centsToDecimal))
    expect(lines.map((l) => l[11])).toEqual(amounts.map((c) => centsToDecimal(-c)))
    expect(lines[0]).toEqual(['1', '9', '\\N', '\\N', '\\N', '\\N', '\\N', '\\N', '#N/A', 'false', '\\N', '0.00', '0.00', '\\N'])
  })

  it('grows past its buffer for long texts and many lines, and starts each batch afresh', () => {
    const encoder = new MovementEncoder('77', 64)
    const long = 'é'.repeat(10_000)
    const cells: Cell[] = [1, 2, 45000, 3, long, 4, 'p', 't', 'c', 0, 0, `${long}\\`]
    for (let i = 0; i < 50; i++) encoder.add(row({ rowNumber: i + 2 }), cells, columns)
    const lines = linesOf(encoder)
    expect(lines).toHaveLength(50)
    expect(lines.every((l, i) => l[1] === String(i + 2) && l[6] === long && l[13] === `${long}\\\\`)).toBe(true)
    encoder.add(row({ rowNumber: 99 }), cells, columns)
    expect(linesOf(encoder).map((l) => l[1])).toEqual(['99'])
  })

  it('never loses a byte when the buffer grows at any point of a line', () => {
    // Typed arrays drop writes past their end without a word: grow the buffer at
    // every possible offset (texts of every length, a tiny starting buffer) and read
    // each line back.
    for (let n = 0; n < 800; n += 3) {
      const encoder = new MovementEncoder('5', 16)
      const a = 'a'.repeat(n % 37)
      const b = 'ç'.repeat(n % 11)
      const h = `h${'x'.repeat(n)}`
      encoder.add(row({ rowNumber: n, groupId: n * 1_000_003 }), [n, 1, null, 2 ** 40 + n, a, 3, b, 'T', 'C', 0, 0, h], columns)
      encoder.add(row({ rowNumber: n + 1 }), [n, 1, null, 4, h, 3, b, 'T', 'C', 0, 0, a], columns)
      expect(linesOf(encoder)).toEqual([
        ['5', String(n), String(n), String(n * 1_000_003), '2024-01-01', String(2 ** 40 + n), a === '' ? '\\N' : a, '3', b === '' ? '\\N' : b, 'T', 'C', '0.00', '12.50', h],
        ['5', String(n + 1), String(n), '7', '2024-01-01', '4', h, '3', b === '' ? '\\N' : b, 'T', 'C', '0.00', '12.50', a === '' ? '\\N' : a]
      ])
    }
  })

  it('refuses an importation key that is not a number (it goes into every line unescaped)', () => {
    expect(() => new MovementEncoder('1\t2')).toThrow(RangeError)
  })
})
