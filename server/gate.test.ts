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

  it('lets callers `ahead` in before the others, in arrival order among themselves', async () => {
    const gate = new Gate(1)
    await gate.enter()
    const order: string[] = []
    const waiting = [['scan 1', false], ['text 1', true], ['scan 2', false], ['text 2', true]].map(async ([name, ahead]) => {
      await gate.enter(undefined, ahead as boolean)
      order.push(name as string)
      gate.leave()
    })
    gate.leave()
    await Promise.all(waiting)
    expect(order).toEqual(['text 1', 'text 2', 'scan 1', 'scan 2'])
    expect(gate.state).toEqual({ holders: 0, waiting: 0 })
  })

  it('drops a waiter whose signal aborts: it holds nothing and the next in line gets the place', async () => {
    const gate = new Gate(1)
    await gate.enter()
    const controller = new AbortController()
    const gaveUp = gate.enter(controller.signal)
    let later = false
    const next = gate.enter().then(() => { later = true })
    controller.abort(new Error('waited too long'))
    await expect(gaveUp).rejects.toThrow('waited too long')
    expect(gate.state).toEqual({ holders: 1, waiting: 1 })
    gate.leave()
    await next
    expect(later).toBe(true)
    expect(gate.state).toEqual({ holders: 1, waiting: 0 })
    await expect(gate.enter(AbortSignal.abort(new Error('already')))).rejects.toThrow('already')
    expect(gate.state).toEqual({ holders: 1, waiting: 0 })
  })

  it('needs a limit of at least one', () => {
    expect(() => new Gate(0)).toThrow(RangeError)
  })
})
