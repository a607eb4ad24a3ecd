/**
 * Choosing the sheet (issue 31, item 7): by default the first visible one; by name or
 * 1-based position when asked, hidden ones included; a wrong choice lists the sheets; a
 * header without the ledger's columns names the sheet read and what its first row holds.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import XLSX from 'xlsx'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { LedgerAnalyzer } from '../ledger/index.js'
import { chooseSheet } from './choose-sheet.js'
import type { ListedSheet } from './choose-sheet.js'
import { readFirstSheet } from './read-first-sheet.js'

const SHEETS: ListedSheet[] = [
  { name: 'Oculta', visibility: 'veryHidden' },
  { name: 'Resumo', visibility: 'visible' },
  { name: ' Razão 2024 ', visibility: 'visible' },
  { name: 'razão 2024', visibility: 'hidden' }
]

describe('chooseSheet', () => {
  it('takes the first visible sheet by default, and a named or numbered one when asked, hidden or not', () => {
    expect(chooseSheet(SHEETS)).toBe(1)
    expect(chooseSheet(SHEETS, 1)).toBe(0)
    expect(chooseSheet(SHEETS, 'Oculta')).toBe(0)
    expect(chooseSheet(SHEETS, ' Razão 2024 ')).toBe(2)
    expect(chooseSheet(SHEETS, 'resumo')).toBe(1)
  })

  it('does not guess between two names that differ only in case or spaces', () => {
    expect(() => chooseSheet(SHEETS, 'RAZÃO 2024')).toThrow(/no sheet named "RAZÃO 2024"/)
  })

  it('refuses a sheet that does not exist, listing the sheets with their positions', () => {
    expect(() => chooseSheet(SHEETS, 5)).toThrow(/no sheet number 5; its sheets are "Oculta" \(1, hidden\), "Resumo" \(2\), " Razão 2024 " \(3\), "razão 2024" \(4, hidden\)\. Send the sheet field as one of those names or as a number from 1 to 4/)
    expect(() => chooseSheet(SHEETS, 'Balanço')).toThrow(expect.objectContaining({ code: 'REQUEST_INVALID' }))
  })
})

describe('reading the sheet asked for', () => {
  let dir: string
  const header = ['id', 'id_movim_finan', 'data', 'id_conta', 'planejamento_analitico', 'id_planejamento', 'planejamento', 'tipo', 'cod_planejamento', 'credito', 'debito']
  const ledgerRows = [header, [1, 10, '01/02/2024', 3001, 'Caixa', 7, 'Plano', 'AJUSTE', '1.1', 0, 100], [2, 10, '01/02/2024', 3002, 'Banco', 7, 'Plano', 'AJUSTE', '1.1', 100, 0]]

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'razao-choose-sheet-'))
    const book = XLSX.utils.book_new()
    XLSX.utils.book_append_sheet(book, XLSX.utils.aoa_to_sheet([['Resumo do mês', null, 'Total'], ['Receitas', 100]]), 'Resumo')
    XLSX.utils.book_append_sheet(book, XLSX.utils.aoa_to_sheet(ledgerRows), 'Razão')
    await writeFile(join(dir, 'book.xlsx'), XLSX.write(book, { bookType: 'xlsx', type: 'buffer' }) as Buffer)
    await writeFile(join(dir, 'book.xls'), XLSX.write(book, { bookType: 'biff8', type: 'buffer' }) as Buffer)
  })
  afterAll(async () => { await rm(dir, { recursive: true, force: true }) })

  const analyze = async (file: string, sheet?: string | number) => {
    const analyzer = new LedgerAnalyzer()
    const summary = await readFirstSheet(join(dir, file), analyzer.visit, { maxInflatedBytes: 1 << 24, sheet })
    return { summary, analysis: analyzer.finish(1000) }
  }

  it.each(['book.xlsx', 'book.xls'])('%s: refuses the first sheet naming it and showing its first row, then reads the sheet named or numbered', async (file) => {
    await expect(analyze(file)).rejects.toThrow(/^Sheet "Resumo", row 1: the header row lacks the required columns: id, id_movim_finan, .*\. It holds: "Resumo do mês", \(empty\), "Total"\. The workbook's sheets: "Resumo" \(1\), "Razão" \(2\); send the sheet field to read another one\.$/)
    for (const sheet of ['Razão', 2] as const) {
      const { summary, analysis } = await analyze(file, sheet)
      expect(summary.sheetName).toBe('Razão')
      expect(analysis).toMatchObject({ totalRows: 2, totalDebitCents: 10_000, totalCreditCents: 10_000 })
    }
  })
})
