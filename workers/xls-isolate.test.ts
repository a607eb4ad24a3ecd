import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { generateLedger } from '../fixtures/ledger/generate.js'
import type { LedgerFacts } from '../fixtures/ledger/generate.js'
import { runXlsInIsolate } from './xls-isolate.js'

let dir: string
let xls: string
let facts: LedgerFacts

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'razao-isolate-'))
  xls = join(dir, 'ledger.xls')
  facts = await generateLedger({ path: xls, format: 'xls', rows: 20_000, seed: 6 })
})
afterAll(async () => { await rm(dir, { recursive: true, force: true }) })

const job = () => ({ job: 'ledger', input: { path: xls, operation: 'analyze', batchSize: 1000, maxInflatedBytes: 1 << 26 } }) as const

describe('the XLS isolate', () => {
  it('reads the workbook in a thread of its own', async () => {
    const result = await runXlsInIsolate(job())
    expect(result.operation === 'analyze' && result.analysis.totalRows).toBe(facts.totalRows)
  })

  it('abandons a read that passes its deadline as a damaged file, and the next read works', async () => {
    await expect(runXlsInIsolate(job(), { deadlineMs: 1, heapMb: 1024 })).rejects.toThrow(expect.objectContaining({ code: 'SHEET_CORRUPT', message: expect.stringMatching(/too long/) }))
    const next = await runXlsInIsolate(job())
    expect(next.operation === 'analyze' && next.analysis.totalRows).toBe(facts.totalRows)
  })

  it('reports a thread that runs out of memory as a damaged file, and this process lives on', async () => {
    await expect(runXlsInIsolate(job(), { deadlineMs: 60_000, heapMb: 4 })).rejects.toThrow(expect.objectContaining({ code: 'SHEET_CORRUPT', cause: expect.objectContaining({ code: 'ERR_WORKER_OUT_OF_MEMORY' }) }))
    const next = await runXlsInIsolate(job())
    expect(next.operation === 'analyze' && next.analysis.totalRows).toBe(facts.totalRows)
  })
})
