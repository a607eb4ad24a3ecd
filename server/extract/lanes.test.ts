/**
 * The extraction lanes (issue 32, item 2): a text-layer document is answered while two
 * scans hold a pool of two, one reading by OCR and one waiting for the OCR lane. Real OCR
 * over HTTP; kept out of the hostile group, which CI runs on every Node line.
 */
import { PDFDocument } from 'pdf-lib'
import { describe, expect, it } from 'vitest'
import { scanOf } from '../../fixtures/extraction/scans.js'
import { generateDarf } from '../../plugins/darf/fixtures/generate.js'
import { generateDas } from '../../plugins/das/fixtures/generate.js'
import { createPool } from '../../workers/pool.js'
import { loadConfig } from '../config.js'
import { buildExtractApp } from './app.js'
import { loadExtractConfig } from './config.js'
import { poolTurns } from './run.js'

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
