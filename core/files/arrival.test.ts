import { describe, expect, it } from 'vitest'
import { ArrivalReader, ArrivalWriter, NotArriving } from './arrival.js'

const later = (ms: number, fn: () => void): void => { setTimeout(fn, ms) }

async function reason (promise: Promise<unknown>): Promise<string> {
  try {
    await promise
  } catch (err) {
    if (err instanceof NotArriving) return err.reason
    throw err
  }
  return 'resolved'
}

describe('ArrivalWriter and ArrivalReader', () => {
  it('wakes a waiting reader once enough bytes are written, and not before', async () => {
    const writer = new ArrivalWriter()
    const reader = new ArrivalReader(writer.shared, { maxIdleMs: 5_000 })
    let woke = false
    const waiting = reader.waitFor(100).then(() => { woke = true })
    writer.advance(60)
    await new Promise((resolve) => setTimeout(resolve, 20))
    expect(woke).toBe(false)
    writer.advance(40)
    await waiting
    expect(woke).toBe(true)
    expect(reader.available()).toBe(100)
    expect(writer.bytes).toBe(100)
  })

  it('says how much of a range is readable now, waiting only for its first byte', async () => {
    const writer = new ArrivalWriter()
    const reader = new ArrivalReader(writer.shared, { maxIdleMs: 5_000 })
    writer.advance(10)
    expect(await reader.readable(4, 100)).toBe(6)
    later(10, () => writer.advance(5))
    expect(await reader.readable(10, 100)).toBe(5)
  })

  it('ends waits with "short" when the file is complete without the bytes asked for', async () => {
    const writer = new ArrivalWriter()
    const reader = new ArrivalReader(writer.shared, { maxIdleMs: 5_000 })
    writer.advance(10)
    later(10, () => writer.complete())
    expect(await reason(reader.waitFor(11))).toBe('short')
    await reader.whenComplete()
    expect(reader.state()).toBe('complete')
  })

  it('ends waits with "failed" when the upload fails, and a cancel stops a reader of a complete file', async () => {
    const writer = new ArrivalWriter()
    const reader = new ArrivalReader(writer.shared, { maxIdleMs: 5_000 })
    later(10, () => writer.fail())
    expect(await reason(reader.waitFor(1))).toBe('failed')
    expect(await reason(reader.whenComplete())).toBe('failed')

    const done = new ArrivalWriter()
    const doneReader = new ArrivalReader(done.shared, { maxIdleMs: 5_000 })
    done.advance(5)
    done.complete()
    done.fail() // too late: the file is whole
    expect(() => doneReader.checkCancelled()).not.toThrow()
    done.cancel()
    expect(() => doneReader.checkCancelled()).toThrow(NotArriving)
    expect(doneReader.state()).toBe('failed')
  })

  it('gives up with "slow" once it has waited longer than its idle allowance', async () => {
    const writer = new ArrivalWriter()
    const reader = new ArrivalReader(writer.shared, { maxIdleMs: 40 })
    const started = performance.now()
    expect(await reason(reader.waitFor(1))).toBe('slow')
    const waited = performance.now() - started
    expect(waited).toBeGreaterThanOrEqual(35)
    expect(waited).toBeLessThan(2_000)
    // Bytes that are there are still served without waiting.
    writer.advance(1)
    await reader.waitFor(1)
  })
})
