import { describe, expect, it } from 'vitest'
import { labelBounds, labelCut } from './text-match.js'

describe('labelCut', () => {
  const labels = labelBounds(['Data de Vencimento', 'Número do Documento', 'TRIBUTAÇÃO MUNICIPAL'])

  it('cuts a value where a label starts at a word, whatever its case and accents', () => {
    const value = 'PADARIA PÃO QUENTE LTDA   data de vencimento 20/01/2026'
    expect(value.slice(0, labelCut(value, labels))).toBe('PADARIA PÃO QUENTE LTDA   ')
    const service = 'Consultoria em gestão  Tributacao   Municipal  Tributação do ISSQN'
    expect(service.slice(0, labelCut(service, labels))).toBe('Consultoria em gestão  ')
  })

  it('leaves a value whole when a label only starts it, ends inside a word or is absent', () => {
    expect(labelCut('Data de Vencimento 20/01/2026', labels)).toBe(29)
    expect(labelCut('Loja Data de Vencimentos Ltda', labels)).toBe(29)
    expect(labelCut('12.345.678/0001-90', labels)).toBe(18)
    expect(labelCut('Mercado Numero do Documento', labelBounds([]))).toBe(27)
  })

  it('finds the first label of a long value in one pass over its words', () => {
    const value = `${'palavra '.repeat(20_000)}Número do Documento 07.20.26015.1234567-8`
    expect(labelCut(value, labels)).toBe(8 * 20_000)
  })
})
