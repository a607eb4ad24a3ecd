import { describe, expect, it } from 'vitest'
import { DateCell, UncomputedFormula } from '../xlsx/index.js'
import type { Cell, RowVisitor } from '../xlsx/index.js'
import { analyzeLedger, diagnoseLedger } from './ledger.js'

const HEADER: Cell[] = [' ID ', 'Id_Movim_Finan', 'DATA', 'id_conta', 'planejamento_analitico', 'id_planejamento', 'planejamento', 'tipo', 'cod_planejamento', 'credito', 'debito', 'extra', 'Historico']

type Row = [number, Cell[]]
const row = (n: number, id: Cell, group: Cell, date: Cell, credit: Cell, debit: Cell, tipo: Cell = 'PAGAR', history: Cell = null): Row =>
  [n, [id, group, date, 10, `desc ${n}`, 20, 'plan', tipo, '1.1', credit, debit, 'ignored', history]]

/** A sheet source over rows in memory, counting how many times it was read. */
function source (rows: Row[]) {
  const reads = { count: 0 }
  const read = async (onRow: RowVisitor) => {
    reads.count++
    for (const [n, cells] of rows) if (onRow(n, cells) === false) break
    return { format: 'xlsx' as const, sheetName: 's', rowsRead: rows.length }
  }
  return { read, reads }
}

const LEDGER: Row[] = [
  [1, HEADER],
  row(2, 1, 100, new DateCell(45000), null, 1234.56, 'PAGAR', 'hist A'),
  row(3, 2, 100, '15/03/2023', '1.234,56', null),
  row(4, 3, 200, 45010, '10.00', '', 'RECEBER'),
  row(6, 4, 200, '2023-02-01', null, 9.99, 'RECEBER', 'hist B'),
  [7, []],
  row(8, 5, 300, '31/12/2023', 5, 5),
  row(9, 6, 300, '01/01/2023', null, null)
]

