/**
 * Child process of the /v1/process benchmark: on one ledger, alternating in rounds,
 * - raw COPY: the same rows as CSV from a file, one pg-copy-streams stream (the
 *   database's limit for this table as the issue defines it; the service itself
 *   sends binary COPY, which the server parses for less);
 * - binary COPY: the rows exactly as the service encodes them, from a file: what the
 *   database needs for our load at the least, so the floor of any process case;
 * - psql \copy: the raw-COPY file loaded by the real psql client (the CSV peer);
 * - analyze: our read and analysis alone;
 * - process (stream / per-batch): read, analyze and COPY in one pass, in-process;
 *   with progress: the same with the progress a job reports (counters, snapshots
 *   posted to a port every 250 ms);
 * - process over HTTP: upload to the service built from dist/ until VALIDADO;
 * - imports over HTTP: POST /v1/imports (202), then its events until VALIDADO;
 * - CSV over HTTP: the same ledger as a CSV export through /v1/process.
 * Every case starts from empty tables and a checkpoint. Built code only.
 *
 *   node bench/out/child/process-child.js '<ProcessJob as JSON>'
 */
import { randomBytes } from 'node:crypto'
import { execFile } from 'node:child_process'
import { createReadStream, createWriteStream, readFileSync, readdirSync } from 'node:fs'
import { mkdir, rm } from 'node:fs/promises'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { pipeline } from 'node:stream/promises'
import { promisify } from 'node:util'
import { MessageChannel } from 'node:worker_threads'
import pg from 'pg'
import { from as copyFrom } from 'pg-copy-streams'
import type * as CompaniesModule from '../../core/db/companies.js'
import type * as MigrateModule from '../../core/db/migrate.js'
import type * as MoneyModule from '../../core/money/index.js'
import type * as RowsModule from '../../core/importer/movement-rows.js'
import type * as LedgerJobModule from '../../workers/ledger-job.js'
import type * as ProcessJobModule from '../../workers/process-job.js'
import type * as LoadReportModule from '../../workers/load-report.js'
import type { Cell } from '../../core/xlsx/index.js'
import { importDist, MAX_INFLATED_BYTES, type App, type Config, type Ledger, type Pool, type Xlsx } from './dist.js'
import { startClient } from './http-client.js'
import type { ClientSetup } from './http-client.js'
import { REPORT_PREFIX, failureText, type ProcessCase, type ProcessJob, type ProcessReport, type Timing } from './protocol.js'
import { median } from './repeat.js'

type Step = () => Promise<number>

