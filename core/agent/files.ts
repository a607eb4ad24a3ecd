/**
 * Output files of jobs: registration (only from the allowed roots, after `..` and
 * symbolic links are resolved, and only a file that passes the checks of file-check.ts),
 * the index that survives a restart, expiry.
 *
 * The index is held in memory and kept on disk under FILE_STORAGE_ROOT as a snapshot and a
 * journal of changes (file-store.ts): a registration appends one line. It holds the file's
 * real path and identity, which the API never shows.
 */
import { randomUUID } from 'node:crypto'
import type { FileHandle } from 'node:fs/promises'
import { mkdir, realpath, rm, rmdir } from 'node:fs/promises'
import { basename, dirname, extname, resolve } from 'node:path'
import { openChecked, placementProblem } from './file-check.js'
import type { Placement } from './file-check.js'
import { cleanFileName } from './file-name.js'
import { IndexStore } from './file-store.js'
import type { StoredFile, StoreStats } from './file-store.js'
import type { AgentLogger } from './log.js'
import { isInside } from './paths.js'

export { isInside }

/** A file record as the API shows it (spec 3 §2 C). */
export interface FileRecord {
  fileId: string
  jobId: string
  fileName: string
  mimeType: string
  sizeBytes: number
  createdAt: string
  expiresAt: string
  downloadedAt: string | null
  downloadUrl: string
}

/** What a package prints after `AGENT_FILE_JSON=`. */
export interface FileClaim {
  path: string
  fileName?: string
  mimeType?: string
}

export type Registration = { ok: true, record: FileRecord } | { ok: false, reason: string }

/** A download: `ok` holds the file open (checked); the caller streams it, which closes it, or closes it. */
export type FileLookup =
  | { kind: 'ok', record: FileRecord, handle: FileHandle, sizeBytes: number }
  | { kind: 'missing' }
  | { kind: 'gone', record: FileRecord, reason: string }

export interface FileIndexOptions {
  storageRoot: string
  allowedRoots: string[]
  retentionDays: number
  /** The agent's job folders (RUNTIME_DIR/jobs): a job's files there must be in its own folder; they are deleted with their expired record. */
  ownedRoot: string
  /** Folders of the agent's own whose files are never registered (RUNTIME_DIR/inputs, LOG_DIR/jobs); FILE_STORAGE_ROOT is one too. */
  privateRoots: string[]
  log: AgentLogger
  now?: () => number
}

const DAY_MS = 86_400_000
/** A package registering more than this many files in one job is refused the rest. */
export const MAX_FILES_PER_JOB = 1000

const MIME_BY_EXTENSION: Record<string, string> = {
  '.pdf': 'application/pdf',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.txt': 'text/plain; charset=utf-8',
  '.log': 'text/plain; charset=utf-8',
  '.csv': 'text/csv; charset=utf-8',
  '.json': 'application/json',
  '.xml': 'application/xml',
  '.html': 'text/html; charset=utf-8',
  '.zip': 'application/zip',
  '.xlsx': 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  '.xls': 'application/vnd.ms-excel',
  '.docx': 'application/vnd.openxmlformats-officedocument.wordprocessingml.document'
}
const MIME = /^[A-Za-z0-9][\w.+-]*\/[\w.+-]+(?:\s*;\s*[\w.+-]+=[\w.+-]+)?$/

export function mimeTypeOf (fileName: string): string {
  return MIME_BY_EXTENSION[extname(fileName).toLowerCase()] ?? 'application/octet-stream'
}

export class FileIndex {
  private readonly records = new Map<string, StoredFile>()
  /** fileIds per jobId, so a job's files are found without a scan of the whole index. */
  private readonly byJob = new Map<string, Set<string>>()
  private readonly now: () => number
  /** The roots' real paths, resolved again while one of them is missing. */
  private placement: { value: Placement, complete: boolean } | undefined

  private constructor (private readonly options: FileIndexOptions, private readonly store: IndexStore) {
    this.now = options.now ?? Date.now
  }

  /** Loads the index (a missing one is empty; an unreadable one is logged and started afresh) and purges expired records. */
  static async open (options: FileIndexOptions): Promise<FileIndex> {
    await mkdir(options.storageRoot, { recursive: true })
    const { store, files } = await IndexStore.open(options.storageRoot, options.log)
    const index = new FileIndex(options, store)
    for (const f of files.values()) {
      // A name kept by an agent that cut names inside a surrogate pair.
      f.fileName = cleanFileName(f.fileName) ?? basename(f.path)
      index.add(f)
    }
    await index.purgeExpired()
    if (store.stats.journalLines > 0) await store.compact(() => index.records.values())
    return index
  }

  /** Registers a file a job's package announced; relative paths are taken from the package's working directory. */
  async register (jobId: string, claim: FileClaim, cwd: string): Promise<Registration> {
    if ((this.byJob.get(jobId)?.size ?? 0) >= MAX_FILES_PER_JOB) return { ok: false, reason: `a job registers at most ${MAX_FILES_PER_JOB} files` }
    let real: string
    try {
      real = await realpath(resolve(cwd, claim.path))
    } catch {
      return { ok: false, reason: 'the file does not exist' }
    }
    const problem = placementProblem(real, jobId, await this.placementNow())
    if (problem !== undefined) return { ok: false, reason: problem }
    const opened = await openChecked(real)
    if (!opened.ok) return opened
    await opened.handle.close()
    const fileName = cleanFileName(claim.fileName) ?? cleanFileName(basename(real)) ?? 'file'
    const created = this.now()
    const fileId = randomUUID()
    const record: StoredFile = {
      fileId,
      jobId,
      fileName,
      mimeType: claim.mimeType !== undefined && MIME.test(claim.mimeType) ? claim.mimeType : mimeTypeOf(fileName),
      sizeBytes: opened.sizeBytes,
      createdAt: new Date(created).toISOString(),
      expiresAt: new Date(created + this.options.retentionDays * DAY_MS).toISOString(),
      downloadedAt: null,
      downloadUrl: `/api/v1/jobs/${jobId}/files/${fileId}`,
      path: real,
      ...opened.identity
    }
    this.add(record)
    await this.store.append([{ op: 'add', file: record }])
    this.store.compactIfLong(this.records.size, () => this.records.values())
    return { ok: true, record: publicRecord(record) }
  }

