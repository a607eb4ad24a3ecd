#!/usr/bin/env node
/**
 * The `razao` command: runs the services and gives command-line access to the same
 * operations (`analyze`, `diagnose`, `rows`). JSON goes to stdout, progress and
 * messages to stderr, so output can be piped. Exit codes: 1 the file or operation
 * failed, 2 wrong usage or configuration (server/cli-usage.ts).
 */
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import dotenv from 'dotenv'
import { hasCode } from '../core/errors.js'
import { ConfigError, loadConfig } from './config.js'
import type { Config } from './config.js'
import type { Database } from './database.js'
import type { ImportStopped } from './import/cli-load.js'
import { SERVICES } from './service-names.js'
import type { ServiceName } from './service-names.js'
import { UsageError, parseCommandLine } from './cli-usage.js'
import type { CommandTable, OptionSpec, OptionValues } from './cli-usage.js'
import { withInputFile, withInputFiles } from './cli-stdin.js'
import { documentsCommand } from './gateway/cli-documents.js'
import { manifestCommand } from './gateway/cli-manifest.js'

// Each command imports what it runs on when it starts (await import(...) below): loading every
// service's modules cost every start, `razao --version` included, about half a second of CPU.
// The modules imported above are the light ones the table, the help and the error handling need.

const env = (): Config => loadConfig(process.env)
const text = (values: OptionValues, name: string): string | undefined => typeof values[name] === 'string' ? values[name] : undefined
const flag = (values: OptionValues, name: string): boolean => values[name] === true
const BATCH: OptionSpec = { type: 'string', value: 'N', help: 'rows per batch, 100 to 10000 (default 1000), as the service\'s batch_size' }
const SHEET: OptionSpec = { type: 'string', value: 'S', help: 'the sheet, by name or position from 1 (default: the first visible one)' }
const CODIGO: OptionSpec = { type: 'string', value: 'CODE', help: 'the company\'s code in the accounting system (codigo_dominio)' }

/**
 * Every command: its usage, options and what runs it (server/cli-usage.ts reads this table
 * for --help, for refusing options a command does not take, and for exit 2). A new command
 * is one more entry here; its code lives in a module of its own.
 */