async function main (): Promise<void> {
  const job = JSON.parse(process.argv[2] ?? '') as ProcessJob
  const dist = <T>(path: string): Promise<T> => importDist<T>(job.distDir, path)
  const { migrate } = await dist<typeof MigrateModule>('core/db/migrate.js')
  const { addCompany } = await dist<typeof CompaniesModule>('core/db/companies.js')

  // A database of its own on the suite's server.
  const dbName = `bench_process_${process.pid}`
  const admin = new pg.Client({ connectionString: job.adminUrl })
  await admin.connect()
  await admin.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`)
  await admin.query(`CREATE DATABASE ${dbName}`)
  const url = new URL(job.adminUrl)
  url.pathname = `/${dbName}`
  const db = new pg.Client({ connectionString: url.href })
  await db.connect()
  await mkdir(job.scratchDir, { recursive: true })
  const closers: Array<() => Promise<void>> = []
  try {
    await migrate(db)
    await addCompany(db, { codigoDominio: 'bench', nome: 'Benchmark' })
    const steps: Partial<Record<ProcessCase, Step>> = {}
    const encoding = await dist<typeof RowsModule>('core/importer/movement-rows.js')
    const rowsCsv = once(() => writeRowsCsv(job))
    const cases = [...job.cases]
    for (const name of job.cases) {
      if (name === 'raw-copy') steps[name] = rawCopyStep(await rowsCsv(), db, encoding)
      if (name === 'binary-copy') steps[name] = await binaryCopyStep(job, db, encoding)
      if (name === 'psql-copy') {
        const step = await psqlCopyStep(await rowsCsv(), url.href, encoding)
        if (step === undefined) cases.splice(cases.indexOf(name), 1)
        else steps[name] = step
      }
      if (name === 'analyze') steps[name] = await analyzeStep(job)
      if (name === 'process-stream' || name === 'process-per-batch' || name === 'process-progress') {
        const inProcess = await processStep(job, url.href, name === 'process-per-batch' ? 'per-batch' : 'stream', name === 'process-progress')
        steps[name] = inProcess.step
        closers.push(inProcess.close)
      }
      if (name === 'process-http' || name === 'imports-http' || name === 'csv-http') {
        const http = await httpStep(job, url.href, name)
        steps[name] = http.step
        closers.push(http.close)
      }
    }
    const samples: Partial<Record<ProcessCase, Array<{ ms: number, cpuMs: number, databaseCpuMs: number | undefined }>>> = {}
    const server = serverProcesses((await db.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid)
    for (let round = 0; round < job.warmupRounds + job.rounds; round++) {
      const order = cases.map((_, i) => cases[(i + round) % cases.length]!)
      for (const name of order) {
        await db.query('TRUNCATE movimentos, movimentos_ativos, importacao_problemas, importacoes')
        await db.query('CHECKPOINT')
        const databaseBefore = server?.()
        const cpuBefore = process.cpuUsage()
        const started = performance.now()
        const rows = await steps[name]!()
        const ms = performance.now() - started
        const cpu = process.cpuUsage(cpuBefore)
        const databaseAfter = server?.()
        if (rows !== job.dataRows) throw new Error(`${name} handled ${rows} rows, the ledger has ${job.dataRows}`)
        const databaseCpuMs = databaseBefore === undefined || databaseAfter === undefined ? undefined : databaseAfter - databaseBefore
        if (round >= job.warmupRounds) (samples[name] ??= []).push({ ms, cpuMs: (cpu.user + cpu.system) / 1000, databaseCpuMs })
      }
    }
    const timings: Partial<Record<ProcessCase, Timing>> = {}
    for (const [name, runs] of Object.entries(samples) as Array<[ProcessCase, Array<{ ms: number, cpuMs: number, databaseCpuMs: number | undefined }>]>) {
      const ms = runs.map((r) => r.ms)
      const database = runs.map((r) => r.databaseCpuMs).filter((v): v is number => v !== undefined)
      timings[name] = {
        samplesMs: ms,
        medianMs: median(ms),
        minMs: Math.min(...ms),
        warmupRuns: job.warmupRounds,
        cpuMedianMs: median(runs.map((r) => r.cpuMs)),
        ...(database.length === runs.length ? { databaseCpuMedianMs: median(database) } : {})
      }
    }
    const report: ProcessReport = { timings, maxRssKb: process.resourceUsage().maxRSS }
    process.stdout.write(`${REPORT_PREFIX}${JSON.stringify(report)}\n`)
  } finally {
    for (const close of closers) await close()
    await db.end()
    await admin.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`)
    await admin.end()
    await rm(job.scratchDir, { recursive: true, force: true })
  }
}

/**
 * CPU time, ms, of the PostgreSQL server that `backendPid` belongs to, when it runs on this
 * machine: its postmaster and every process it started (backends, WAL writer, checkpointer),
 * read from /proc (USER_HZ ticks of 10 ms), the backends it has reaped included (their time is
 * its children's). Undefined elsewhere (another host, no /proc).
 */
function serverProcesses (backendPid: number): (() => number) | undefined {
  const stat = (pid: string): string[] | undefined => {
    try {
      const text = readFileSync(`/proc/${pid}/stat`, 'utf8')
      return text.slice(text.lastIndexOf(')') + 2).split(' ')
    } catch {
      return undefined
    }
  }
  const postmaster = stat(String(backendPid))?.[1]
  if (postmaster === undefined) return undefined
  const ticksToMs = 10
  return () => {
    let ticks = 0
    for (const pid of readdirSync('/proc')) {
      if (!/^\d+$/.test(pid)) continue
      const fields = stat(pid)
      if (fields === undefined || (pid !== postmaster && fields[1] !== postmaster)) continue
      ticks += Number(fields[11]) + Number(fields[12])
      // The postmaster also carries the time of the backends it has reaped (a psql session's).
      if (pid === postmaster) ticks += Number(fields[13]) + Number(fields[14])
    }
    return ticks * ticksToMs
  }
}

function once<T> (make: () => Promise<T>): () => Promise<T> {
  let made: Promise<T> | undefined
  return () => (made ??= make())
}

