/**
 * The agent: packages, the job queue, the runner and the file index put together.
 * Jobs live in memory only (spec 3 §1 C); the newest are kept, up to `maxJobsInMemory`
 * jobs and `maxJobBytesInMemory` of inputs and results, the oldest finished ones dropped
 * first (queued and running jobs are never dropped). The queue itself is bounded
 * (`maxQueuedJobs`): past it a run is refused, never held.
 */
import { randomUUID } from 'node:crypto'
import { appendFileSync } from 'node:fs'
import { mkdir, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { AutomationPackage } from './descriptor.js'
import { FileIndex } from './files.js'
import type { FileRecord } from './files.js'
import { maskSecrets, TERMINAL_STATUSES } from './job.js'
import type { Job } from './job.js'
import { clearLeftovers } from './leftovers.js'
import type { AgentLogger } from './log.js'
import { pruneJobLogs } from './output.js'
import { describeProcesses, findJobProcesses, signalProcesses } from './process-tree.js'
import { Registry } from './registry.js'
import { runPackage } from './runner.js'
import type { JobLogs } from './runner.js'
import { lockRuntimeDir } from './runtime-lock.js'

export interface AgentOptions {
  automationsRoot: string
  /** Job folders (`jobs/`) and input files (`inputs/`) go here. */
  runtimeDir: string
  /** Job logs go to `jobs/` here. */
  logDir: string
  fileStorageRoot: string
  allowedRoots: string[]
  retentionDays: number
  maxConcurrentJobs: number
  /** Jobs waiting to start; a run past it is refused (QueueFullError). */
  maxQueuedJobs: number
  defaultTimeoutMs: number
  /** The agent's environment: packages receive only the allowed and declared names of it (environment.ts). */
  env: NodeJS.ProcessEnv
  log: AgentLogger
  maxJobsInMemory?: number
  /** Bytes of inputs and results kept for the jobs in memory (their JSON), past which the oldest finished jobs go. */
  maxJobBytesInMemory?: number
  /** How long after a job ends its leftovers outside its process group are looked for (one scan serves every job ended meanwhile). */
  straySweepDelayMs?: number
  /** Time between SIGTERM and SIGKILL when a job is stopped. */
  killGraceMs?: number
  /** Cap of each of a job's stdout and stderr logs. */
  maxLogBytes?: number
  /** How often expired file records and old job logs are swept. */
  sweepIntervalMs?: number
  now?: () => number
}

export const DEFAULT_MAX_JOBS_IN_MEMORY = 5000
export const DEFAULT_MAX_JOB_BYTES_IN_MEMORY = 64 * 1024 * 1024
const DEFAULT_STRAY_SWEEP_DELAY_MS = 2000
/** An input or result larger than this (as JSON) is replaced by a marker in the job list. */
export const LIST_FIELD_BYTES = 4096
export const DEFAULT_KILL_GRACE_MS = 3000
export const DEFAULT_MAX_LOG_BYTES = 1024 * 1024
const HOUR_MS = 3_600_000

interface Entry {
  job: Job
  pkg: AutomationPackage
  /** The unmasked input, until the package has it. */
  input: Record<string, unknown> | undefined
  /** Size of the input's JSON, and of the package's result line once there is one. */
  inputBytes: number
  resultBytes: number
}

interface RunningJob {
  entry: Entry
  done: Promise<void>
  /** Aborted by `cancel`: the runner stops the job's process tree. */
  cancel: AbortController
  /** The job's logs once the runner opened them: read while it runs. */
  logs?: JobLogs
}

/** What `cancel` did: nothing (no such job, or it had ended on its own), or cancelled it. */
export type CancelOutcome =
  | { kind: 'missing' }
  | { kind: 'finished', job: Job }
  | { kind: 'cancelled', job: Job }

/** Which of a job's logs `jobLog` reads; `all` is both, each under a heading line. */
export type LogStream = 'stdout' | 'stderr' | 'all'

/** Job ids are the agent's UUIDs: only those name a log file. */
const JOB_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

/** A run refused because `maxQueuedJobs` jobs are waiting already. */
export class QueueFullError extends Error {
  constructor (readonly maxQueuedJobs: number) {
    super(`${maxQueuedJobs} jobs are already waiting to run; try again later.`)
    this.name = 'QueueFullError'
  }
}

export class Agent {
  readonly registry: Registry
  readonly startedAt = new Date()
  private readonly jobs = new Map<string, Entry>()
  private readonly byRequest = new Map<string, string[]>()
  private readonly queue: Entry[] = []
  private readonly running = new Map<string, RunningJob>()
  private readonly shutdown = new AbortController()
  private idleWaiters: Array<() => void> = []
  private sweepTimer: NodeJS.Timeout | undefined
  /** Jobs ended since the last look for their leftovers, and the timer of the next look. */
  private readonly unswept = new Set<string>()
  private strayTimer: NodeJS.Timeout | undefined
  private heldBytes = 0
  private readonly maxJobs: number
  private readonly jobsRoot: string
  private readonly logRoot: string
  private readonly now: () => number

  private constructor (private readonly options: AgentOptions, readonly files: FileIndex, private readonly unlock: () => Promise<void>) {
    this.registry = new Registry(options.automationsRoot, options.log)
    this.maxJobs = options.maxJobsInMemory ?? DEFAULT_MAX_JOBS_IN_MEMORY
    this.jobsRoot = join(options.runtimeDir, 'jobs')
    this.logRoot = join(options.logDir, 'jobs')
    this.now = options.now ?? Date.now
  }

  /**
   * Takes the runtime folder (RuntimeDirInUseError when a live agent holds it), clears what
   * an agent killed mid-job left there (leftovers.ts), opens the file index, loads the packages.
   */
  static async start (options: AgentOptions): Promise<Agent> {
    const jobsRoot = join(options.runtimeDir, 'jobs')
    const inputsDir = join(options.runtimeDir, 'inputs')
    const logRoot = join(options.logDir, 'jobs')
    await mkdir(jobsRoot, { recursive: true, mode: 0o700 })
    await mkdir(inputsDir, { recursive: true, mode: 0o700 })
    await mkdir(logRoot, { recursive: true })
    const unlock = await lockRuntimeDir(options.runtimeDir)
    try {
      await clearLeftovers({ jobsRoot, inputsDir, logRoot }, options.log)
      const files = await FileIndex.open({
        storageRoot: options.fileStorageRoot,
        allowedRoots: options.allowedRoots,
        retentionDays: options.retentionDays,
        ownedRoot: jobsRoot,
        privateRoots: [inputsDir, logRoot],
        log: options.log,
        ...(options.now === undefined ? {} : { now: options.now })
      })
      const agent = new Agent(options, files, unlock)
      await agent.registry.reload()
      await agent.sweep()
      agent.sweepTimer = setInterval(() => { void agent.sweep() }, options.sweepIntervalMs ?? HOUR_MS)
      agent.sweepTimer.unref()
      return agent
    } catch (err) {
      await unlock()
      throw err
    }
  }

  /**
   * A new QUEUED job (the reply of the run endpoint); it starts when a slot frees.
   * `inputBytes` is the size of the input's JSON, which the caller has checked.
   * QueueFullError when `maxQueuedJobs` are waiting: nothing is stored then.
   */
  submit (pkg: AutomationPackage, requestId: string | undefined, input: Record<string, unknown>, inputBytes: number): Job {
    if (this.queue.length >= this.options.maxQueuedJobs) throw new QueueFullError(this.options.maxQueuedJobs)
    const id = randomUUID()
    const job: Job = {
      id,
      jobId: id,
      requestId: requestId ?? randomUUID(),
      automationId: pkg.id,
      status: 'QUEUED',
      createdAt: new Date(this.now()).toISOString(),
      startedAt: null,
      finishedAt: null,
      input: maskSecrets(input),
      result: null,
      files: [],
      error: null
    }
    const entry: Entry = { job, pkg, input, inputBytes, resultBytes: 0 }
    this.jobs.set(id, entry)
    this.heldBytes += inputBytes
    const same = this.byRequest.get(job.requestId)
    if (same === undefined) this.byRequest.set(job.requestId, [id])
    else same.push(id)
    this.queue.push(entry)
    this.dropOldJobs()
    const view = this.view(entry)
    this.pump()
    return view
  }

  job (id: string): Job | undefined {
    const entry = this.jobs.get(id)
    return entry === undefined ? undefined : this.view(entry)
  }

  /** The oldest job still in memory with that requestId (spec 3 §4 C: the first). */
  jobByRequest (requestId: string): Job | undefined {
    const id = this.byRequest.get(requestId)?.[0]
    return id === undefined ? undefined : this.job(id)
  }

  /**
   * The newest `limit` jobs, newest first, for the list: an input or a package result
   * larger than `maxFieldBytes` is replaced by a marker (the single job's view has it whole).
   */
  recentJobs (limit: number, maxFieldBytes = LIST_FIELD_BYTES): Job[] {
    const entries = [...this.jobs.values()]
    const out: Job[] = []
    for (let i = entries.length - 1; i >= 0 && out.length < limit; i--) {
      const entry = entries[i]!
      const view = this.view(entry)
      if (entry.inputBytes > maxFieldBytes) view.input = truncated(entry.inputBytes)
      if (view.result !== null && entry.resultBytes > maxFieldBytes) view.result = { ...view.result, result: truncated(entry.resultBytes) }
      out.push(view)
    }
    return out
  }

  /** Whether a job is known, in memory or through its files (the index outlives a restart). */
  knowsJob (jobId: string): boolean {
    return this.jobs.has(jobId) || this.files.forJob(jobId).length > 0
  }

  filesOf (jobId: string): FileRecord[] {
    return this.files.forJob(jobId)
  }

  /**
   * Cancels a job (DELETE /api/v1/jobs/:id). A queued job leaves the queue and is FAILED
   * (AGENT_CANCELLED) at once; a running one has its process tree stopped as at its time
   * limit (SIGTERM, SIGKILL after the grace period, escapees included) and is answered
   * once it has ended, FAILED (AGENT_CANCELLED) with whatever result it had printed. A job
   * that ended on its own is left as it is (`finished`); one cancelled before is
   * `cancelled` again, so a repeated DELETE gets the same answer.
   */
  async cancel (id: string): Promise<CancelOutcome> {
    const entry = this.jobs.get(id)
    if (entry === undefined) return { kind: 'missing' }
    const index = this.queue.indexOf(entry)
    if (index !== -1) {
      this.queue.splice(index, 1)
      Object.assign(entry.job, { status: 'FAILED', finishedAt: new Date(this.now()).toISOString(), error: { code: 'AGENT_CANCELLED', message: 'The job was cancelled (DELETE /api/v1/jobs/:id) before it started.' } })
      entry.input = undefined
      this.options.log.info({ jobId: id, automationId: entry.pkg.id }, 'queued job cancelled')
      this.dropOldJobs()
      this.pump()
    }
    const running = this.running.get(id)
    if (running !== undefined) {
      this.options.log.info({ jobId: id, automationId: entry.pkg.id }, 'stopping a cancelled job')
      running.cancel.abort()
      await running.done
    }
    const job = this.view(entry)
    return { kind: job.error?.code === 'AGENT_CANCELLED' ? 'cancelled' : 'finished', job }
  }

  /**
   * A job's log (its stdout, its stderr, or both under `==> stdout <==` and `==> stderr <==`
   * lines), while it runs or after; undefined for a job neither in memory nor with a log on
   * disk (logs outlive the job in memory until FILE_RETENTION_DAYS).
   */
  async jobLog (id: string, stream: LogStream): Promise<Buffer | undefined> {
    if (!JOB_ID.test(id)) return undefined
    const live = this.running.get(id)?.logs
    const read = async (name: 'stdout' | 'stderr'): Promise<Buffer | undefined> => {
      const held = live?.[name].held()
      if (held !== undefined) return held
      try {
        return await readFile(join(this.logRoot, `${id}.${name}.log`))
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined
        throw err
      }
    }
    const [stdout, stderr] = await Promise.all([read('stdout'), read('stderr')])
    if (stdout === undefined && stderr === undefined && !this.jobs.has(id)) return undefined
    const empty = Buffer.alloc(0)
    if (stream === 'stdout') return stdout ?? empty
    if (stream === 'stderr') return stderr ?? empty
    const section = (name: string, body: Buffer | undefined): Buffer[] => {
      const text = body ?? empty
      return [Buffer.from(`==> ${name} <==\n`), text, Buffer.from(text.length > 0 && text[text.length - 1] !== 0x0a ? '\n' : '')]
    }
    return Buffer.concat([...section('stdout', stdout), ...section('stderr', stderr)])
  }

  /** Resolves when no job is queued or running. */
  async idle (): Promise<void> {
    if (this.queue.length === 0 && this.running.size === 0) return
    await new Promise<void>((resolve) => this.idleWaiters.push(resolve))
  }

  /**
   * Stops the agent: queued jobs are marked FAILED (AGENT_SHUTDOWN) and listed in the log,
   * running ones are killed (their whole tree) and marked the same, the index is written
   * whole, the runtime folder is let go.
   */
  async close (): Promise<void> {
    clearInterval(this.sweepTimer)
    clearTimeout(this.strayTimer)
    const queued = this.queue.splice(0)
    const at = new Date(this.now()).toISOString()
    for (const entry of queued) {
      Object.assign(entry.job, { status: 'FAILED', finishedAt: at, error: { code: 'AGENT_SHUTDOWN', message: 'The agent was shut down before the job started.' } })
      entry.input = undefined
    }
    if (queued.length > 0) this.options.log.warn({ jobIds: queued.map((e) => e.job.id) }, `shutdown: ${queued.length} queued job(s) will not run`)
    if (this.running.size > 0) this.options.log.warn({ jobIds: [...this.running.keys()] }, `shutdown: stopping ${this.running.size} running job(s)`)
    this.shutdown.abort()
    await Promise.all([...this.running.values()].map(async (r) => await r.done))
    this.killStrays()
    await this.files.close()
    await this.unlock()
  }

  private view (entry: Entry): Job {
    return { ...entry.job, files: this.files.forJob(entry.job.id) }
  }

  private pump (): void {
    if (this.shutdown.signal.aborted) return
    while (this.running.size < this.options.maxConcurrentJobs) {
      const index = this.queue.findIndex((e) => !e.pkg.singleton || ![...this.running.values()].some((r) => r.entry.pkg.id === e.pkg.id))
      if (index === -1) break
      const [entry] = this.queue.splice(index, 1)
      const cancel = new AbortController()
      // In the map before the run starts: the runner hands its logs over before its first await.
      const running: RunningJob = { entry: entry!, cancel, done: Promise.resolve() }
      this.running.set(entry!.job.id, running)
      running.done = this.run(entry!, cancel.signal)
    }
    if (this.queue.length === 0 && this.running.size === 0) {
      const waiters = this.idleWaiters
      this.idleWaiters = []
      for (const w of waiters) w()
    }
  }

  private async run (entry: Entry, cancel: AbortSignal): Promise<void> {
    const { job, pkg } = entry
    const input = entry.input ?? {}
    entry.input = undefined
    job.status = 'RUNNING'
    const started = this.now()
    job.startedAt = new Date(started).toISOString()
    const log = this.options.log
    try {
      const outcome = await runPackage({
        jobId: job.id,
        pkg,
        input,
        timeoutMs: pkg.timeoutMs ?? this.options.defaultTimeoutMs,
        jobDir: join(this.jobsRoot, job.id),
        inputFile: join(this.options.runtimeDir, 'inputs', `${job.id}.json`),
        logDir: this.logRoot,
        maxLogBytes: this.options.maxLogBytes ?? DEFAULT_MAX_LOG_BYTES,
        killGraceMs: this.options.killGraceMs ?? DEFAULT_KILL_GRACE_MS,
        env: this.options.env,
        signal: this.shutdown.signal,
        cancel,
        onLogs: (logs) => {
          const running = this.running.get(job.id)
          if (running !== undefined) running.logs = logs
        },
        onResult: (result, chars) => {
          // The job's result so far: visible while it runs, replaced by the next one.
          if (job.status !== 'RUNNING') return
          job.result = { success: false, status: 'RUNNING', exitCode: null, signal: null, durationMs: Math.max(0, this.now() - started), result }
          this.heldBytes += chars - entry.resultBytes
          entry.resultBytes = chars
        },
        onNotice: (message) => log.warn({ jobId: job.id, automationId: pkg.id }, message),
        onFile: async (claim) => {
          const registered = await this.files.register(job.id, claim, pkg.dir)
          if (!registered.ok) log.warn({ jobId: job.id, automationId: pkg.id, code: 'AGENT_FILE_REFUSED' }, `file not registered: ${registered.reason}`)
        }
      })
      job.result = outcome.runner
      job.error = outcome.error
      job.status = outcome.status
      this.heldBytes += outcome.resultChars - entry.resultBytes
      entry.resultBytes = outcome.resultChars
    } catch (err) {
      // Our side failed (the runtime folder became unwritable, say): the job failed to start.
      log.error({ jobId: job.id, automationId: pkg.id, errno: (err as NodeJS.ErrnoException).code }, 'the job could not be prepared')
      job.result = { success: false, status: 'FAILED_TO_START', exitCode: null, signal: null, durationMs: 0, result: null }
      job.error = { code: 'AGENT_FAILED_TO_START', message: 'The agent could not prepare the job (its runtime or log folder is not writable).' }
      job.status = 'FAILED'
    }
    job.finishedAt = new Date(this.now()).toISOString()
    const report = job.status === 'SUCCEEDED' ? log.info.bind(log) : log.warn.bind(log)
    report({ jobId: job.id, automationId: pkg.id, status: job.status, code: job.error?.code, durationMs: job.result?.durationMs }, 'job finished')
    this.running.delete(job.id)
    this.dropOldJobs()
    this.scheduleStraySweep(job.id)
    this.pump()
  }

  /**
   * A process that left its job's group and its output (setsid, output to /dev/null)
   * outlives the job unnoticed. Shortly after jobs end, one scan finds those carrying
   * their markers and kills them; the scan reads every process's environment, so it
   * serves every job ended meanwhile rather than running once a job.
   */
  private scheduleStraySweep (jobId: string): void {
    this.unswept.add(jobId)
    if (this.strayTimer !== undefined) return
    this.strayTimer = setTimeout(() => {
      this.strayTimer = undefined
      this.killStrays()
    }, this.options.straySweepDelayMs ?? DEFAULT_STRAY_SWEEP_DELAY_MS)
    this.strayTimer.unref()
  }

  private killStrays (): void {
    const ids = new Set(this.unswept)
    this.unswept.clear()
    const strays = findJobProcesses(ids)
    signalProcesses(strays, 'SIGKILL')
    for (const jobId of new Set(strays.map((p) => p.jobId))) {
      const mine = strays.filter((p) => p.jobId === jobId)
      const text = `after the job ended, SIGKILL sent to ${mine.length} process(es) it left running outside its process group: ${describeProcesses(mine)}`
      this.options.log.warn({ jobId, pids: mine.map((p) => p.pid) }, text)
      try {
        appendFileSync(join(this.logRoot, `${jobId}.stderr.log`), `\n[agent] ${text}\n`, { mode: 0o600 })
      } catch { /* the log folder is gone: the agent's log has it */ }
    }
  }

  private dropOldJobs (): void {
    const budget = this.options.maxJobBytesInMemory ?? DEFAULT_MAX_JOB_BYTES_IN_MEMORY
    if (this.jobs.size <= this.maxJobs && this.heldBytes <= budget) return
    for (const [id, entry] of this.jobs) {
      if (this.jobs.size <= this.maxJobs && this.heldBytes <= budget) break
      if (!TERMINAL_STATUSES.has(entry.job.status)) continue
      this.jobs.delete(id)
      this.heldBytes -= entry.inputBytes + entry.resultBytes
      const same = this.byRequest.get(entry.job.requestId)
      const rest = same?.filter((j) => j !== id) ?? []
      if (rest.length === 0) this.byRequest.delete(entry.job.requestId)
      else this.byRequest.set(entry.job.requestId, rest)
    }
  }

  private async sweep (): Promise<void> {
    await this.files.purgeExpired()
    await pruneJobLogs(this.logRoot, this.options.retentionDays * 24 * HOUR_MS, this.now())
  }
}

/** What the list shows instead of an input or result too large for it. */
function truncated (sizeBytes: number): Record<string, unknown> {
  return { _truncated: true, sizeBytes }
}
