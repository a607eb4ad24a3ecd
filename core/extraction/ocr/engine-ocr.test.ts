/** The engine's answer for a document read by OCR: where the text came from, and HIGH only when checks confirm it. */
import { describe, expect, it } from 'vitest'
import { extractDocument } from '../engine.js'
import { TextDocument } from '../text.js'
import type { PageText, TextRun } from '../text.js'
import type { ExtractorPlugin } from '../types.js'
import { moneyNumber, onlyDigits } from '../values.js'

const page = (n: number, source: 'TEXT_LAYER' | 'OCR', lines: string[]): PageText => ({
  page: n, width: 595, height: 842, source,
  runs: lines.map((text, i): TextRun => ({ text, box: { x: 50, y: 800 - i * 20, width: text.length * 5, height: 10 }, ...(source === 'OCR' ? { confidence: 0.87 } : {}) }))
})

interface Guide { cnpj: string | null, total: number | null, parts: Array<number | null> }

const guide: ExtractorPlugin<Guide> = {
  id: 'guide', family: 'TOYS', documentType: 'GUIDE', version: '1.0.0', schemaVersion: '1', status: 'active', minimumConfidence: 0.5,
  rules: [{ name: 'title', kind: 'strong', weight: 4, test: /^GUIA DE TESTE/ }],
  fields: () => ({ required: ['cnpj', 'total'], optional: ['parts'] }),
  labels: [],
  checks: [{
    name: 'parts-add-up', weight: 1,
    run: (d) => d.total === null || d.parts.length === 0 ? { status: 'skip' } : Math.round(d.parts.reduce<number>((a, b) => a + (b ?? 0), 0) * 100) === Math.round(d.total * 100) ? { status: 'pass' } : { status: 'fail', message: 'parts do not add up' }
  }],
  parse: (d, ctx) => ({
    cnpj: ctx.take('cnpj', d.find(/CNPJ: ([\d./-]+)/), onlyDigits),
    total: ctx.take('total', d.find(/Total: ([\d.]+,\d{2})/), moneyNumber),
    parts: d.findAll(/Parte: ([\d.]+,\d{2})/).map((h, i) => ctx.take(`parts.${i}`, h, moneyNumber))
  })
}

const LINES = ['Guia de teste', 'CNPJ: 11.222.333/0001-81', 'Parte: 1,00', 'Parte: 2,50', 'Total: 3,50']

describe('a document read by OCR', () => {
  it('says so, per page where the text layer and OCR mix, with the word confidence in the evidence', () => {
    const r = extractDocument(new TextDocument([page(1, 'TEXT_LAYER', LINES), page(2, 'OCR', ['Anexo lido por OCR'])]), [guide])
    expect(r.engine).toMatchObject({ textSource: 'MIXED', ocrPages: [2] })
    expect(r.evidence.total!.confidence).toBeUndefined()
    const scanned = extractDocument(new TextDocument([page(1, 'OCR', LINES)]), [guide])
    expect(scanned.engine).toMatchObject({ textSource: 'OCR', ocrPages: [1] })
    expect(scanned.evidence.total).toMatchObject({ page: 1, source: 'Total: 3,50', confidence: 0.87 })
  })

  it('is HIGH when its checks pass and its CNPJ verifies', () => {
    const r = extractDocument(new TextDocument([page(1, 'OCR', LINES)]), [guide])
    expect(r.engine.confidenceLevel).toBe('HIGH')
    expect(r.warnings).toEqual([])
  })

  it('stays below HIGH, saying why, when a check fails, none confirms it, or a CNPJ does not verify', () => {
    const failed = extractDocument(new TextDocument([page(1, 'OCR', LINES.map((l) => l.replace('2,50', '2,60')))]), [guide])
    const unchecked = extractDocument(new TextDocument([page(1, 'OCR', LINES.filter((l) => !l.startsWith('Parte')))]), [guide])
    const misread = extractDocument(new TextDocument([page(1, 'OCR', LINES.map((l) => l.replace('0001-81', '0001-31')))]), [guide])
    for (const [r, why] of [[failed, /a consistency check failed/], [unchecked, /no consistency check/], [misread, /check digits of cnpj/]] as const) {
      expect(r.engine.confidence).toBeLessThan(0.9)
      expect(r.engine.confidenceLevel).not.toBe('HIGH')
      expect(r.warnings).toContainEqual({ code: 'OCR_UNVERIFIED', message: expect.stringMatching(why) })
    }
    // The same text from a text layer is not capped by this rule.
    expect(extractDocument(new TextDocument([page(1, 'TEXT_LAYER', LINES.filter((l) => !l.startsWith('Parte')))]), [guide]).engine.confidenceLevel).toBe('HIGH')
  })
})
