import { describe, expect, it } from 'vitest'
import { Gate } from './gate.js'

describe('Gate', () => {
  it('lets `limit` callers in and the others, in arrival order, as places are left', async () => {
    const gate = new Gate(2)
    const order: number[] = []
    await gate.enter()
    await gate.enter()
    const waiting = [3, 4, 5].map((n) => gate.enter().then(() => { order.push(n) }))
    await new Promise((resolve) => setImmediate(resolve))
    expect(gate.state).toEqual({ holders: 2, waiting: 3 })
    expect(order).toEqual([])
    gate.leave()
    await waiting[0]
    expect(order).toEqual([3])
    gate.leave()
    gate.leave()
    await Promise.all(waiting)
    expect(order).toEqual([3, 4, 5])
    expect(gate.state).toEqual({ holders: 2, waiting: 0 })
    gate.leave()
    gate.leave()
    expect(gate.state).toEqual({ holders: 0, waiting: 0 })
  })

  it('needs a limit of at least one', () => {
    expect(() => new Gate(0)).toThrow(RangeError)
  })
})
