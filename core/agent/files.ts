/**
 * Output files of jobs: registration (only from the allowed roots, after `..` and
 * symbolic links are resolved), the index that survives a restart, expiry.
 *
 * The index is one JSON file under FILE_STORAGE_ROOT, rewritten whole through a
 * temporary file and a rename, so a crash leaves the old or the new index, never half
 * of one. Writes are serialized. It holds the file's real path, which the API never shows.
 */
import { randomBytes, randomUUID } from 'node:crypto'
import { mkdir, readFile, realpath, rename, rm, rmdir, stat, writeFile } from 'node:fs/promises'
import { basename, dirname, extname, isAbsolute, join, relative, resolve, sep } from 'node:path'
import type { AgentLogger } from './log.js'

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

interface StoredFile extends FileRecord {
  /** The real path (symbolic links resolved) checked at registration. */
  path: string
}

/** What a package prints after `AGENT_FILE_JSON=`. */
export interface FileClaim {
  path: string
  fileName?: string
  mimeType?: string
}

export type Registration = { ok: true, record: FileRecord } | { ok: false, reason: string }

export type FileLookup =
  | { kind: 'ok', record: FileRecord, path: string, sizeBytes: number }
  | { kind: 'missing' }
  | { kind: 'gone', record: FileRecord }

export interface FileIndexOptions {
  storageRoot: string
  allowedRoots: string[]
  retentionDays: number
  /** Files under this folder are the agent's own (job folders): deleted with their expired record. */
  ownedRoot: string
  log: AgentLogger
  now?: () => number
}

const INDEX_FILE = 'index.json'
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

/** True when `path` lies strictly inside `root` (both already real, absolute paths). */
export function isInside (root: string, path: string): boolean {
  const rel = process.platform === 'win32' ? relative(root.toLowerCase(), path.toLowerCase()) : relative(root, path)
  return rel !== '' && rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel)
}

export class FileIndex {
  private readonly records = new Map<string, StoredFile>()
  /** fileIds per jobId, so a job's files are found without a scan of the whole index. */
  private readonly byJob = new Map<string, Set<string>>()
  private writing: Promise<void> = Promise.resolve()
  private readonly now: () => number

  private constructor (private readonly options: FileIndexOptions) {
    this.now = options.now ?? Date.now
  }

