/**
 * Runs one measuring child process and classifies how it ended. A contender that
 * runs out of memory or time is a result to print, not a reason to stop the suite.
 */
import { spawn } from 'node:child_process'
import { FAILURE_PREFIX, REPORT_PREFIX } from '../child/protocol.js'

export type Failure = 'timeout' | 'out of memory' | 'killed' | 'crashed'

export type ChildOutcome<R> =
  | { ok: true, report: R }
  | { ok: false, failure: Failure, detail: string }

export interface ChildOptions {
  timeoutMs: number
  /** Extra node flags, e.g. a bigger heap for SheetJS. */
  nodeArgs?: string[]
}

const STDERR_TAIL_CHARS = 8000
/** V8's fatal heap message, or an allocation a library reports itself. */
const OUT_OF_MEMORY = /heap out of memory|Allocation failed|ERR_OUT_OF_MEMORY|Array buffer allocation failed/i

export function runChild<R> (script: string, job: object, options: ChildOptions): Promise<ChildOutcome<R>> {
  const args = [...(options.nodeArgs ?? []), '--expose-gc', script, JSON.stringify(job)]
  // NODE_OPTIONS cleared: a loader inherited from the shell (tsx) would be measured too.
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NODE_OPTIONS: '' } })
  let stdout = ''
  let stderr = ''
  child.stdout.setEncoding('utf8').on('data', (text: string) => { stdout += text })
  child.stderr.setEncoding('utf8').on('data', (text: string) => { stderr = (stderr + text).slice(-STDERR_TAIL_CHARS) })
  let timedOut = false
  const timer = setTimeout(() => {
    timedOut = true
    child.kill('SIGKILL')
  }, options.timeoutMs)

  return new Promise((resolve) => {
    child.once('error', (err) => {
      clearTimeout(timer)
      resolve({ ok: false, failure: 'crashed', detail: err.message })
    })
    child.once('close', (code, signal) => {
      clearTimeout(timer)
      const line = stdout.split('\n').find((l) => l.startsWith(REPORT_PREFIX))
      if (timedOut) {
        resolve({ ok: false, failure: 'timeout', detail: `no result within ${Math.round(options.timeoutMs / 1000)} s` })
      } else if (line !== undefined && code === 0) {
        resolve({ ok: true, report: JSON.parse(line.slice(REPORT_PREFIX.length)) as R })
      } else if (OUT_OF_MEMORY.test(stderr)) {
        const fatal = stderr.split('\n').find((l) => OUT_OF_MEMORY.test(l)) ?? ''
        const heap = options.nodeArgs?.find((a) => a.startsWith('--max-old-space-size=')) ?? 'default heap'
        resolve({ ok: false, failure: 'out of memory', detail: `${fatal.trim()} (${heap})` })
      } else if (signal === 'SIGKILL') {
        // Not our timer: most likely the kernel's OOM killer.
        resolve({ ok: false, failure: 'killed', detail: 'SIGKILL from outside the suite (the kernel OOM killer?)' })
      } else {
        const reason = stderr.split('\n').find((l) => l.startsWith(FAILURE_PREFIX))?.slice(FAILURE_PREFIX.length)
        resolve({ ok: false, failure: 'crashed', detail: `exit ${code ?? signal ?? '?'}: ${reason ?? lastLines(stderr, 3)}` })
      }
    })
  })
}

/** The first line that names an error (Node prints the stack after it and its version last), else the last lines. */
function lastLines (text: string, count: number): string {
  const lines = text.trim().split('\n')
  const error = lines.find((l) => /\b[A-Za-z]*Error\b|\berror:/i.test(l))
  return [...(error === undefined ? [] : [error.trim()]), ...lines.slice(-count)].join(' | ')
}