const COMMANDS: CommandTable = {
  serve: {
    usage: [['serve [import|sign|extract|gateway|agent|all]', 'start services (default: all built ones)']],
    options: {},
    maxArgs: 1,
    details: 'Each service listens on its own port (IMPORT_PORT, SIGN_PORT, EXTRACT_PORT, GATEWAY_PORT, and PORT for the agent); Ctrl-C or SIGTERM stops them cleanly.',
    run: async ([which]) => { await serve(which ?? 'all', env()) }
  },
  analyze: {
    usage: [['analyze FILE [--batch-size N] [--sheet S] [--problems OUT.csv]', 'the /v1/analyze JSON for a ledger file (and every problem cell as CSV)']],
    options: { 'batch-size': BATCH, sheet: SHEET, problems: { type: 'string', value: 'OUT.csv', help: 'also write every problem cell found, as CSV for Excel' } },
    maxArgs: 1,
    details: 'FILE is an XLSX, XLS, CSV or TXT ledger; - reads it from standard input.',
    run: async (args, v) => { await (await import('./cli-ledger.js')).analyzeFile('analyze', requireFile(args, 'analyze'), text(v, 'batch-size'), text(v, 'sheet'), env(), text(v, 'problems')) }
  },
  diagnose: {
    usage: [['diagnose FILE [--batch-size N] [--sheet S]', 'the /v1/diagnose-unbalanced JSON (exit 1 when the ledger is unbalanced)']],
    options: { 'batch-size': BATCH, sheet: SHEET },
    maxArgs: 1,
    details: 'FILE is an XLSX, XLS, CSV or TXT ledger; - reads it from standard input. The JSON is printed either way;\nthe exit code is 1 when some group (id_movim_finan) is unbalanced, so scripts can test it.',
    run: async (args, v) => { await (await import('./cli-ledger.js')).analyzeFile('diagnose', requireFile(args, 'diagnose'), text(v, 'batch-size'), text(v, 'sheet'), env()) }
  },
  rows: {
    usage: [['rows FILE [--limit N] [--sheet S]', 'the sheet (a CSV: its records) as read, one JSON line per row']],
    options: { limit: { type: 'string', value: 'N', help: 'stop after N rows' }, sheet: SHEET },
    maxArgs: 1,
    details: 'FILE is an XLSX, XLS, CSV or TXT ledger; - reads it from standard input.',
    run: async (args, v) => { await (await import('./cli-ledger.js')).printRows(requireFile(args, 'rows'), text(v, 'limit'), text(v, 'sheet'), env()) }
  },
  import: {
    usage: [
      ['import FILE --codigo-dominio CODE [--reimportar] [--batch-size N] [--sheet S] [--follow]', 'the /v1/process operation: load the ledger into the database'],
      ['', '(--follow: phase, rows, rate and time left on stderr; Ctrl-C cancels it)']
    ],
    options: {
      'codigo-dominio': CODIGO,
      reimportar: { type: 'boolean', help: 'replace the company\'s active import of the same file (modo_importacao REIMPORTAR)' },
      'batch-size': BATCH,
      sheet: SHEET,
      follow: { type: 'boolean', help: 'show the phase, rows read, rate and time left on stderr, also when it is not a terminal' }
    },
    maxArgs: 1,
    details: 'FILE is an XLSX, XLS, CSV or TXT ledger; - reads it from standard input (its file name is then "stdin").\nCtrl-C stops the load and rolls it back (exit 130).',
    run: async (args, v) => {
      const given = requireFile(args, 'import')
      const config = env()
      const options = { codigoDominio: requireFlag(v, 'codigo-dominio', 'import'), batchSize: text(v, 'batch-size'), sheet: text(v, 'sheet'), reimportar: flag(v, 'reimportar'), follow: flag(v, 'follow') }
      await (await import('./cli-ledger.js')).importFile(given, options, config, (work) => withDatabase(config, work))
    }
  },
  imports: {
    usage: [
      ['imports list [--codigo-dominio CODE] [--status S] [--limit N]', 'the imports, newest first, as JSON'],
      ['imports show ID', 'one import: phase, progress, result or error'],
      ['imports cancel ID', 'cancel an import wherever it runs, and wait for its end']
    ],
    options: { 'codigo-dominio': CODIGO, status: { type: 'string', value: 'S', help: 'only imports in this status (RECEBIDO, PROCESSANDO, VALIDADO, SUBSTITUIDO, FALHOU, CANCELADO)' }, limit: { type: 'string', value: 'N', help: 'at most N imports (default 50)' } },
    maxArgs: 2,
    run: async (args, v) => {
      const config = env()
      const { importsCommand } = await import('./import/cli-imports.js')
      await importsCommand(args, { 'codigo-dominio': text(v, 'codigo-dominio'), status: text(v, 'status'), limit: text(v, 'limit') }, (work) => withDatabase(config, work), (message) => new UsageError(message))
    }
  },
  companies: {
    usage: [
      ['companies add --codigo-dominio CODE --nome NAME [--cnpj CNPJ]', 'register a company'],
      ['companies list', 'every registered company, as JSON'],
      ['companies deactivate --codigo-dominio CODE'],
      ['companies activate --codigo-dominio CODE']
    ],
    options: { 'codigo-dominio': CODIGO, nome: { type: 'string', value: 'NAME', help: 'the company\'s name' }, cnpj: { type: 'string', value: 'CNPJ', help: 'its CNPJ, formatted or not (check digits are verified)' } },
    maxArgs: 1,
    run: async ([action], v) => { await companies(action, v, env()) }
  },
  extract: {
    usage: [['extract FILE|FOLDER... [--evidence] [--csv]', 'the /api/v1/pdf/extract JSON of each PDF']],
    options: {
      evidence: { type: 'boolean', help: 'also show where each field was read (evidence, candidates)' },
      csv: { type: 'boolean', help: 'one CSV row per file instead (;, BOM, decimal commas: for Excel), a column per field' }
    },
    details: 'One FILE: the route\'s body. Several, or a FOLDER (its PDFs, every level down): NDJSON, one line per file in order (fileName, path, status, then the body). - reads one PDF from standard input.\nExit 1 when any file was not extracted (its line is printed all the same).',
    run: async (args, v) => { await extractFiles(args, { evidence: flag(v, 'evidence'), csv: flag(v, 'csv') }, env()) }
  },
  sign: {
    usage: [
      ['sign IN.pdf -o OUT.pdf [--level B|T|LT|LTA] [--stamp MODE]', 'sign a PDF as POST /api/v1/sign does'],
      ['sign --check', 'the signing certificate: days left, warnings']
    ],
    options: {
      output: { type: 'string', short: 'o', value: 'OUT.pdf', help: 'where the signed PDF goes (- : standard output, the summary then on stderr)' },
      level: { type: 'string', value: 'L', help: 'the PAdES level asked of the service: B, T, LT or LTA' },
      stamp: { type: 'string', value: 'MODE', help: 'the visual mode for this file: NONE, STAMP_ONLY, PAGE_ONLY or STAMP_AND_PAGE (default SIGN_VISUAL_MODE)' },
      check: { type: 'boolean', help: 'report the configured certificate (signer, end of validity, days left, warnings) instead of signing' }
    },
    maxArgs: 1,
    details: 'Signs IN.pdf with the configured certificate (SIGN_CERT_PATH; outside production, the development one) and writes OUT.pdf\n(beside it first, then renamed over it). IN may be - (standard input). A JSON summary (identifier, time, standard,\nSHA-256, warnings) goes to stdout. --check exits 0 when the certificate can sign, 1 when it cannot; warnings start\n30 days before its end.',
    run: async (args, v) => { await (await import('./sign/cli-sign.js')).signCommand(args, { output: text(v, 'output'), level: text(v, 'level'), stamp: text(v, 'stamp'), check: flag(v, 'check') }) }
  },
  verify: {
    usage: [['verify FILE [--trust DIR]', 'check a signed PDF\'s signatures (the /api/v1/verify report as JSON)']],
    options: { trust: { type: 'string', value: 'DIR', help: 'folder of trusted root certificates (default SIGN_TRUST_DIR, else the shipped ICP-Brasil roots)' } },
    maxArgs: 1,
    details: 'One line per signature on stderr. Exit 0 when every signature is valid; 1 when one is invalid or not trustworthy, the file has no signature or is not a PDF. - reads the PDF from standard input.',
    run: async (args, v) => {
      const given = requireFile(args, 'verify')
      const { verifyFile } = await import('./sign/cli-verify.js')
      await withInputFile(given, async ({ path, name, fromStdin }) => {
        process.exitCode = await verifyFile(path, { trust: text(v, 'trust'), name: fromStdin ? name : undefined })
      })
    }
  },
  gateway: {
    usage: [
      ['gateway rekey [--old-key-file F] [--new-key-file F]', 're-encrypt the stored certificates under a new master key'],
      ['', '(GATEWAY_NEW_MASTER_KEY; old: GATEWAY_OLD_MASTER_KEY or the current one)']
    ],
    options: { 'old-key-file': { type: 'string', value: 'F', help: 'the old master key\'s file (- : standard input)' }, 'new-key-file': { type: 'string', value: 'F', help: 'the new master key\'s file (- : standard input)' } },
    maxArgs: 1,
    run: async ([action], v) => { await gateway(action, text(v, 'old-key-file'), text(v, 'new-key-file'), env()) }
  },
  documents: documentsCommand((work) => withDatabase(env(), work)),
  manifest: manifestCommand(env, (work) => withDatabase(env(), work)),
  samples: {
    usage: [
      ['samples DIR [--force]', 'write files to try every service on (invented data);'],
      ['', 'an existing file is kept unless --force, a link always refused']
    ],
    options: { force: { type: 'boolean', help: 'replace existing regular files (links, folders and devices are still left alone)' } },
    maxArgs: 1,
    run: async ([dir], v) => { await writeSampleFiles(dir, flag(v, 'force')) }
  }
}