/** The ledger's rows as COPY CSV in the table's column order, written once (untimed). */
async function writeRowsCsv (job: ProcessJob): Promise<string> {
  const { readXlsxFirstSheet } = await importDist<Xlsx>(job.distDir, 'core/xlsx/index.js')
  const { LedgerAnalyzer, readInteger, readText } = await importDist<Ledger>(job.distDir, 'core/ledger/index.js')
  const { centsToDecimal } = await importDist<typeof MoneyModule>(job.distDir, 'core/money/index.js')
  const file = join(job.scratchDir, 'rows.csv')
  const out = createWriteStream(file)
  const integer = (cell: Cell | undefined): string => {
    const parsed = readInteger(cell)
    return parsed.kind === 'ok' ? String(parsed.value) : ''
  }
  const text = (cell: Cell | undefined): string => {
    const value = readText(cell)
    return value === null ? '' : `"${value.replaceAll('"', '""')}"`
  }
  let lines: string[] = []
  const analyzer = new LedgerAnalyzer((row, cells, c) => {
    lines.push(['1', String(row.rowNumber), integer(cells[c.id]), String(row.groupId ?? ''), row.date ?? '', integer(cells[c.id_conta]),
      text(cells[c.planejamento_analitico]), integer(cells[c.id_planejamento]), text(cells[c.planejamento]), text(cells[c.tipo]),
      text(cells[c.cod_planejamento]), centsToDecimal(row.creditCents), centsToDecimal(row.debitCents),
      c.historico === undefined ? '' : text(cells[c.historico])].join(','))
    if (lines.length >= 4096) {
      out.write(`${lines.join('\n')}\n`)
      lines = []
    }
  })
  await readXlsxFirstSheet(job.file, analyzer.visit, { maxInflatedBytes: MAX_INFLATED_BYTES, afterChunk: drainOf(out) })
  await endStream(out, lines.length > 0 ? `${lines.join('\n')}\n` : '')
  return file
}

/** Waits for a file to drain: unchecked writes would hold the whole output in memory. */
function drainOf (out: ReturnType<typeof createWriteStream>): () => Promise<void> | undefined {
  return () => out.writableNeedDrain ? new Promise((resolve) => out.once('drain', () => resolve())) : undefined
}

async function endStream (out: ReturnType<typeof createWriteStream>, last: string | Buffer): Promise<void> {
  await new Promise<void>((resolve, reject) => out.end(last, () => resolve()).once('error', reject))
}

/** Times loading the rows' CSV with one COPY (pg-copy-streams from the file). */
function rawCopyStep (file: string, db: pg.Client, { MOVEMENT_COLUMNS }: typeof RowsModule): Step {
  return copyFileStep(db, `COPY movimentos (${MOVEMENT_COLUMNS.join(', ')}) FROM STDIN (FORMAT csv)`, file)
}

/** Times one COPY of `file` (`sql` FROM STDIN) in a transaction of its own; answers the rows copied. */
function copyFileStep (db: pg.Client, sql: string, file: string): Step {
  return async () => {
    await db.query('BEGIN')
    const copy = db.query(copyFrom(sql))
    await pipeline(createReadStream(file, { highWaterMark: 1 << 20 }), copy)
    await db.query('COMMIT')
    return copy.rowCount
  }
}

/** Encodes the rows once as the service does (untimed), then times one binary COPY of that file. */
async function binaryCopyStep (job: ProcessJob, db: pg.Client, encoding: typeof RowsModule): Promise<Step> {
  const { readXlsxFirstSheet } = await importDist<Xlsx>(job.distDir, 'core/xlsx/index.js')
  const { LedgerAnalyzer } = await importDist<Ledger>(job.distDir, 'core/ledger/index.js')
  const { MovementEncoder, COPY_HEADER, COPY_TRAILER, COPY_MOVEMENTS_SQL } = encoding
  const file = join(job.scratchDir, 'rows.bin')
  const out = createWriteStream(file)
  out.write(COPY_HEADER)
  const encoder = new MovementEncoder('1')
  const analyzer = new LedgerAnalyzer((row, cells, c) => {
    encoder.add(row, cells, c)
    if (encoder.pending >= job.batchSize) out.write(encoder.take())
  })
  await readXlsxFirstSheet(job.file, analyzer.visit, { maxInflatedBytes: MAX_INFLATED_BYTES, afterChunk: drainOf(out) })
  if (encoder.pending > 0) out.write(encoder.take())
  await endStream(out, COPY_TRAILER)
  return copyFileStep(db, COPY_MOVEMENTS_SQL, file)
}

/** The rows' CSV loaded by the real psql (`\copy`, one transaction); undefined when this machine has no psql. */
async function psqlCopyStep (file: string, url: string, { MOVEMENT_COLUMNS }: typeof RowsModule): Promise<Step | undefined> {
  const run = promisify(execFile)
  try {
    await run('psql', ['--version'])
  } catch {
    process.stderr.write('psql is not installed here (postgresql-client): the psql \\copy row is left out\n')
    return undefined
  }
  return async () => {
    const { stdout } = await run('psql', ['--no-psqlrc', '-v', 'ON_ERROR_STOP=1', '-X', '-d', url, '-c',
      `\\copy movimentos (${MOVEMENT_COLUMNS.join(', ')}) FROM '${file}' (FORMAT csv)`], { env: { ...process.env, PGCONNECT_TIMEOUT: '10' } })
    const count = /COPY (\d+)/.exec(stdout)
    return count === null ? Number.NaN : Number(count[1])
  }
}