  /** Live (unexpired) records of a job, oldest first. */
  forJob (jobId: string): FileRecord[] {
    const nowMs = this.now()
    const ids = this.byJob.get(jobId)
    if (ids === undefined) return []
    return [...ids].map((id) => this.records.get(id)!).filter((r) => Date.parse(r.expiresAt) > nowMs).map(publicRecord)
  }

  /**
   * A download: the record must be live and of this job; the file, opened, must still be
   * the one registered, in its place, with a single name (file-check.ts).
   */
  async lookup (jobId: string, fileId: string): Promise<FileLookup> {
    const record = this.records.get(fileId)
    if (record === undefined || record.jobId !== jobId || Date.parse(record.expiresAt) <= this.now()) return { kind: 'missing' }
    const problem = placementProblem(record.path, record.jobId, await this.placementNow())
    if (problem !== undefined) return { kind: 'gone', record: publicRecord(record), reason: problem }
    const opened = await openChecked(record.path, record.dev === undefined || record.ino === undefined ? undefined : { dev: record.dev, ino: record.ino })
    if (!opened.ok) return { kind: 'gone', record: publicRecord(record), reason: opened.reason }
    return { kind: 'ok', record: publicRecord(record), handle: opened.handle, sizeBytes: opened.sizeBytes }
  }

  /** Sets `downloadedAt` (at once in memory; resolves once it is on disk). */
  async markDownloaded (fileId: string): Promise<void> {
    const record = this.records.get(fileId)
    if (record === undefined) return
    record.downloadedAt = new Date(this.now()).toISOString()
    await this.store.append([{ op: 'downloaded', fileId, at: record.downloadedAt }])
  }

  /** Drops expired records; the files of the agent's own job folders go with them. */
  async purgeExpired (): Promise<number> {
    const nowMs = this.now()
    const expired = [...this.records.values()].filter((r) => Date.parse(r.expiresAt) <= nowMs)
    if (expired.length === 0) return 0
    for (const r of expired) {
      this.records.delete(r.fileId)
      const ids = this.byJob.get(r.jobId)
      ids?.delete(r.fileId)
      if (ids?.size === 0) this.byJob.delete(r.jobId)
      if (isInside(this.options.ownedRoot, r.path)) {
        await rm(r.path, { force: true })
        await rmdir(dirname(r.path)).catch(() => undefined)
      }
    }
    await this.store.append(expired.map((r) => ({ op: 'remove', fileId: r.fileId })))
    this.store.compactIfLong(this.records.size, () => this.records.values())
    this.options.log.info({ count: expired.length }, 'expired file records purged')
    return expired.length
  }

  /** Resolves when every write started so far is on disk. */
  async flush (): Promise<void> {
    await this.store.flush()
  }

  /** Writes the whole index as the snapshot and closes the journal. */
  async close (): Promise<void> {
    await this.store.close(() => this.records.values())
  }

  /** What the index has written since it was opened (the journal's growth, compactions). */
  get storeStats (): Readonly<StoreStats> {
    return this.store.stats
  }

  private add (record: StoredFile): void {
    this.records.set(record.fileId, record)
    const ids = this.byJob.get(record.jobId)
    if (ids === undefined) this.byJob.set(record.jobId, new Set([record.fileId]))
    else ids.add(record.fileId)
  }

  /**
   * The real paths of the roots, resolved once (a registration paid five realpath calls
   * otherwise); again while one of them does not exist yet.
   */
  private async placementNow (): Promise<Placement> {
    if (this.placement?.complete === true) return this.placement.value
    const real = async (path: string): Promise<string | undefined> => await realpath(path).catch(() => undefined)
    const allowed = await Promise.all(this.options.allowedRoots.map(real))
    const jobsRoot = await real(this.options.ownedRoot)
    const privateRoots = await Promise.all([this.options.storageRoot, ...this.options.privateRoots].map(real))
    const present = <T>(values: Array<T | undefined>): T[] => values.filter((v): v is T => v !== undefined)
    this.placement = {
      // An unresolved job root still names the folder, so another job's files cannot pass for an allowed root's.
      value: { allowedRoots: present(allowed), jobsRoot: jobsRoot ?? this.options.ownedRoot, privateRoots: [...present(privateRoots), ...this.options.privateRoots] },
      complete: [...allowed, jobsRoot, ...privateRoots].every((p) => p !== undefined)
    }
    return this.placement.value
  }
}

function publicRecord (r: StoredFile): FileRecord {
  return {
    fileId: r.fileId,
    jobId: r.jobId,
    fileName: r.fileName,
    mimeType: r.mimeType,
    sizeBytes: r.sizeBytes,
    createdAt: r.createdAt,
    expiresAt: r.expiresAt,
    downloadedAt: r.downloadedAt,
    downloadUrl: r.downloadUrl
  }
}
