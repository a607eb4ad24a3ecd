import { describe, expect, it } from 'vitest'
import { pageList, stampWarnings } from './stamp-pages.js'

describe('pageList', () => {
  it('collapses runs of pages', () => {
    expect(pageList([1, 2, 3, 5, 7, 8, 10, 11, 12])).toBe('1-3, 5, 7, 8, 10-12')
  })

  it('names the first runs of a long list and counts the rest', () => {
    const odd = Array.from({ length: 176 }, (_, i) => 2 * i + 1)
    expect(pageList(odd)).toBe('1, 3, 5, 7, 9, 11, 13, 15 and 168 more')
  })
})

describe('stampWarnings', () => {
  it('says nothing when every page got a free corner', () => {
    expect(stampWarnings({ unread: [], tooSmall: [], covering: [] })).toEqual([])
  })

  it('gives one sentence per kind of problem, in the singular for one page', () => {
    expect(stampWarnings({ unread: [], tooSmall: [{ page: 4, width: 3.84, height: 3.84 }], covering: [2] })).toEqual([
      'Page 4 is too small for a legible signature stamp (3.84 x 3.84 pt) and was left without one; the signature covers it all the same.',
      'Page 2 has content in all four corners; the stamp was put where it covers the least.'
    ])
  })

  it('names the smallest of several skipped pages', () => {
    const [warning] = stampWarnings({ unread: [], tooSmall: [{ page: 1, width: 90, height: 90 }, { page: 2, width: 3.84, height: 50 }], covering: [] })
    expect(warning).toMatch(/^Pages 1, 2 \(2 pages\) are too small .*\(smallest 3\.84 x 50 pt\)/)
  })
})
