/**
 * The file index on disk: a snapshot (`index.json`, the whole index at the last compaction)
 * and a journal (`index.journal`, one JSON line per change since). A registration or a
 * download appends one line, whatever the size of the index; the index was rewritten whole
 * at every registration before, and a job of 1,000 files cost more on every run (issue 32).
 *
 * Compaction writes a new snapshot through a temporary file and a rename, then empties the
 * journal. It runs at start, at close, and when the journal has more lines than the index
 * has records (and more than COMPACT_MIN_LINES): each line is then rewritten at most about
 * once more, so a registration costs the same on average however many records there are.
 *
 * Every change is idempotent (an add carries the whole record, a download its time, a
 * removal the id), so replaying a journal over a snapshot that already holds some of its
 * lines gives the same index: a crash between the rename and the truncation loses nothing.
 * A torn last line (a crash in the middle of an append) is skipped at start.
 */
import { randomBytes } from 'node:crypto'
import { open, readFile, rename, rm } from 'node:fs/promises'
import type { FileHandle } from 'node:fs/promises'
import { join } from 'node:path'
import type { FileRecord } from './files.js'
import type { AgentLogger } from './log.js'

/** A file record as kept: the public record's fields, the real path, and the identity of the file registered. */
export interface StoredFile extends FileRecord {
  /** The real path (symbolic links resolved) checked at registration. */
  path: string
  /** Device and inode numbers (decimal) of the file registered; absent in records of an index written before them. */
  dev?: string
  ino?: string
}

export type JournalEntry =
  | { op: 'add', file: StoredFile }
  | { op: 'downloaded', fileId: string, at: string }
  | { op: 'remove', fileId: string }

export const SNAPSHOT_FILE = 'index.json'
export const JOURNAL_FILE = 'index.journal'
/** Below this many journal lines there is no compaction but at start and close. */
export const COMPACT_MIN_LINES = 1000

export interface StoreStats {
  /** Bytes written to the snapshot and the journal since the index was opened. */
  writtenBytes: number
  /** Lines in the journal since the last compaction. */
  journalLines: number
  compactions: number
}

export class IndexStore {
  private tail: Promise<void> = Promise.resolve()
  /** Lines waiting for the next write, and the promise of that write: appends made meanwhile go in one write. */
  private buffered: string[] = []
  private batch: Promise<void> | undefined
  private journalBytes = 0
  private compactionQueued = false
  readonly stats: StoreStats = { writtenBytes: 0, journalLines: 0, compactions: 0 }

  private constructor (private readonly dir: string, private readonly journal: FileHandle, private readonly log: AgentLogger) {}

