/**
 * EXTRACT_WARM's parts in core: the made-up page it reads (with a text layer, and as a
 * scan that takes the OCR path) and a thread's Tesseract worker kept warm: not let go
 * when idle, and warmed again when replaced.
 */
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest'
import { readPdfText } from '../pdf-text.js'
import { TextDocument } from '../text.js'
import { keepTesseractWarm, OCR_DPI, releaseTesseract, TESSERACT_IDLE_MS, warmUpPdfs } from './index.js'
import { OcrTimeout, recognizeWords, tesseractStarted } from './tesseract.js'
import { renderPageGrey } from './page-image.js'
import { openWithPdfJs } from '../../pdf/index.js'

const LIMITS = { maxPages: 50, deadlineMs: 60_000, maxRunsPerPage: 50_000 }

afterEach(() => {
  vi.useRealTimers()
  keepTesseractWarm(undefined)
})
afterAll(async () => { await releaseTesseract() })

/** The words OCR reads on the warm-up scan. */
async function scanWords (deadlineMs: number): Promise<string[]> {
  const pages = await readPdfText((await warmUpPdfs(OCR_DPI)).scan, { ...LIMITS, deadlineMs })
  return pages[0]!.runs.map((r) => r.text)
}

describe('the warm-up page', () => {
  it('reads as a form with a text layer, and its scan takes the OCR path and reads the same values', async () => {
    const { text, scan } = await warmUpPdfs(OCR_DPI)
    expect(await warmUpPdfs(OCR_DPI)).toEqual({ text, scan })
    const layer = new TextDocument(await readPdfText(text, LIMITS))
    expect(layer.pages[0]!.source).toBeUndefined()
    const scanned = await readPdfText(scan, LIMITS)
    expect(scanned[0]!.source).toBe('OCR')
    // The letters too: a page whose words OCR misread would warm less of Tesseract's work.
    const ocr = new TextDocument(scanned)
    expect(layer.find(/(\d{2}\.\d{3}\.\d{3}\/\d{4}-\d{2})/)?.value).toBe('11.222.333/0001-81')
    expect(layer.lines.length).toBeGreaterThan(15)
    expect(ocr.lines.map((l) => l.text)).toEqual(layer.lines.map((l) => l.text))
  })
})

describe('a Tesseract worker kept warm', () => {
  it('is let go after TESSERACT_IDLE_MS idle normally, and kept when the thread keeps it warm', async () => {
    await scanWords(60_000)
    expect(tesseractStarted()).toBe(true)
    // Only the timers: tesseract.js's own messages keep flowing.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] })
    await scanWords(60_000)
    vi.advanceTimersByTime(TESSERACT_IDLE_MS + 1)
    expect(tesseractStarted()).toBe(false)
    vi.useRealTimers()

    keepTesseractWarm(async () => undefined)
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] })
    await scanWords(60_000)
    vi.advanceTimersByTime(10 * TESSERACT_IDLE_MS)
    expect(tesseractStarted()).toBe(true)
  })

  it('is warmed again at once when a deadline ends it', async () => {
    const image = (await warmUpPdfs(OCR_DPI)).scan
    let warmUps = 0
    let warming: Promise<string[]> | undefined
    keepTesseractWarm(async () => {
      warmUps++
      warming = scanWords(60_000)
      await warming
    })
    await scanWords(60_000)
    // The page image itself, read with a deadline already close.
    const doc = await (await openWithPdfJs(image)).promise
    const grey = await renderPageGrey(await doc.getPage(1), OCR_DPI, 16e6)
    await doc.destroy()
    await expect(recognizeWords(grey.pgm, grey.dpi, performance.now() + 20)).rejects.toBeInstanceOf(OcrTimeout)
    expect(warmUps).toBe(1)
    // The warm-up runs on a new worker, in the background.
    for (let i = 0; i < 600 && !tesseractStarted(); i++) await new Promise((r) => setTimeout(r, 50))
    expect(tesseractStarted()).toBe(true)
    // The warm-up reads its page to the end before the test lets its worker go.
    expect((await warming!).length).toBeGreaterThan(10)
  })

  it('reads a page again on the next worker when its worker is ended under it', async () => {
    await scanWords(60_000)
    expect(tesseractStarted()).toBe(true)
    const doc = await (await openWithPdfJs((await warmUpPdfs(OCR_DPI)).scan)).promise
    const grey = await renderPageGrey(await doc.getPage(1), OCR_DPI, 16e6)
    await doc.destroy()
    // The reading starts on the warm worker, which is let go before the page reaches it: once
    // a job on an ended worker failed at once or waited for its whole deadline.
    const reading = recognizeWords(grey.pgm, grey.dpi, performance.now() + 50_000)
    await releaseTesseract()
    const words = (await reading).map((w) => w.text).join(' ')
    expect(words).toContain('11.222.333/0001-81')
    expect(tesseractStarted()).toBe(true)
  })
})
