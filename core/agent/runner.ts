/**
 * Runs one job's package: spawn without a shell, input on stdin and in a file, the
 * protocol lines read from stdout, both streams logged (bounded), a time limit that
 * kills the whole process tree.
 *
 * On POSIX the package leads a process group of its own (`detached`), so one
 * `kill(-pid)` reaches every process that stayed in it: SIGTERM first, SIGKILL after a
 * grace period. A process that left the group (`setsid`) is found by the job's marker in
 * its environment or by its ancestry (process-tree.ts) and signalled on its own; the
 * job's stderr log and the agent's log name every process signalled. When the package's
 * main process ends, whatever it left behind in its group is killed too, so no orphan
 * outlives its job, and the job ends even when a process outside the group still holds
 * its output open. On Windows `taskkill /T /F` stops the tree.
 */
import { spawn } from 'node:child_process'
import type { ChildProcess } from 'node:child_process'
import { mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { rmdir } from 'node:fs/promises'
import { join } from 'node:path'
import type { AutomationPackage } from './descriptor.js'
import { packageEnvironment } from './environment.js'
import type { FileClaim } from './files.js'
import { depthWithin, MAX_JSON_DEPTH } from './job.js'
import type { JobError, RunnerResult } from './job.js'
import { BoundedLog, FILE_PREFIX, LineSplitter, RESULT_PREFIX } from './output.js'
import { aliveProcesses, describeProcesses, findJobProcesses, JOB_MARKER, signalProcesses } from './process-tree.js'
import type { JobProcess } from './process-tree.js'

/**
 * How long the job's output may stay open after its main process ended. Past it, a
 * process outside the group holds it: it is looked for and killed, and past a second
 * wait the pipes are closed from our side, so the job ends whatever is left.
 */
const OUTPUT_GRACE_MS = 1000

export interface RunRequest {
  jobId: string
  pkg: AutomationPackage
  /** The real input (secrets included): it reaches the package only. */
  input: Record<string, unknown>
  timeoutMs: number
  /** The job's output folder (AGENT_JOB_DIR), created here. */
  jobDir: string
  /** Where the input file goes: outside the allowed roots, removed when the job ends. */
  inputFile: string
  /** Folder of the job's stdout/stderr logs (it exists). */
  logDir: string
  maxLogBytes: number
  killGraceMs: number
  /** The agent's environment: the package receives only the allowed and declared names of it (environment.ts). */
  env: NodeJS.ProcessEnv
  /** A file the package announced; resolves once it is registered or refused. */
  onFile: (claim: FileClaim) => Promise<void>
  /** A problem worth a log line (a malformed protocol line). */
  onNotice: (message: string) => void
  /** Aborted when the agent shuts down. */
  signal: AbortSignal
  /** Aborted when a client cancels the job (DELETE /api/v1/jobs/:id). */
  cancel?: AbortSignal
  /** Each result line as it comes, parsed (an intermediate result while the job runs), with its length. */
  onResult?: (result: Record<string, unknown>, chars: number) => void
  /** The job's two logs, as soon as they exist: what they hold can be read while the job runs. */
  onLogs?: (logs: JobLogs) => void
}

export interface JobLogs {
  stdout: BoundedLog
  stderr: BoundedLog
}

export interface RunOutcome {
  status: 'SUCCEEDED' | 'FAILED' | 'TIMED_OUT'
  runner: RunnerResult
  error: JobError | null
  /** Length of the package's result line as printed (0 without one): what the job's result costs to keep. */
  resultChars: number
}

export async function runPackage (req: RunRequest): Promise<RunOutcome> {
  const started = performance.now()
  const base = { exitCode: null, signal: null, result: null }
  const finish = (status: RunOutcome['status'], runner: Omit<RunnerResult, 'durationMs' | 'success' | 'status'> & { status?: RunnerResult['status'] }, error: JobError | null): RunOutcome => ({
    status,
    runner: { success: status === 'SUCCEEDED', status: runner.status ?? status, exitCode: runner.exitCode, signal: runner.signal, durationMs: Math.round(performance.now() - started), result: runner.result },
    error,
    resultChars: runner.result === null ? 0 : resultLine?.length ?? 0
  })
  const inputJson = JSON.stringify(req.input)
  // Synchronous on purpose: a folder and a small file cost tens of microseconds here,
  // while each asynchronous call is a thread-pool round trip (about 1 ms of the agent's
  // overhead a job on 2 busy cores, bench/agent.bench.ts). Same for cleanUp below.
  mkdirSync(req.jobDir, { mode: 0o700 })
  writeFileSync(req.inputFile, inputJson, { mode: 0o600 })

  const stdoutLog = new BoundedLog(join(req.logDir, `${req.jobId}.stdout.log`), req.maxLogBytes)
  const stderrLog = new BoundedLog(join(req.logDir, `${req.jobId}.stderr.log`), req.maxLogBytes)
  req.onLogs?.({ stdout: stdoutLog, stderr: stderrLog })
  let registered: Promise<void> = Promise.resolve()
  let resultLine: string | undefined
  // Set in the line callback: a plain annotation would let the compiler narrow it to the initial value.
  let parsed = { ok: false } as ReturnType<typeof parseResult>
  const lines = new LineSplitter((line) => {
    if (line.startsWith(RESULT_PREFIX)) {
      // The last one counts: a package may print intermediate results before its final one,
      // and each one is the job's result so far.
      resultLine = line.slice(RESULT_PREFIX.length)
      parsed = parseResult(resultLine)
      if (parsed.ok) req.onResult?.(parsed.value, resultLine.length)
    } else if (line.startsWith(FILE_PREFIX)) {
      const claim = parseFileClaim(line.slice(FILE_PREFIX.length))
      if (claim === undefined) req.onNotice(`ignored an ${FILE_PREFIX} line that is not {"path": "...", "fileName"?: "...", "mimeType"?: "..."}`)
      // One after another, so the job's files keep the order the package announced them in.
      else registered = registered.then(async () => await req.onFile(claim))
    }
  })

  const [program, ...args] = req.pkg.command
  const env = packageEnvironment(req.env, req.pkg.env, { [JOB_MARKER]: req.jobId, AGENT_JOB_DIR: req.jobDir, AGENT_JOB_INPUT: req.inputFile })
  let child: ChildProcess
  try {
    child = spawn(program === 'node' ? process.execPath : program!, args, {
      cwd: req.pkg.dir,
      env,
      stdio: ['pipe', 'pipe', 'pipe'],
      shell: false,
      detached: process.platform !== 'win32',
      windowsHide: true
    })
  } catch (err) {
    cleanUp(req)
    return finish('FAILED', { ...base, status: 'FAILED_TO_START' }, startError(program!, err))
  }

  /** A line for the job's stderr log and the agent's log. */
  const note = (text: string): void => {
    stderrLog.write(Buffer.from(`\n[agent] ${text}\n`))
    req.onNotice(text)
  }
  let spawnError: unknown
  let stopReason: 'timeout' | 'shutdown' | 'cancel' | undefined
  let killTimer: NodeJS.Timeout | undefined
  let killRound: Promise<void> | undefined
  /** Every process of the job seen so far: a stray found at SIGTERM is killed at SIGKILL even after its parent died. */
  const found = new Map<number, JobProcess>()
  const signalJob = (signal: NodeJS.Signals): void => {
    // Look first: once the main process dies, its children's parent id no longer leads to it.
    const running = child.exitCode === null && child.signalCode === null
    for (const p of findJobProcesses(new Set([req.jobId]), { pid: child.pid!, jobId: req.jobId, running })) found.set(p.pid, p)
    const alive = aliveProcesses(found.values())
    killTree(child, signal)
    // The group's members had the signal through kill(-pid) already.
    signalProcesses(alive.filter((p) => p.outsideGroup), signal)
    const why = stopReason === 'timeout' ? `time limit of ${req.timeoutMs} ms passed` : stopReason === 'cancel' ? 'the job was cancelled' : 'the agent is shutting down'
    if (alive.length > 0) note(`${why}: ${signal} sent to ${alive.length} process(es): ${describeProcesses(alive)}`)
  }
  const stop = (reason: 'timeout' | 'shutdown' | 'cancel'): void => {
    if (stopReason !== undefined || child.pid === undefined) return
    stopReason = reason
    signalJob('SIGTERM')
    killRound = new Promise((resolve) => {
      killTimer = setTimeout(() => {
        signalJob('SIGKILL')
        resolve()
      }, req.killGraceMs)
    })
  }
  const timer = setTimeout(() => stop('timeout'), req.timeoutMs)
  const onAbort = (): void => stop('shutdown')
  req.signal.addEventListener('abort', onAbort)
  if (req.signal.aborted) onAbort()
  const onCancel = (): void => stop('cancel')
  req.cancel?.addEventListener('abort', onCancel)
  if (req.cancel?.aborted === true) onCancel()

  child.stdin!.on('error', () => { /* a package that never reads its stdin closes it early: fine */ })
  child.stdin!.end(inputJson)
  child.stdout!.on('data', (chunk: Buffer) => {
    stdoutLog.write(chunk)
    lines.push(chunk.toString('utf8'))
  })
  child.stderr!.on('data', (chunk: Buffer) => stderrLog.write(chunk))
  // 'close' waits for the output pipes, which a process outside the group may hold for ever: see below.
  const closed = new Promise<void>((resolve) => child.once('close', () => resolve()))
  const [exitCode, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) => {
    child.once('error', (err) => {
      spawnError = err
      // No process: 'exit' does not follow an 'error' from spawn.
      if (child.pid === undefined) resolve([null, null])
    })
    child.once('exit', (code, sig) => resolve([code, sig]))
  })
  clearTimeout(timer)
  req.signal.removeEventListener('abort', onAbort)
  req.cancel?.removeEventListener('abort', onCancel)
  if (child.pid !== undefined) {
    // Whatever the package left in its group goes with it.
    killTree(child, 'SIGKILL')
    // A stopped job: what ignored SIGTERM gets SIGKILL at the end of the grace period.
    if (aliveProcesses(found.values()).length > 0) await killRound
    clearTimeout(killTimer)
    await closeOutput(child, closed, () => {
      const strays = findJobProcesses(new Set([req.jobId]), { pid: child.pid!, jobId: req.jobId, running: false })
      signalProcesses(strays, 'SIGKILL')
      if (strays.length > 0) note(`the package's main process ended, but process(es) outside its group held its output: SIGKILL sent to ${describeProcesses(strays)}`)
    }, () => note(`the job's output was still open ${2 * OUTPUT_GRACE_MS} ms after its main process ended; the agent closed it`))
  }
  lines.end()
  await registered
  cleanUp(req)
  await Promise.all([stdoutLog.close(), stderrLog.close()])

  if (spawnError !== undefined && child.pid === undefined) return finish('FAILED', { ...base, status: 'FAILED_TO_START' }, startError(program!, spawnError))
  const ran = { exitCode, signal, result: parsed.ok ? parsed.value : null }
  if (stopReason === 'cancel') return finish('FAILED', ran, { code: 'AGENT_CANCELLED', message: 'The job was cancelled (DELETE /api/v1/jobs/:id); its processes were stopped.' })
  if (stopReason === 'shutdown') return finish('FAILED', ran, { code: 'AGENT_SHUTDOWN', message: 'The agent was shut down while the job ran; its processes were stopped.' })
  if (stopReason === 'timeout') return finish('TIMED_OUT', ran, { code: 'AGENT_TIMED_OUT', message: `The job did not finish within ${req.timeoutMs} ms; its processes were stopped.` })
  if (exitCode !== 0) {
    const how = exitCode === null ? `was killed by signal ${signal ?? 'unknown'}` : `exited with code ${exitCode}`
    return finish('FAILED', ran, { code: 'AGENT_EXIT_NON_ZERO', message: `The package ${how}; its output is in the job's log.` })
  }
  if (resultLine === undefined) return finish('FAILED', ran, { code: 'AGENT_NO_RESULT', message: `The package ended without printing a ${RESULT_PREFIX} line.` })
  if (!parsed.ok) return finish('FAILED', ran, { code: 'AGENT_RESULT_INVALID', message: `The package's ${RESULT_PREFIX} line does not hold a JSON object nested at most ${MAX_JSON_DEPTH} levels deep.` })
  const reported = reportedFailure(parsed.value)
  if (reported !== undefined) return finish('FAILED', ran, reported)
  return finish('SUCCEEDED', ran, null)
}

