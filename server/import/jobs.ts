/**
 * The jobs of POST /v1/imports that this instance holds: each one's upload on this
 * instance's disk, its load on this instance's pool (the same process-spreadsheet task as
 * /v1/process, taking the job's RECEBIDO row instead of creating one).
 *
 * - **Alive**: the instance holds its instance lock (core/importer/instance-lock.ts) for as
 *   long as it lives; recovery on any instance fails the waiting jobs of one that died.
 * - **Progress**: the load's thread posts snapshots (workers/load-report.ts) through a
 *   MessagePort, at most every 250 ms; here one statement per second writes the changed
 *   figures of every running job and reads each one's status and cancel request
 *   (syncProgress). Nothing is written while no job runs.
 * - **Cancel**: a request recorded by any instance is seen within a second; the task is
 *   aborted (its thread ends, and its database session is ended: the load rolls back)
 *   and the row is settled CANCELADO.
 * - **Shutdown**: jobs still running are stopped the same way and end FALHOU
 *   (IMPORT_INTERRUPTED): their uploads go with this instance.
 */
import { MessageChannel } from 'node:worker_threads'
import type { FastifyBaseLogger } from 'fastify'
import type { Code } from '../../core/errors.js'
import { failReceived, syncProgress } from '../../core/importer/import-jobs.js'
import type { ProgressWrite } from '../../core/importer/import-jobs.js'
import { InstanceLock } from '../../core/importer/instance-lock.js'
import { endLoadSession, recoverInterruptedImports, settleStoppedImportation } from '../../core/importer/load-state.js'
import { runTask } from '../../workers/pool.js'
import type { WorkerPool } from '../../workers/pool.js'
import type { LoadSnapshot } from '../../workers/load-report.js'
import type { ProcessSpreadsheetInput, ProcessSpreadsheetOutput } from '../../workers/process-spreadsheet.js'
import type { Database } from '../database.js'
import type { Upload } from '../upload.js'

/** How often the running jobs' figures are written and their cancel requests read, ms. */
export const PROGRESS_WRITE_MS = 1000

export interface ImportJobsOptions {
  pool: WorkerPool
  database: Pick<Database, 'url' | 'pool'>
  /** Jobs this instance holds at most, received or running; past it POST /v1/imports answers 503. */
  maxJobs: number
  log: FastifyBaseLogger
  progressWriteMs?: number | undefined
}

/** The task's input without what the job adds. */
export type JobTaskInput = Omit<ProcessSpreadsheetInput, 'adopt' | 'origin' | 'keepRefused' | 'progressPort'>

interface RunningJob {
  id: string
  controller: AbortController
  stop?: 'cancelled' | 'shutdown' | 'lost'
  snapshot?: LoadSnapshot
  version: number
  written: number
  done?: Promise<void>
}

const SHUTDOWN_TEXT = 'interrupted: the instance running this import was stopped before it finished; nothing of it was kept. Send the file again'

export class ImportJobs {
  private readonly running = new Map<string, RunningJob>()
  /** Called once a job of this instance has settled (its row final, or left to recovery). */
  private readonly settledListeners = new Map<string, Set<() => void>>()
  private reserved = 0
  private closing = false
  private ticking = false
  private readonly timer: NodeJS.Timeout

  private constructor (private readonly options: ImportJobsOptions, private readonly lock: InstanceLock) {
    this.timer = setInterval(() => { void this.tick() }, options.progressWriteMs ?? PROGRESS_WRITE_MS)
    this.timer.unref()
  }

  static async start (options: ImportJobsOptions): Promise<ImportJobs> {
    const lock = await InstanceLock.acquire(options.database.url, (line) => options.log.warn(line))
    return new ImportJobs(options, lock)
  }

  /** This instance's number, recorded in the rows of the jobs it receives. */
  get instance (): number {
    return this.lock.number
  }

  /** Jobs held here now (received or running). */
  get size (): number {
    return this.running.size
  }

  /**
   * A place for one more job, taken before its upload is read: false when this instance
   * holds maxJobs already, is shutting down, or has lost its instance lock for a moment.
   * Give it back with `unreserve` unless `run` takes it.
   */
  reserve (): boolean {
    if (this.closing || !this.lock.held || this.running.size + this.reserved >= this.options.maxJobs) return false
    this.reserved++
    return true
  }

  unreserve (): void {
    this.reserved--
  }