describe('analyzeLedger', () => {
  it('computes every total in integer cents and the unbalanced groups', async () => {
    const { read } = source(LEDGER)
    const a = await analyzeLedger(read, { batchSize: 4 })
    expect(a).toMatchObject({
      totalRows: 6,
      totalBatches: 2,
      totalDebitCents: 123456 + 999 + 500,
      totalCreditCents: 123456 + 1000 + 500,
      differenceCents: -1,
      distinctGroups: 3,
      minDate: '2023-01-01',
      maxDate: '2023-12-31',
      types: { PAGAR: 4, RECEBER: 2 },
      rowsWithBothDebitCredit: 1,
      rowsWithoutValues: 1,
      unbalancedGroups: 1
    })
    expect(a.problemSamples).toEqual([])
  })

  it('counts kinds and balances groups however rows alternate (runs, repeats, other cell types)', async () => {
    const tipos: Cell[] = ['PAGAR', 'PAGAR', ' PAGAR ', 'RECEBER', 'PAGAR', null, null, 7, 7, new DateCell(45000), new DateCell(45000), '', 'RECEBER']
    const rows: Row[] = [[1, HEADER]]
    // Groups 1 and 2 interleave, then run; even rows debit 10.00, odd rows credit it.
    const groups = [1, 2, 1, 2, 2, 2, 1, 1, 3, 3, 3, 1, 2]
    tipos.forEach((tipo, i) => {
      const debit = i % 2 === 0 ? 10 : null
      const credit = i % 2 === 0 ? null : 10
      rows.push(row(i + 2, i + 1, groups[i]!, '01/01/2024', credit, debit, tipo))
    })
    const a = await analyzeLedger(source(rows).read, { batchSize: 100 })
    expect(a.types).toEqual({ PAGAR: 4, RECEBER: 2, '': 3, 7: 2, '2023-03-15': 2 })
    expect(a.distinctGroups).toBe(3)
    const d = await diagnoseLedger(source(rows).read, { batchSize: 100 })
    // Group 1: three debits, two credits; group 2: two and three; group 3: two and one.
    expect(d.groups.map((g) => [g.groupId, g.differenceCents])).toEqual([[1, 1000], [2, -1000], [3, 1000]])
    expect(a.differenceCents).toBe(1000)
  })

  it('reports garbage, negative and over-precise amounts instead of zeroing them silently', async () => {
    const { read } = source([
      [1, HEADER],
      row(2, 1, 100, '01/02/2024', 'abc', 10),
      row(3, 2, 100, '31/02/2024', -10, null),
      row(4, 'x', null, '2024-02-01', 1.005, null)
    ])
    const a = await analyzeLedger(read, { batchSize: 1000 })
    expect(a.problemCounts).toEqual({ INVALID_AMOUNT: 1, NEGATIVE_AMOUNT: 1, ROUNDED_AMOUNT: 1, INVALID_DATE: 1, INVALID_INTEGER: 1, MISSING_ID: 0, MISSING_ID_MOVIM_FINAN: 1, UNCOMPUTED_FORMULA: 0, TEXT_TOO_LONG: 0, TEXT_AT_CELL_LIMIT: 0 })
    expect(a.problemSamples).toContainEqual({ kind: 'INVALID_AMOUNT', rowNumber: 2, column: 'credito', value: 'abc' })
    expect(a.problemSamples).toContainEqual({ kind: 'INVALID_DATE', rowNumber: 3, column: 'data', value: '31/02/2024' })
    expect(a.totalCreditCents).toBe(-1000 + 101)
    expect(a.totalDebitCents).toBe(1000)
  })

  it('reports a formula saved without its value in any stored column, never reading it as empty (issue 11)', async () => {
    const f = new UncomputedFormula('B2*2')
    const { read } = source([
      [1, HEADER],
      row(2, 1, 100, '01/02/2024', f, null),
      row(3, 2, f, f, null, 10, 'PAGAR', new UncomputedFormula('')),
      row(4, 3, 100, '01/02/2024', 10, null)
    ])
    const a = await analyzeLedger(read, { batchSize: 1000 })
    expect(a.problemCounts).toMatchObject({ UNCOMPUTED_FORMULA: 4, INVALID_DATE: 0, MISSING_ID_MOVIM_FINAN: 0, INVALID_AMOUNT: 0 })
    expect(a.problemSamples.map((p) => [p.rowNumber, p.column, p.value])).toEqual([
      [2, 'credito', '=B2*2'], [3, 'id_movim_finan', '=B2*2'], [3, 'data', '=B2*2'], [3, 'historico', '=(shared formula)']
    ])
    // Row 2's credit is unknown, not absent: the row is not one "without values".
    expect(a.rowsWithoutValues).toBe(0)
    expect(a.totalRows).toBe(3)
  })

  it('reports text longer than an Excel cell holds, shortened in the report (issue 11)', async () => {
    const long = 'h'.repeat(32_768)
    const { read } = source([[1, HEADER], row(2, 1, 100, '01/02/2024', 5, 5, 'PAGAR', long), row(3, 2, 100, '01/02/2024', 5, 5, 'x'.repeat(32_766))])
    const a = await analyzeLedger(read, { batchSize: 1000 })
    expect(a.problemCounts.TEXT_TOO_LONG).toBe(1)
    expect(a.problemSamples).toEqual([{ kind: 'TEXT_TOO_LONG', rowNumber: 2, column: 'historico', value: `${'h'.repeat(200)}… (32768 characters)` }])
  })

  it('reports text that fills a cell to its limit: the writer cut a longer one (LibreOffice does, without a word; issue 22)', async () => {
    const { read } = source([[1, HEADER], row(2, 1, 100, '01/02/2024', 5, 5, 'PAGAR', 'h'.repeat(32_767)), row(3, 2, 100, '01/02/2024', 5, 5, 'PAGAR', 'h'.repeat(32_766))])
    const a = await analyzeLedger(read, { batchSize: 1000 })
    expect(a.problemCounts).toMatchObject({ TEXT_AT_CELL_LIMIT: 1, TEXT_TOO_LONG: 0 })
    expect(a.problemSamples).toEqual([{ kind: 'TEXT_AT_CELL_LIMIT', rowNumber: 2, column: 'historico', value: `${'h'.repeat(200)}… (32767 characters)` }])
  })

  it('names every missing required column', async () => {
    const { read } = source([[1, ['id', 'data', 'credito']]])
    await expect(analyzeLedger(read, { batchSize: 1000 })).rejects.toMatchObject({
      code: 'LEDGER_MISSING_COLUMNS',
      details: { missing: ['id_movim_finan', 'id_conta', 'planejamento_analitico', 'id_planejamento', 'planejamento', 'tipo', 'cod_planejamento', 'debito'] }
    })
  })

  it('refuses an empty sheet', async () => {
    const { read } = source([])
    await expect(analyzeLedger(read, { batchSize: 1000 })).rejects.toMatchObject({ code: 'LEDGER_EMPTY' })
  })
})

