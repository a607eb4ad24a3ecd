/**
 * `razao import`: the load runs in this process (XLSX) or in an isolate thread (XLS), on a
 * connection of its own, as it always has; beside it, its row shows its phase and figures
 * to everyone (GET /v1/imports/{id}, `razao imports show`), written once a second, and a
 * cancel asked for elsewhere (`razao imports cancel`, DELETE on any instance) is read in
 * the same statement. Ctrl-C (SIGINT) stops the load: its connection and database session
 * are ended, so it rolls back, and its row ends CANCELADO. A second Ctrl-C leaves at once.
 */
import { MessageChannel } from 'node:worker_threads'
import type { MessagePort } from 'node:worker_threads'
import type pg from 'pg'
import { EngineError } from '../../core/errors.js'
import { syncProgress } from '../../core/importer/import-jobs.js'
import type { ProgressWrite } from '../../core/importer/import-jobs.js'
import { endLoadSession, settleStoppedImportation } from '../../core/importer/load-state.js'
import type { SpreadsheetFormat } from '../../core/xlsx/index.js'
import { connect } from '../../workers/db-connection.js'
import { LoadReporter } from '../../workers/load-report.js'
import type { LoadSnapshot } from '../../workers/load-report.js'
import { runProcessJob } from '../../workers/process-job.js'
import type { ProcessJobInput, ProcessJobOutput } from '../../workers/process-job.js'
import { runXlsInIsolate } from '../../workers/xls-isolate.js'
import type { Database } from '../database.js'
import { PROGRESS_WRITE_MS } from './jobs.js'

/** The load was stopped (Ctrl-C, or a cancel asked for elsewhere); the message says what became of it. */
export class ImportStopped extends Error {
  constructor (message: string, readonly importacaoId: string | undefined, readonly status: string | undefined, readonly byInterrupt: boolean) {
    super(message)
    this.name = 'ImportStopped'
  }
}

export interface CliLoadOptions {
  /** Each snapshot of the load (the CLI's display). */
  onSnapshot: (snapshot: LoadSnapshot) => void
  /** Said once when Ctrl-C is first pressed. */
  onInterrupt: () => void
}

export async function runCliImport (db: Pick<Database, 'url' | 'pool'>, input: ProcessJobInput, format: SpreadsheetFormat, options: CliLoadOptions): Promise<ProcessJobOutput> {
  const controller = new AbortController()
  let latest: LoadSnapshot | undefined
  let version = 0
  let written = 0
  let stop: 'interrupt' | 'cancelled' | undefined
  const halt = (why: 'interrupt' | 'cancelled'): void => {
    if (stop !== undefined) return
    stop = why
    controller.abort()
  }
  const onSnapshot = (snapshot: LoadSnapshot): void => {
    latest = snapshot
    version++
    options.onSnapshot(snapshot)
  }
  const tick = async (): Promise<void> => {
    const id = latest?.importacaoId
    if (id === null || id === undefined || stop !== undefined) return
    const changed = version !== written
    const seen = version
    const write: ProgressWrite[] = changed ? [{ id, phase: latest!.phase, rowsRead: latest!.rowsRead, rowsLoaded: latest!.rowsLoaded, bytesRead: latest!.bytesRead, bytesTotal: latest!.bytesTotal }] : []
    const state = (await syncProgress(db.pool, write, [id])).get(id)
    written = seen
    if (state !== undefined && (state.cancelRequested || state.status === 'CANCELADO')) halt('cancelled')
  }
  let ticking = false
  const timer = setInterval(() => {
    if (ticking) return
    ticking = true
    tick().catch(() => undefined).finally(() => { ticking = false })
  }, PROGRESS_WRITE_MS)
  const onSigint = (): void => {
    if (stop === 'interrupt') {
      process.stderr.write('\nrazao: interrupted again; leaving now (the import is rolled back by the database, and marked by the next razao process or service)\n')
      process.exit(130)
    }
    options.onInterrupt()
    halt('interrupt')
  }
  process.on('SIGINT', onSigint)
  const job: ProcessJobInput = { ...input, origin: 'cli' }
  try {
    return format === 'xls' ? await loadInIsolate(job, onSnapshot, controller.signal) : await loadHere(job, format, db.url, onSnapshot, controller.signal)
  } catch (err) {
    if (stop === undefined) throw err
    throw await settleStopped(db, latest?.importacaoId ?? undefined, stop)
  } finally {
    clearInterval(timer)
    process.off('SIGINT', onSigint)
  }
}

async function settleStopped (db: Pick<Database, 'pool'>, id: string | undefined, why: 'interrupt' | 'cancelled'): Promise<ImportStopped> {
  const asked = why === 'interrupt' ? 'interrupted' : 'cancelled on request'
  const interrupted = why === 'interrupt'
  if (id === undefined) return new ImportStopped(`import ${asked} before it started: nothing was written`, undefined, undefined, interrupted)
  await endLoadSession(db.pool, id).catch(() => 0)
  const status = await settleStoppedImportation(db.pool, id, true, 'cancelled')
  if (status === 'CANCELADO') return new ImportStopped(`import ${id} cancelled: nothing of it was kept`, id, status, interrupted)
  return new ImportStopped(`import ${id} was ${asked}, but it had already ended ${status ?? 'unknown'}${status === 'VALIDADO' ? ': it was kept' : ''}`, id, status, interrupted)
}

/** An XLSX or CSV load in this process, on a connection of its own; ending that connection stops it. */
async function loadHere (input: ProcessJobInput, format: 'xlsx' | 'csv', url: string, onSnapshot: (s: LoadSnapshot) => void, signal: AbortSignal): Promise<ProcessJobOutput> {
  const client = await connect(url)
  const reporter = new LoadReporter(onSnapshot)
  const onAbort = (): void => { void endConnection(client) }
  signal.addEventListener('abort', onAbort, { once: true })
  try {
    const result = await runProcessJob(input, format, client, reporter)
    if (signal.aborted) throw new EngineError('ABORTED', 'The import was stopped.')
    return result
  } finally {
    signal.removeEventListener('abort', onAbort)
    reporter.now()
    reporter.stop()
    await client.end().catch(() => undefined)
  }
}

/** Ends the connection at once: the server sees the client gone and rolls the load back. */
async function endConnection (client: pg.Client): Promise<void> {
  const stream = (client as unknown as { connection?: { stream?: { destroy: () => void } } }).connection?.stream
  stream?.destroy()
  await client.end().catch(() => undefined)
}

/** An XLS load in its isolate thread, reporting through a port; aborting ends the thread. */
async function loadInIsolate (input: ProcessJobInput, onSnapshot: (s: LoadSnapshot) => void, signal: AbortSignal): Promise<ProcessJobOutput> {
  const { port1, port2 } = new MessageChannel()
  port1.on('message', onSnapshot)
  try {
    return await runXlsInIsolate({ job: 'process', input: { ...input, progressPort: port2 as MessagePort } }, undefined, signal)
  } finally {
    port1.close()
  }
}