async function analyzeStep (job: ProcessJob): Promise<Step> {
  const { runLedgerJob } = await importDist<typeof LedgerJobModule>(job.distDir, 'workers/ledger-job.js')
  return async () => {
    const result = await runLedgerJob({ path: job.file, operation: 'analyze', batchSize: job.batchSize, maxInflatedBytes: MAX_INFLATED_BYTES }, 'xlsx')
    return result.operation === 'analyze' ? result.analysis.totalRows : -1
  }
}

async function processStep (job: ProcessJob, url: string, copyMode: 'stream' | 'per-batch', withProgress: boolean): Promise<{ step: Step, close: () => Promise<void> }> {
  const { runProcessJob } = await importDist<typeof ProcessJobModule>(job.distDir, 'workers/process-job.js')
  const { LoadReporter } = await importDist<typeof LoadReportModule>(job.distDir, 'workers/load-report.js')
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  // The progress a job's thread reports, received on another port as the job's owner would.
  const channel = withProgress ? new MessageChannel() : undefined
  let snapshots = 0
  channel?.port2.on('message', () => { snapshots++ })
  const step: Step = async () => {
    const reporter = channel === undefined ? undefined : new LoadReporter((snapshot) => channel.port1.postMessage(snapshot))
    const result = await runProcessJob({
      path: job.file, fileName: 'ledger.xlsx', sha256: '0'.repeat(64), codigoDominio: 'bench', mode: 'NORMAL', batchSize: job.batchSize,
      maxInflatedBytes: MAX_INFLATED_BYTES, databaseUrl: url, copyMode
    }, 'xlsx', client, reporter)
    reporter?.now()
    reporter?.stop()
    return result.insertedRows
  }
  return {
    step,
    close: async () => {
      channel?.port1.close()
      channel?.port2.close()
      if (withProgress && snapshots === 0) throw new Error('the progress case reported no snapshot')
      await client.end()
    }
  }
}

const HTTP_ROUTES = {
  'process-http': { path: '/v1/process', follow: false },
  'imports-http': { path: '/v1/imports', follow: true },
  'csv-http': { path: '/v1/process', follow: false }
} as const

/** The service from dist/ with its worker pool; the client posts from a process of its own, streaming the file. */
async function httpStep (job: ProcessJob, url: string, name: keyof typeof HTTP_ROUTES): Promise<{ step: Step, close: () => Promise<void> }> {
  const { buildImportApp } = await importDist<App>(job.distDir, 'server/import/app.js')
  const { loadConfig } = await importDist<Config>(job.distDir, 'server/config.js')
  const { createPool } = await importDist<Pool>(job.distDir, 'workers/pool.js')
  const scratch = join(job.scratchDir, name)
  const config = loadConfig({ NODE_ENV: 'production', LOG_LEVEL: 'silent', RAZAO_TMP_DIR: join(scratch, 'uploads'), RAZAO_DATA_DIR: join(scratch, 'data') }, job.scratchDir)
  const apiKey = randomBytes(24).toString('hex')
  const pool = createPool({ maxThreads: config.shared.poolSize })
  const dbPool = new pg.Pool({ connectionString: url, max: 2 })
  const app = await buildImportApp({ shared: config.shared, config: config.import, apiKey, pool, database: { url, pool: dbPool }, logger: false })
  await app.listen({ host: '127.0.0.1', port: 0 })
  const { port } = app.server.address() as AddressInfo
  const route = HTTP_ROUTES[name]
  const csv = name === 'csv-http'
  if (csv && job.csvFile === undefined) throw new Error('the csv-http case needs csvFile')
  const setup: ClientSetup = {
    url: `http://127.0.0.1:${port}${route.path}`,
    apiKey,
    file: csv ? job.csvFile! : job.file,
    fields: { codigo_dominio: 'bench', batch_size: String(job.batchSize) },
    follow: route.follow,
    ...(csv ? { contentType: 'text/csv' } : {})
  }
  const client = startClient(setup)
  return {
    step: () => client.post(),
    close: async () => {
      await client.close()
      await app.close()
      await pool.destroy()
      await dbPool.end()
    }
  }
}

main().catch((err: unknown) => {
  process.stderr.write(failureText(err))
  process.exit(1)
})
