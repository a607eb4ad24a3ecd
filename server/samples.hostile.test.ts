/**
 * `razao samples DIR` into a folder someone else prepared (issue 32, item 14), run from dist/
 * as users run it: links planted under the samples' names are never followed (nothing is
 * created or changed outside DIR) nor replaced, an existing file is kept unless --force is
 * given, and each file not written is named on stderr with exit 1.
 */
import { existsSync } from 'node:fs'
import { link, lstat, mkdir, mkdtemp, readFile, readdir, readlink, rm, symlink, unlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { runRazao } from '../fixtures/razao-cli.js'
import type { RazaoRun } from '../fixtures/razao-cli.js'
import { runEnvironment } from '../fixtures/suite/run-env.js'
import { LEDGER_SAMPLES, SAMPLE_DOCUMENT_TYPES, SIGN_SAMPLE, documentSampleName } from './samples.js'

const CLI = join(import.meta.dirname, '..', 'dist', 'server', 'cli.js')
const ALL = [LEDGER_SAMPLES.balanced.file, LEDGER_SAMPLES.unbalanced.file, LEDGER_SAMPLES.legacy.file, ...SAMPLE_DOCUMENT_TYPES.map(documentSampleName), SIGN_SAMPLE]
/** Sample names taken before the command runs, and by what. */
const DANGLING = SIGN_SAMPLE
const TO_VICTIM = documentSampleName('DAS')
const HARD_LINKED = documentSampleName('DARF')
const EXISTING = LEDGER_SAMPLES.balanced.file

let dir: string
let out: string
let outside: string

const samples = async (...flags: string[]): Promise<RazaoRun> =>
  await runRazao(['samples', out, ...flags], { cwd: dir, env: { PATH: process.env.PATH ?? '', ...runEnvironment() }, entry: [CLI] })

beforeAll(async () => {
  expect(existsSync(CLI), 'dist/ is built').toBe(true)
  dir = await mkdtemp(join(tmpdir(), 'razao-samples-hostile-'))
  out = join(dir, 'amostras')
  outside = join(dir, 'outside')
  await mkdir(out)
  await mkdir(outside)
  await writeFile(join(outside, 'victim.pdf'), 'precious')
  await writeFile(join(outside, 'hard.pdf'), 'also precious')
  await symlink(join(outside, 'created-through-link.pdf'), join(out, DANGLING))
  await symlink(join(outside, 'victim.pdf'), join(out, TO_VICTIM))
  await link(join(outside, 'hard.pdf'), join(out, HARD_LINKED))
  await writeFile(join(out, EXISTING), 'my own ledger')
})

afterAll(async () => {
  await rm(dir, { recursive: true, force: true })
})

async function outsideUntouched (): Promise<void> {
  expect((await readdir(outside)).sort()).toEqual(['hard.pdf', 'victim.pdf'])
  expect(await readFile(join(outside, 'victim.pdf'), 'utf8')).toBe('precious')
  expect(await readFile(join(outside, 'hard.pdf'), 'utf8')).toBe('also precious')
  expect(await readlink(join(out, DANGLING))).toBe(join(outside, 'created-through-link.pdf'))
  expect(await readlink(join(out, TO_VICTIM))).toBe(join(outside, 'victim.pdf'))
}

const listed = (run: RazaoRun): string[] => run.stdout.trim().split('\n').filter((l) => l !== '').map((l) => l.split('\t')[0]!)

it('writes every other sample, but follows no link and replaces no file, naming each one on stderr, exit 1', async () => {
  const run = await samples()
  expect(run.code).toBe(1)
  const kept = [DANGLING, TO_VICTIM, HARD_LINKED, EXISTING]
  expect(listed(run)).toEqual(ALL.filter((f) => !kept.includes(f)).map((f) => join(out, f)))
  const lines = run.stderr.trim().split('\n')
  expect(lines).toHaveLength(4)
  expect(lines).toContain(`razao: not written: ${join(out, DANGLING)}: it is a symbolic link; not followed or replaced, even with --force (remove it first)`)
  expect(lines).toContain(`razao: not written: ${join(out, TO_VICTIM)}: it is a symbolic link; not followed or replaced, even with --force (remove it first)`)
  expect(lines).toContain(`razao: not written: ${join(out, EXISTING)}: it already exists; kept as it is (--force replaces it)`)
  expect(lines).toContain(`razao: not written: ${join(out, HARD_LINKED)}: it already exists; kept as it is (--force replaces it)`)
  await outsideUntouched()
  expect(await readFile(join(out, EXISTING), 'utf8')).toBe('my own ledger')
})

it('with --force replaces existing files by new ones (a hard link\'s other name keeps its content), still refuses the links, leaves no temporary file', async () => {
  const run = await samples('--force')
  expect(run.code).toBe(1)
  expect(listed(run)).toEqual(ALL.filter((f) => f !== DANGLING && f !== TO_VICTIM).map((f) => join(out, f)))
  expect(run.stderr.trim().split('\n').sort()).toEqual([DANGLING, TO_VICTIM].map((f) => `razao: not written: ${join(out, f)}: it is a symbolic link; not followed or replaced, even with --force (remove it first)`).sort())
  await outsideUntouched()
  expect((await readFile(join(out, EXISTING))).subarray(0, 2).toString()).toBe('PK')
  expect((await readFile(join(out, HARD_LINKED))).subarray(0, 5).toString()).toBe('%PDF-')
  expect((await lstat(join(out, HARD_LINKED))).nlink).toBe(1)
  expect((await readdir(out)).sort()).toEqual([...ALL].sort())
})

it('exits 0 once nothing stands in the way', async () => {
  await unlink(join(out, DANGLING))
  await unlink(join(out, TO_VICTIM))
  const run = await samples('--force')
  expect(run.stderr).toBe('')
  expect(run.code).toBe(0)
  expect(listed(run)).toEqual(ALL.map((f) => join(out, f)))
  expect((await readFile(join(out, SIGN_SAMPLE))).subarray(0, 5).toString()).toBe('%PDF-')
})
