/**
 * `razao samples DIR`, run from dist/ as users run it: every file it writes does the job
 * it is for. The ledgers open with the import's readers (XLSX in this thread, XLS in its
 * isolate) and add up as announced; each PDF is extracted to its type by the real
 * extraction, and every type the registry has gets a sample; the PDF to sign is signed
 * by the signature service with its development certificate.
 */
import { existsSync } from 'node:fs'
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runLedgerJob } from '../workers/ledger-job.js'
import { runXlsInIsolate } from '../workers/xls-isolate.js'
import { parserDescriptions } from '../workers/extract-document.js'
import { createPool } from '../workers/pool.js'
import type { WorkerPool } from '../workers/pool.js'
import { loadConfig } from './config.js'
import { loadExtractConfig } from './extract/config.js'
import { extractStoredFile } from './extract/run.js'
import { LEDGER_SAMPLES, SAMPLE_DOCUMENT_TYPES, SIGN_SAMPLE, documentSampleName } from './samples.js'
import { runRazao } from '../fixtures/razao-cli.js'
import { runEnvironment } from '../fixtures/suite/run-env.js'
import { buildSignApp } from './sign/app.js'
import { loadSignConfig } from './sign/config.js'

const CLI = join(import.meta.dirname, '..', 'dist', 'server', 'cli.js')
const MAX_INFLATED = 512 * 1024 * 1024
let dir: string
let out: string
let listing: string
let pool: WorkerPool

beforeAll(async () => {
  // The built CLI: `npm test` builds before it runs the tests.
  expect(existsSync(CLI), 'dist/ is built').toBe(true)
  dir = await mkdtemp(join(tmpdir(), 'razao-samples-'))
  out = join(dir, 'amostras')
  const run = await runRazao(['samples', out], { cwd: dir, env: { PATH: process.env.PATH ?? '', ...runEnvironment() }, entry: [CLI] })
  expect(run.stderr).toBe('')
  expect(run.code).toBe(0)
  listing = run.stdout
  pool = createPool({ maxThreads: 2 })
}, 120_000)

afterAll(async () => {
  await pool?.destroy()
  await rm(dir, { recursive: true, force: true })
})

it('writes the ledgers, one PDF per document type and a PDF to sign, and lists each with its use', async () => {
  const expected = [LEDGER_SAMPLES.balanced.file, LEDGER_SAMPLES.unbalanced.file, LEDGER_SAMPLES.legacy.file, ...SAMPLE_DOCUMENT_TYPES.map(documentSampleName), SIGN_SAMPLE]
  expect((await readdir(out)).sort()).toEqual([...expected].sort())
  const lines = listing.trim().split('\n').map((l) => l.split('\t'))
  expect(lines.map(([path]) => path)).toEqual(expected.map((f) => join(out, f)))
  for (const [, use] of lines) expect(use).toMatch(/\/(v1|api)\//)
})

describe('the ledgers', () => {
  it('the balanced XLSX has its rows and balances to the cent', async () => {
    const { rows, file } = LEDGER_SAMPLES.balanced
    const result = await runLedgerJob({ path: join(out, file), operation: 'analyze', batchSize: 1000, maxInflatedBytes: MAX_INFLATED }, 'xlsx')
    if (result.operation !== 'analyze') throw new Error('an analysis was asked for')
    expect(result.analysis).toMatchObject({ totalRows: rows, differenceCents: 0, unbalancedGroups: 0 })
    expect(result.analysis.totalDebitCents).toBeGreaterThan(0)
    expect(Object.values(result.analysis.problemCounts).every((n) => n === 0)).toBe(true)
  })

  it('the unbalanced XLSX shows its groups to /v1/diagnose-unbalanced', async () => {
    const { rows, file, unbalancedGroups } = LEDGER_SAMPLES.unbalanced
    const result = await runLedgerJob({ path: join(out, file), operation: 'diagnose', batchSize: 1000, maxInflatedBytes: MAX_INFLATED }, 'xlsx')
    if (result.operation !== 'diagnose') throw new Error('a diagnosis was asked for')
    expect(result.diagnosis.analysis.totalRows).toBe(rows)
    expect(result.diagnosis.groups).toHaveLength(unbalancedGroups)
    for (const group of result.diagnosis.groups) expect(group.differenceCents).not.toBe(0)
  })

  it('the legacy XLS opens in the XLS reader\'s isolate and balances', async () => {
    const { rows, file } = LEDGER_SAMPLES.legacy
    const input = { path: join(out, file), operation: 'analyze' as const, batchSize: 1000, maxInflatedBytes: MAX_INFLATED }
    const result = await runXlsInIsolate({ job: 'ledger', input })
    if (result.operation !== 'analyze') throw new Error('an analysis was asked for')
    expect(result.analysis).toMatchObject({ totalRows: rows, differenceCents: 0, unbalancedGroups: 0 })
  }, 60_000)
})

describe('the documents', () => {
  it('cover every document type of the registry', () => {
    expect([...SAMPLE_DOCUMENT_TYPES].sort()).toEqual(parserDescriptions().map((p) => p.documentType).sort())
  })

  it.each(SAMPLE_DOCUMENT_TYPES)('%s is extracted as its type, every check passing', async (documentType) => {
    const result = await extractStoredFile(pool, join(out, documentSampleName(documentType)), loadExtractConfig({}))
    expect(result.errors).toEqual([])
    expect(result.documentType).toBe(documentType)
    expect(result.success).toBe(true)
  })
})

it('the PDF to sign is signed by the signature service', async () => {
  const shared = loadConfig({ RAZAO_DATA_DIR: join(dir, 'data'), LOG_LEVEL: 'silent' }).shared
  const app = await buildSignApp({ shared, config: loadSignConfig({}, shared), apiKey: 'samples-test-key-0123456789', pool, logger: false })
  try {
    const pdf = await readFile(join(out, SIGN_SAMPLE))
    const res = await app.inject({
      method: 'POST',
      url: '/api/v1/sign',
      headers: { 'x-api-key': 'samples-test-key-0123456789' },
      payload: { pdfBase64: pdf.toString('base64'), originalFileName: SIGN_SAMPLE }
    })
    expect(res.statusCode).toBe(200)
    const body = res.json()
    expect(body.data).toMatchObject({ signatureFormat: 'PAdES', document: { signedFileName: 'contrato_assinado.pdf', mimeType: 'application/pdf' } })
    expect(Buffer.from(body.data.signedPdfBase64, 'base64').subarray(0, 5).toString()).toBe('%PDF-')
  } finally {
    await app.close()
  }
}, 60_000)
