import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { COMPACT_MIN_LINES, IndexStore, JOURNAL_FILE, SNAPSHOT_FILE } from './file-store.js'
import type { StoredFile } from './file-store.js'
import type { AgentLogger } from './log.js'

let base: string
let folders = 0
beforeAll(async () => { base = await mkdtemp(join(tmpdir(), 'razao-file-store-')) })
afterAll(async () => { await rm(base, { recursive: true, force: true }) })

const lines: string[] = []
const log: AgentLogger = { info: (_o, m) => lines.push(m), warn: (_o, m) => lines.push(m), error: (_o, m) => lines.push(m) }

const record = (n: number): StoredFile => ({
  fileId: `file-${n}`, jobId: 'job', fileName: `f${n}.pdf`, mimeType: 'application/pdf', sizeBytes: n, createdAt: '2026-01-01T00:00:00.000Z',
  expiresAt: '2026-01-08T00:00:00.000Z', downloadedAt: null, downloadUrl: `/api/v1/jobs/job/files/file-${n}`, path: `/r/jobs/job/f${n}.pdf`, dev: '1', ino: String(n)
})

async function fresh (): Promise<string> {
  const dir = join(base, `s${++folders}`)
  await mkdir(dir)
  return dir
}

describe('IndexStore', () => {
  it('replays the journal over the snapshot, each change once or twice alike, and skips a line cut short', async () => {
    const dir = await fresh()
    await writeFile(join(dir, SNAPSHOT_FILE), JSON.stringify({ version: 2, files: [record(1), record(2)] }))
    const journal = [
      { op: 'add', file: record(2) }, // already in the snapshot: a crash after the rename, before the truncation
      { op: 'add', file: record(3) },
      { op: 'downloaded', fileId: 'file-1', at: '2026-01-02T00:00:00.000Z' },
      { op: 'remove', fileId: 'file-2' },
      { op: 'remove', fileId: 'file-2' }
    ].map((e) => JSON.stringify(e)).join('\n')
    await writeFile(join(dir, JOURNAL_FILE), `${journal}\n{"op":"add","file":{"fileId":"file-4","jo`)
    const { store, files } = await IndexStore.open(dir, log)
    expect([...files.keys()]).toEqual(['file-1', 'file-3'])
    expect(files.get('file-1')?.downloadedAt).toBe('2026-01-02T00:00:00.000Z')
    expect(lines).toContain('1 unreadable line(s) of the file index journal skipped (an append cut short by a crash)')
    await store.close(() => files.values())
    expect(await readFile(join(dir, JOURNAL_FILE), 'utf8')).toBe('')
    expect(JSON.parse(await readFile(join(dir, SNAPSHOT_FILE), 'utf8')).files.map((f: StoredFile) => f.fileId)).toEqual(['file-1', 'file-3'])
  })

  it('appends one line a change, and compacts once the journal outgrows the index', async () => {
    const dir = await fresh()
    const { store, files } = await IndexStore.open(dir, log)
    const add = async (n: number): Promise<void> => {
      files.set(`file-${n}`, record(n))
      await store.append([{ op: 'add', file: record(n) }])
      store.compactIfLong(files.size, () => files.values())
    }
    for (let n = 0; n < 10; n++) await add(n)
    const oneLine = Buffer.byteLength(`${JSON.stringify({ op: 'add', file: record(5) })}\n`)
    expect(store.stats).toEqual({ writtenBytes: 10 * oneLine, journalLines: 10, compactions: 0 })
    // Downloads add lines but no records: past COMPACT_MIN_LINES lines, more than the records, one compaction.
    for (let i = 0; i < COMPACT_MIN_LINES; i++) {
      await store.append([{ op: 'downloaded', fileId: 'file-1', at: '2026-01-02T00:00:00.000Z' }])
      store.compactIfLong(files.size, () => files.values())
    }
    await store.flush()
    expect(store.stats.compactions).toBe(1)
    expect(store.stats.journalLines).toBeLessThan(COMPACT_MIN_LINES)
    await store.close(() => files.values())
    const reopened = await IndexStore.open(dir, log)
    expect(reopened.files.size).toBe(10)
    await reopened.store.close(() => reopened.files.values())
  })
})
