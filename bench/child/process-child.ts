/**
 * Child process of the /v1/process benchmark: on one ledger, alternating in rounds,
 * - raw COPY: the same rows as CSV from a file, one pg-copy-streams stream (the
 *   database's limit for this table as the issue defines it; the service itself
 *   sends binary COPY, which the server parses for less);
 * - analyze: our read and analysis alone;
 * - process (stream / per-batch): read, analyze and COPY in one pass, in-process;
 * - process over HTTP: upload to the service built from dist/ until VALIDADO.
 * Every case starts from empty tables and a checkpoint. Built code only.
 *
 *   node bench/out/child/process-child.js '<ProcessJob as JSON>'
 */
import { randomBytes } from 'node:crypto'
import { createReadStream, createWriteStream } from 'node:fs'
import { mkdir, rm } from 'node:fs/promises'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { pipeline } from 'node:stream/promises'
import pg from 'pg'
import { from as copyFrom } from 'pg-copy-streams'
import type * as CompaniesModule from '../../core/db/companies.js'
import type * as MigrateModule from '../../core/db/migrate.js'
import type * as MoneyModule from '../../core/money/index.js'
import type * as RowsModule from '../../core/importer/movement-rows.js'
import type * as LedgerJobModule from '../../workers/ledger-job.js'
import type * as ProcessJobModule from '../../workers/process-job.js'
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
    for (const name of job.cases) {
      if (name === 'raw-copy') steps[name] = await rawCopyStep(job, db)
      if (name === 'analyze') steps[name] = await analyzeStep(job)
      if (name === 'process-stream' || name === 'process-per-batch') {
        const inProcess = await processStep(job, url.href, name === 'process-stream' ? 'stream' : 'per-batch')
        steps[name] = inProcess.step
        closers.push(inProcess.close)
      }
      if (name === 'process-http') {
        const http = await httpStep(job, url.href)
        steps[name] = http.step
        closers.push(http.close)
      }
    }
    const samples: Partial<Record<ProcessCase, number[]>> = {}
    for (let round = 0; round < job.warmupRounds + job.rounds; round++) {
      const order = job.cases.map((_, i) => job.cases[(i + round) % job.cases.length]!)
      for (const name of order) {
        await db.query('TRUNCATE movimentos, movimentos_ativos, importacao_problemas, importacoes')
        await db.query('CHECKPOINT')
        const started = performance.now()
        const rows = await steps[name]!()
        const ms = performance.now() - started
        if (rows !== job.dataRows) throw new Error(`${name} handled ${rows} rows, the ledger has ${job.dataRows}`)
        if (round >= job.warmupRounds) (samples[name] ??= []).push(ms)
      }
    }
    const timings: Partial<Record<ProcessCase, Timing>> = {}
    for (const [name, ms] of Object.entries(samples) as Array<[ProcessCase, number[]]>) {
      timings[name] = { samplesMs: ms, medianMs: median(ms), minMs: Math.min(...ms), warmupRuns: job.warmupRounds }
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

/** Writes the ledger's rows once as CSV (untimed), then times loading that file with COPY. */
async function rawCopyStep (job: ProcessJob, db: pg.Client): Promise<Step> {
  const { readXlsxFirstSheet } = await importDist<Xlsx>(job.distDir, 'core/xlsx/index.js')
  const { LedgerAnalyzer, readInteger, readText } = await importDist<Ledger>(job.distDir, 'core/ledger/index.js')
  const { centsToDecimal } = await importDist<typeof MoneyModule>(job.distDir, 'core/money/index.js')
  const { MOVEMENT_COLUMNS } = await importDist<typeof RowsModule>(job.distDir, 'core/importer/movement-rows.js')
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
  // Waits for the file to drain: unchecked writes would hold the whole CSV in memory.
  const afterChunk = (): Promise<void> | undefined => out.writableNeedDrain ? new Promise((resolve) => out.once('drain', () => resolve())) : undefined
  await readXlsxFirstSheet(job.file, analyzer.visit, { maxInflatedBytes: MAX_INFLATED_BYTES, afterChunk })
  await new Promise<void>((resolve, reject) => out.end(lines.length > 0 ? `${lines.join('\n')}\n` : '', () => resolve()).once('error', reject))
  return async () => {
    await db.query('BEGIN')
    const copy = db.query(copyFrom(`COPY movimentos (${MOVEMENT_COLUMNS.join(', ')}) FROM STDIN (FORMAT csv)`))
    await pipeline(createReadStream(file, { highWaterMark: 1 << 20 }), copy)
    await db.query('COMMIT')
    return copy.rowCount
  }
}

async function analyzeStep (job: ProcessJob): Promise<Step> {
  const { runLedgerJob } = await importDist<typeof LedgerJobModule>(job.distDir, 'workers/ledger-job.js')
  return async () => {
    const result = await runLedgerJob({ path: job.file, operation: 'analyze', batchSize: job.batchSize, maxInflatedBytes: MAX_INFLATED_BYTES }, 'xlsx')
    return result.operation === 'analyze' ? result.analysis.totalRows : -1
  }
}

async function processStep (job: ProcessJob, url: string, copyMode: 'stream' | 'per-batch'): Promise<{ step: Step, close: () => Promise<void> }> {
  const { runProcessJob } = await importDist<typeof ProcessJobModule>(job.distDir, 'workers/process-job.js')
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  const step: Step = async () => {
    const result = await runProcessJob({
      path: job.file, fileName: 'ledger.xlsx', sha256: '0'.repeat(64), codigoDominio: 'bench', mode: 'NORMAL', batchSize: job.batchSize,
      maxInflatedBytes: MAX_INFLATED_BYTES, databaseUrl: url, copyMode
    }, 'xlsx', client)
    return result.insertedRows
  }
  return { step, close: () => client.end() }
}

/** The service from dist/ with its worker pool; the client posts from a process of its own, streaming the file. */
async function httpStep (job: ProcessJob, url: string): Promise<{ step: Step, close: () => Promise<void> }> {
  const { buildImportApp } = await importDist<App>(job.distDir, 'server/import/app.js')
  const { loadConfig } = await importDist<Config>(job.distDir, 'server/config.js')
  const { createPool } = await importDist<Pool>(job.distDir, 'workers/pool.js')
  const config = loadConfig({ NODE_ENV: 'production', LOG_LEVEL: 'silent', RAZAO_TMP_DIR: join(job.scratchDir, 'uploads'), RAZAO_DATA_DIR: join(job.scratchDir, 'data') }, job.scratchDir)
  const apiKey = randomBytes(24).toString('hex')
  const pool = createPool({ maxThreads: config.shared.poolSize })
  const dbPool = new pg.Pool({ connectionString: url, max: 2 })
  const app = await buildImportApp({ shared: config.shared, config: config.import, apiKey, pool, database: { url, pool: dbPool }, logger: false })
  await app.listen({ host: '127.0.0.1', port: 0 })
  const { port } = app.server.address() as AddressInfo
  const setup: ClientSetup = { url: `http://127.0.0.1:${port}/v1/process`, apiKey, file: job.file, fields: { codigo_dominio: 'bench', batch_size: String(job.batchSize) } }
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
