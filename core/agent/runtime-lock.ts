/**
 * One agent per RUNTIME_DIR. At start an agent ends what the previous agent of its folder
 * left behind (leftovers.ts): the processes and input files of jobs that were running when
 * it died. With a second agent running on the same folder those would be its live jobs (an
 * operator who starts `razao serve agent` beside the running service: the second one fails
 * to listen on the port, but only after its start), so a folder held by a live agent is
 * refused. The lock file names its holder by pid and, on Linux, by start time: a lock left
 * by a killed agent, or naming a pid reused since, is taken over.
 */
import { randomBytes } from 'node:crypto'
import { readFile, rename, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { startTimeOf } from './process-tree.js'

export const LOCK_FILE = 'agent.lock'

/** Another live agent holds the runtime folder. */
export class RuntimeDirInUseError extends Error {
  readonly code = 'AGENT_RUNTIME_DIR_IN_USE'
  constructor (readonly runtimeDir: string, readonly pid: number) {
    super(`RUNTIME_DIR ${runtimeDir} is in use by another agent (process ${pid}); two agents cannot share it. Stop that agent, or give this one another RUNTIME_DIR. If no agent runs, remove ${join(runtimeDir, LOCK_FILE)}.`)
    this.name = 'RuntimeDirInUseError'
  }
}

interface Holder { pid: number, startTime: string }

const self = (): Holder => ({ pid: process.pid, startTime: startTimeOf(process.pid) ?? '' })

function isLive (holder: Holder): boolean {
  try {
    process.kill(holder.pid, 0)
  } catch (err) {
    // EPERM: it exists, under another user.
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return false
  }
  // Without a start time a reused pid cannot be told apart: taken for the holder.
  if (process.platform !== 'linux' || holder.startTime === '') return true
  return startTimeOf(holder.pid) === holder.startTime
}

async function readHolder (path: string): Promise<Holder | undefined> {
  const text = await readFile(path, 'utf8').catch(() => '')
  const [pid, startTime] = text.trim().split(' ')
  const n = Number(pid)
  return Number.isSafeInteger(n) && n > 0 ? { pid: n, startTime: startTime ?? '' } : undefined
}

/** Takes the folder (RuntimeDirInUseError when a live agent holds it); resolves with its release. */
export async function lockRuntimeDir (runtimeDir: string): Promise<() => Promise<void>> {
  const path = join(runtimeDir, LOCK_FILE)
  const me = self()
  const text = `${me.pid} ${me.startTime}\n`
  try {
    await writeFile(path, text, { flag: 'wx', mode: 0o600 })
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err
    const holder = await readHolder(path)
    if (holder !== undefined && isLive(holder)) throw new RuntimeDirInUseError(runtimeDir, holder.pid)
    const temporary = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`
    await writeFile(temporary, text, { mode: 0o600 })
    await rename(temporary, path)
  }
  return async () => {
    const holder = await readHolder(path)
    if (holder?.pid === me.pid && holder.startTime === me.startTime) await rm(path, { force: true })
  }
}
