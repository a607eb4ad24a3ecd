/**
 * The ledger commands of `razao` as a user runs them (analyze, diagnose, rows, on XLSX, XLS,
 * CSV and standard input): a child process (fixtures/razao-cli.ts), real files, real exit
 * codes. They read dates, so this file runs under both time zones (vitest.config.ts); the
 * rest of the command (help, usage, serve, verify) is in cli.test.ts, under UTC only.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { generateLedger } from '../fixtures/ledger/generate.js'
import type { LedgerFacts } from '../fixtures/ledger/generate.js'
import { writeTinyXlsx } from '../fixtures/tiny-xlsx.js'
import { runRazao } from '../fixtures/razao-cli.js'
import type { RazaoRun } from '../fixtures/razao-cli.js'
import { centsToDecimal } from '../core/money/index.js'

let dir: string
let ledger: string
let facts: LedgerFacts

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'razao-cli-ledger-'))
  ledger = join(dir, 'ledger.xlsx')
  facts = await generateLedger({ path: ledger, format: 'xlsx', rows: 800, seed: 5, unbalancedGroups: 2, dateStyle: 'text-br' })
})
afterAll(async () => { await rm(dir, { recursive: true, force: true }) })

async function razao (args: string[], env: Record<string, string> = {}, stdin?: Buffer): Promise<RazaoRun> {
  return await runRazao(args, { cwd: join(import.meta.dirname, '..'), env: { ...process.env, RAZAO_DATA_DIR: join(dir, 'data'), ...env }, stdin })
}

/** `razao analyze ledger.xlsx`, run once for the tests that compare other inputs with it. */
let analyzedLedger: Promise<RazaoRun> | undefined
const analyzeLedger = async (): Promise<RazaoRun> => await (analyzedLedger ??= razao(['analyze', ledger]))

