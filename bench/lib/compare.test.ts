import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runCompare } from './compare.js'
import type { BenchResults, Figure } from './results.js'
import type { Spread } from './spread.js'

let dir: string
beforeAll(async () => { dir = await mkdtemp(join(tmpdir(), 'razao-bench-compare-')) })
afterAll(async () => { await rm(dir, { recursive: true, force: true }) })

const spread = (median: number, rel: number): Spread => ({ min: median * (1 - 2 * rel), max: median * (1 + 2 * rel), median, mad: median * rel, rel })

/** A run of the reader suite: inflate, the reader and ExcelJS at 100k rows, with the reader's ratios as given. */
function crafted (o: { readerRatio: number, excelRatio: number, startedAt: string, extraFigure: string, speedup?: number }): BenchResults {
  const inflate = 0.02
  const figures: Figure[] = [
    { id: 'reader/100k/inflate/median', label: '100k rows: inflate only, median', value: inflate, unit: 's', better: 'lower', role: 'baseline', samples: 10, spread: spread(inflate, 0.02) },
    {
      id: 'reader/100k/reader/median', label: '100k rows: razao reader, median', value: inflate * o.readerRatio, unit: 's', better: 'lower', role: 'ours', samples: 10,
      spread: spread(inflate * o.readerRatio, 0.03), ratios: [{ to: 'reader/100k/inflate/median', value: o.readerRatio, rel: 0.05 }]
    },
    {
      id: 'reader/100k/exceljs/median', label: '100k rows: ExcelJS, median', value: inflate * o.excelRatio, unit: 's', better: 'lower', role: 'peer', samples: 3,
      spread: spread(inflate * o.excelRatio, 0.01), ratios: [{ to: 'reader/100k/inflate/median', value: o.excelRatio, rel: 0.03 }]
    },
    { id: o.extraFigure, label: 'only in this run', value: 1, unit: 's', better: 'lower', role: 'baseline', samples: 1 }
  ]
  if (o.speedup !== undefined) {
    figures.push({ id: 'reader/pool/floor', label: 'floor', value: 1.8, unit: '×', better: 'higher', role: 'floor', samples: 1 },
      { id: 'reader/pool/speedup', label: 'pool ÷ one thread', value: 1.8 * o.speedup, unit: '×', better: 'higher', role: 'ours', samples: 1, ratios: [{ to: 'reader/pool/floor', value: o.speedup, rel: 0 }] })
  }
  return {
    schema: 'razao-bench/1',
    tool: 'bench',
    startedAt: o.startedAt,
    finishedAt: o.startedAt,
    machine: { cores: 2, cpuModel: 'Test CPU', node: 'v22.0.0', platform: 'linux 6.1', arch: 'x64', memoryBytes: 8e9, load: { start: [1, 1, 1], end: [1.2, 1, 1] } },
    git: { commit: 'abcdef0123456789', dirty: false },
    options: { argv: ['--only', 'reader'], resolved: {} },
    suites: [{ suite: 'reader', figures, checks: [], notes: [] }]
  }
}

async function file (name: string, doc: unknown): Promise<string> {
  const path = join(dir, name)
  await writeFile(path, typeof doc === 'string' ? doc : JSON.stringify(doc))
  return path
}

async function compare (...argv: string[]): Promise<{ code: number, out: string, err: string }> {
  let out = ''
  let err = ''
  const code = await runCompare(argv, (t) => { out += t }, (t) => { err += t })
  return { code, out, err }
}

