#!/usr/bin/env node
/**
 * The `razao` command: runs the services and gives command-line access to the same
 * operations (`analyze`, `diagnose`, `rows`). JSON goes to stdout, progress and
 * messages to stderr, so output can be piped.
 */
import { randomUUID } from 'node:crypto'
import { createWriteStream } from 'node:fs'
import { stat } from 'node:fs/promises'
import { finished } from 'node:stream/promises'
import { basename, join } from 'node:path'
import { parseArgs } from 'node:util'
import dotenv from 'dotenv'
import { EngineError, hasCode } from '../core/errors.js'
import { sha256File } from '../core/files/index.js'
import { detectFormat, sheetReader } from '../core/xlsx/index.js'
import { REQUIRED_COLUMNS } from '../core/ledger/index.js'
import { runLedgerJob } from '../workers/ledger-job.js'
import { ConfigError, loadConfig } from './config.js'
import type { Config } from './config.js'
import { parseBatchSize, parseSheet } from './import/params.js'
import { toAnalyzeResponse, toDiagnoseResponse, toProcessResponse } from './import/wire.js'
import { toWireCompany } from './import/companies-wire.js'
import { DatabaseError, openDatabase } from './database.js'
import type { Database } from './database.js'
import { addCompany, listCompanies, normalizeCompany, setCompanyActive } from '../core/db/companies.js'
import { runXlsInIsolate } from '../workers/xls-isolate.js'
import type { CellProblem } from '../core/ledger/index.js'
import { loadProgressLine, progressBar } from './progress.js'
import { ImportStopped, runCliImport } from './import/cli-load.js'
import { importsCommand } from './import/cli-imports.js'
import { problemCsvLine, problemsCsvHead } from './import/problems-csv.js'
import { loadExtractConfig } from './extract/config.js'
import { extractStoredFile } from './extract/run.js'
import { errorBody, toResponse } from './extract/wire.js'
import { createPool } from '../workers/pool.js'
import { SERVICES, startServices } from './serve.js'
import { rekeyCertificates } from '../core/gateway/index.js'
import { rekeyKeys } from './gateway/rekey-command.js'
import type { ServiceName } from './serve.js'

const HELP = `razao — back-office services of the firm

Usage:
  razao serve [import|sign|extract|gateway|agent|all]   start services (default: all built ones)
  razao analyze FILE [--batch-size N] [--sheet S] [--problems OUT.csv]
                                                        the /v1/analyze JSON for a ledger file (and every problem cell as CSV)
  razao diagnose FILE [--batch-size N] [--sheet S]      the /v1/diagnose-unbalanced JSON
  razao rows FILE [--limit N] [--sheet S]               the sheet (a CSV: its records) as read, one JSON line per row
  razao import FILE --codigo-dominio CODE [--reimportar] [--batch-size N] [--sheet S] [--follow]
                                                        the /v1/process operation: load the ledger into the database
                                                        (--follow: phase, rows, rate and time left on stderr; Ctrl-C cancels it)
  razao imports list [--codigo-dominio CODE] [--status S] [--limit N]
                                                        the imports, newest first, as JSON
  razao imports show ID                                 one import: phase, progress, result or error
  razao imports cancel ID                               cancel an import wherever it runs, and wait for its end
  razao companies add --codigo-dominio CODE --nome NAME [--cnpj CNPJ]
  razao companies list                                  every registered company, as JSON
  razao companies deactivate --codigo-dominio CODE
  razao companies activate --codigo-dominio CODE
  razao extract FILE... [--evidence]                    the /api/v1/pdf/extract JSON of each PDF
  razao gateway rekey [--old-key-file F] [--new-key-file F]
                                                        re-encrypt the stored certificates under a new master key
                                                        (GATEWAY_NEW_MASTER_KEY; old: GATEWAY_OLD_MASTER_KEY or the current one)
  razao sign IN.pdf -o OUT.pdf [--level B|T|LT|LTA] [--stamp MODE]
                                                        sign a PDF as POST /api/v1/sign does (razao sign --help)
  razao sign --check                                    the signing certificate: days left, warnings
  razao samples DIR [--force]                           write files to try every service on (invented data);
                                                        an existing file is kept unless --force, a link always refused
  razao --help                                          this text

Configuration comes from environment variables and an optional .env file in the
working directory (see docs/configuration.md). Services: ${SERVICES.join(', ')}.
`

/** Exit codes: 1 the file or operation failed, 2 wrong usage or configuration. */
class UsageError extends Error {}