describe('razao analyze, diagnose and rows', () => {
  it('reads a ledger from standard input with -, with the same answer as from its file (file name "stdin")', async () => {
    const [fromStdin, fromFile, rows] = await Promise.all([
      razao(['analyze', '-'], {}, await readFile(ledger)),
      analyzeLedger(),
      razao(['rows', '-', '--limit', '3'], {}, await readFile(ledger))
    ])
    expect(fromStdin.code).toBe(0)
    const { file_name: name, ...body } = JSON.parse(fromStdin.stdout) as Record<string, unknown>
    const { file_name: _name, ...expected } = JSON.parse(fromFile.stdout) as Record<string, unknown>
    expect(name).toBe('stdin')
    expect(body).toEqual(expected)
    expect(rows.stdout.trim().split('\n')).toHaveLength(3)
  })

  it('analyze prints the /v1/analyze JSON', async () => {
    const run = await razao(['analyze', ledger, '--batch-size', '100'])
    expect(run.code).toBe(0)
    const body = JSON.parse(run.stdout) as Record<string, unknown>
    expect(body).toMatchObject({
      success: true,
      file_name: 'ledger.xlsx',
      total_rows: facts.totalRows,
      total_batches: Math.ceil(facts.totalRows / 100),
      total_debit: facts.totalDebitCents / 100,
      total_credit: facts.totalCreditCents / 100,
      unbalanced_lots: 2,
      min_date: facts.minDate,
      max_date: facts.maxDate
    })
    expect(body.sha256).toMatch(/^[0-9a-f]{64}$/)
    // No progress bar when stderr is not a terminal.
    expect(run.stderr).toBe('')
  })

  it('analyze --problems writes every problem cell, in the order found, as CSV for Excel (BOM, ;, quoted, formulas kept as text)', async () => {
    const path = join(dir, 'problemas.xlsx')
    const header = ['id', 'id_movim_finan', 'data', 'id_conta', 'planejamento_analitico', 'id_planejamento', 'planejamento', 'tipo', 'cod_planejamento', 'credito', 'debito']
    const text = (v: string): string => `<c t="inlineStr"><is><t xml:space="preserve">${v}</t></is></c>`
    const row = (cells: string[]): string => `<row>${cells.map((v) => v === '' ? '<c/>' : text(v)).join('')}</row>`
    await writeTinyXlsx(path, {
      sheet: row(header) +
        row(['1', '10', '01/02/2024', '3001', 'Conta', '77', 'Plano', 'AJUSTE', '1.2.3', '', '-12,50']) +
        row(['2', '10', '31/02/2024', '3001', 'Conta', '77', 'Plano', 'AJUSTE', '1.2.3', '@SUM(1;2)', ''])
    })
    const out = join(dir, 'problemas.csv')
    const run = await razao(['analyze', path, '--problems', out])
    expect(run.code).toBe(0)
    expect(JSON.parse(run.stdout)).toMatchObject({ invalid_cells: 2, negative_amounts: 1 })
    const bytes = await readFile(out)
    expect([...bytes.subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf])
    expect(bytes.subarray(3).toString('utf8').split('\r\n')).toEqual([
      'linha;coluna;valor_original;motivo',
      '2;debito;-12,50;"NEGATIVE_AMOUNT: The amount is negative; it is kept with its sign in the totals. Check that this is intended."',
      `3;credito;"'@SUM(1;2)";INVALID_AMOUNT: The amount cannot be read as a number: use digits with a comma or point for the cents (1.234,56 or 1234.56).`,
      '3;data;31/02/2024;INVALID_DATE: The date cannot be read or does not exist: use a date cell, dd/mm/yyyy or yyyy-mm-dd.',
      ''
    ])
  })

  it('diagnose prints the unbalanced groups with their sheet rows, and exits 1 as the ledger is unbalanced', async () => {
    const run = await razao(['diagnose', ledger])
    expect(run.code).toBe(1)
    expect(run.stderr).toBe(`razao: ledger.xlsx is not balanced: 2 unbalanced group(s), difference ${centsToDecimal(facts.totalDebitCents - facts.totalCreditCents)}\n`)
    const body = JSON.parse(run.stdout) as { grupos_desbalanceados: Array<{ id_movim_finan: number, linhas: Array<{ linha_origem: number }> }> }
    expect(body.grupos_desbalanceados.map((g) => g.id_movim_finan).sort((a, b) => a - b)).toEqual(facts.unbalancedGroupIds)
    for (const g of body.grupos_desbalanceados) {
      expect(g.linhas.map((l) => l.linha_origem)).toEqual(facts.unbalancedGroupRows[g.id_movim_finan])
    }
  })

  it('rows shows the first sheet as read, with sheet row numbers and typed cells (a formula saved without its value as null)', async () => {
    const path = join(dir, 'rows.xlsx')
    await writeTinyXlsx(path, {
      styles: { cellXfs: [0, 14, 22] },
      sheet: '<row r="2"><c t="inlineStr"><is><t>texto</t></is></c><c><v>1.5</v></c><c s="1"><v>45000</v></c><c s="2"><v>45000.75</v></c>' +
        '<c t="b"><v>1</v></c><c t="e"><v>#DIV/0!</v></c><c r="H2"><v>3</v></c><c r="I2"><f>H2*2</f></c><c r="J2"><v>4</v></c></row><row r="9"><c><v>9</v></c></row><row r="10"><c><v>10</v></c></row>'
    })
    const run = await razao(['rows', path, '--limit', '2'])
    expect(run.code).toBe(0)
    expect(run.stdout.trim().split('\n').map((l) => JSON.parse(l) as unknown)).toEqual([
      { row: 2, cells: ['texto', 1.5, '2023-03-15', '2023-03-15T18:00:00', true, '#DIV/0!', null, 3, null, 4] },
      { row: 9, cells: [9] }
    ])
  })

  it('reads XLS in a thread of its own, with the same answers as for the same ledger in XLSX', async () => {
    const xls = join(dir, 'ledger.xls')
    const xlsFacts = await generateLedger({ path: xls, format: 'xls', rows: 800, seed: 5, unbalancedGroups: 2, dateStyle: 'text-br' })
    const analyzed = await razao(['analyze', xls])
    expect(analyzed.code).toBe(0)
    expect(JSON.parse(analyzed.stdout)).toMatchObject({
      file_name: 'ledger.xls',
      total_rows: xlsFacts.totalRows,
      total_debit: xlsFacts.totalDebitCents / 100,
      total_credit: xlsFacts.totalCreditCents / 100,
      unbalanced_lots: 2
    })
    const [fromXls, fromXlsx] = await Promise.all([razao(['rows', xls, '--limit', '5']), razao(['rows', ledger, '--limit', '5'])])
    expect(fromXls.code).toBe(0)
    expect(fromXls.stdout.trim().split('\n')).toHaveLength(5)
    expect(fromXls.stdout).toBe(fromXlsx.stdout)
  })

  it('reads the same ledger as a Windows-1252 CSV with the same analysis; rows prints its records as text', async () => {
    const csv = join(dir, 'ledger.csv')
    expect(await generateLedger({ path: csv, format: 'csv', csv: { delimiter: ';', encoding: 'windows-1252' }, rows: 800, seed: 5, unbalancedGroups: 2, dateStyle: 'text-br' })).toEqual(facts)
    const [fromCsv, fromXlsx] = await Promise.all([razao(['analyze', csv]), analyzeLedger()])
    expect(fromCsv.code).toBe(0)
    const { file_name: csvName, sha256: _csvHash, ...csvBody } = JSON.parse(fromCsv.stdout) as Record<string, unknown>
    const { sha256: _xlsxHash, file_name: _xlsxName, ...xlsxBody } = JSON.parse(fromXlsx.stdout) as Record<string, unknown>
    expect(csvName).toBe('ledger.csv')
    expect(csvBody).toEqual(xlsxBody)
    const rows = await razao(['rows', csv, '--limit', '2'])
    expect(rows.code).toBe(0)
    const [header, first] = rows.stdout.trim().split('\n').map((l) => JSON.parse(l) as { row: number, cells: unknown[] })
    expect(header).toEqual({ row: 1, cells: ['id', 'id_movim_finan', 'data', 'id_conta', 'planejamento_analitico', 'id_planejamento', 'planejamento', 'tipo', 'cod_planejamento', 'credito', 'debito'] })
    expect(first!.row).toBe(2)
    expect(first!.cells).toHaveLength(11)
    expect(first!.cells.slice(0, 3)).toEqual([expect.stringMatching(/^\d+$/), expect.stringMatching(/^\d+$/), expect.stringMatching(/^\d\d\/\d\d\/\d{4}$/)])
  })
})