const FOOTER = `Configuration comes from environment variables and an optional .env file in the
working directory (see docs/configuration.md). Services: ${SERVICES.join(', ')}.
`

async function main (argv: string[]): Promise<void> {
  const parsed = parseCommandLine(COMMANDS, argv, FOOTER)
  if (parsed.kind === 'help') {
    process.stdout.write(parsed.text)
    return
  }
  if (parsed.kind === 'version') {
    process.stdout.write(`razao ${await version()}\n`)
    return
  }
  dotenv.config({ quiet: true })
  await parsed.command.run(parsed.positionals, parsed.values)
}

/** package.json's version: beside server/ in the sources, beside dist/ once built. */
async function version (): Promise<string> {
  for (const path of [join(import.meta.dirname, '..', 'package.json'), join(import.meta.dirname, '..', '..', 'package.json')]) {
    const found = await readFile(path, 'utf8').then((t) => JSON.parse(t) as { name?: string, version?: string }, () => undefined)
    if (found?.name === 'razao' && typeof found.version === 'string') return found.version
  }
  return 'unknown'
}

function requireFile (rest: string[], command: string): string {
  const file = rest[0]
  if (file === undefined) throw new UsageError(`missing FILE (- reads standard input); see razao ${command} --help`)
  return file
}

async function serve (which: string, config: Config): Promise<void> {
  let names: ServiceName[]
  if (which === 'all') names = [...SERVICES]
  else if ((SERVICES as readonly string[]).includes(which)) names = [which as ServiceName]
  else throw new UsageError(`unknown service "${which}"; choose one of ${SERVICES.join(', ')} or all`)
  const { ServiceStartError, startServices } = await import('./serve.js')
  const running = await startServices(names, config, (line) => process.stderr.write(`${line}\n`)).catch((err: unknown) => {
    if (err instanceof ServiceStartError && names.length > 1) {
      throw new ServiceStartError(err.service, `${err.message} Nothing is left running: razao serve ${which} starts all of ${names.join(', ')} or none.`)
    }
    throw err
  })
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

function requireFlag (values: OptionValues, name: 'codigo-dominio' | 'nome', command: string): string {
  const value = text(values, name)
  if (value === undefined || value.trim() === '') throw new UsageError(`missing --${name}; see razao ${command} --help`)
  return value
}

/** Runs `work` with the configured database (embedded or DATABASE_URL), closing it afterwards. */
async function withDatabase<T> (config: Config, work: (db: Database) => Promise<T>): Promise<T> {
  const { openDatabase } = await import('./database.js')
  const db = await openDatabase(config.shared, { role: 'cli', log: (line) => process.stderr.write(`razao: ${line}\n`) })
  try {
    return await work(db)
  } finally {
    await db.close()
  }
}

async function companies (action: string | undefined, values: OptionValues, config: Config): Promise<void> {
  const print = (value: unknown): void => { process.stdout.write(`${JSON.stringify(value, null, 2)}\n`) }
  const [{ addCompany, listCompanies, normalizeCompany, setCompanyActive }, { toWireCompany }] = await Promise.all([import('../core/db/companies.js'), import('./import/companies-wire.js')])
  switch (action) {
    case 'add': {
      const input = { codigoDominio: requireFlag(values, 'codigo-dominio', 'companies'), nome: requireFlag(values, 'nome', 'companies'), cnpj: text(values, 'cnpj') }
      normalizeCompany(input)
      return await withDatabase(config, async (db) => print(toWireCompany(await addCompany(db.pool, input))))
    }
    case 'list': return await withDatabase(config, async (db) => print((await listCompanies(db.pool)).map(toWireCompany)))
    case 'activate':
    case 'deactivate': {
      const code = requireFlag(values, 'codigo-dominio', 'companies')
      return await withDatabase(config, async (db) => print(toWireCompany(await setCompanyActive(db.pool, code, action === 'activate'))))
    }
    default: throw new UsageError(`razao companies needs add, list, activate or deactivate${action === undefined ? '' : `, not "${action}"`}; see razao companies --help`)
  }
}

/** `razao gateway rekey`: one transaction; refused, changing nothing, when a stored value does not open with the old key. */
async function gateway (action: string | undefined, oldKeyFile: string | undefined, newKeyFile: string | undefined, config: Config): Promise<void> {
  if (action !== 'rekey') throw new UsageError(`razao gateway needs rekey${action === undefined ? '' : `, not "${action}"`}; see razao gateway --help`)
  const [{ rekeyKeys }, { rekeyCertificates }] = await Promise.all([import('./gateway/rekey-command.js'), import('../core/gateway/index.js')])
  const { oldKey, newKey } = await rekeyKeys(process.env, { oldKeyFile, newKeyFile }, config.shared.dataDir)
  await withDatabase(config, async (db) => {
    const count = await rekeyCertificates(db.pool, oldKey, newKey)
    process.stdout.write(`${JSON.stringify({ certificados: count, chave_id_anterior: oldKey.id, chave_id_nova: newKey.id }, null, 2)}\n`)
    process.stderr.write(`razao: ${count} certificate(s) re-encrypted under the new master key. Set GATEWAY_MASTER_KEY to it and restart the gateway: a gateway still running with the old key cannot open them.\n`)
  })
}

/**
 * `razao samples DIR`: the files written, each with what it is for (server/samples.ts), on
 * stdout; each file not written named on stderr, and then exit 1.
 */
async function writeSampleFiles (dir: string | undefined, force: boolean): Promise<void> {
  if (dir === undefined) throw new UsageError('missing DIR; see razao samples --help')
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
 * `razao extract`: server/extract/cli-extract.ts, with `-` spooled from standard input first
 * (its name in the answers is `stdin`).
 */
async function extractFiles (given: string[], options: { evidence: boolean, csv: boolean }, config: Config): Promise<void> {
  if (given.length === 0) throw new UsageError('missing FILE (- reads standard input); see razao extract --help')
  const [{ loadExtractConfig }, { extractCommand }] = await Promise.all([import('./extract/config.js'), import('./extract/cli-extract.js')])
  const extract = loadExtractConfig(process.env)
  // One byte past the limit is enough to refuse a PDF read from standard input.
  await withInputFiles(given, async (files) => {
    const names = new Map(files.filter((f) => f.fromStdin).map((f) => [f.path, f.name]))
    await extractCommand(files.map((f) => f.path), options, config, (message) => new UsageError(message), names)
  }, { maxBytes: extract.maxFileBytes + 1 })
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

/**
 * Whether `err` is an instance of a class of a module the commands import when they run. The
 * module is imported here only when the error carries that class's name (each such class sets
 * it), so a usage error never loads the services; an error of that class was thrown by its
 * module, which is then loaded already and the import costs nothing.
 */
async function isLazy<T> (err: unknown, name: string, load: () => Promise<abstract new (...args: never[]) => T>): Promise<boolean> {
  return err instanceof Error && err.name === name && err instanceof await load()
}

main(process.argv.slice(2)).finally(() => { settled = true }).catch(async (err: unknown) => {
  if (await isLazy(err, 'ImportStopped', async () => (await import('./import/cli-load.js')).ImportStopped)) {
    const stopped = err as ImportStopped
    // Ctrl-C ends as a shell reports a command ended by SIGINT: 128 + 2. A cancel asked for elsewhere is a failed import.
    process.stderr.write(`razao: ${stopped.message}\n`)
    process.exit(stopped.byInterrupt ? 130 : 1)
  }
  if (err instanceof UsageError || err instanceof ConfigError || hasCode(err, 'REQUEST_INVALID')) {
    process.stderr.write(`razao: ${(err as Error).message}\n`)
    process.exit(2)
  }
  if (await isLazy(err, 'DatabaseError', async () => (await import('./database.js')).DatabaseError) ||
      await isLazy(err, 'ServiceStartError', async () => (await import('./serve.js')).ServiceStartError)) {
    process.stderr.write(`razao: ${(err as Error).message}\n`)
    process.exit(1)
  }
  if (hasCode(err, 'INTERNAL') || !(err instanceof Error) || !('code' in err)) {
    process.stderr.write(`razao: unexpected failure: ${err instanceof Error ? err.message : String(err)}\n`)
    process.exit(1)
  }
  process.stderr.write(`razao: ${err.message}\n`)
  process.exit(1)
})
