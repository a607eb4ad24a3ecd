import { describe, expect, it } from 'vitest'
import { loadProgressLine, progressBar } from './progress.js'

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