describe('bench:compare', () => {
  it('exits 1 when a ratio of ours got worse beyond the spread, and says which', async () => {
    const old = await file('old.json', crafted({ readerRatio: 1.3, excelRatio: 35, startedAt: '2026-11-28T10:00:00.000Z', extraFigure: 'reader/100k/yauzl/median' }))
    // 1.30 → 1.50: 15.4% worse; the spreads explain 5% + 5%.
    const worse = await file('worse.json', crafted({ readerRatio: 1.5, excelRatio: 35, startedAt: '2026-11-29T10:00:00.000Z', extraFigure: 'reader/100k/reader-stream/median' }))
    const { code, out } = await compare(old, worse)
    expect(code).toBe(1)
    const line = out.split('\n').find((l) => l.includes('reader/100k/reader/median ÷ reader/100k/inflate/median'))!
    expect(line).toMatch(/1\.3× +→ +1\.5× +\+15\.4%.*allowed 10\.0%.*WORSE beyond spread: FAIL/)
    expect(out).toContain('1 ratio of ours got worse beyond the spread')
    // One line per figure found in both: old, new, change.
    expect(out).toMatch(/reader\/100k\/reader\/median +0\.026 s +→ +0\.03 s +\+15\.4% +worse/)
    expect(out).toMatch(/reader\/100k\/inflate\/median +0\.02 s +→ +0\.02 s +\+0\.0% +~/)
    // Figures in one file only are listed, not failed.
    expect(out).toMatch(/Only in OLD \(1, not compared\):\n {2}reader\/100k\/yauzl\/median/)
    expect(out).toMatch(/Only in NEW \(1, not compared\):\n {2}reader\/100k\/reader-stream\/median/)
  })

  it('exits 0 when the ratio moved within the spread, and does not fail on a peer getting worse or a figure missing', async () => {
    const old = await file('old2.json', crafted({ readerRatio: 1.3, excelRatio: 35, startedAt: '2026-11-28T10:00:00.000Z', extraFigure: 'reader/100k/yauzl/median' }))
    // 1.30 → 1.38: 6.2% worse, within 10%; ExcelJS ÷ inflate 35 → 45 is a peer's, informational.
    const within = await file('within.json', crafted({ readerRatio: 1.38, excelRatio: 45, startedAt: '2026-11-29T10:00:00.000Z', extraFigure: 'reader/100k/reader-stream/median' }))
    const { code, out } = await compare(old, within)
    expect(code).toBe(0)
    expect(out).toMatch(/reader\/100k\/reader\/median ÷ reader\/100k\/inflate\/median .*\+6\.2%.*within spread/)
    expect(out).toMatch(/reader\/100k\/exceljs\/median ÷ reader\/100k\/inflate\/median .*worse beyond spread \(not ours: informational\)/)
    expect(out).toContain('No ratio of ours got worse beyond its spread (1 compared).')
    expect(out).toContain('reader/100k/yauzl/median')
  })

  it('judges a ratio better higher the other way, and takes a wider --floor', async () => {
    const old = await file('old3.json', crafted({ readerRatio: 1.3, excelRatio: 35, startedAt: '2026-11-28T10:00:00.000Z', extraFigure: 'x/a', speedup: 0.95 }))
    const lower = await file('lower.json', crafted({ readerRatio: 1.3, excelRatio: 35, startedAt: '2026-11-29T10:00:00.000Z', extraFigure: 'x/a', speedup: 0.8 }))
    const higher = await file('higher.json', crafted({ readerRatio: 1.3, excelRatio: 35, startedAt: '2026-11-29T10:00:00.000Z', extraFigure: 'x/a', speedup: 1.1 }))
    expect((await compare(old, lower)).code).toBe(1)
    expect((await compare(old, higher)).code).toBe(0)
    expect((await compare(old, lower, '--floor', '20')).code).toBe(0)
  })

  it('exits 2 with a clear message on a wrong command line or a file it cannot use', async () => {
    const good = await file('good.json', crafted({ readerRatio: 1.3, excelRatio: 35, startedAt: '2026-11-28T10:00:00.000Z', extraFigure: 'x/a' }))
    const usage = await compare(good)
    expect(usage.code).toBe(2)
    expect(usage.err).toMatch(/two files expected, got 1\nusage: npm run bench:compare/)
    expect((await compare(good, good, '--bogus')).err).toMatch(/Unknown option '--bogus'/)
    expect((await compare(good, good, '--floor', 'much')).code).toBe(2)
    const missing = await compare(good, join(dir, 'nope.json'))
    expect(missing).toMatchObject({ code: 2, out: '' })
    expect(missing.err).toMatch(/cannot read .*nope\.json: ENOENT/)
    const notJson = await compare(await file('text.json', 'not json'), good)
    expect(notJson.code).toBe(2)
    expect(notJson.err).toMatch(/text\.json is not JSON/)
    const wrong = await compare(good, await file('wrong.json', { ...crafted({ readerRatio: 1, excelRatio: 1, startedAt: 'yesterday', extraFigure: 'x/a' }) }))
    expect(wrong.code).toBe(2)
    expect(wrong.err).toMatch(/wrong\.json does not conform to razao-bench\/1: \/startedAt is not a date/)
  })
})