  /**
   * Runs the RECEBIDO job `id` on the pool, taking the reservation; removes its upload once
   * it has settled. The promise is for tests and shutdown; it never rejects.
   */
  run (id: string, upload: Upload, input: JobTaskInput): Promise<void> {
    this.reserved--
    const job: RunningJob = { id, controller: new AbortController(), version: 0, written: 0 }
    this.running.set(id, job)
    const { port1, port2 } = new MessageChannel()
    port1.on('message', (snapshot: LoadSnapshot) => {
      job.snapshot = snapshot
      job.version++
    })
    const task: ProcessSpreadsheetInput = { ...input, adopt: id, origin: 'imports', keepRefused: true, progressPort: port2 }
    job.done = (async () => {
      try {
        await runTask<ProcessSpreadsheetInput, ProcessSpreadsheetOutput>(this.options.pool, 'process-spreadsheet', task, job.controller.signal, [port2])
        this.options.log.info({ importacaoId: id }, 'import job VALIDADO')
      } catch (err) {
        if (job.controller.signal.aborted) await this.settleStopped(job)
        else await this.settleFailed(job, err)
      } finally {
        port1.close()
        this.running.delete(id)
        for (const listener of this.settledListeners.get(id) ?? []) listener()
        this.settledListeners.delete(id)
        await upload.remove()
      }
    })()
    return job.done
  }

  /**
   * Calls `listener` once the job `id`, running here, has settled, so that its event streams
   * on this instance answer at once instead of at their next poll. Returns the way to stop
   * listening; a job not running here never calls (its streams poll).
   */
  onSettled (id: string, listener: () => void): () => void {
    if (!this.running.has(id)) return () => undefined
    let listeners = this.settledListeners.get(id)
    if (listeners === undefined) this.settledListeners.set(id, listeners = new Set())
    listeners.add(listener)
    return () => { listeners.delete(listener) }
  }

  /** Stops a job of this instance at once (its cancel is recorded already); false when it is not here. */
  stopLocal (id: string): boolean {
    const job = this.running.get(id)
    if (job === undefined) return false
    this.stop(job, 'cancelled')
    return true
  }

  private stop (job: RunningJob, why: NonNullable<RunningJob['stop']>): void {
    if (job.stop !== undefined) return
    job.stop = why
    job.controller.abort()
  }

  private async settleStopped (job: RunningJob): Promise<void> {
    const db = this.options.database.pool
    try {
      await endLoadSession(db, job.id)
      const status = await settleStoppedImportation(db, job.id, job.stop === 'cancelled', SHUTDOWN_TEXT)
      this.options.log.info({ importacaoId: job.id, status, why: job.stop }, 'import job stopped')
    } catch (err) {
      // Recovery marks it once its session has ended.
      this.options.log.warn({ importacaoId: job.id, err }, 'a stopped import job could not be settled yet')
      this.recoverSoon()
    }
  }

  /**
   * The load settles its own failures (FALHOU with the code). What is left here: a job
   * that failed before its load took the row (the database unreachable, say) is still
   * RECEBIDO; a thread that died left it PROCESSANDO, which recovery marks once its
   * session has ended.
   */
  private async settleFailed (job: RunningJob, err: unknown): Promise<void> {
    const code = (typeof err === 'object' && err !== null && typeof (err as { code?: unknown }).code === 'string' ? (err as { code: Code }).code : 'INTERNAL')
    const message = code === 'INTERNAL' ? 'the import failed before its load began' : (err as Error).message
    this.options.log.info({ importacaoId: job.id, code }, 'import job failed')
    await failReceived(this.options.database.pool, job.id, code, message).catch(() => undefined)
    this.recoverSoon()
  }

  private recoverSoon (): void {
    for (const delay of [250, 2000, 10_000]) {
      setTimeout(() => { recoverInterruptedImports(this.options.database.pool).catch(() => undefined) }, delay).unref()
    }
  }

  /** Writes the figures that changed and stops the jobs whose cancel was requested, or whose row ended elsewhere. */
  private async tick (): Promise<void> {
    if (this.ticking || this.running.size === 0) return
    this.ticking = true
    try {
      const jobs = [...this.running.values()]
      const writes: ProgressWrite[] = []
      const versions = new Map<RunningJob, number>()
      for (const job of jobs) {
        const s = job.snapshot
        if (s === undefined || job.version === job.written) continue
        versions.set(job, job.version)
        writes.push({ id: job.id, phase: s.phase, rowsRead: s.rowsRead, rowsLoaded: s.rowsLoaded, bytesRead: s.bytesRead, bytesTotal: s.bytesTotal })
      }
      const states = await syncProgress(this.options.database.pool, writes, jobs.map((j) => j.id))
      for (const [job, version] of versions) job.written = version
      for (const job of jobs) {
        const state = states.get(job.id)
        if (state === undefined || state.cancelRequested || state.status === 'CANCELADO') this.stop(job, 'cancelled')
        else if (state.status === 'FALHOU') this.stop(job, 'lost')
      }
    } catch (err) {
      this.options.log.warn({ err }, 'import job progress could not be written')
    } finally {
      this.ticking = false
    }
  }

  /** Stops taking jobs, stops the running ones (FALHOU, or CANCELADO if asked) and gives the instance number back. */
  async close (): Promise<void> {
    this.closing = true
    clearInterval(this.timer)
    const jobs = [...this.running.values()]
    for (const job of jobs) this.stop(job, 'shutdown')
    await Promise.allSettled(jobs.map((j) => j.done))
    await this.lock.close()
  }
}