  /**
   * Reads the snapshot and replays the journal over it. A missing snapshot is an empty
   * index; an unreadable one is logged and the index starts empty (as it did before the
   * journal); unreadable journal lines are skipped and counted in one log line.
   */
  static async open (dir: string, log: AgentLogger): Promise<{ store: IndexStore, files: Map<string, StoredFile> }> {
    const files = new Map<string, StoredFile>()
    try {
      const saved = JSON.parse(await readFile(join(dir, SNAPSHOT_FILE), 'utf8')) as { files?: unknown }
      for (const f of Array.isArray(saved.files) ? saved.files as unknown[] : []) {
        if (isStoredFile(f)) files.set(f.fileId, f)
      }
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') {
        log.error({ code: 'AGENT_FILE_INDEX_UNREADABLE', storageRoot: dir }, 'the file index cannot be read; starting with an empty one')
      }
    }
    const text = await readFile(join(dir, JOURNAL_FILE), 'utf8').catch(() => '')
    let skipped = 0
    let lines = 0
    for (const line of text.split('\n')) {
      if (line === '') continue
      lines++
      if (!replay(files, line)) skipped++
    }
    if (skipped > 0) log.warn({ code: 'AGENT_FILE_INDEX_JOURNAL', skipped }, `${skipped} unreadable line(s) of the file index journal skipped (an append cut short by a crash)`)
    const journal = await open(join(dir, JOURNAL_FILE), 'a', 0o600)
    const store = new IndexStore(dir, journal, log)
    store.journalBytes = Buffer.byteLength(text)
    store.stats.journalLines = lines
    return { store, files }
  }

  /** Appends changes (already made in memory); resolves once they are written, or the failure logged. */
  async append (entries: readonly JournalEntry[]): Promise<void> {
    for (const entry of entries) this.buffered.push(`${JSON.stringify(entry)}\n`)
    this.batch ??= this.enqueue(async () => {
      const lines = this.buffered
      this.buffered = []
      this.batch = undefined
      await this.writeLines(lines)
    })
    await this.batch
  }

  /**
   * Queues a compaction once the journal has grown past the index (`records` is read when
   * it runs, so it holds every change made until then).
   */
  compactIfLong (recordCount: number, records: () => Iterable<StoredFile>): void {
    if (this.compactionQueued || this.stats.journalLines + this.buffered.length <= Math.max(COMPACT_MIN_LINES, recordCount)) return
    void this.compact(records)
  }

  async compact (records: () => Iterable<StoredFile>): Promise<void> {
    this.compactionQueued = true
    await this.enqueue(async () => {
      this.compactionQueued = false
      await this.writeSnapshot([...records()])
    })
  }

  /** Resolves when every write queued so far is done. */
  async flush (): Promise<void> {
    await this.tail
  }

  /** Compacts (the snapshot then holds the whole index) and closes the journal. */
  async close (records: () => Iterable<StoredFile>): Promise<void> {
    await this.compact(records)
    await this.journal.close()
  }

  private async enqueue (task: () => Promise<void>): Promise<void> {
    const run = this.tail.then(task)
    // Each task logs its own failure; one that throws all the same must not stop the ones after it.
    this.tail = run.catch(() => undefined)
    await run
  }

  private async writeLines (lines: string[]): Promise<void> {
    const data = Buffer.from(lines.join(''))
    try {
      await this.journal.write(data)
      this.journalBytes += data.length
      this.stats.writtenBytes += data.length
      this.stats.journalLines += lines.length
    } catch (err) {
      this.log.error({ code: 'AGENT_FILE_INDEX_WRITE', errno: (err as NodeJS.ErrnoException).code }, 'the file index journal could not be written')
      // A partial line would swallow the next one at replay: cut back to the last whole line.
      await this.journal.truncate(this.journalBytes).catch(() => undefined)
    }
  }

  private async writeSnapshot (records: StoredFile[]): Promise<void> {
    const body = Buffer.from(JSON.stringify({ version: 2, files: records }))
    const target = join(this.dir, SNAPSHOT_FILE)
    const temporary = `${target}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`
    try {
      const handle = await open(temporary, 'w', 0o600)
      try {
        await handle.writeFile(body)
        // On disk before it replaces the old snapshot and the journal is emptied.
        await handle.sync()
      } finally {
        await handle.close()
      }
      await rename(temporary, target)
      this.stats.writtenBytes += body.length
      this.stats.compactions++
    } catch (err) {
      await rm(temporary, { force: true })
      this.log.error({ code: 'AGENT_FILE_INDEX_WRITE', errno: (err as NodeJS.ErrnoException).code }, 'the file index could not be written')
      return
    }
    try {
      await this.journal.truncate(0)
      this.journalBytes = 0
      this.stats.journalLines = 0
    } catch (err) {
      // The journal replays harmlessly over the new snapshot; it is only longer.
      this.log.error({ code: 'AGENT_FILE_INDEX_WRITE', errno: (err as NodeJS.ErrnoException).code }, 'the file index journal could not be emptied')
    }
  }
}

function isStoredFile (f: unknown): f is StoredFile {
  const r = f as Partial<StoredFile> | null
  return typeof r === 'object' && r !== null && typeof r.fileId === 'string' && typeof r.path === 'string' && typeof r.jobId === 'string'
}

/** Applies one journal line; false when it cannot be read. */
function replay (files: Map<string, StoredFile>, line: string): boolean {
  let entry: Partial<JournalEntry> & { file?: unknown, fileId?: unknown, at?: unknown }
  try {
    entry = JSON.parse(line) as typeof entry
  } catch {
    return false
  }
  if (entry.op === 'add' && isStoredFile(entry.file)) {
    files.set(entry.file.fileId, entry.file)
  } else if (entry.op === 'downloaded' && typeof entry.fileId === 'string' && typeof entry.at === 'string') {
    const record = files.get(entry.fileId)
    if (record !== undefined) record.downloadedAt = entry.at
  } else if (entry.op === 'remove' && typeof entry.fileId === 'string') {
    files.delete(entry.fileId)
  } else {
    return false
  }
  return true
}
