import { describe, expect, it } from 'vitest'
import { extractDocument, ENGINE_VERSION } from './engine.js'
import { TextDocument } from './text.js'
import type { TextRun } from './text.js'
import type { ExtractorPlugin } from './types.js'
import { moneyNumber } from './values.js'

const doc = (...lines: string[]): TextDocument => new TextDocument([{
  page: 1, width: 595, height: 842,
  runs: lines.map((text, i): TextRun => ({ text, box: { x: 50, y: 800 - i * 20, width: text.length * 5, height: 10 } }))
}])

interface Toy { total: number | null, parts: Array<number | null> }

const toy: ExtractorPlugin<Toy> = {
  id: 'toy', family: 'TOYS', documentType: 'TOY', version: '1.0.0', schemaVersion: '1', status: 'active', minimumConfidence: 0.7,
  rules: [
    { name: 'title', kind: 'strong', weight: 4, test: /^TOY REPORT/ },
    { name: 'total-label', kind: 'weak', weight: 2, test: /TOTAL:/ },
    { name: 'footer', kind: 'weak', weight: 2, test: /END OF REPORT/ },
    { name: 'receipt', kind: 'exclusion', weight: 1, test: /RECEIPT/ }
  ],
  checks: [{
    name: 'parts-add-up', weight: 2,
    run: (d) => d.total === null || d.parts.includes(null) ? { status: 'skip' } : Math.round(d.parts.reduce<number>((a, b) => a + b!, 0) * 100) === Math.round(d.total * 100) ? { status: 'pass' } : { status: 'fail', message: 'parts do not add up to the total' }
  }],
  fields: () => ({ required: ['total'], optional: ['parts'] }),
  labels: [],
  parse: (d, ctx) => ({
    total: ctx.take('total', d.labelValue(/Total:/, /([\d.]+,\d{2})/), moneyNumber),
    parts: d.findAll(/Part: ([\d.]+,\d{2})/).map((h, i) => ctx.take(`parts.${i}`, h, moneyNumber))
  })
}