/**
 * A result whose own `success` is false: the run went through (exit code 0), but the
 * package says it did not do what was asked, such as the DEC package when a company
 * failed. The job is FAILED, so that a client reading `status` is not told otherwise; the
 * result, with each item's outcome, and the files of what succeeded are kept. The
 * package's own words stay in its result: the message only counts.
 */
function reportedFailure (result: Record<string, unknown>): JobError | undefined {
  if (result.success !== false) return undefined
  const count = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0
  const { total, failed } = result
  const message = count(total) && count(failed) && failed > 0 && failed <= total
    ? `The package reported that ${failed} of ${total} item(s) failed; result.result says which and why, and what succeeded is kept.`
    : 'The package reported that it did not succeed (success: false in its result); result.result says why.'
  return { code: 'AGENT_REPORTED_FAILURE', message }
}

/**
 * Waits for the output pipes to close after the main process ended: at once, normally.
 * When they stay open, `findHolders` kills whoever holds them; when they still stay
 * open, the pipes are destroyed from our side (`giveUp` says so).
 */
async function closeOutput (child: ChildProcess, closed: Promise<void>, findHolders: () => void, giveUp: () => void): Promise<void> {
  if (await settlesWithin(closed, OUTPUT_GRACE_MS)) return
  findHolders()
  if (await settlesWithin(closed, OUTPUT_GRACE_MS)) return
  giveUp()
  child.stdout?.destroy()
  child.stderr?.destroy()
}

