import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runReport } from './report.js'
import { writeResults } from './results.js'
import { sampleBenchResults, sampleQuickResults } from './sample-results.js'

let dir: string
beforeAll(async () => { dir = await mkdtemp(join(tmpdir(), 'razao-bench-report-')) })
afterAll(async () => { await rm(dir, { recursive: true, force: true }) })

async function report (...argv: string[]): Promise<{ code: number, out: string, err: string }> {
  let out = ''
  let err = ''
  const code = await runReport(argv, (t) => { out += t }, (t) => { err += t })
  return { code, out, err }
}

describe('bench:report', () => {
  it('writes one self-contained page of every run in the folder, charts inline', async () => {
    const runs = join(dir, 'runs')
    // Written out of order: the page orders runs by startedAt, not by file name.
    const later = sampleBenchResults({ readerSlowdown: 1.2 })
    later.startedAt = '2026-11-29T09:00:00.000Z'
    later.finishedAt = '2026-11-29T09:20:00.000Z'
    const earlier = sampleBenchResults()
    earlier.startedAt = '2026-11-28T09:00:00.000Z'
    earlier.finishedAt = '2026-11-28T09:19:00.000Z'
    await writeResults(join(runs, 'a-later.json'), later)
    await writeResults(join(runs, 'b-earlier.json'), earlier)
    await writeResults(join(runs, 'quick.json'), sampleQuickResults())
    await writeFile(join(runs, 'notes.json'), '{"not": "a result"}')

    const { code, out, err } = await report(runs)
    expect(code).toBe(0)
    expect(out).toContain(`3 runs → ${join(runs, 'report.html')}`)
    expect(err).toMatch(/skipped notes\.json is not a benchmark result/)
    expect((await readdir(runs)).sort()).toEqual(['a-later.json', 'b-earlier.json', 'notes.json', 'quick.json', 'report.html'])

    const html = await readFile(join(runs, 'report.html'), 'utf8')
    expect(html.startsWith('<!doctype html>')).toBe(true)
    for (const external of ['<script', '<link', '@import', 'url(http', 'src="http', 'href="http']) expect(html, external).not.toContain(external)
    expect(html).toContain('<svg')
    expect(html).toContain('<style>')
    // Runs in order of their start, each with its machine.
    expect(html.indexOf('2026-11-28 09:00')).toBeLessThan(html.indexOf('2026-11-29 09:00'))
    expect(html).toContain(`${process.version}`)
    // A chart per ratio, with its unit and direction on the axis; the latest values.
    expect(html).toContain('× (lower is better)')
    expect(html).toContain('reader/100k/reader/median')
    expect(html).toContain('s (lower is better)')
    // The reader got 20% slower between the two runs: in red in the latest values.
    expect(html).toMatch(/class="num bad">\+20\.0%/)
    expect(html).toContain('Not read: notes.json')
  })

  it('writes where --out says, and exits 2 when there is nothing to report or no folder', async () => {
    const runs = join(dir, 'one')
    await writeResults(join(runs, 'quick.json'), sampleQuickResults())
    const target = join(dir, 'elsewhere.html')
    expect((await report(runs, '--out', target)).code).toBe(0)
    expect(await readFile(target, 'utf8')).toContain('<svg')

    const none = await report(join(dir, 'no-such-folder'))
    expect(none.code).toBe(2)
    expect(none.err).toMatch(/cannot read the folder .*no-such-folder: ENOENT/)
    const usage = await report()
    expect(usage.code).toBe(2)
    expect(usage.err).toMatch(/one folder expected, got 0\nusage: npm run bench:report/)
  })

  it('says so when the folder holds no results', async () => {
    const empty = await mkdtemp(join(dir, 'empty-'))
    await writeFile(join(empty, 'x.txt'), 'nothing')
    const { code, err } = await report(empty)
    expect(code).toBe(2)
    expect(err).toMatch(/no benchmark results \(\*\.json of schema razao-bench\/1\) in /)
  })
})
