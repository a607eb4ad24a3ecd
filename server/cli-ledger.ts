/**
 * The ledger commands of `razao` (server/cli.ts): `analyze`, `diagnose`, `rows` and `import`.
 * Their own module so the command line loads the spreadsheet readers and the ledger job only
 * when one of these runs (cli.ts imports it when the command starts); the import into the
 * database, and the XLS reader's thread, only when they are needed.
 */
import { createWriteStream } from 'node:fs'
import { finished } from 'node:stream/promises'
import { sha256File } from '../core/files/index.js'
import { detectFormat, sheetReader } from '../core/xlsx/index.js'
import { REQUIRED_COLUMNS } from '../core/ledger/index.js'
import type { CellProblem } from '../core/ledger/index.js'
import { centsToDecimal } from '../core/money/index.js'
import { runLedgerJob } from '../workers/ledger-job.js'
import type { Config } from './config.js'
import type { Database } from './database.js'
import { UsageError } from './cli-usage.js'
import { withInputFile } from './cli-stdin.js'
import { parseBatchSize, parseSheet } from './import/params.js'
import { toAnalyzeResponse, toDiagnoseResponse, toProcessResponse } from './import/wire.js'
import { problemCsvLine, problemsCsvHead } from './import/problems-csv.js'
import { loadProgressLine, progressBar } from './progress.js'

type WithDatabase = <T>(work: (db: Database) => Promise<T>) => Promise<T>

export interface ImportOptions { codigoDominio: string, batchSize: string | undefined, sheet: string | undefined, reimportar: boolean, follow: boolean }

export async function analyzeFile (operation: 'analyze' | 'diagnose', given: string, batchSizeText: string | undefined, sheetText: string | undefined, config: Config, problemsPath?: string): Promise<void> {
  const batchSize = parseBatchSize(batchSizeText)
  const sheet = parseSheet(sheetText)
  if (problemsPath === '-') throw new UsageError('--problems - is not possible: standard output carries the JSON; give a file name')
  await withInputFile(given, async ({ path, name }) => {
    const format = await detectFormat(path)
    const problems = problemsPath === undefined ? undefined : new ProblemsFile(problemsPath)
    const progress = progressBar(`${operation} ${name}`)
    const input = { path, operation, batchSize, maxInflatedBytes: config.import.maxInflatedBytes, sheet, withProblems: problems !== undefined && format === 'xls' }
    // XLS goes through SheetJS in a thread of its own, as in the service (workers/xls-isolate.ts).
    const [sha256, result] = await Promise.all([
      sha256File(path),
      format === 'xls' ? import('../workers/xls-isolate.js').then(async ({ runXlsInIsolate }) => await runXlsInIsolate({ job: 'ledger', input })) : runLedgerJob(input, format, progress.update, problems?.write)
    ]).finally(() => progress.finish())
    if (problems !== undefined) {
      if (result.operation === 'analyze') for (const p of result.problems ?? []) problems.write(p)
      await problems.close()
    }
    const file = { fileName: name, sha256 }
    const body = result.operation === 'analyze' ? toAnalyzeResponse(file, result.analysis) : toDiagnoseResponse(file, result.diagnosis)
    process.stdout.write(`${JSON.stringify(body, null, 2)}\n`)
    // An unbalanced ledger is a failed check: scripts can test `razao diagnose` directly.
    if (result.operation === 'diagnose' && (result.diagnosis.groups.length > 0 || result.diagnosis.analysis.differenceCents !== 0)) {
      process.stderr.write(`razao: ${name} is not balanced: ${result.diagnosis.analysis.unbalancedGroups} unbalanced group(s), difference ${centsToDecimal(result.diagnosis.analysis.differenceCents)}\n`)
      process.exitCode = 1
    }
  })
}

/** `razao analyze --problems`: every problem cell, written as the analysis finds it (problems-csv.ts). */
class ProblemsFile {
  private readonly out
  private buffer: string
  constructor (path: string) {
    this.out = createWriteStream(path, { flags: 'w' })
    this.out.on('error', () => undefined)
    this.buffer = problemsCsvHead()
  }