async function settlesWithin (promise: Promise<void>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<boolean>((resolve) => { timer = setTimeout(() => resolve(false), ms) })
  try {
    return await Promise.race([promise.then(() => true), timeout])
  } finally {
    clearTimeout(timer)
  }
}

function startError (program: string, err: unknown): JobError {
  const code = (err as NodeJS.ErrnoException | undefined)?.code ?? 'error'
  return { code: 'AGENT_FAILED_TO_START', message: `The program "${program}" could not be started (${code}).` }
}

function killTree (child: ChildProcess, signal: NodeJS.Signals): void {
  const pid = child.pid
  if (pid === undefined) return
  if (process.platform === 'win32') {
    spawn('taskkill', ['/pid', String(pid), '/T', '/F'], { stdio: 'ignore', windowsHide: true }).on('error', () => undefined)
    return
  }
  try {
    process.kill(-pid, signal)
  } catch { /* ESRCH: the group is already gone */ }
}

function parseResult (line: string | undefined): { ok: true, value: Record<string, unknown> } | { ok: false } {
  if (line === undefined) return { ok: false }
  try {
    const value = JSON.parse(line) as unknown
    const usable = typeof value === 'object' && value !== null && !Array.isArray(value) && depthWithin(value, MAX_JSON_DEPTH)
    return usable ? { ok: true, value: value as Record<string, unknown> } : { ok: false }
  } catch {
    return { ok: false }
  }
}

function parseFileClaim (text: string): FileClaim | undefined {
  let value: unknown
  try { value = JSON.parse(text) } catch { return undefined }
  if (typeof value !== 'object' || value === null) return undefined
  const v = value as Record<string, unknown>
  if (typeof v.path !== 'string' || v.path === '') return undefined
  if (v.fileName !== undefined && typeof v.fileName !== 'string') return undefined
  if (v.mimeType !== undefined && typeof v.mimeType !== 'string') return undefined
  const claim: FileClaim = { path: v.path }
  if (typeof v.fileName === 'string') claim.fileName = v.fileName
  if (typeof v.mimeType === 'string') claim.mimeType = v.mimeType
  return claim
}

/** The input file goes (it holds the passwords); the job folder stays only if the package left files in it. */
function cleanUp (req: RunRequest): void {
  rmSync(req.inputFile, { force: true })
  // Not awaited: removing a folder took about 1 ms here (the slowest step of a trivial
  // job, bench/agent.bench.ts), and nothing waits on it. It fails when the package left files.
  rmdir(req.jobDir).catch(() => undefined)
}
