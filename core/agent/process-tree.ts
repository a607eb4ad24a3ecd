/**
 * Finding a job's processes beyond its process group (Linux, through /proc). A package
 * leads a group of its own and one `kill(-pid)` reaches what stays in it, but a process
 * may leave: `setsid sleep 300` starts a new session. Such a process still holds what it
 * inherited, and two things give it away:
 *
 * - its environment: every descendant inherits the job's `AGENT_JOB_ID` (the marker),
 *   unless it deliberately starts a program with another environment;
 * - its ancestry: while the package's main process lives, its descendants are found by
 *   walking parent ids, whatever their environment.
 *
 * Only processes this user may read are seen (another user's environ is refused), which
 * is also every process the agent could kill. Elsewhere than Linux nothing is found: the
 * group (or Windows' tree kill) is all there is.
 */
import { readdirSync, readFileSync } from 'node:fs'

export const JOB_MARKER = 'AGENT_JOB_ID'

export interface JobProcess {
  pid: number
  /** The job whose marker it carries, or whose main process it descends from. */
  jobId: string
  /** Clock ticks after boot at which it started: with the pid, it names this process and not a later one reusing the pid. */
  startTime: string
  /** Its command line, cut to 200 characters, for the log. */
  command: string
  /** Whether it had left the process group of the job's main process. */
  outsideGroup: boolean
}

interface Stat { ppid: number, pgid: number, state: string, startTime: string }

/** /proc/<pid>/stat: `pid (comm) state ppid pgrp …`; comm may hold spaces and parentheses. */
function readStat (pid: number): Stat | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'latin1')
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ')
    return { state: fields[0]!, ppid: Number(fields[1]), pgid: Number(fields[2]), startTime: fields[19]! }
  } catch {
    return undefined
  }
}

function readEnviron (pid: number): Buffer | undefined {
  try {
    return readFileSync(`/proc/${pid}/environ`)
  } catch {
    return undefined
  }
}

/** The value of `name` in an environ block (NUL-separated `NAME=value`), read as bytes. */
function variableOf (environ: Buffer, name: string): string | undefined {
  const key = Buffer.from(`${name}=`)
  let at = environ.indexOf(key)
  while (at > 0 && environ[at - 1] !== 0) at = environ.indexOf(key, at + 1)
  if (at === -1) return undefined
  const end = environ.indexOf(0, at)
  return environ.subarray(at + key.length, end === -1 ? undefined : end).toString('latin1')
}

function markerOf (pid: number): string | undefined {
  const environ = readEnviron(pid)
  return environ === undefined ? undefined : variableOf(environ, JOB_MARKER)
}

function commandOf (pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0+$/, '').replace(/\0/g, ' ').slice(0, 200)
  } catch {
    return ''
  }
}

/** A job's main process: the leader of the job's process group. */
export interface MainProcess {
  pid: number
  jobId: string
  /** While it runs, its descendants are found through their parent ids too. */
  running: boolean
}

/**
 * The live processes of the given jobs: those carrying one of their markers, and, when
 * `main` is given and still running, every descendant of it.
 */
export function findJobProcesses (jobIds: ReadonlySet<string>, main?: MainProcess): JobProcess[] {
  if (process.platform !== 'linux' || jobIds.size === 0) return []
  let names: string[]
  try {
    names = readdirSync('/proc')
  } catch {
    return []
  }
  const stats = new Map<number, Stat>()
  const found = new Map<number, string>()
  for (const name of names) {
    const pid = Number(name)
    if (!Number.isInteger(pid) || pid === process.pid) continue
    const marker = markerOf(pid)
    if (marker !== undefined && jobIds.has(marker)) found.set(pid, marker)
    if (main?.running === true || found.has(pid)) {
      const stat = readStat(pid)
      if (stat !== undefined) stats.set(pid, stat)
    }
  }
  if (main?.running === true) {
    const children = new Map<number, number[]>()
    for (const [pid, stat] of stats) children.set(stat.ppid, [...(children.get(stat.ppid) ?? []), pid])
    const pending = [main.pid]
    while (pending.length > 0) {
      const pid = pending.pop()!
      if (!found.has(pid) && stats.has(pid)) found.set(pid, main.jobId)
      pending.push(...(children.get(pid) ?? []))
    }
  }
  const out: JobProcess[] = []
  for (const [pid, jobId] of found) {
    const stat = stats.get(pid)
    // A zombie is dead already; its parent has yet to collect it.
    if (stat === undefined || stat.state === 'Z') continue
    out.push({ pid, jobId, startTime: stat.startTime, command: commandOf(pid), outsideGroup: stat.pgid !== main?.pid })
  }
  return out
}

/**
 * Processes left by the jobs of an agent process that ended without stopping them (killed
 * with SIGKILL, a power cut of its own): every process whose job folder (`AGENT_JOB_DIR`) is
 * `<jobsRoot>/<its AGENT_JOB_ID>` for one of `jobsRoots`, the same folder seen through
 * different paths. Only jobs of this runtime folder match: another agent's jobs, on another
 * folder, carry another AGENT_JOB_DIR.
 */
export function findLeftoverProcesses (jobsRoots: readonly string[]): JobProcess[] {
  if (process.platform !== 'linux') return []
  let names: string[]
  try {
    names = readdirSync('/proc')
  } catch {
    return []
  }
  const prefixes = jobsRoots.map((root) => `${root.replace(/\/+$/, '')}/`)
  const out: JobProcess[] = []
  for (const name of names) {
    const pid = Number(name)
    if (!Number.isInteger(pid) || pid === process.pid) continue
    const environ = readEnviron(pid)
    if (environ === undefined) continue
    const jobId = variableOf(environ, JOB_MARKER)
    const jobDir = variableOf(environ, 'AGENT_JOB_DIR')
    if (jobId === undefined || jobId === '' || jobDir === undefined || !prefixes.some((p) => jobDir === `${p}${jobId}`)) continue
    const stat = readStat(pid)
    if (stat === undefined || stat.state === 'Z') continue
    out.push({ pid, jobId, startTime: stat.startTime, command: commandOf(pid), outsideGroup: false })
  }
  return out
}

/** When a process started (clock ticks after boot), to tell it from a later one given the same pid; undefined when it is gone or off Linux. */
export function startTimeOf (pid: number): string | undefined {
  if (process.platform !== 'linux') return undefined
  const stat = readStat(pid)
  return stat === undefined || stat.state === 'Z' ? undefined : stat.startTime
}

/** Those still alive as the same process: its pid not reused since (the start time unchanged), not a zombie. */
export function aliveProcesses (processes: Iterable<JobProcess>): JobProcess[] {
  return [...processes].filter((p) => {
    const now = readStat(p.pid)
    return now !== undefined && now.startTime === p.startTime && now.state !== 'Z'
  })
}

export function signalProcesses (processes: readonly JobProcess[], signal: NodeJS.Signals): void {
  for (const p of processes) {
    try {
      process.kill(p.pid, signal)
    } catch { /* gone meanwhile */ }
  }
}

/** One line naming the processes, for the job's log. */
export function describeProcesses (processes: readonly JobProcess[]): string {
  return processes.map((p) => `${p.pid} ${p.command === '' ? '?' : p.command}${p.outsideGroup ? ' (outside the job\'s process group)' : ''}`).join('; ')
}