  /** Loads the index (a missing one is empty; an unreadable one is logged and started afresh) and purges expired records. */
  static async open (options: FileIndexOptions): Promise<FileIndex> {
    const index = new FileIndex(options)
    await mkdir(options.storageRoot, { recursive: true })
    try {
      const saved = JSON.parse(await readFile(join(options.storageRoot, INDEX_FILE), 'utf8')) as { files?: unknown }
      for (const f of Array.isArray(saved.files) ? saved.files as StoredFile[] : []) {
        if (typeof f?.fileId === 'string' && typeof f.path === 'string' && typeof f.jobId === 'string') index.add(f)
      }
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') {
        options.log.error({ code: 'AGENT_FILE_INDEX_UNREADABLE', storageRoot: options.storageRoot }, 'the file index cannot be read; starting with an empty one')
      }
    }
    await index.purgeExpired()
    return index
  }

  /** Registers a file a job's package announced; relative paths are taken from the package's working directory. */
  async register (jobId: string, claim: FileClaim, cwd: string): Promise<Registration> {
    if (this.forJob(jobId).length >= MAX_FILES_PER_JOB) return { ok: false, reason: `a job registers at most ${MAX_FILES_PER_JOB} files` }
    let real: string
    try {
      real = await realpath(resolve(cwd, claim.path))
    } catch {
      return { ok: false, reason: 'the file does not exist' }
    }
    const roots = await this.realRoots()
    if (!roots.some((root) => isInside(root, real))) return { ok: false, reason: 'the file is outside FILE_ALLOWED_ROOTS (after resolving .. and symbolic links)' }
    const info = await stat(real)
    if (!info.isFile()) return { ok: false, reason: 'the path is not a regular file' }
    const fileName = cleanFileName(claim.fileName) ?? basename(real)
    const created = this.now()
    const fileId = randomUUID()
    const record: StoredFile = {
      fileId,
      jobId,
      fileName,
      mimeType: claim.mimeType !== undefined && MIME.test(claim.mimeType) ? claim.mimeType : mimeTypeOf(fileName),
      sizeBytes: info.size,
      createdAt: new Date(created).toISOString(),
      expiresAt: new Date(created + this.options.retentionDays * DAY_MS).toISOString(),
      downloadedAt: null,
      downloadUrl: `/api/v1/jobs/${jobId}/files/${fileId}`,
      path: real
    }
    this.add(record)
    await this.save()
    return { ok: true, record: publicRecord(record) }
  }

  /** Live (unexpired) records of a job, oldest first. */
  forJob (jobId: string): FileRecord[] {
    const nowMs = this.now()
    const ids = this.byJob.get(jobId)
    if (ids === undefined) return []
    return [...ids].map((id) => this.records.get(id)!).filter((r) => Date.parse(r.expiresAt) > nowMs).map(publicRecord)
  }

  /** A download: the record must be live and of this job; the file must still be the one registered. */
  async lookup (jobId: string, fileId: string): Promise<FileLookup> {
    const record = this.records.get(fileId)
    if (record === undefined || record.jobId !== jobId || Date.parse(record.expiresAt) <= this.now()) return { kind: 'missing' }
    try {
      // A file replaced by a link since it was registered is not served.
      const real = await realpath(record.path)
      const info = await stat(real)
      if (real !== record.path || !info.isFile()) return { kind: 'gone', record: publicRecord(record) }
      return { kind: 'ok', record: publicRecord(record), path: real, sizeBytes: info.size }
    } catch {
      return { kind: 'gone', record: publicRecord(record) }
    }
  }

  async markDownloaded (fileId: string): Promise<void> {
    const record = this.records.get(fileId)
    if (record === undefined) return
    record.downloadedAt = new Date(this.now()).toISOString()
    await this.save()
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
    await this.save()
    this.options.log.info({ count: expired.length }, 'expired file records purged')
    return expired.length
  }

  /** Resolves when every write started so far is on disk. */
  async flush (): Promise<void> {
    await this.writing
  }

  private add (record: StoredFile): void {
    this.records.set(record.fileId, record)
    const ids = this.byJob.get(record.jobId)
    if (ids === undefined) this.byJob.set(record.jobId, new Set([record.fileId]))
    else ids.add(record.fileId)
  }

  private async realRoots (): Promise<string[]> {
    const roots = await Promise.all([...this.options.allowedRoots, this.options.ownedRoot].map(async (root) => await realpath(root).catch(() => undefined)))
    return roots.filter((r): r is string => r !== undefined)
  }

  private async save (): Promise<void> {
    const body = JSON.stringify({ version: 1, files: [...this.records.values()] })
    const run = async (): Promise<void> => {
      const target = join(this.options.storageRoot, INDEX_FILE)
      const temporary = `${target}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`
      try {
        await writeFile(temporary, body, { mode: 0o600 })
        await rename(temporary, target)
      } catch (err) {
        await rm(temporary, { force: true })
        this.options.log.error({ code: 'AGENT_FILE_INDEX_WRITE', errno: (err as NodeJS.ErrnoException).code }, 'the file index could not be written')
      }
    }
    this.writing = this.writing.then(run)
    await this.writing
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

/** A name for the download: the last path segment, no control characters, at most 200 characters. */
function cleanFileName (name: string | undefined): string | undefined {
  if (typeof name !== 'string') return undefined
  const cleaned = basename(name.replace(/\\/g, '/')).replace(/[\u0000-\u001f\u007f]/g, '').trim().slice(0, 200)
  return cleaned === '' || cleaned === '.' || cleaned === '..' ? undefined : cleaned
}
