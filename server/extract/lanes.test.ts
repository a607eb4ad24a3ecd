/**
 * The extraction lanes (issue 32, item 2): a text-layer document is answered while two
 * scans hold a pool of two, one reading by OCR and one waiting for the OCR lane. And the
 * deadline a scan is read within (issue 33, item 4): it counts the document's processor
 * time, so a scan whose process gets no processor for longer than its deadline is still
 * read, and a turn held past the wall ceiling answers SERVICE_BUSY, not PDF_TIMEOUT. Real
 * OCR; kept out of the hostile group, which CI runs on every Node line. Last, a document's
 * deadline does not count its wait in the queue, and that wait is bounded (slow text-layer
 * PDFs, no OCR).
 */
import { spawn } from 'node:child_process'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { PDFDocument } from 'pdf-lib'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { scanOf } from '../../fixtures/extraction/scans.js'
import { makeRectanglesPdf } from '../../fixtures/pdf/samples.js'
import { generateExtrato } from '../../plugins/pgdas-extrato/fixtures/generate.js'
import { generateDarf } from '../../plugins/darf/fixtures/generate.js'
import { generateDas } from '../../plugins/das/fixtures/generate.js'
import { createPool } from '../../workers/pool.js'
import { loadConfig } from '../config.js'
import { buildExtractApp } from './app.js'
import { loadExtractConfig } from './config.js'
import { extractStoredFile, poolTurns } from './run.js'

const API_KEY = 'chave-extract-lanes-0123456789'

async function extract (bytes: Uint8Array, to: string): Promise<{ status: number, body: any }> {
  const form = new FormData()
  form.append('file', new Blob([bytes], { type: 'application/pdf' }), 'documento.pdf')
  const res = await fetch(`${to}/api/v1/pdf/extract`, { method: 'POST', body: form, headers: { 'x-api-key': API_KEY } })
  return { status: res.status, body: await res.json() }
}

describe('the OCR lane', () => {
  /** A scan of `pages` generated DARFs at 200 dpi (cached under the temporary folder). */
  async function darfScan (pages: number): Promise<Uint8Array> {
    const doc = await PDFDocument.create()
    for (let i = 0; i < pages; i++) {
      const [page] = await doc.copyPages(await PDFDocument.load((await generateDarf({ seed: 20 + i })).pdf), [0])
      doc.addPage(page!)
    }
    return await scanOf(await doc.save(), { dpi: 200, skew: 1, noise: 0.001, quality: 70, seed: 5 })
  }

  it('answers a text-layer document while two scans fill a pool of two, one reading and one waiting for the OCR lane', async () => {
    const lanePool = createPool({ maxThreads: 2 })
    // A deadline no scan of three pages reaches on a loaded machine: the scans must end read, not stopped.
    const laneApp = await buildExtractApp({ shared: loadConfig({ LOG_LEVEL: 'silent' }).shared, config: loadExtractConfig({ EXTRACT_DOCUMENT_TIMEOUT_MS: '300000' }), apiKey: API_KEY, pool: lanePool, logger: false })
    try {
      const at = await laneApp.listen({ host: '127.0.0.1', port: 0 })
      const [scan, das] = await Promise.all([darfScan(3), generateDas({ seed: 4 })])
      // Both threads load pdf.js and the plugins first: that is not what is measured.
      await Promise.all([extract(das.pdf, at), extract(das.pdf, at)])
      const finished: string[] = []
      const scans = ['scan 1', 'scan 2'].map(async (name) => {
        const answer = await extract(scan, at)
        finished.push(name)
        return answer
      })
      // One scan on its OCR turn, the other waiting for the lane: each had its text-layer turn.
      await expect.poll(() => poolTurns(lanePool).ocr, { timeout: 60_000 }).toEqual({ running: 1, waiting: 1 })
      const text = await extract(das.pdf, at)
      expect(text).toMatchObject({ status: 200, body: { success: true, documentType: 'DAS' } })
      // Answered while neither scan is: before the lanes it waited for a scan's whole
      // reading (19.9 s against 0.18 s after, two eight-page scans, load 15-18).
      expect(finished).toEqual([])
      expect(poolTurns(lanePool).ocr).toEqual({ running: 1, waiting: 1 })
      for (const answer of await Promise.all(scans)) expect(answer).toMatchObject({ status: 200, body: { success: true, documentType: 'DARF', engine: { textSource: 'OCR' } } })
    } finally {
      await laneApp.close()
      await lanePool.destroy()
    }
  }, 600_000)
})

