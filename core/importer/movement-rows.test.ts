import { describe, expect, it } from 'vitest'
import { MovementLines, copyText } from './movement-rows.js'
import { DateCell } from '../xlsx/index.js'
import { mapColumns } from '../ledger/index.js'

describe('COPY text lines', () => {
  it('escapes what COPY would read as a separator or an escape', () => {
    expect(copyText(null)).toBe('\\N')
    expect(copyText('plain')).toBe('plain')
    expect(copyText('a\tb\nc\rd\\e')).toBe('a\\tb\\nc\\rd\\\\e')
    // A literal "\N" in a cell must stay text, not become NULL.
    expect(copyText('\\N')).toBe('\\\\N')
  })

  it('writes typed columns in MOVEMENT_COLUMNS order, amounts from cents', () => {
    const header = ['id', 'id_movim_finan', 'data', 'id_conta', 'planejamento_analitico', 'id_planejamento', 'planejamento', 'tipo', 'cod_planejamento', 'credito', 'debito', 'historico']
    const columns = mapColumns(header)
    const cells = [' 42 ', 7, new DateCell(45292), 1001, 'Banco\tItaú', null, 'Tarifas', 'TARIFA', '3.1.02', null, 12.5, 'linha 1\nlinha 2']
    const lines = new MovementLines('12')
    const line = lines.line({ rowNumber: 9, groupId: 7, date: '2024-01-01', debitCents: 1250, creditCents: 0 }, cells, columns)
    expect(line.split('\t')).toEqual([
      '12', '9', '42', '7', '2024-01-01', '1001', 'Banco\\tItaú', '\\N', 'Tarifas', 'TARIFA', '3.1.02', '0.00', '12.50', 'linha 1\\nlinha 2\n'
    ])
    // Served from the text cache the second time, identically.
    expect(lines.line({ rowNumber: 9, groupId: 7, date: '2024-01-01', debitCents: 1250, creditCents: 0 }, cells, columns)).toBe(line)
  })
})
