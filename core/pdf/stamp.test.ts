import { PDFDocument, StandardFonts } from 'pdf-lib'
import { describe, expect, it } from 'vitest'
import { CORNERS, readerSize } from './page-box.js'
import type { PageGeometry, Rotation } from './page-box.js'
import { MAX_FONT_PT, MIN_FONT_PT, layoutStamp, stampRect } from './stamp.js'

const doc = await PDFDocument.create()
const font = await doc.embedFont(StandardFonts.Helvetica)
const texts = [
  'Assinado digitalmente por EMPRESA DESENVOLVIMENTO RAZAO TESTE LTDA (CNPJ 11.222.333/0001-81) em 22/11/2026 03:02:03 (UTC-03:00)',
  'Assinatura PAdES-B ICP-Brasil - Identificador RZ-7K3M-9XQ2-4HFA-P8DN - Página 12 de 352'
]
const a4 = { x: 0, y: 0, width: 595.28, height: 841.89 }

function geometry (over: Partial<PageGeometry>): PageGeometry {
  return { box: a4, rotation: 0, userUnit: 1, ...over }
}

describe('layoutStamp', () => {
  it('sets the stamp at the largest size on an A4 page, one line per text', () => {
    const layout = layoutStamp(font, texts, geometry({}))!
    expect(layout.size).toBe(MAX_FONT_PT)
    expect(layout.lines).toEqual(texts)
  })

  it('shrinks to fit a narrow page, then wraps at the legibility floor instead of shrinking further', () => {
    const narrow = layoutStamp(font, texts, geometry({ box: { x: 0, y: 0, width: 420, height: 595 } }))!
    expect(narrow.size).toBeLessThan(MAX_FONT_PT)
    expect(narrow.size).toBeGreaterThanOrEqual(MIN_FONT_PT)
    expect(narrow.lines).toHaveLength(2)
    const small = layoutStamp(font, texts, geometry({ box: { x: 0, y: 0, width: 200, height: 300 } }))!
    expect(small.size).toBe(MIN_FONT_PT)
    expect(small.lines.length).toBeGreaterThan(2)
    // Wrapping keeps every word: nothing is cut with an ellipsis.
    expect(small.lines.join(' ')).toBe(texts.join(' '))
  })

  it.each([[3.84, 3.84], [90, 90], [40, 800], [800, 30]])('gives no stamp for a %d x %d pt page (under the floor or over a quarter of the page)', (width, height) => {
    expect(layoutStamp(font, texts, geometry({ box: { x: 0, y: 0, width, height } }))).toBeUndefined()
  })

  it('counts UserUnit: a 3.84-unit page with UserUnit 200 is 768 pt wide and gets a stamp', () => {
    const g = geometry({ box: { x: 0, y: 0, width: 3.84, height: 3.84 }, userUnit: 200 })
    const layout = layoutStamp(font, texts, g)!
    expect(layout.size).toBe(MAX_FONT_PT)
    const r = stampRect(g, layout, 'bottom-right')
    expect(r.x + r.width).toBeLessThanOrEqual(3.84)
    expect(r.width * 200).toBeCloseTo(layout.length)
  })

  it('and a big page in small units (UserUnit 0.1) gets none when it is small as printed', () => {
    expect(layoutStamp(font, texts, geometry({ box: { x: 0, y: 0, width: 900, height: 900 }, userUnit: 0.1 }))).toBeUndefined()
  })
})

describe('stampRect', () => {
  const boxes = [a4, { x: 50, y: 60, width: 400, height: 500 }, { x: -300, y: 1000, width: 250, height: 180 }]
  const rotations: Rotation[] = [0, 90, 180, 270]
  for (const box of boxes) {
    for (const rotation of rotations) {
      it(`keeps every corner inside the box ${JSON.stringify(box)} at /Rotate ${rotation}, distinct and a gap from the edges`, () => {
        const g = geometry({ box, rotation })
        const layout = layoutStamp(font, texts, g)!
        const rects = CORNERS.map((c) => stampRect(g, layout, c))
        for (const r of rects) {
          expect(r.x).toBeGreaterThan(box.x)
          expect(r.y).toBeGreaterThan(box.y)
          expect(r.x + r.width).toBeLessThan(box.x + box.width)
          expect(r.y + r.height).toBeLessThan(box.y + box.height)
          // The stamp's long side runs along the reader's horizontal.
          const shownWide = rotation === 0 || rotation === 180 ? r.width : r.height
          expect(shownWide).toBeCloseTo(layout.length)
        }
        expect(new Set(rects.map((r) => `${r.x},${r.y}`)).size).toBe(4)
        expect(readerSize(g).width).toBe(rotation % 180 === 0 ? box.width : box.height)
      })
    }
  }
})