describe('extractDocument', () => {
  it('scores matched over all rule weight, then adds passed checks to both sides', () => {
    const r = extractDocument(doc('Toy Report', 'Part: 1,00', 'Part: 2,50', 'Total: 3,50'), [toy])
    expect(r.success).toBe(true)
    expect(r.data).toEqual({ total: 3.5, parts: [1, 2.5] })
    // Rules: (4 + 2) / 8 = 0.75, then the check: (6 + 2) / (8 + 2) = 0.8.
    expect(r.engine).toEqual({
      version: ENGINE_VERSION, family: 'TOYS', detector: 'toy', parser: 'toy', parserVersion: '1.0.0', parserStatus: 'active',
      schemaVersion: '1', confidence: 0.8, confidenceLevel: 'MEDIUM', minimumConfidence: 0.7, parserExecuted: true, parserBlocked: false,
      matchedRules: ['title', 'total-label', 'check:parts-add-up'], missingRules: ['footer'], excludedRules: [],
      fieldsExpected: 2, fieldsFound: 2, textSource: 'TEXT_LAYER', ocrPages: []
    })
    expect(r.evidence.total).toEqual({ page: 1, source: 'Total: 3,50', box: expect.objectContaining({ y: 740 }) })
    expect(Object.keys(r.evidence)).toEqual(['total', 'parts.0', 'parts.1'])
  })

  it('lowers confidence and warns when a check fails, keeping the data', () => {
    const r = extractDocument(doc('Toy Report', 'Part: 1,00', 'Total: 3,50', 'End of report'), [toy])
    // (8 + 0) / (8 + 2) = 0.8 after 1.0 from the rules alone.
    expect(r.engine.confidence).toBe(0.8)
    expect(r.engine.missingRules).toEqual(['check:parts-add-up'])
    expect(r.warnings).toEqual([{ code: 'PLUGIN_CHECK_FAILED', message: 'parts-add-up: parts do not add up to the total' }])
  })

  it('returns null for a missing field, does not count a check that cannot run, and counts the missing required field against confidence', () => {
    const r = extractDocument(doc('Toy Report', 'Part: 1,00', 'End of report'), [toy])
    expect(r.data).toEqual({ total: null, parts: [1] })
    // Rules (4 + 2) / 8; the missing required field adds 1 to the total only: 6 / 9.
    expect(r.engine.confidence).toBe(0.6667)
    expect(r.engine.matchedRules).not.toContain('check:parts-add-up')
    expect(r.engine.missingRules).toEqual(['total-label', 'field:total'])
    expect(r.engine).toMatchObject({ fieldsExpected: 2, fieldsFound: 1 })
    expect(r.warnings).toEqual([{ code: 'FIELD_NOT_FOUND', field: 'total', message: expect.stringMatching(/^FIELD_NOT_FOUND: total \(/) }])
  })

  it('never reports HIGH when a required field is missing, however strong the rest', () => {
    const both = { ...toy, checks: [], fields: () => ({ required: ['total', 'parts'] }) }
    const full = extractDocument(doc('Toy Report', 'Total: 3,50', 'End of report'), [both])
    // Every rule held (8 / 8); only the empty list of parts is missing: 8 / 9 = 0.8889, MEDIUM.
    expect(full.engine).toMatchObject({ confidence: 0.8889, confidenceLevel: 'MEDIUM', fieldsExpected: 2, fieldsFound: 1, missingRules: ['field:parts'] })
    const many = { ...both, rules: [...toy.rules, { name: 'heavy', kind: 'weak' as const, weight: 40, test: /TOY/ }] }
    // 48 / 49 would be HIGH: a reading with a hole in it stops just below.
    expect(extractDocument(doc('Toy Report', 'Total: 3,50', 'End of report'), [many]).engine).toMatchObject({ confidence: 0.89, confidenceLevel: 'MEDIUM' })
  })

  it('gives the parser a document whose values stop at the plugin\'s labels', () => {
    const named = { ...toy, fields: () => ({ required: [] }), labels: ['Data de Vencimento'], parse: (d: TextDocument) => ({ name: d.labelValue(/^Nome:/, /^\s*(.+)$/)?.value ?? null }) }
    const r = extractDocument(doc('Toy Report', 'Nome: Padaria Pão Quente Ltda DATA DE VENCIMENTO 20/08/2026', 'Total: 1,00'), [named])
    expect(r.data).toEqual({ name: 'Padaria Pão Quente Ltda' })
  })

  it('blocks the parser below its minimum but still reports the type', () => {
    const r = extractDocument(doc('Toy Report'), [toy])
    expect(r).toMatchObject({ success: false, documentType: 'TOY', data: null, errors: [{ code: 'PLUGIN_BLOCKED' }] })
    expect(r.engine).toMatchObject({ confidence: 0.5, confidenceLevel: 'LOW', parserBlocked: true, parserExecuted: false })
  })

  it('reports an excluded look-alike as unknown, naming the exclusion', () => {
    const r = extractDocument(doc('Toy Report', 'Receipt', 'Total: 1,00'), [toy])
    expect(r).toMatchObject({ success: false, documentType: 'UNKNOWN', errors: [{ code: 'PLUGIN_NO_MATCH' }] })
    expect(r.engine.excludedRules).toEqual(['toy:receipt'])
    expect(r.engine.confidence).toBe(0)
  })

  it('needs a strong rule: weak ones alone are no candidate', () => {
    expect(extractDocument(doc('Total: 1,00', 'End of report'), [toy]).documentType).toBe('UNKNOWN')
  })

  it('skips inactive plugins and prefers the earlier plugin on equal confidence', () => {
    const twin = { ...toy, id: 'twin', documentType: 'TWIN' }
    const input = doc('Toy Report', 'Total: 3,50', 'End of report')
    expect(extractDocument(input, [twin, toy]).documentType).toBe('TWIN')
    expect(extractDocument(input, [{ ...twin, status: 'inactive' }, toy]).documentType).toBe('TOY')
  })

  it('reports a document without text as such, never guessing a type', () => {
    const r = extractDocument(new TextDocument([{ page: 1, width: 595, height: 842, runs: [] }]), [toy])
    expect(r).toMatchObject({ success: false, documentType: 'UNKNOWN', pages: 1, errors: [{ code: 'PDF_NO_TEXT_LAYER' }] })
  })

  it('reports a parser that throws without its message', () => {
    const r = extractDocument(doc('Toy Report', 'Total: 3,50', 'End of report'), [{ ...toy, parse: () => { throw new Error('secret 11.222.333/0001-81') } }])
    expect(r).toMatchObject({ success: false, errors: [{ code: 'PLUGIN_PARSE_FAILED' }], engine: { parserExecuted: true } })
    expect(JSON.stringify(r)).not.toContain('secret')
  })

  it('gives checks the document, for invariants between data and text that data does not keep', () => {
    const footerCheck = { name: 'footer-repeats-total', weight: 2, run: (d: Toy, text: TextDocument) => d.total === null ? { status: 'skip' as const } : text.find(/^End of report, total ([\d.]+,\d{2})$/)?.value === '3,50' ? { status: 'pass' as const } : { status: 'fail' as const, message: 'the footer does not repeat the total' } }
    const withFooter = { ...toy, checks: [footerCheck] }
    expect(extractDocument(doc('Toy Report', 'Total: 3,50', 'End of report, total 3,50'), [withFooter]).engine.matchedRules).toContain('check:footer-repeats-total')
    expect(extractDocument(doc('Toy Report', 'Total: 3,50', 'End of report, total 9,99'), [withFooter]).engine.missingRules).toContain('check:footer-repeats-total')
  })

  it('names, for the winner too, the neighbours\' exclusions that fired, and says why each other plugin lost', () => {
    const receipt: ExtractorPlugin = {
      ...toy, id: 'toy-receipt', documentType: 'TOY_RECEIPT', checks: [],
      rules: [{ name: 'receipt-title', kind: 'strong', weight: 1, test: /^TOY REPORT RECEIPT/ }, { name: 'not-a-report', kind: 'exclusion', weight: 1, test: /END OF REPORT/ }],
      parse: () => ({})
    }
    const twin = { ...toy, id: 'twin', documentType: 'TWIN' }
    const weaker = { ...toy, id: 'weaker', documentType: 'WEAKER', rules: [...toy.rules, { name: 'stamp', kind: 'weak' as const, weight: 4, test: /STAMP/ }] }
    const stranger = { ...toy, id: 'stranger', documentType: 'STRANGER', rules: [{ name: 'other-title', kind: 'strong' as const, weight: 1, test: /^OTHER/ }] }
    const r = extractDocument(doc('Toy Report', 'Total: 3,50', 'End of report'), [toy, receipt, twin, weaker, stranger])
    expect(r.documentType).toBe('TOY')
    expect(r.engine.excludedRules).toEqual(['toy-receipt:not-a-report'])
    expect(r.candidates.map((c) => [c.plugin, c.outcome, c.confidence])).toEqual([
      ['toy', 'selected', 1], ['toy-receipt', 'excluded', 0], ['twin', 'tie-order', 1], ['weaker', 'lower-confidence', 0.6667], ['stranger', 'no-strong-rule', 0]
    ])
  })
})