/**
 * A child process that reads a scan three times with readPdfText: cold, then warm to
 * measure its cost (the process's processor time, every thread), then within a deadline
 * of three times that cost. It prints `reading` once the third read has started, and the
 * read's outcome as a JSON line.
 */
const READER = `
const [root, path] = process.argv.slice(2)
const { readFile } = await import('node:fs/promises')
const { readPdfText } = await import(root + '/core/extraction/index.ts')
const { releaseTesseract } = await import(root + '/core/extraction/ocr/index.ts')
const bytes = await readFile(path)
const limits = (deadlineMs) => ({ maxPages: 50, deadlineMs, maxRunsPerPage: 50000, ocr: {} })
await readPdfText(bytes, limits(600000))
const before = process.cpuUsage()
await readPdfText(bytes, limits(600000))
const cost = process.cpuUsage(before)
const deadlineMs = Math.ceil(3 * (cost.user + cost.system) / 1000)
const started = performance.now()
const reading = readPdfText(bytes, limits(deadlineMs))
process.stdout.write(JSON.stringify({ reading: true, deadlineMs }) + '\\n')
const outcome = await reading.then((pages) => ({ ok: true, runs: pages[0].runs.length, source: pages[0].source }), (err) => ({ ok: false, code: err.code, message: err.message }))
process.stdout.write(JSON.stringify({ ...outcome, deadlineMs, wallMs: performance.now() - started }) + '\\n')
await releaseTesseract()
`

describe('the deadline counts the document\'s work, not the machine\'s load', () => {
  it('reads a scan whose process got no processor for longer than its whole deadline', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'razao-ocr-deadline-'))
    try {
      const scanPath = join(dir, 'scan.pdf')
      await writeFile(scanPath, await scanOf((await generateDarf({ seed: 11 })).pdf, { dpi: 200, skew: 1.2, noise: 0.001, quality: 70, seed: 5 }))
      const reader = join(dir, 'reader.mjs')
      await writeFile(reader, READER)
      const child = spawn(process.execPath, ['--import', 'tsx', reader, join(import.meta.dirname, '..', '..'), scanPath], { stdio: ['ignore', 'pipe', 'inherit'] })
      const lines: Array<Record<string, any>> = []
      let buffered = ''
      let stopped: Promise<void> | undefined
      child.stdout.on('data', (chunk: Buffer) => {
        buffered += chunk.toString()
        for (let end = buffered.indexOf('\n'); end >= 0; end = buffered.indexOf('\n')) {
          const line = JSON.parse(buffered.slice(0, end)) as Record<string, any>
          buffered = buffered.slice(end + 1)
          lines.push(line)
          // The machine gives the reader nothing for longer than its deadline, mid-read:
          // what a loaded machine does to a scan, in one piece.
          if (line.reading === true) {
            stopped = (async () => {
              child.kill('SIGSTOP')
              await sleep(line.deadlineMs + 1000)
              child.kill('SIGCONT')
            })()
          }
        }
      })
      const code = await new Promise<number | null>((resolve) => child.on('close', resolve))
      await stopped
      expect(code).toBe(0)
      const outcome = lines.at(-1)!
      // Before, the deadline read the wall clock: this read answered PDF_TIMEOUT on waking.
      expect(outcome).toMatchObject({ ok: true, source: 'OCR' })
      expect(outcome.runs).toBeGreaterThan(20)
      expect(outcome.wallMs).toBeGreaterThan(outcome.deadlineMs)
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  }, 600_000)

  it('answers SERVICE_BUSY, not PDF_TIMEOUT, when a turn outlasts the wall ceiling within its processor time', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'razao-ocr-wall-'))
    const pool = createPool({ maxThreads: 1 })
    try {
      const scanPath = join(dir, 'scan.pdf')
      const textPath = join(dir, 'darf.pdf')
      const darf = await generateDarf({ seed: 12 })
      await writeFile(scanPath, await scanOf(darf.pdf, { dpi: 200, skew: 1, noise: 0.001, quality: 70, seed: 5 }))
      await writeFile(textPath, darf.pdf)
      // The thread is started and has loaded the task first (that alone can outlast the ceiling below).
      expect(await extractStoredFile(pool, textPath, loadExtractConfig({}))).toMatchObject({ documentType: 'DARF' })
      // A ceiling no OCR turn fits: starting Tesseract alone takes about a second of processor time.
      const config = { ...loadExtractConfig({ EXTRACT_DOCUMENT_TIMEOUT_MS: '600000', EXTRACT_DOCUMENT_WALL_TIMEOUT_MS: '100' }) }
      await expect(extractStoredFile(pool, scanPath, config)).rejects.toMatchObject({
        code: 'SERVICE_BUSY',
        // The thread's processor time was read (a number of ms, the thread's own).
        message: expect.stringMatching(/^This machine is too busy to read the document in time: .* it had used \d+ ms of its 600000 ms of processor time, and it was stopped\. The file is not at fault/)
      })
    } finally {
      await pool.destroy()
      await rm(dir, { recursive: true, force: true })
    }
  }, 120_000)
})

