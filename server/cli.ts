#!/usr/bin/env node
/**
 * The `razao` command: runs the services and gives command-line access to the same
 * operations (`analyze`, `diagnose`, `rows`). JSON goes to stdout, progress and
 * messages to stderr, so output can be piped.
 */
import { basename } from 'node:path'
import { parseArgs } from 'node:util'
import dotenv from 'dotenv'
import { hasCode } from '../core/errors.js'
import { sha256File } from '../core/files/index.js'
import { detectFormat, readFirstSheet } from '../core/xlsx/index.js'
import { runLedgerJob } from '../workers/ledger-job.js'
import { ConfigError, loadConfig } from './config.js'
import type { Config } from './config.js'
import { parseBatchSize } from './import/params.js'
import { toAnalyzeResponse, toDiagnoseResponse } from './import/wire.js'
import { progressBar } from './progress.js'
import { PLANNED_SERVICES, SERVICES, startServices } from './serve.js'
import type { ServiceName } from './serve.js'

const HELP = `razao — back-office services of the firm

Usage:
  razao serve [import|sign|extract|gateway|agent|all]   start services (default: all built ones)
  razao analyze FILE [--batch-size N]                   the /v1/analyze JSON for a ledger file
  razao diagnose FILE [--batch-size N]                  the /v1/diagnose-unbalanced JSON
  razao rows FILE [--limit N]                           the first sheet as read, one JSON line per row
  razao --help                                          this text

Configuration comes from environment variables and an optional .env file in the
working directory (see README). Services built so far: ${SERVICES.join(', ')}.
`

/** Exit codes: 1 the file or operation failed, 2 wrong usage or configuration. */
class UsageError extends Error {}

async function main (argv: string[]): Promise<void> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      help: { type: 'boolean', short: 'h' },
      limit: { type: 'string' },
      'batch-size': { type: 'string' }
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
    case 'diagnose': return await analyzeFile(command, requireFile(rest), values['batch-size'], loadConfig(process.env))
    case 'rows': return await printRows(requireFile(rest), values.limit, loadConfig(process.env))
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
  else if ((PLANNED_SERVICES as readonly string[]).includes(which)) throw new UsageError(`the ${which} service is not built yet; built: ${SERVICES.join(', ')}`)
  else throw new UsageError(`unknown service "${which}"; choose one of ${PLANNED_SERVICES.join(', ')} or all`)
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

async function analyzeFile (operation: 'analyze' | 'diagnose', path: string, batchSizeText: string | undefined, config: Config): Promise<void> {
  const batchSize = parseBatchSize(batchSizeText)
  const format = await detectFormat(path)
  const progress = progressBar(`${operation} ${basename(path)}`)
  const [sha256, result] = await Promise.all([
    sha256File(path),
    runLedgerJob({ path, operation, batchSize, maxInflatedBytes: config.import.maxInflatedBytes }, format, progress.update)
  ]).finally(() => progress.finish())
  const file = { fileName: basename(path), sha256 }
  const body = result.operation === 'analyze' ? toAnalyzeResponse(file, result.analysis) : toDiagnoseResponse(file, result.diagnosis)
  process.stdout.write(`${JSON.stringify(body, null, 2)}\n`)
}

async function printRows (path: string, limitText: string | undefined, config: Config): Promise<void> {
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
  await readFirstSheet(path, (row, cells) => {
    buffer += `${JSON.stringify({ row, cells })}\n`
    if (buffer.length > 65_536) flush()
    return ++printed < limit
  }, {
    maxInflatedBytes: config.import.maxInflatedBytes,
    afterChunk: () => out.writableNeedDrain ? new Promise<void>((resolve) => out.once('drain', resolve)) : undefined
  })
  flush()
}

// A reader that stops early (`razao rows big.xlsx | head`) is not an error.
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code === 'EPIPE') process.exit(0)
  throw err
})

main(process.argv.slice(2)).catch((err: unknown) => {
  if (err instanceof UsageError || err instanceof ConfigError) {
    process.stderr.write(`razao: ${err.message}\n`)
    process.exit(2)
  }
  if (hasCode(err, 'INTERNAL') || !(err instanceof Error) || !('code' in err)) {
    process.stderr.write(`razao: unexpected failure: ${err instanceof Error ? err.message : String(err)}\n`)
    process.exit(1)
  }
  process.stderr.write(`razao: ${err.message}\n`)
  process.exit(1)
})
