/**
 * Whether a file a job registers (and later serves) is one the agent may hand out. The path
 * alone says too little: a hard link in an allowed folder can name any file of the disk
 * (running as root, the agent served /etc/shadow that way), and a symbolic link into another
 * job's folder resolves inside the allowed ones. So the file is opened (without following a
 * last link, without blocking on a FIFO) and the open file itself is checked:
 *
 * - a regular file with one link (a second name may lie anywhere on the same disk);
 * - the path still leads to it: the path's lstat and the open file have the same device and
 *   inode, and on Linux the kernel's own path of the descriptor (/proc/self/fd) is the path,
 *   so no folder on the way was swapped for a link between the checks and the open;
 * - its real path lies in an allowed folder, and a file under the agent's job folders lies in
 *   the job's own folder; the agent's private folders (the inputs, which hold passwords, the
 *   index, the job logs) are never allowed, whatever FILE_ALLOWED_ROOTS says;
 * - when serving, it is still the file registered (same device and inode).
 */
import { constants } from 'node:fs'
import { lstat, open, readlink, realpath } from 'node:fs/promises'
import type { FileHandle } from 'node:fs/promises'
import { join } from 'node:path'
import { isInside } from './paths.js'

/** Real (resolved) folders a file's place is judged by. */
export interface Placement {
  allowedRoots: string[]
  /** The agent's job folders (RUNTIME_DIR/jobs): a job's files must lie in its own. */
  jobsRoot: string
  /** Never served: RUNTIME_DIR/inputs, FILE_STORAGE_ROOT, LOG_DIR/jobs. */
  privateRoots: string[]
}

/** Why a real path may not be served for `jobId`, or undefined when it may. */
export function placementProblem (real: string, jobId: string, placement: Placement): string | undefined {
  if (placement.privateRoots.some((root) => real === root || isInside(root, real))) return 'the file is in one of the agent\'s own folders (inputs, file index, job logs)'
  if (isInside(placement.jobsRoot, real)) {
    return isInside(join(placement.jobsRoot, jobId), real) ? undefined : 'the file is in another job\'s folder'
  }
  if (!placement.allowedRoots.some((root) => isInside(root, real))) return 'the file is outside FILE_ALLOWED_ROOTS (after resolving .. and symbolic links)'
  return undefined
}

/** The identity of a file: device and inode numbers, in decimal (inodes may pass 2^53). */
export interface FileIdentity { dev: string, ino: string }

export type Opened =
  | { ok: true, handle: FileHandle, identity: FileIdentity, sizeBytes: number }
  | { ok: false, reason: string }

/**
 * Opens `path` (a real path) for reading and checks the open file; the caller closes the
 * handle (a stream of it closes it at its end). `expected`: the identity it must have.
 */
export async function openChecked (path: string, expected?: FileIdentity): Promise<Opened> {
  let handle: FileHandle
  try {
    // O_NOFOLLOW: a last component swapped for a link since realpath fails (ELOOP) instead of being followed.
    handle = await open(path, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0))
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code
    return { ok: false, reason: code === 'ENOENT' ? 'the file does not exist' : `the file cannot be opened (${code ?? 'error'})` }
  }
  const refuse = async (reason: string): Promise<Opened> => {
    await handle.close()
    return { ok: false, reason }
  }
  try {
    const info = await handle.stat({ bigint: true })
    if (!info.isFile()) return await refuse('the path is not a regular file')
    const identity = { dev: String(info.dev), ino: String(info.ino) }
    if (expected !== undefined && (expected.dev !== identity.dev || expected.ino !== identity.ino)) return await refuse('the file was replaced since it was registered')
    if (info.nlink !== 1n) return await refuse(`the file has ${info.nlink} hard links; only a file with a single name is registered (another name may be a link to a file outside the allowed folders)`)
    const named = await lstat(path, { bigint: true })
    if (String(named.dev) !== identity.dev || String(named.ino) !== identity.ino) return await refuse('the file changed while it was checked')
    if (await pathOfDescriptor(handle, path) !== path) return await refuse('the file changed while it was checked')
    return { ok: true, handle, identity, sizeBytes: Number(info.size) }
  } catch (err) {
    return await refuse(`the file cannot be checked (${(err as NodeJS.ErrnoException).code ?? 'error'})`)
  }
}

/**
 * The path of the open file as the kernel knows it (Linux: /proc/self/fd/N), else the real
 * path of the name, read again now.
 */
async function pathOfDescriptor (handle: FileHandle, path: string): Promise<string> {
  if (process.platform === 'linux') {
    try {
      return await readlink(`/proc/self/fd/${handle.fd}`)
    } catch { /* /proc not mounted: the name's real path below */ }
  }
  return await realpath(path)
}
