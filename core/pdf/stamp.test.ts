import { describe, expect, it } from 'vitest'
import { placeStamp } from './stamp.js'
import type { Box } from './stamp.js'

/** Applies a form matrix to the strip's corners and returns the bounding box's size. */
function transformedSize (m: number[], length: number, height: number): [number, number] {
  const pts = [[0, 0], [length, 0], [0, height], [length, height]].map(([x, y]) => [m[0]! * x! + m[2]! * y! + m[4]!, m[1]! * x! + m[3]! * y! + m[5]!])
  const xs = pts.map((p) => p[0]!)
  const ys = pts.map((p) => p[1]!)
  return [Math.max(...xs) - Math.min(...xs), Math.max(...ys) - Math.min(...ys)]
}

describe('placeStamp', () => {
  const box: Box = { x: 50, y: 60, width: 400, height: 500 }

  it.each([[0], [90], [180], [270]] as const)('at /Rotate %i puts the strip inside the visible box, on the edge shown at the bottom', (rotation) => {
    const p = placeStamp(box, rotation, 300, 20)
    const [x1, y1, x2, y2] = p.rect
    expect(x1).toBeGreaterThanOrEqual(box.x)
    expect(y1).toBeGreaterThanOrEqual(box.y)
    expect(x2).toBeLessThanOrEqual(box.x + box.width)
    expect(y2).toBeLessThanOrEqual(box.y + box.height)
    // The rotated appearance fills the rectangle exactly (no scaling by the viewer).
    expect(transformedSize(p.matrix, 300, 20)).toEqual([x2 - x1, y2 - y1])
    const edge = { 0: y1 - box.y, 90: box.x + box.width - x2, 180: box.y + box.height - y2, 270: x1 - box.x }[rotation]
    expect(edge).toBeLessThan(10)
  })

  it('centres the strip along the edge', () => {
    const [x1, , x2] = placeStamp(box, 0, 200, 20).rect
    expect(x1 - box.x).toBeCloseTo(box.x + box.width - x2)
  })
})
