import { describe, expect, it } from 'vitest'
import { TextDocument } from './text.js'
import type { TextRun } from './text.js'

const run = (text: string, x: number, y: number, size = 10): TextRun => ({ text, box: { x, y, width: text.length * size * 0.5, height: size } })

// Content-stream order as the RFB prints have it: labels after values, lines interleaved.
const shuffled: TextRun[] = [
  run('99.999.999', 140, 700),
  run('Extrato do Simples Nacional', 50, 780, 14),
  run('Período de Apuração (PA):', 50, 680),
  run('CNPJ Básico:', 50, 700),
  run('07/2026', 180, 680),
  run('Valor', 50, 640),
  run('1.234,56', 50, 626)
]

describe('TextDocument', () => {
  const doc = new TextDocument([{ page: 1, width: 595, height: 842, runs: shuffled }])

  it('rebuilds visual lines from positions, whatever the order of the runs', () => {
    expect(doc.readingOrder()).toEqual(['Extrato do Simples Nacional', 'CNPJ Básico: 99.999.999', 'Período de Apuração (PA): 07/2026', 'Valor', '1.234,56'])
  })

  it('gives an accent-stripped, upper-case copy for detection, whole and line by line', () => {
    expect(doc.normalized).toBe('EXTRATO DO SIMPLES NACIONAL CNPJ BASICO: 99.999.999 PERIODO DE APURACAO (PA): 07/2026 VALOR 1.234,56')
    expect(doc.normalizedLines).toEqual(['EXTRATO DO SIMPLES NACIONAL', 'CNPJ BASICO: 99.999.999', 'PERIODO DE APURACAO (PA): 07/2026', 'VALOR', '1.234,56'])
  })

  it('honours a pattern\'s own flags, whatever the same source was compiled with before', () => {
    expect(doc.find(/^valor$/)).toBeUndefined()
    expect(doc.find(/^valor$/i)?.value).toBe('Valor')
    // A global or sticky pattern from a plugin is read like any other.
    expect(doc.find(/(\d{2})\/(\d{4})/gy)?.value).toBe('07')
    expect(doc.findAll(/(\d)/g).length).toBeGreaterThan(10)
  })

  it('finds a value after its label on the same line, with the value\'s own box as evidence', () => {
    const hit = doc.labelValue(/CNPJ Básico:/, /(\d{2}\.\d{3}\.\d{3})/)!
    expect(hit.value).toBe('99.999.999')
    expect(hit.page).toBe(1)
    expect(hit.source).toBe('CNPJ Básico: 99.999.999')
    expect(hit.box.x).toBe(140)
  })

  it('finds a value printed under its label, in its column', () => {
    expect(doc.labelValue(/^Valor$/, /([\d.]+,\d{2})/)?.value).toBe('1.234,56')
    expect(doc.labelValue(/^Valor$/, /([\d.]+,\d{2})/, { linesBelow: 1 })?.value).toBe('1.234,56')
  })

  it('gives each capture group its own hit and box', () => {
    const hit = doc.find(/^(Período) de Apuração \(PA\): (\d{2})\/(\d{4})$/)!
    expect(hit.parts.map((p) => p?.value)).toEqual(['Período', '07', '2026'])
    expect(hit.parts[1]!.box.x).toBe(180)
    expect(hit.parts[0]!.box.x).toBe(50)
  })

  it('reads the text inside a box', () => {
    expect(doc.inBox(1, { x: 0, y: 620, width: 300, height: 30 })).toBe('Valor 1.234,56')
  })

  it('is empty when no page has text', () => {
    expect(new TextDocument([{ page: 1, width: 595, height: 842, runs: [] }]).isEmpty).toBe(true)
  })
})

// A small statement: a heading, a 3-column table (right-aligned numbers under left-aligned
// headers), a total line, another section with a grid of labels and values below them.
const grid: TextRun[] = [
  run('Fechamento', 50, 800, 14),
  run('1) Receitas', 50, 770),
  run('Período', 50, 750), run('Interno', 200, 750), run('Externo', 300, 750),
  run('01/2026', 50, 736), run('1.000,00', 205, 736), run('0,00', 320, 736),
  run('02/2026', 50, 722), run('2.500,10', 205, 722),
  run('03/2026', 50, 708), run('900,00', 215, 708), run('15,00', 315, 708),
  run('Total', 50, 694), run('4.400,10', 205, 694), run('15,00', 315, 694),
  run('2) Tomador do Serviço', 50, 660),
  run('CNPJ / CPF / NIF', 50, 645), run('Nome / Nome Empresarial', 200, 645), run('Município', 400, 645),
  run('11.222.333/0001-81', 50, 632), run('Padaria Pão Quente', 200, 632), run('Porto Alegre - RS', 400, 632),
  run('3) Valores', 50, 600),
  run('Total', 50, 585), run('Valor Líquido', 200, 585),
  run('4.415,10', 50, 572), run('-', 200, 572)
]

