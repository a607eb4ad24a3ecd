/**
 * Debit minus credit per `id_movim_finan`, in cents, for every group of a file.
 * A ledger has about one group per four rows, so this is the one structure of the
 * analysis that grows with the file: kept in typed arrays (about 24 bytes a group
 * instead of ~100 for a Map of objects), outside the garbage collector's view, and
 * iterated in order of first appearance.
 */
export class GroupBalances {
  /** Group ids and their balances, in order of first appearance. */
  private ids: Float64Array<ArrayBuffer> = new Float64Array(1024)
  private balances: Float64Array<ArrayBuffer> = new Float64Array(1024)
  private count = 0
  /** Open addressing: slot → 1 + index into ids (0 = empty). */
  private slots = new Int32Array(2048)
  /** The rows of one group usually follow each other: the last group found is checked first. */
  private lastId = Number.NaN
  private lastIndex = -1

  get size (): number {
    return this.count
  }

  /** Adds `cents` (debit positive, credit negative) to the group's balance. */
  add (id: number, cents: number): void {
    let index = this.lastIndex
    if (id !== this.lastId) {
      index = this.indexOf(id)
      this.lastId = id
      this.lastIndex = index
    }
    this.balances[index] = this.balances[index]! + cents
  }

  /** The group's balance, 0 for a group never seen. */
  balanceOf (id: number): number {
    const mask = this.slots.length - 1
    for (let slot = hash(id) & mask; ; slot = (slot + 1) & mask) {
      const entry = this.slots[slot]!
      if (entry === 0) return 0
      if (this.ids[entry - 1] === id) return this.balances[entry - 1]!
    }
  }

  /** How many groups' debits and credits differ. */
  unbalancedCount (): number {
    let n = 0
    for (let i = 0; i < this.count; i++) if (this.balances[i] !== 0) n++
    return n
  }

  /** Ids whose debits and credits differ, in order of first appearance. */
  unbalancedIds (): number[] {
    const out: number[] = []
    for (let i = 0; i < this.count; i++) if (this.balances[i] !== 0) out.push(this.ids[i]!)
    return out
  }

  private indexOf (id: number): number {
    const mask = this.slots.length - 1
    let slot = hash(id) & mask
    for (;;) {
      const entry = this.slots[slot]!
      if (entry === 0) break
      if (this.ids[entry - 1] === id) return entry - 1
      slot = (slot + 1) & mask
    }
    const index = this.count++
    if (index === this.ids.length) {
      this.ids = grow(this.ids)
      this.balances = grow(this.balances)
    }
    this.ids[index] = id
    this.balances[index] = 0
    this.slots[slot] = index + 1
    if (this.count * 2 > this.slots.length) this.rehash()
    return index
  }

  private rehash (): void {
    const slots = new Int32Array(this.slots.length * 2)
    const mask = slots.length - 1
    for (let i = 0; i < this.count; i++) {
      let slot = hash(this.ids[i]!) & mask
      while (slots[slot] !== 0) slot = (slot + 1) & mask
      slots[slot] = i + 1
    }
    this.slots = slots
  }
}

function grow (array: Float64Array): Float64Array<ArrayBuffer> {
  const bigger = new Float64Array(array.length * 2)
  bigger.set(array)
  return bigger
}

/** Ids are safe integers; mix both halves so sequential and sparse ids spread alike. */
function hash (id: number): number {
  const low = id | 0
  const high = (id / 4294967296) | 0
  let h = Math.imul(low ^ (high * 0x27d4eb2d), 0x9e3779b1)
  h ^= h >>> 15
  return Math.imul(h, 0x85ebca6b) ^ (h >>> 13)
}
