import { spawnSync } from 'node:child_process'
import { mkdtemp, rm, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { readRegularFile } from './regular-file.js'

let dir: string
beforeAll(async () => { dir = await mkdtemp(join(tmpdir(), 'razao-regular-')) })
afterAll(async () => { await rm(dir, { recursive: true, force: true }) })

const refusal = async (path: string, max: number): Promise<string | undefined> =>
  await readRegularFile(path, max).then(() => undefined, (err: NodeJS.ErrnoException) => err.code)

describe('readRegularFile', () => {
  it('reads a regular file up to the cap, and refuses one past it', async () => {
    await writeFile(join(dir, 'ok.json'), '{"a":1}')
    expect((await readRegularFile(join(dir, 'ok.json'), 7)).toString()).toBe('{"a":1}')
    expect(await refusal(join(dir, 'ok.json'), 6)).toBe('EFBIG')
    await writeFile(join(dir, 'empty'), '')
    expect((await readRegularFile(join(dir, 'empty'), 0)).length).toBe(0)
  })

  it('refuses at once a FIFO (no writer), a device and a directory, and reports a missing file as such', async () => {
    if (process.platform !== 'win32') {
      expect(spawnSync('mkfifo', [join(dir, 'fifo')]).status).toBe(0)
      const started = Date.now()
      expect(await refusal(join(dir, 'fifo'), 1024)).toBe('EFTYPE')
      // A hang catcher (0-1 ms at a load of 3 as of 12): opened without O_NONBLOCK, the FIFO would wait
      // for a writer for ever.
      expect(Date.now() - started).toBeLessThan(1000)
      await symlink('/dev/zero', join(dir, 'zero'))
      expect(await refusal(join(dir, 'zero'), 1024)).toBe('EFTYPE')
    }
    expect(await refusal(dir, 1024)).toBe('EFTYPE')
    expect(await refusal(join(dir, 'missing'), 1024)).toBe('ENOENT')
  })
})
