import { afterEach, describe, expect, it, vi } from 'vitest'
import { rawPdf } from '../../fixtures/pdf/samples.js'
import { openPdf } from './open.js'

afterEach(() => { vi.restoreAllMocks() })

describe('openPdf', () => {
  it('keeps pdf-lib\'s notes on skipped objects off the console, and gives console.warn back', async () => {
    const catalog = '<< /Type /Catalog /Pages 2 0 R >>'
    const pages = '<< /Type /Pages /Kids [3 0 R] /Count 1 >>'
    const page = '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] >>'
    const pdf = rawPdf([catalog, pages, page, ...Array.from({ length: 50 }, () => '<< /A ) >>')])
    const warn = vi.spyOn(console, 'warn')
    const opened = await openPdf(pdf)
    expect(opened.doc.getPageCount()).toBe(1)
    expect(warn).not.toHaveBeenCalled()
    console.warn('after')
    expect(warn).toHaveBeenCalledTimes(1)
  })
})