describe('TextDocument: sections, grids, tables and columns', () => {
  const doc = new TextDocument([{ page: 1, width: 595, height: 842, runs: [...grid].reverse() }])

  it('cuts a section from its heading to the next heading, and every query works inside it', () => {
    const receitas = doc.section(/^1\) Receitas/, /^\d\) /)
    expect(receitas.readingOrder()[0]).toBe('1) Receitas')
    expect(receitas.readingOrder().at(-1)).toBe('Total 4.400,10 15,00')
    expect(receitas.find(/^Total ([\d.,]+)/)?.value).toBe('4.400,10')
    // The same label in another section is out of reach.
    expect(doc.section('3) Valores').find(/^Total ([\d.,]+)/)).toBeUndefined()
    expect(doc.section('2) TOMADOR DO SERVICO', ['3) valores']).lines).toHaveLength(3)
  })

  it('cuts every block that starts with a heading, each ending at the next one or at a stop', () => {
    const blocks = doc.sections(/^\d\) /, /^Fechamento$/)
    expect(blocks.map((b) => b.readingOrder()[0])).toEqual(['1) Receitas', '2) Tomador do Serviço', '3) Valores'])
    expect(blocks[0]!.lines).toHaveLength(6)
    expect(doc.sections(/^\d{2}\/2026/, /^Total/).map((b) => b.readingOrder())).toEqual([['01/2026 1.000,00 0,00'], ['02/2026 2.500,10'], ['03/2026 900,00 15,00']])
    expect(doc.sections(/^Nada/)).toEqual([])
  })

  it('is an empty region when the heading is not printed', () => {
    const none = doc.section(/^9\) Nada/)
    expect(none.isEmpty).toBe(true)
    expect(none.find(/Total/)).toBeUndefined()
    expect(none.table(['Período', 'Interno'])).toBeUndefined()
  })

  it('gives the lines before a label, or the whole region without it', () => {
    expect(doc.before('2) tomador').readingOrder().at(-1)).toBe('Total 4.400,10 15,00')
    expect(doc.before(/^Nada$/).lines).toHaveLength(doc.lines.length)
  })

  it('reads a value under its label in its column, accent- and case-blind, as a hit with its own box', () => {
    const tomador = doc.section('2) Tomador')
    expect(tomador.under('nome / nome empresarial')).toMatchObject({ value: 'Padaria Pão Quente', page: 1, box: { x: 200, y: 632 } })
    expect(tomador.under(['Municipio / Sigla UF', 'MUNICÍPIO'])?.value).toBe('Porto Alegre - RS')
    expect(tomador.under('Telefone')).toBeUndefined()
    expect(doc.section('3) Valores').under('Valor Líquido')?.value).toBe('-')
  })

  it('reads a table by its column headers, each value in the column it sits under, empty cells undefined', () => {
    const rows = doc.table(['Período', 'Interno', 'Externo'], { cell: /^([\d./]+,?\d*)$/, until: /^Total/ })!
    expect(rows.map((r) => r.cells.map((c) => c?.value))).toEqual([
      ['01/2026', '1.000,00', '0,00'],
      ['02/2026', '2.500,10', undefined],
      ['03/2026', '900,00', '15,00']
    ])
    expect(rows[2]!.cells[2]!.box).toEqual({ x: 315, y: 708, width: 25, height: 10 })
    // Without `until`, the total row is a row too; maxRows cuts.
    expect(doc.table(['Período', 'Interno', 'Externo'])).toHaveLength(4)
    expect(doc.table(['Período', 'Interno', 'Externo'], { maxRows: 1 })).toHaveLength(1)
  })

  it('ends a table at the first row whose cell does not match the cell pattern', () => {
    const rows = doc.table(['Período', 'Interno', 'Externo'], { cell: /^(\d{2}\/\d{4}|[\d.]+,\d{2})$/ })!
    expect(rows).toHaveLength(3)
  })

  it('reads the values of one column under its header', () => {
    expect(doc.column('Interno', { until: /^Total/ }).map((h) => h.value)).toEqual(['1.000,00', '2.500,10', '900,00'])
    // The external column has a hole on the second row: the column stops there.
    expect(doc.column('Externo').map((h) => h.value)).toEqual(['0,00'])
    expect(doc.column('Ausente')).toEqual([])
  })
})
