/**
 * Text positions from pdf.js, judged against poppler: `pdftotext -bbox` gives each word's
 * box (top-left origin, in points), and every word must lie inside one of our runs' boxes.
 */
import { execFile } from 'node:child_process'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { PDFDocument, StandardFonts, degrees, drawObject } from 'pdf-lib'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { readTextPositions } from './text-positions.js'
import type { Box } from './page-box.js'

const run = promisify(execFile)
let dir: string
beforeAll(async () => { dir = await mkdtemp(join(tmpdir(), 'razao-text-')) })
afterAll(async () => { await rm(dir, { recursive: true, force: true }) })

const tools = process.env.CI === 'true' || await run('pdftotext', ['-v']).then(() => true, () => false)

async function sample (): Promise<Uint8Array> {
  const doc = await PDFDocument.create()
  const font = await doc.embedFont(StandardFonts.Helvetica)
  const page = doc.addPage([595.28, 841.89])
  page.drawText('Cabeçalho do balancete', { x: 56, y: 780, size: 16, font })
  page.drawText('Total do débito 1.234,56', { x: 380, y: 20, size: 9, font })
  page.drawText('Texto girado na margem', { x: 30, y: 300, size: 10, font, rotate: degrees(90) })
  // Text inside a form XObject drawn by the page.
  const form = doc.context.register(doc.context.stream('BT /F1 11 Tf 200 400 Td (Dentro do formulario) Tj ET', {
    Type: 'XObject', Subtype: 'Form', BBox: [0, 0, 595, 842], Resources: { Font: { F1: font.ref } }
  }))
  page.pushOperators(drawObject(page.node.newXObject('Fm', form)))
  const second = doc.addPage([300, 300])
  second.drawText('Segunda', { x: 10, y: 10, size: 12, font })
  return await doc.save({ useObjectStreams: false })
}

function inside (inner: Box, outer: Box, slack = 1.5): boolean {
  return inner.x >= outer.x - slack && inner.y >= outer.y - slack &&
    inner.x + inner.width <= outer.x + outer.width + slack && inner.y + inner.height <= outer.y + outer.height + slack
}

describe('readTextPositions', () => {
  it('gives every text run of every page with a box in user space', async () => {
    const result = await readTextPositions(await sample())
    expect(result.problem).toBeUndefined()
    expect(result.pages).toHaveLength(2)
    const texts = result.pages[0]!.map((r) => r.text)
    expect(texts).toEqual(expect.arrayContaining(['Cabeçalho do balancete', 'Total do débito 1.234,56', 'Texto girado na margem', 'Dentro do formulario']))
    const inForm = result.pages[0]!.find((r) => r.text === 'Dentro do formulario')!.box
    expect(inForm.x).toBeCloseTo(200, 0)
    const footer = result.pages[0]!.find((r) => r.text.startsWith('Total'))!.box
    expect(footer.x).toBeCloseTo(380, 0)
    expect(footer.y).toBeLessThan(20)
    expect(footer.y + footer.height).toBeGreaterThan(26)
    const turned = result.pages[0]!.find((r) => r.text.startsWith('Texto girado'))!.box
    // Rotated a quarter turn: taller than wide, going up from its origin.
    expect(turned.height).toBeGreaterThan(4 * turned.width)
    expect(turned.y).toBeCloseTo(300, 0)
    expect(result.pages[1]!.map((r) => r.text)).toEqual(['Segunda'])
  })

  it.skipIf(!tools)('agrees with poppler: each word pdftotext -bbox finds lies in one of the runs', async () => {
    const pdf = await sample()
    const path = join(dir, 'sample.pdf')
    await writeFile(path, pdf)
    const { stdout } = await run('pdftotext', ['-bbox', '-f', '1', '-l', '1', path, '-'])
    const words = [...stdout.matchAll(/<word xMin="([\d.]+)" yMin="([\d.]+)" xMax="([\d.]+)" yMax="([\d.]+)">([^<]*)<\/word>/g)]
    expect(words.length).toBeGreaterThan(10)
    const runs = (await readTextPositions(pdf)).pages[0]!
    for (const w of words) {
      const [x1, y1, x2, y2] = [w[1], w[2], w[3], w[4]].map(Number) as [number, number, number, number]
      // pdftotext measures from the top of the page.
      const box = { x: x1, y: 841.89 - y2, width: x2 - x1, height: y2 - y1 }
      expect(runs.some((r) => inside(box, r.box)), `word ${w[5]} at ${JSON.stringify(box)}`).toBe(true)
    }
  })

  it('reads only the pages asked for', async () => {
    const result = await readTextPositions(await sample(), { pages: [2] })
    expect(result.pages[0]).toBeUndefined()
    expect(result.pages[1]).toHaveLength(1)
  })

  it('leaves pages unread, without throwing, when the budget is spent', async () => {
    const result = await readTextPositions(await sample(), { totalBudgetMs: 0 })
    expect(result.pages).toEqual([undefined, undefined])
    expect(result.problem).toBe('budget')
  })

  it('leaves a page that overruns its budget midway without cancelling pdf.js (no unhandled rejection ends the thread)', async () => {
    // A cancelled text stream makes pdf.js's in-thread worker side reject for every later
    // post ("Controller is already closed"); vitest fails the run on any unhandled rejection.
    const doc = await PDFDocument.create()
    const font = await doc.embedFont(StandardFonts.Helvetica)
    for (let p = 0; p < 3; p++) {
      const page = doc.addPage([595, 842])
      for (let i = 0; i < 4000; i++) page.drawText(`w${i}`, { x: (i % 20) * 28, y: 20 + Math.floor(i / 20) * 4, size: 3, font })
    }
    const result = await readTextPositions(await doc.save(), { pageBudgetMs: 1 })
    expect(result.problem).toBe('budget')
    expect(result.pages.some((p) => p === undefined)).toBe(true)
    // Let pdf.js's leftover work run out inside this test.
    await new Promise((resolve) => setTimeout(resolve, 300))
  })

  it('gives no pages for bytes pdf.js cannot open, without throwing', async () => {
    const result = await readTextPositions(Buffer.from('%PDF-1.7\nnothing here'))
    expect(result.pages).toEqual([])
    expect(result.problem).toBe('open-failed')
  })

  it('leaves the caller\'s bytes intact (pdf.js is given a copy)', async () => {
    const pdf = await sample()
    const copy = Buffer.from(pdf)
    await readTextPositions(pdf)
    expect(pdf.byteLength).toBe(copy.length)
    expect(Buffer.from(pdf).equals(copy)).toBe(true)
  })
})