async function main (argv: string[]): Promise<void> {
  if (argv[0] === 'sign') return await (await import('./sign/cli-sign.js')).signCommand(argv.slice(1))
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      help: { type: 'boolean', short: 'h' },
      limit: { type: 'string' },
      'batch-size': { type: 'string' },
      sheet: { type: 'string' },
      'codigo-dominio': { type: 'string' },
      nome: { type: 'string' },
      cnpj: { type: 'string' },
      reimportar: { type: 'boolean' },
      evidence: { type: 'boolean' },
      follow: { type: 'boolean' },
      status: { type: 'string' },
      problems: { type: 'string' },
      'old-key-file': { type: 'string' },
      'new-key-file': { type: 'string' },
      force: { type: 'boolean' }
    }
  })
  const [command, ...rest] = positionals
  if (values.help === true || command === undefined || command === 'help') {
    process.stdout.write(HELP)
    return
  }
  dotenv.config({ quiet: true })
  switch (command) {
    case 'serve': return await serve(rest[0] ?? 'all', loadConfig(process.env))
    case 'analyze':
    case 'diagnose': return await analyzeFile(command, requireFile(rest), values['batch-size'], values.sheet, loadConfig(process.env), command === 'analyze' ? values.problems : undefined)
    case 'rows': return await printRows(requireFile(rest), values.limit, values.sheet, loadConfig(process.env))
    case 'import': return await importFile(requireFile(rest), values, loadConfig(process.env))
    case 'companies': return await companies(rest[0], values, loadConfig(process.env))
    case 'imports': {
      const config = loadConfig(process.env)
      return await importsCommand(rest, values, (work) => withDatabase(config, work), (message) => new UsageError(message))
    }
    case 'extract': return await extractFiles(rest, values.evidence === true, loadConfig(process.env))
    case 'gateway': return await gateway(rest[0], values['old-key-file'], values['new-key-file'], loadConfig(process.env))
    case 'samples': return await writeSampleFiles(rest[0], values.force === true)
    default: throw new UsageError(`unknown command "${command}"; see razao --help`)
  }
}

function requireFile (rest: string[]): string {
  const file = rest[0]
  if (file === undefined) throw new UsageError('missing FILE; see razao --help')
  return file
}

async function serve (which: string, config: Config): Promise<void> {
  let names: ServiceName[]
  if (which === 'all') names = [...SERVICES]
  else if ((SERVICES as readonly string[]).includes(which)) names = [which as ServiceName]
  else throw new UsageError(`unknown service "${which}"; choose one of ${SERVICES.join(', ')} or all`)
  const running = await startServices(names, config, (line) => process.stderr.write(`${line}\n`))
  for (const { name, url } of running.apps) process.stderr.write(`razao ${name} service listening on ${url}\n`)
  let closing = false
  const shutdown = (signal: string): void => {
    if (closing) return
    closing = true
    process.stderr.write(`razao: ${signal} received, shutting down\n`)
    running.close().then(() => process.exit(0), () => process.exit(1))
  }
  process.once('SIGINT', () => shutdown('SIGINT'))
  process.once('SIGTERM', () => shutdown('SIGTERM'))
}

