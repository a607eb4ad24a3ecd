import { readFile } from 'node:fs/promises'
import { describe, expect, it } from 'vitest'

// A plugin may import only core/plugin-api.ts and its own folder, so the SENDA guide reader
// and its fixture layout live in das/ and, as exact copies, here. This keeps them one code.
describe('das-mei: the shared SENDA guide files are the copies of das/', () => {
  for (const file of ['guide.ts', 'fixtures/guide-pdf.ts']) {
    it(`${file} equals plugins/das/${file}`, async () => {
      const here = await readFile(new URL(`./${file}`, import.meta.url), 'utf8')
      const there = await readFile(new URL(`../das/${file}`, import.meta.url), 'utf8')
      expect(here).toBe(there)
    })
  }
})