/**
 * A document's deadline (EXTRACT_DOCUMENT_TIMEOUT_MS) counts its own work, not its wait for a
 * thread (issue 22, item 8), and EXTRACT_QUEUE_TIMEOUT_MS bounds that wait: text-layer PDFs
 * queued behind slow ones in a pool of one thread.
 */
describe('the document deadline in the queue', () => {
  let dir: string
  let extrato: Uint8Array
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'razao-queue-deadline-'))
    extrato = (await generateExtrato({ seed: 81 })).pdf
  })
  afterAll(async () => { await rm(dir, { recursive: true, force: true }) })

  it('counts a document\'s work, not its wait: healthy PDFs queued longer than the deadline all succeed', async () => {
    const pool = createPool({ maxThreads: 1 })
    const slow = join(dir, 'slower.pdf')
    const healthy = join(dir, 'extrato.pdf')
    // Nine pages of rectangles (63 MiB of content, under the 64 MiB bound): about 0.9 s of
    // pdf.js work a page on a quiet machine, so well over the 6.5 s the wait must exceed.
    await writeFile(slow, await makeRectanglesPdf(9))
    await writeFile(healthy, extrato)
    const limits = { maxPages: 50, documentTimeoutMs: 1_500, queueTimeoutMs: 600_000 }
    try {
      // Warm the thread: pdf.js and the plugins load with its first document.
      await extractStoredFile(pool, healthy, { ...limits, documentTimeoutMs: 60_000 })
      // Three of them ahead, so that the wait exceeds the deadline and its margin even on a
      // fast machine (one alone took under 4 s on a quiet one).
      const busy = Promise.all([1, 2, 3].map(async () => await extractStoredFile(pool, slow, { ...limits, documentTimeoutMs: 120_000 })))
      const queued = performance.now()
      // Queued behind it longer than their deadline and the hard limit's margin (5 s)
      // together: that wait used to end as PDF_TIMEOUT.
      const results = await Promise.all([1, 2, 3].map(async () => await extractStoredFile(pool, healthy, limits)))
      expect(performance.now() - queued).toBeGreaterThan(limits.documentTimeoutMs + 5_000)
      expect(results.map((r) => r.success)).toEqual([true, true, true])
      expect((await busy).map((r) => r.pages)).toEqual([9, 9, 9])
    } finally {
      await pool.destroy()
    }
  }, 240_000)

  it('bounds the wait itself: a document that gets no thread in time is answered SERVICE_BUSY, not PDF_TIMEOUT', async () => {
    const pool = createPool({ maxThreads: 1 })
    const slow = join(dir, 'slow.pdf')
    const healthy = join(dir, 'extrato.pdf')
    await writeFile(slow, await makeRectanglesPdf(1))
    await writeFile(healthy, extrato)
    try {
      const busy = extractStoredFile(pool, slow, { maxPages: 50, documentTimeoutMs: 120_000, queueTimeoutMs: 600_000 })
      while (poolTurns(pool).running < 1) await new Promise((resolve) => setTimeout(resolve, 10))
      await expect(extractStoredFile(pool, healthy, { maxPages: 50, documentTimeoutMs: 20_000, queueTimeoutMs: 200 }))
        .rejects.toMatchObject({ code: 'SERVICE_BUSY', message: expect.stringMatching(/EXTRACT_QUEUE_TIMEOUT_MS/) })
      expect(poolTurns(pool).waiting).toBe(0)
      expect((await busy).pages).toBe(1)
    } finally {
      await pool.destroy()
    }
  }, 120_000)
})