async function analyzeFile (operation: 'analyze' | 'diagnose', path: string, batchSizeText: string | undefined, sheetText: string | undefined, config: Config, problemsPath?: string): Promise<void> {
  const batchSize = parseBatchSize(batchSizeText)
  const sheet = parseSheet(sheetText)
  const format = await detectFormat(path)
  const problems = problemsPath === undefined ? undefined : new ProblemsFile(problemsPath)
  const progress = progressBar(`${operation} ${basename(path)}`)
  const input = { path, operation, batchSize, maxInflatedBytes: config.import.maxInflatedBytes, sheet, withProblems: problems !== undefined && format === 'xls' }
  // XLS goes through SheetJS in a thread of its own, as in the service (workers/xls-isolate.ts).
  const [sha256, result] = await Promise.all([
    sha256File(path),
    format === 'xls' ? runXlsInIsolate({ job: 'ledger', input }) : runLedgerJob(input, format, progress.update, problems?.write)
  ]).finally(() => progress.finish())
  if (problems !== undefined) {
    if (result.operation === 'analyze') for (const p of result.problems ?? []) problems.write(p)
    await problems.close()
  }
  const file = { fileName: basename(path), sha256 }
  const body = result.operation === 'analyze' ? toAnalyzeResponse(file, result.analysis) : toDiagnoseResponse(file, result.diagnosis)
  process.stdout.write(`${JSON.stringify(body, null, 2)}\n`)
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

type Flags = {
  'codigo-dominio'?: string | undefined
  nome?: string | undefined
  cnpj?: string | undefined
  reimportar?: boolean | undefined
  'batch-size'?: string | undefined
  follow?: boolean | undefined
  status?: string | undefined
  limit?: string | undefined
  sheet?: string | undefined
}

function requireFlag (values: Flags, name: 'codigo-dominio' | 'nome'): string {
  const value = values[name]
  if (value === undefined || value.trim() === '') throw new UsageError(`missing --${name}; see razao --help`)
  return value
}

/** Runs `work` with the configured database (embedded or DATABASE_URL), closing it afterwards. */
async function withDatabase<T> (config: Config, work: (db: Database) => Promise<T>): Promise<T> {
  const db = await openDatabase(config.shared, { role: 'cli', log: (line) => process.stderr.write(`razao: ${line}\n`) })
  try {
    return await work(db)
  } finally {
    await db.close()
  }
}

async function companies (action: string | undefined, values: Flags, config: Config): Promise<void> {
  const print = (value: unknown): void => { process.stdout.write(`${JSON.stringify(value, null, 2)}\n`) }
  switch (action) {
    case 'add': {
      const input = { codigoDominio: requireFlag(values, 'codigo-dominio'), nome: requireFlag(values, 'nome'), cnpj: values.cnpj }
      normalizeCompany(input)
      return await withDatabase(config, async (db) => print(toWireCompany(await addCompany(db.pool, input))))
    }
    case 'list': return await withDatabase(config, async (db) => print((await listCompanies(db.pool)).map(toWireCompany)))
    case 'activate':
    case 'deactivate': {
      const code = requireFlag(values, 'codigo-dominio')
      return await withDatabase(config, async (db) => print(toWireCompany(await setCompanyActive(db.pool, code, action === 'activate'))))
    }
    default: throw new UsageError(`razao companies needs add, list, activate or deactivate${action === undefined ? '' : `, not "${action}"`}; see razao --help`)
  }
}

/** `razao gateway rekey`: one transaction; refused, changing nothing, when a stored value does not open with the old key. */
async function gateway (action: string | undefined, oldKeyFile: string | undefined, newKeyFile: string | undefined, config: Config): Promise<void> {
  if (action !== 'rekey') throw new UsageError(`razao gateway needs rekey${action === undefined ? '' : `, not "${action}"`}; see razao --help`)
  const { oldKey, newKey } = await rekeyKeys(process.env, { oldKeyFile, newKeyFile }, config.shared.dataDir)
  await withDatabase(config, async (db) => {
    const count = await rekeyCertificates(db.pool, oldKey, newKey)
    process.stdout.write(`${JSON.stringify({ certificados: count, chave_id_anterior: oldKey.id, chave_id_nova: newKey.id }, null, 2)}\n`)
    process.stderr.write(`razao: ${count} certificate(s) re-encrypted under the new master key. Set GATEWAY_MASTER_KEY to it and restart the gateway: a gateway still running with the old key cannot open them.\n`)
  })
}

async function importFile (path: string, values: Flags, config: Config): Promise<void> {
  const codigoDominio = requireFlag(values, 'codigo-dominio').trim()
  const batchSize = parseBatchSize(values['batch-size'])
  const sheet = parseSheet(values.sheet)
  const mode = values.reimportar === true ? 'REIMPORTAR' : 'NORMAL'
  const format = await detectFormat(path)
  const sha256 = await sha256File(path)
  const fileName = basename(path)
  await withDatabase(config, async (db) => {
    const input = { path, fileName, sha256, codigoDominio, mode, batchSize, maxInflatedBytes: config.import.maxInflatedBytes, databaseUrl: db.url, sheet } as const
    const bar = progressBar(`import ${fileName}`)
    const line = values.follow === true ? loadProgressLine(`import ${fileName}`) : undefined
    try {
      const result = await runCliImport(db, input, format, {
        onSnapshot: (s) => {
          if (line !== undefined) line.show(s)
          else if (s.bytesTotal !== null) bar.update(s.bytesRead, s.bytesTotal)
        },
        onInterrupt: () => {
          line?.finish()
          bar.finish()
          process.stderr.write('razao: interrupted; stopping the import (Ctrl-C again to leave at once)\n')
        }
      })
      line?.finish()
      bar.finish()
      process.stdout.write(`${JSON.stringify(toProcessResponse({ fileName, sha256 }, codigoDominio, mode, result), null, 2)}\n`)
    } catch (err) {
      line?.finish()
      bar.finish()
      throw err
    }
  })
}

/**
 * `razao samples DIR`: the files written, each with what it is for (server/samples.ts), on
 * stdout; each file not written named on stderr, and then exit 1.
 */
async function writeSampleFiles (dir: string | undefined, force: boolean): Promise<void> {
  if (dir === undefined) throw new UsageError('missing DIR; see razao --help')
  // Loaded here only: the generators are of no use to any other command.
  const { writeSamples } = await import('./samples.js')
  const { written, notWritten } = await writeSamples(dir, { force })
  for (const { file, use } of written) process.stdout.write(`${join(dir, file)}\t${use}\n`)
  const why = {
    exists: 'it already exists; kept as it is (--force replaces it)',
    link: 'it is a symbolic link; not followed or replaced, even with --force (remove it first)',
    'not-a-file': 'something other than a file has that name; left as it is'
  }
  for (const { file, reason } of notWritten) process.stderr.write(`razao: not written: ${join(dir, file)}: ${why[reason]}\n`)
  if (notWritten.length > 0) process.exitCode = 1
}

/**
 * `razao extract`: each PDF through the same pool task and limits as the service, in
 * parallel. One file: exactly the route's body. Several: one object per file, in the
 * order given, each the batch route's result (`fileName`, `status`, then the body).
 * Exit 1 when any file was not extracted (`success: false`); its JSON is printed all the same.
 */
async function extractFiles (paths: string[], evidence: boolean, config: Config): Promise<void> {
  if (paths.length === 0) throw new UsageError('missing FILE; see razao --help')
  const extract = loadExtractConfig(process.env)
  for (const path of paths) {
    const facts = await stat(path).catch(() => undefined)
    if (facts === undefined || !facts.isFile()) throw new UsageError(`cannot read ${path}: not a file`)
  }
  const requestId = `cli-${randomUUID()}`
  const pool = createPool({ maxThreads: Math.min(paths.length, config.shared.poolSize) })
  try {
    const answers = await Promise.all(paths.map(async (path): Promise<{ status: number, body: Record<string, unknown> }> => {
      try {
        if ((await stat(path)).size > extract.maxFileBytes) throw new EngineError('REQUEST_TOO_LARGE', `The file is larger than this service accepts (EXTRACT_MAX_FILE_BYTES, ${extract.maxFileBytes} bytes).`)
        return { status: 200, body: toResponse(await extractStoredFile(pool, path, extract), requestId, evidence) }
      } catch (err) {
        const answer = errorBody(err, requestId)
        if (answer.internal) process.stderr.write(`razao: ${path}: ${err instanceof Error ? err.message : String(err)}\n`)
        return answer
      }
    }))
    for (const [i, { status, body }] of answers.entries()) {
      const printed = paths.length === 1 ? body : { fileName: basename(paths[i]!), status, ...body }
      process.stdout.write(`${JSON.stringify(printed, null, 2)}\n`)
    }
    if (answers.some((a) => a.body.success !== true)) process.exitCode = 1
  } finally {
    await pool.destroy()
  }
}

async function printRows (path: string, limitText: string | undefined, sheetText: string | undefined, config: Config): Promise<void> {
  const sheet = parseSheet(sheetText)
  let limit = Infinity
  if (limitText !== undefined) {
    limit = Number(limitText)
    if (!/^\d+$/.test(limitText) || limit < 1) throw new UsageError(`--limit must be a positive whole number, got "${limitText}"`)
  }
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

// A reader that stops early (`razao rows big.xlsx | head`) is not an error.
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code === 'EPIPE') process.exit(0)
  throw err
})

