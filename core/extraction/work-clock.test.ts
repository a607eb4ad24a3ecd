import { setTimeout as sleep } from 'node:timers/promises'
import { describe, expect, it } from 'vitest'
import { WorkClock, currentThreadId, threadCpuMs } from './work-clock.js'

/** Spins this thread until it has had `ms` more of processor time. */
function spin (ms: number): void {
  const until = threadCpuMs()! + ms
  while (threadCpuMs()! < until) { /* work */ }
}

describe('a document\'s work clock', () => {
  it('counts this thread\'s processor time, not the time it waits (Linux /proc)', async () => {
    const clock = new WorkClock()
    expect(clock.counts).toBe('cpu')
    // Waiting is what a busy machine makes a document do: it must cost nothing.
    await sleep(300)
    const waited = clock.elapsedMs()
    expect(waited).toBeLessThan(100)
    spin(150)
    expect(clock.elapsedMs() - waited).toBeGreaterThanOrEqual(150)
  })

  it('counts another thread only for the intervals it is told to, and nothing for an unknown one', () => {
    const clock = new WorkClock()
    // This thread stands in for the helper: its time counts twice while the interval is open.
    const stop = clock.count(currentThreadId())
    spin(100)
    stop()
    const counted = clock.elapsedMs()
    expect(counted).toBeGreaterThanOrEqual(200)
    const none = clock.count(undefined)
    const ownBefore = threadCpuMs()!
    spin(50)
    none()
    const own = threadCpuMs()! - ownBefore
    // This thread's own time once, not a second time for the unknown one (processor time, not wall).
    expect(clock.elapsedMs() - counted).toBeLessThan(1.5 * own)
    expect(threadCpuMs(2 ** 30)).toBeUndefined()
  })
})

describe('WorkClock.exceeds', () => {
  it('answers as elapsedMs does, reading /proc only when the work could have reached the limit', () => {
    const clock = new WorkClock()
    expect(clock.exceeds(50)).toBe(false)
    spin(60)
    expect(clock.exceeds(50)).toBe(true)
    expect(clock.exceeds(10_000)).toBe(false)
  })
})
