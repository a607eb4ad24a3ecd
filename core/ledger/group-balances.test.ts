import { describe, expect, it } from 'vitest'
import { GroupBalances } from './group-balances.js'

describe('GroupBalances', () => {
  it('sums per group and lists the unbalanced ones in order of first appearance', () => {
    const g = new GroupBalances()
    g.add(30, 100); g.add(10, 50); g.add(30, -100); g.add(20, 7); g.add(10, -49)
    expect(g.size).toBe(3)
    expect(g.unbalancedIds()).toEqual([10, 20])
  })

  it('agrees with a Map over many ids, including huge, negative and colliding ones, through rehashes', () => {
    const g = new GroupBalances()
    const reference = new Map<number, number>()
    let seed = 12345
    const next = () => { seed = (Math.imul(seed, 1103515245) + 12345) >>> 0; return seed }
    const specials = [0, -1, 2 ** 53 - 1, -(2 ** 53 - 1), 4294967296, 4294967296 * 3, 2 ** 40 + 1]
    for (let i = 0; i < 200_000; i++) {
      const id = i % 50 === 0 ? specials[i % specials.length]! : (i % 3 === 0 ? next() % 5000 : next() * 1024)
      const cents = (next() % 20001) - 10000
      g.add(id, cents)
      reference.set(id, (reference.get(id) ?? 0) + cents)
    }
    expect(g.size).toBe(reference.size)
    expect(g.unbalancedIds()).toEqual([...reference].filter(([, b]) => b !== 0).map(([id]) => id))
  })
})