// Node exits 0 when nothing is left to wait for, even with the command unfinished (a
// promise nobody will settle). That must never look like success.
let settled = false
process.once('beforeExit', () => {
  if (settled) return
  process.stderr.write('razao: the command stopped before finishing (nothing left to wait for); treat the operation as failed\n')
  process.exit(1)
})

main(process.argv.slice(2)).finally(() => { settled = true }).catch((err: unknown) => {
  if (err instanceof ImportStopped) {
    // Ctrl-C ends as a shell reports a command ended by SIGINT: 128 + 2. A cancel asked for elsewhere is a failed import.
    process.stderr.write(`razao: ${err.message}\n`)
    process.exit(err.byInterrupt ? 130 : 1)
  }
  if (err instanceof UsageError || err instanceof ConfigError || hasCode(err, 'REQUEST_INVALID')) {
    process.stderr.write(`razao: ${(err as Error).message}\n`)
    process.exit(2)
  }
  if (err instanceof DatabaseError) {
    process.stderr.write(`razao: ${err.message}\n`)
    process.exit(1)
  }
  if (hasCode(err, 'INTERNAL') || !(err instanceof Error) || !('code' in err)) {
    process.stderr.write(`razao: unexpected failure: ${err instanceof Error ? err.message : String(err)}\n`)
    process.exit(1)
  }
  process.stderr.write(`razao: ${err.message}\n`)
  process.exit(1)
})
