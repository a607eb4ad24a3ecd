import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { generateLedger } from '../fixtures/ledger/generate.js'
import type { AnalyzeSpreadsheetInput, AnalyzeSpreadsheetOutput } from './analyze-spreadsheet.js'
import { createPool, runTask } from './pool.js'
import type { WorkerPool } from './pool.js'

let dir: string
let pool: WorkerPool
let ledger: string

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'razao-pool-'))
  ledger = join(dir, 'ledger.xlsx')
  await generateLedger({ path: ledger, format: 'xlsx', rows: 300, seed: 2 })
  pool = createPool({ maxThreads: 1 })
})

afterAll(async () => {
  await pool.destroy()
  await rm(dir, { recursive: true, force: true })
})

describe('the worker pool', () => {
  it('queues every task it is given: a burst far beyond its threads all completes', async () => {
    const input: AnalyzeSpreadsheetInput = { path: ledger, operation: 'analyze', batchSize: 1000, maxInflatedBytes: 1 << 26 }
    // One thread and twelve tasks at once: a bounded queue (piscina's 'auto' is threads²) refuses the rest.
    const results = await Promise.all(Array.from({ length: 12 }, () =>
      runTask<AnalyzeSpreadsheetInput, AnalyzeSpreadsheetOutput>(pool, 'analyze-spreadsheet', input)))
    for (const result of results) {
      expect(result.operation).toBe('analyze')
      if (result.operation === 'analyze') expect(result.analysis.totalRows).toBe(300)
    }
  })
})
