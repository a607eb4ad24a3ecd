/**
 * The clock a document's deadline reads: the CPU time its own threads spent on it, not
 * the time that passed. On a machine busy with other work a scan gets fewer time slices,
 * and a wall clock charged it for them: a one-page scan that reads in 2-4 s on a quiet
 * machine was abandoned at 20 s on a loaded one (issue 33). CPU time counts only the
 * document's own work, so a document that fits its budget on a quiet machine fits it on
 * a busy one.
 *
 * The threads counted: the calling thread (a pool thread: pdf.js, the plugins, drawing
 * pages for OCR) from the clock's start, and any helper thread for the intervals it
 * works for the document (the thread's Tesseract worker, while it reads one of its
 * pages). Linux gives each thread's CPU time in /proc (schedstat, in nanoseconds); where
 * the system gives none (another OS, /proc not mounted) the clock counts wall time, as
 * before, and says so (`counts`).
 */
import { readFileSync, readlinkSync } from 'node:fs'

/** Clock ticks a second of /proc's `stat` times (USER_HZ: 100 on every Linux build we know of). */
const USER_HZ = 100

/**
 * CPU time (user + system) of a thread of this process, ms: the calling thread without
 * `tid`. Undefined where /proc gives none (not Linux, or the thread has ended).
 */
export function threadCpuMs (tid?: number): number | undefined {
  const dir = tid === undefined ? '/proc/thread-self' : `/proc/self/task/${tid}`
  try {
    // `schedstat`: time on a CPU in ns, time waiting for one, time slices.
    const text = readFileSync(`${dir}/schedstat`, 'latin1')
    const ns = Number(text.slice(0, text.indexOf(' ')))
    if (Number.isFinite(ns)) return ns / 1e6
  } catch {
    // Kernels built without scheduler statistics: `stat`'s utime and stime, in ticks.
  }
  try {
    const stat = readFileSync(`${dir}/stat`, 'latin1')
    // Fields after the command's closing parenthesis (the command may hold spaces): state is field 3, utime 14, stime 15.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    const ticks = Number(fields[11]) + Number(fields[12])
    return Number.isFinite(ticks) ? ticks * 1000 / USER_HZ : undefined
  } catch {
    return undefined
  }
}

/** This thread's id, once read (a thread keeps its id); null where there is none. */
let ownThreadId: number | null | undefined

/** The calling thread's id in the system (Linux's tid), for another thread to read its CPU time; undefined elsewhere. */
export function currentThreadId (): number | undefined {
  if (ownThreadId === undefined) {
    try {
      const match = /\/task\/(\d+)$/.exec(readlinkSync('/proc/thread-self'))
      ownThreadId = match === null ? null : Number(match[1])
    } catch {
      ownThreadId = null
    }
  }
  return ownThreadId ?? undefined
}

/** A helper thread's interval being counted. */
interface Interval { tid: number, from: number, last: number }

/** The work one document has cost so far (see the header). */
export class WorkClock {
  private readonly wallStart = performance.now()
  private readonly cpuStart = threadCpuMs()
  /** Helper threads' finished intervals, ms. */
  private helpers = 0
  private readonly open = new Set<Interval>()
  /** `cpu`: CPU time of the document's threads; `wall`: the system gives no per-thread CPU time here. */
  readonly counts: 'cpu' | 'wall' = this.cpuStart === undefined ? 'wall' : 'cpu'

  /** The last reading: work then, and the wall instant it was taken. */
  private last: { work: number, wall: number } | undefined

  /**
   * Whether the work so far exceeds `limitMs`. Reading /proc costs 20-100 µs, so it is read
   * only when it could: each counted thread adds at most the wall time that passed since
   * the last reading, and while that bound stays under the limit the answer is no.
   */
  exceeds (limitMs: number): boolean {
    const now = performance.now()
    if (this.last !== undefined && this.last.work + (now - this.last.wall) * (1 + this.open.size) <= limitMs) return false
    const work = this.elapsedMs()
    this.last = { work, wall: now }
    return work > limitMs
  }

  /** Work so far, ms. */
  elapsedMs (): number {
    if (this.cpuStart === undefined) return performance.now() - this.wallStart
    let total = (threadCpuMs() ?? this.cpuStart) - this.cpuStart + this.helpers
    for (const interval of this.open) total += this.read(interval) - interval.from
    return total
  }

  /**
   * Counts thread `tid`'s CPU time from now until the function returned is called (a
   * Tesseract worker reading one of the document's pages). A thread that ends meanwhile
   * counts up to its last reading. Nothing is counted for an unknown thread.
   */
  count (tid: number | undefined): () => void {
    const from = tid === undefined || this.cpuStart === undefined ? undefined : threadCpuMs(tid)
    if (tid === undefined || from === undefined) return () => undefined
    const interval = { tid, from, last: from }
    this.open.add(interval)
    // The bound of `exceeds` now grows with one more thread: read afresh.
    this.last = undefined
    return () => {
      if (!this.open.delete(interval)) return
      this.helpers += this.read(interval) - interval.from
    }
  }

  private read (interval: Interval): number {
    interval.last = threadCpuMs(interval.tid) ?? interval.last
    return interval.last
  }
}

/** A budget of work: past `limitMs` of `clock`, the document is abandoned. */
export interface WorkBudget { clock: WorkClock, limitMs: number }
