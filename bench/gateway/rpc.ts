/**
 * The gateway benchmark runs the fake and the gateway each in a process of its own (as
 * they would be: the authority is another machine, the gateway a service), driven over
 * the IPC channel: one request, one reply, matched by id.
 */
import { fork } from 'node:child_process'
import type { ChildProcess } from 'node:child_process'
import { basename, join } from 'node:path'
import { fileURLToPath } from 'node:url'

export interface RpcRequest { id: number, op: string, args?: unknown }
export interface RpcReply { id: number, ok: boolean, value?: unknown, error?: string }

export interface BenchChild {
  call: <T>(op: string, args?: unknown) => Promise<T>
  stop: () => Promise<void>
}

/**
 * `file` is relative to this folder. With BENCH_CPU_PROF_DIR set, the child writes V8 CPU
 * profiles (one per thread) into a folder named after it there when it stops (Node refuses --cpu-prof in NODE_OPTIONS).
 */
export function startChild (file: string): BenchChild {
  const profileDir = process.env.BENCH_CPU_PROF_DIR
  const profile = profileDir === undefined || profileDir === '' ? [] : ['--cpu-prof', `--cpu-prof-dir=${join(profileDir, basename(file, '.ts'))}`]
  const child: ChildProcess = fork(fileURLToPath(new URL(file, import.meta.url)), [], { execArgv: ['--import', 'tsx', ...profile], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
  let next = 0
  const waiting = new Map<number, { resolve: (v: unknown) => void, reject: (e: Error) => void }>()
  child.on('message', (m: RpcReply) => {
    const w = waiting.get(m.id)
    waiting.delete(m.id)
    if (m.ok) w?.resolve(m.value)
    else w?.reject(new Error(m.error))
  })
  child.on('exit', (code) => {
    for (const w of waiting.values()) w.reject(new Error(`${file} exited with code ${code}`))
    waiting.clear()
  })
  return {
    call: <T>(op: string, args?: unknown) => new Promise<T>((resolve, reject) => {
      const id = ++next
      waiting.set(id, { resolve: resolve as (v: unknown) => void, reject })
      child.send({ id, op, args } satisfies RpcRequest)
    }),
    stop: async () => {
      if (child.exitCode !== null) return
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
      child.send({ id: ++next, op: 'stop' } satisfies RpcRequest)
      await exited
    }
  }
}

/** The child side: `handlers[op](args)`; `stop` runs `onStop` and exits. */
export function serveRpc (handlers: Record<string, (args: never) => Promise<unknown>>, onStop: () => Promise<void>): void {
  process.on('message', (m: RpcRequest) => {
    if (m.op === 'stop') {
      void onStop().finally(() => process.exit(0))
      return
    }
    const handler = handlers[m.op]
    if (handler === undefined) {
      process.send?.({ id: m.id, ok: false, error: `unknown op ${m.op}` } satisfies RpcReply)
      return
    }
    handler(m.args as never).then(
      (value) => process.send?.({ id: m.id, ok: true, value } satisfies RpcReply),
      (e: unknown) => process.send?.({ id: m.id, ok: false, error: e instanceof Error ? e.message : String(e) } satisfies RpcReply)
    )
  })
}
