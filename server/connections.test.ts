/**
 * The connection caps of serve.ts, worked out from the open-file limit (issue 32, item 3).
 * The caps at work, with sockets, are in serve.hostile.test.ts.
 */
import { describe, expect, it } from 'vitest'
import { ConfigError } from './config.js'
import { DEFAULT_MAX_CONNECTIONS, RESERVED_DESCRIPTORS, UNKNOWN_LIMIT_MAX_CONNECTIONS, connectionLimits, describeLimits, readOpenFileLimit } from './connections.js'

const LIMITS = `Limit                     Soft Limit           Hard Limit           Units
Max cpu time              unlimited            unlimited            seconds
Max open files            20000                20000                files
Max locked memory         8388608              8388608              bytes
`
const defaults = { maxConnections: undefined, headersTimeoutMs: 10_000 }
const allFive = { services: 5, threads: 3 * 2 }

describe('readOpenFileLimit', () => {
  it('reads the soft and hard limits of open files, "unlimited" as Infinity', () => {
    expect(readOpenFileLimit(LIMITS)).toEqual({ soft: 20_000, hard: 20_000 })
    expect(readOpenFileLimit('Max open files            1048576              unlimited            files\n')).toEqual({ soft: 1_048_576, hard: Infinity })
    expect(readOpenFileLimit('Max cpu time              unlimited            unlimited            seconds\n')).toBeUndefined()
  })

  it('reads this process\'s own limit on Linux', () => {
    const own = readOpenFileLimit()
    if (process.platform !== 'linux') return expect(own).toBeUndefined()
    expect(own!.soft).toBeGreaterThan(0)
    expect(own!.soft).toBeLessThanOrEqual(own!.hard)
  })
})

describe('connectionLimits', () => {
  it('shares the limit among the services, two descriptors a connection, after the reserve', () => {
    // The process: 20,000 files, all five services, pools of 2 threads.
    const limits = connectionLimits(allFive, defaults, { soft: 20_000, hard: 20_000 })
    const reserved = RESERVED_DESCRIPTORS + 8 * 6
    expect(limits.maxConnections).toBe(Math.floor((20_000 - reserved) / 10))
    // All five caps full, each connection with an upload open: the reserve is still free.
    expect(5 * 2 * limits.maxConnections + reserved).toBeLessThanOrEqual(20_000)
    expect(limits.derived).toBe(true)
  })

  it('takes no more than the default cap however high the limit, and a fixed cap when it cannot be read', () => {
    expect(connectionLimits({ services: 1, threads: 2 }, defaults, { soft: 1_048_576, hard: Infinity }).maxConnections).toBe(DEFAULT_MAX_CONNECTIONS)
    expect(connectionLimits(allFive, defaults, undefined).maxConnections).toBe(UNKNOWN_LIMIT_MAX_CONNECTIONS)
  })

  it('keeps a configured cap that fits, and refuses one that does not, naming the variable and the limit', () => {
    expect(connectionLimits(allFive, { ...defaults, maxConnections: 500 }, { soft: 20_000, hard: 20_000 })).toMatchObject({ maxConnections: 500, derived: false })
    let error: unknown
    try { connectionLimits(allFive, { ...defaults, maxConnections: 5000 }, { soft: 20_000, hard: 20_000 }) } catch (err) { error = err }
    expect(error).toBeInstanceOf(ConfigError)
    expect((error as ConfigError).variable).toBe('RAZAO_MAX_CONNECTIONS')
    expect((error as Error).message).toMatch(/is 5000, but this process may open 20000 files: 5 service\(s\) fit 1982 connections each/)
  })

  it('refuses to start when the limit leaves no room for a single connection', () => {
    expect(() => connectionLimits(allFive, defaults, { soft: 150, hard: 150 })).toThrow(/may open 150 files, and 5 service\(s\) with 6 worker thread\(s\) keep 176 of them/)
  })
})

describe('describeLimits', () => {
  it('says the limit in force, whether Node could raise it to the hard one, and the caps', () => {
    expect(describeLimits(connectionLimits(allFive, defaults, { soft: 20_000, hard: 20_000 }))).toBe(
      'Open files: 20000 (the hard limit: Node raises the soft limit to it at start); each service takes at most 1982 connections (derived from the open-file limit; RAZAO_MAX_CONNECTIONS sets it) and closes one that sends no request within 10 s (RAZAO_HEADERS_TIMEOUT_MS).')
    expect(describeLimits(connectionLimits({ services: 1, threads: 2 }, defaults, { soft: 1_048_576, hard: Infinity }))).toMatch(/^Open files: 1048576 \(hard limit unlimited: Node raises the soft limit at start as far as the kernel lets it, at most 1048576 when the hard one is unlimited\); each service takes at most 4096 connections/)
  })
})
