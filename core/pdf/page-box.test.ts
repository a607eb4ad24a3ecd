import { PDFDict, PDFDocument, PDFName, PDFNumber } from 'pdf-lib'
import { describe, expect, it } from 'vitest'
import { CORNERS, pageGeometry, readerSize, toUserRect } from './page-box.js'
import type { Box, PageGeometry, Rotation } from './page-box.js'

async function page (set: (doc: PDFDocument, page: ReturnType<PDFDocument['addPage']>) => void): Promise<PageGeometry> {
  const doc = await PDFDocument.create()
  const p = doc.addPage([200, 100])
  set(doc, p)
  const again = await PDFDocument.load(await doc.save())
  return pageGeometry(again.getPage(0))
}

describe('pageGeometry', () => {
  it('clips the CropBox to the MediaBox', async () => {
    expect((await page((_d, p) => p.setCropBox(-20, 50, 100, 100))).box).toEqual({ x: 0, y: 50, width: 80, height: 50 })
  })

  it('falls back to the MediaBox when the CropBox misses it entirely, as pdf.js does', async () => {
    expect((await page((_d, p) => p.setCropBox(300, 300, 50, 50))).box).toEqual({ x: 0, y: 0, width: 200, height: 100 })
  })

  it('normalizes boxes written upper right first', async () => {
    expect((await page((d, p) => p.node.set(PDFName.of('MediaBox'), d.context.obj([200, 100, 0, 0])))).box).toEqual({ x: 0, y: 0, width: 200, height: 100 })
  })

  it.each([[0, 0], [90, 90], [-90, 270], [450, 90], [540, 180], [-630, 90], [45, 0], [100, 0], [270, 270]])('reads /Rotate %i as %i', async (raw, expected) => {
    expect((await page((_d, p) => p.node.set(PDFName.of('Rotate'), PDFNumber.of(raw)))).rotation).toBe(expected)
  })

  it('inherits /Rotate from the page tree', async () => {
    const g = await page((_d, p) => p.node.lookup(PDFName.of('Parent'), PDFDict).set(PDFName.of('Rotate'), PDFNumber.of(270)))
    expect(g.rotation).toBe(270)
  })

  it.each([[2, 2], [0.5, 0.5], [0, 1], [-3, 1]])('reads /UserUnit %d as %d', async (raw, expected) => {
    expect((await page((_d, p) => p.node.set(PDFName.of('UserUnit'), PDFNumber.of(raw)))).userUnit).toBe(expected)
  })
})

describe('toUserRect', () => {
  const box: Box = { x: 50, y: 60, width: 400, height: 300 }
  it.each([[0], [90], [180], [270]] as Array<[Rotation]>)('at /Rotate %i maps the reader\'s bottom-left corner onto the page\'s matching corner, inside the box', (rotation) => {
    const g: PageGeometry = { box, rotation, userUnit: 1 }
    const shown = readerSize(g)
    const r = toUserRect(g, { x: 0, y: 0, width: 10, height: 5 })
    expect(r.x).toBeGreaterThanOrEqual(box.x)
    expect(r.y).toBeGreaterThanOrEqual(box.y)
    expect(r.x + r.width).toBeLessThanOrEqual(box.x + box.width)
    expect(r.y + r.height).toBeLessThanOrEqual(box.y + box.height)
    // The reader's bottom left is the user corner that /Rotate turns there (clockwise).
    const corner = { 0: [box.x, box.y], 90: [box.x + box.width, box.y], 180: [box.x + box.width, box.y + box.height], 270: [box.x, box.y + box.height] }[rotation]
    const touches = (v: number, edges: number[]): boolean => edges.some((e) => Math.abs(e - v) < 1e-9)
    expect(touches(corner[0]!, [r.x, r.x + r.width]) && touches(corner[1]!, [r.y, r.y + r.height])).toBe(true)
    // The whole shown page maps onto the whole box.
    expect(toUserRect(g, { x: 0, y: 0, width: shown.width, height: shown.height })).toEqual(box)
  })

  it('names four distinct corners', () => {
    expect(new Set(CORNERS).size).toBe(4)
  })
})