  readonly write = (p: CellProblem): void => {
    this.buffer += problemCsvLine(p)
    if (this.buffer.length > 65_536) {
      this.out.write(this.buffer)
      this.buffer = ''
    }
  }

  async close (): Promise<void> {
    this.out.end(this.buffer)
    await finished(this.out)
  }
}

/** `razao import`: the company's code already checked present (server/cli.ts). */
export async function importFile (given: string, options: ImportOptions, config: Config, withDatabase: WithDatabase): Promise<void> {
  const codigoDominio = options.codigoDominio.trim()
  const batchSize = parseBatchSize(options.batchSize)
  const sheet = parseSheet(options.sheet)
  const mode = options.reimportar ? 'REIMPORTAR' : 'NORMAL'
  const { runCliImport } = await import('./import/cli-load.js')
  await withInputFile(given, async ({ path, name: fileName }) => {
    const format = await detectFormat(path)
    const sha256 = await sha256File(path)
    await withDatabase(async (db) => {
      const input = { path, fileName, sha256, codigoDominio, mode, batchSize, maxInflatedBytes: config.import.maxInflatedBytes, databaseUrl: db.url, sheet } as const
      // On a terminal always; elsewhere (a log, a pipe) with --follow.
      const line = options.follow || process.stderr.isTTY ? loadProgressLine(`import ${fileName}`) : undefined
      try {
        const result = await runCliImport(db, input, format, {
          onSnapshot: (s) => { line?.show(s) },
          onInterrupt: () => {
            line?.finish()
            process.stderr.write('razao: interrupted; stopping the import (Ctrl-C again to leave at once)\n')
          }
        })
        line?.finish()
        process.stdout.write(`${JSON.stringify(toProcessResponse({ fileName, sha256 }, codigoDominio, mode, result), null, 2)}\n`)
      } catch (err) {
        line?.finish()
        throw err
      }
    })
  })
}

export async function printRows (given: string, limitText: string | undefined, sheetText: string | undefined, config: Config): Promise<void> {
  const sheet = parseSheet(sheetText)
  let limit = Infinity
  if (limitText !== undefined) {
    limit = Number(limitText)
    if (!/^\d+$/.test(limitText) || limit < 1) throw new UsageError(`--limit must be a positive whole number, got "${limitText}"`)
  }
  await withInputFile(given, async ({ path }) => { await printSheetRows(path, limit, sheet, config) })
}

async function printSheetRows (path: string, limit: number, sheet: ReturnType<typeof parseSheet>, config: Config): Promise<void> {
  const out = process.stdout
  let printed = 0
  let buffer = ''
  const flush = (): void => {
    if (buffer !== '') out.write(buffer)
    buffer = ''
  }
  const format = await detectFormat(path)
  if (format === 'xls') {
    // SheetJS reads XLS in a thread of its own, as in the service; BIFF8's 65,536 rows at most come back whole.
    const { runXlsInIsolate } = await import('../workers/xls-isolate.js')
    const { lines } = await runXlsInIsolate({ job: 'rows', input: { path, limit, maxInflatedBytes: config.import.maxInflatedBytes, sheet } })
    for (const line of lines) {
      buffer += `${line}\n`
      if (buffer.length > 65_536) flush()
    }
    flush()
    return
  }
  // A CSV's separator is the one that gives the ledger's columns, as an import reads it.
  await sheetReader(format)(path, (row, cells) => {
    buffer += `${JSON.stringify({ row, cells })}\n`
    if (buffer.length > 65_536) flush()
    return ++printed < limit
  }, {
    maxInflatedBytes: config.import.maxInflatedBytes,
    sheet,
    headerColumns: REQUIRED_COLUMNS,
    afterChunk: () => out.writableNeedDrain ? new Promise<void>((resolve) => out.once('drain', resolve)) : undefined
  })
  flush()
}
