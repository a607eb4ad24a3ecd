import { chmod, mkdir, mkdtemp, readdir, rm, stat, symlink, utimes, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createPool } from '../workers/pool.js'
import { loadConfig } from './config.js'
import { buildImportApp } from './import/app.js'
import { STALE_UPLOAD_MS, ensurePrivateDir, sweepStaleUploads } from './upload.js'

let dir: string
beforeAll(async () => { dir = await mkdtemp(join(tmpdir(), 'razao-sweep-')) })
afterAll(async () => { await rm(dir, { recursive: true, force: true }) })

/** An upload folder as receiveUpload makes them, its folder and file last touched `ageMs` ago. */
async function leftover (tmp: string, name: string, ageMs: number): Promise<void> {
  const folder = join(tmp, name)
  await mkdir(folder, { recursive: true })
  await writeFile(join(folder, 'upload'), 'PK')
  const when = new Date(Date.now() - ageMs)
  await utimes(join(folder, 'upload'), when, when)
  await utimes(folder, when, when)
}

describe('ensurePrivateDir', () => {
  it('creates a missing folder private, and accepts it', async () => {
    const tmp = join(dir, 'private', 'uploads')
    await ensurePrivateDir(tmp)
    expect((await stat(tmp)).mode & 0o777).toBe(0o700)
    await ensurePrivateDir(tmp)
  })

  it('refuses a folder others can write to, and a link, naming RAZAO_TMP_DIR', async () => {
    const open = join(dir, 'open')
    await mkdir(open, { mode: 0o777 })
    await chmod(open, 0o777)
    await expect(ensurePrivateDir(open)).rejects.toThrow(/RAZAO_TMP_DIR .*open can be written by other users \(mode 777\)/)
    const link = join(dir, 'link')
    await mkdir(join(dir, 'target'), { mode: 0o700 })
    await symlink(join(dir, 'target'), link)
    await expect(ensurePrivateDir(link)).rejects.toThrow(/RAZAO_TMP_DIR .*link is not a folder/)
  })
})

describe('sweepStaleUploads', () => {
  it('removes only upload folders untouched for longer than the limit', async () => {
    const tmp = join(dir, 'a')
    await leftover(tmp, 'upload-old', STALE_UPLOAD_MS + 60_000)
    await leftover(tmp, 'upload-fresh', 5_000)
    await leftover(tmp, 'not-an-upload', STALE_UPLOAD_MS * 3)
    // A folder created long ago whose file is still being written is in use.
    await leftover(tmp, 'upload-growing', STALE_UPLOAD_MS * 2)
    await writeFile(join(tmp, 'upload-growing', 'upload'), 'PK more')
    expect(await sweepStaleUploads(tmp)).toBe(1)
    expect((await readdir(tmp)).sort()).toEqual(['not-an-upload', 'upload-fresh', 'upload-growing'])
  })

  it('does nothing when the folder does not exist', async () => {
    expect(await sweepStaleUploads(join(dir, 'missing'))).toBe(0)
  })

  it('runs when the import service starts', async () => {
    const tmp = join(dir, 'b')
    await leftover(tmp, 'upload-crashed', STALE_UPLOAD_MS * 2)
    const config = loadConfig({ RAZAO_DATA_DIR: join(dir, 'data'), RAZAO_TMP_DIR: tmp })
    const pool = createPool({ maxThreads: 1 })
    const app = await buildImportApp({ shared: config.shared, config: config.import, apiKey: 'k'.repeat(24), pool, logger: false })
    try {
      await app.ready()
      expect(await readdir(tmp)).toEqual([])
    } finally {
      await app.close()
      await pool.destroy()
    }
  })
})