describe('diagnoseLedger', () => {
  it('returns every original row of each unbalanced group, with sheet row numbers', async () => {
    const { read, reads } = source(LEDGER)
    const d = await diagnoseLedger(read, { batchSize: 1000 })
    expect(reads.count).toBe(2)
    expect(d.groups).toEqual([{
      groupId: 200,
      date: serialDate(45010),
      debitCents: 999,
      creditCents: 1000,
      differenceCents: -1,
      description: 'desc 4',
      history: null,
      lineCount: 2,
      lines: [
        { rowNumber: 4, type: 'RECEBER', accountId: 10, planningId: 20, description: 'desc 4', debitCents: 0, creditCents: 1000, history: null },
        { rowNumber: 6, type: 'RECEBER', accountId: 10, planningId: 20, description: 'desc 6', debitCents: 999, creditCents: 0, history: 'hist B' }
      ]
    }])
  })

  it('lists rows up to its cap and counts what it leaves out; totals still cover every row', async () => {
    // Group 900 has 15 rows of debit only; then 30 groups of one debit row each: all unbalanced.
    const rows: Row[] = [[1, HEADER]]
    for (let i = 0; i < 15; i++) rows.push(row(2 + i, i, 900, 45000, null, 1))
    for (let g = 0; g < 30; g++) rows.push(row(100 + g, 1000 + g, 1000 + g, 45000, null, 2))
    const d = await diagnoseLedger(source(rows).read, { batchSize: 1000, maxLines: 10 })
    expect(d.analysis.unbalancedGroups).toBe(31)
    // Group 900 fills the cap with its first 10 rows; it is listed with them and its totals over all 15.
    expect(d.groups.map((g) => g.groupId)).toEqual([900])
    const cut = d.groups[0]!
    expect(cut.lines.map((l) => l.rowNumber)).toEqual(Array.from({ length: 10 }, (_, i) => 2 + i))
    expect(cut).toMatchObject({ lineCount: 15, debitCents: 1500, creditCents: 0, differenceCents: 1500 })
    expect(d.omittedGroups).toBe(30)
    // 5 rows cut from group 900 and the 30 rows of the omitted groups.
    expect(d.omittedLines).toBe(5 + 30)
    // With room for all, nothing is omitted.
    const all = await diagnoseLedger(source(rows).read, { batchSize: 1000, maxLines: 45 })
    expect(all.groups).toHaveLength(31)
    expect(all.omittedGroups + all.omittedLines).toBe(0)
  })

  it('lists a text longer than a cell can hold by its start and length', async () => {
    const d = await diagnoseLedger(source([[1, HEADER], row(2, 1, 100, 45000, null, 5, 'PAGAR', 'y'.repeat(1 << 20))]).read, { batchSize: 1000 })
    expect(d.groups[0]!.lines[0]!.history).toBe(`${'y'.repeat(200)}… (1048576 characters)`)
  })

  it('reads a balanced file once', async () => {
    const { read, reads } = source(LEDGER.filter(([n]) => n !== 4 && n !== 6))
    const d = await diagnoseLedger(read, { batchSize: 1000 })
    expect(d.groups).toEqual([])
    expect(reads.count).toBe(1)
  })
})

function serialDate (serial: number): string {
  return new DateCell(serial).toISO()
}
