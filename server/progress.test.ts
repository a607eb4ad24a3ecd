/**
 * The CLI's progress lines (server/progress.ts) on a terminal and on a pipe, with the clock in
 * the test's hands. The end-to-end runs in server/cli-import.test.ts see only the pipe: their
 * output is not a terminal.
 */
import { describe, expect, it } from 'vitest'
import { PLAIN_LINE_MS, loadProgressLine, progressBar } from './progress.js'
import type { LoadFigures } from './progress.js'

/** A stderr stand-in: a terminal or not, keeping what is written. */
function stream (isTTY: boolean): NodeJS.WriteStream & { text: string } {
  const s = { isTTY, text: '', write (chunk: string) { s.text += chunk; return true } }
  return s as unknown as NodeJS.WriteStream & { text: string }
}

describe('progress lines', () => {
  it('show rows read, the rate and the time left on a terminal, from the figures and the clock', () => {
    let now = 1_000
    const out = stream(true)
    const bar = progressBar('analyze ledger.xlsx', out, () => now)
    bar.update(0, 1_000, 0)
    now += 2_000
    bar.update(250, 1_000, 30_000)
    // 30,000 rows in 2 s; 750 bytes left at 125 bytes/s.
    expect(out.text.split('\r').at(-1)).toBe('analyze ledger.xlsx [########----------------------]  25% 30000 rows read, 15000 rows/s, about 6 s left\x1b[K')
    bar.finish()
    expect(out.text.endsWith('\r\x1b[K')).toBe(true)
  })

  it('draw nothing when stderr is not a terminal, unless --follow asks for plain lines', () => {
    const out = stream(false)
    const bar = progressBar('analyze x', out)
    bar.update(1, 2, 10)
    bar.finish()
    expect(out.text).toBe('')
    let now = 0
    const line = loadProgressLine('import x.xlsx', out, () => now)
    line.show({ importacaoId: 'a1', phase: 'carregando', rowsRead: 0, bytesRead: 0, bytesTotal: 100 })
    now = 4_000
    line.show({ importacaoId: 'a1', phase: 'carregando', rowsRead: 8_000, bytesRead: 50, bytesTotal: 100 })
    expect(out.text).toBe('razao: import x.xlsx a1: carregando, 0 rows read, 0 rows/s\nrazao: import x.xlsx a1: carregando, 8000 rows read, 2000 rows/s, about 4 s left\n')
  })
})

function fakeStream (isTTY: boolean): { stream: NodeJS.WriteStream, written: string[] } {
  const written: string[] = []
  const stream = { isTTY, write: (text: string) => { written.push(text); return true } } as unknown as NodeJS.WriteStream
  return { stream, written }
}

const ID = '5f0c2d1e-0000-4000-8000-000000000001'
const figures = (phase: string, rowsRead: number, bytesRead: number): LoadFigures => ({ importacaoId: ID, phase, rowsRead, bytesRead, bytesTotal: 1_000_000 })

describe('the --follow progress line', () => {
  it('on a terminal, redraws one line in place at most ten times a second (at once on a new phase), with rate and time left, and clears it at the end', () => {
    const { stream, written } = fakeStream(true)
    let now = 1_000
    const line = loadProgressLine('import ledger.xlsx', stream, () => now)
    line.show(figures('lendo', 0, 0))
    now += 50
    line.show(figures('carregando', 1_000, 100_000)) // a new phase: drawn although 50 ms passed
    now += 50
    line.show(figures('carregando', 2_000, 200_000)) // 50 ms after the last: skipped
    now += 100
    line.show(figures('carregando', 4_000, 400_000)) // 150 ms after the last: drawn
    line.finish()
    expect(written).toEqual([
      `\rimport ledger.xlsx ${ID}: lendo, 0 rows read, 0 rows/s\x1b[K`,
      `\rimport ledger.xlsx ${ID}: carregando, 1000 rows read, 20000 rows/s, about 1 s left\x1b[K`,
      // 400 KB of 1 MB in 0.2 s: 600 KB more at 2 MB/s.
      `\rimport ledger.xlsx ${ID}: carregando, 4000 rows read, 20000 rows/s, about 1 s left\x1b[K`,
      '\r\x1b[K'
    ])
    expect(written.join('')).not.toContain('\n')
  })

  it('on a pipe or a log, writes a whole line at each new phase and every two seconds, and leaves nothing to clear', () => {
    const { stream, written } = fakeStream(false)
    let now = 0
    const line = loadProgressLine('import ledger.xlsx', stream, () => now)
    line.show(figures('lendo', 0, 0))
    now += 10
    line.show(figures('carregando', 500, 50_000))
    now += PLAIN_LINE_MS - 1
    line.show(figures('carregando', 90_000, 500_000)) // within two seconds of the last: skipped
    now += 1
    line.show(figures('carregando', 100_000, 800_000))
    line.finish()
    expect(written).toEqual([
      `razao: import ledger.xlsx ${ID}: lendo, 0 rows read, 0 rows/s\n`,
      `razao: import ledger.xlsx ${ID}: carregando, 500 rows read, 50000 rows/s, about 1 s left\n`,
      `razao: import ledger.xlsx ${ID}: carregando, 100000 rows read, 49751 rows/s, about 1 s left\n`
    ])
  })
})
