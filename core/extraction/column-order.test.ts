import { describe, expect, it } from 'vitest'
import { buildCollectionLine } from './barcode.js'
import { TextDocument } from './text.js'
import type { TextRun } from './text.js'

const run = (text: string, x: number, y: number, size = 7): TextRun => ({ text, box: { x, y, width: text.length * size * 0.5, height: size } })
/** Text whose positions are lost: one piece a line from the margin, as a text fixture draws it. */
const lines = (texts: string[], labels: string[] = []): TextDocument =>
  new TextDocument([{ page: 1, width: 595, height: 842, runs: texts.map((t, i) => run(t, 36, 806 - i * 10)) }]).withLabels(labels)
const DATE = /(\d{2}\/\d{2}\/\d{4})/
const MONEY = /(\d{1,3}(?:\.\d{3})*,\d{2})/

describe('positionless text: which pages', () => {
  it('a page of pieces from one margin is positionless; a page with a column is not', () => {
    expect(lines(['A', 'B', 'C', 'D']).positionless).toBe(true)
    const laidOut = new TextDocument([{ page: 1, width: 595, height: 842, runs: [run('Label', 36, 800), run('value', 200, 800), run('Other', 36, 790), run('x', 36, 780), run('y', 36, 770)] }])
    expect(laidOut.positionless).toBe(false)
    // Too few lines say nothing of an order.
    expect(lines(['A', 'B']).positionless).toBe(false)
  })

  it('a line or two indented by a library\'s leading spaces leave the page positionless; a page mostly indented, or a column, does not', () => {
    const page = (xs: number[]): TextDocument => new TextDocument([{ page: 1, width: 595, height: 842, runs: xs.map((x, i) => run(`piece ${i}`, x, 806 - i * 10)) }])
    // Two spaces at 7 pt: about 4 points.
    expect(page([36, 36, 40, 36, 36]).positionless).toBe(true)
    expect(page([36, 40, 40, 40, 36]).positionless).toBe(false)
    expect(page([36, 36, 80, 36, 36]).positionless).toBe(false)
  })

  it('a label wrapped over two lines that the plugin\'s labels join stays text from the margin', () => {
    const texts = ['Título', 'Receita bruta acumulada nos doze meses anteriores', 'ao PA (RBT12)', '12.000,00', 'Fim']
    const doc = new TextDocument([{ page: 1, width: 595, height: 842, runs: texts.map((t, i) => run(t, 36, 806 - i * 10, 9)) }]).withLabels(['Receita bruta acumulada nos doze meses anteriores ao PA'])
    expect(doc.lines.some((l) => l.runs.length === 2)).toBe(true)
    expect(doc.positionless).toBe(true)
  })

  it('a line a leading space right of the margin (pypdf keeps it) is still at the margin; a column further right is not', () => {
    const page = (indent: number): TextDocument => new TextDocument([{ page: 1, width: 595, height: 842, runs: [run('A', 36, 800), run('B', 36 + indent, 790), run('C', 36, 780), run('D', 36, 770)] }])
    // One space of a 7-point font: about 2 points.
    expect(page(1.95).positionless).toBe(true)
    expect(page(30).positionless).toBe(false)
  })
})

describe('positionless text: a collection line handed over block by block', () => {
  const line = buildCollectionLine({ segment: '5', valueId: '8', amountCents: 123_456, issuer: '0328', free: `26150${'07202615012345671'}001` })
  const blocks = line.blocks.map((b) => `${b.digits} ${b.dv}`)

  it('joins four blocks that verify, a block repeated at once (the guide and its stub) counting once', () => {
    const doc = lines(['Título', blocks[0]!, blocks[0]!, 'Outro', blocks[1]!, blocks[1]!, blocks[2]!, blocks[3]!, 'Fim'])
    expect(doc.find(/^(\d{11} \d(?: \d{11} \d){3})$/)?.value).toBe(blocks.join(' '))
    expect(doc.normalized).toContain(blocks.join(' '))
  })

  it('leaves blocks whose check digits do not verify as they are', () => {
    const bad = [...blocks]
    bad[2] = `${bad[2]!.slice(0, -1)}${(Number(bad[2]!.slice(-1)) + 1) % 10}`
    const doc = lines(['Título', ...bad, 'Fim'])
    expect(doc.find(/^(\d{11} \d(?: \d{11} \d){3})$/)).toBeUndefined()
    expect(doc.lines).toHaveLength(6)
  })
})

describe('positionless text: labels in a block, their values in the next', () => {
  const fields = [
    { name: 'periodo', label: /^02 PER[IÍ]ODO/, value: DATE },
    { name: 'codigo', label: /^04 C[OÓ]DIGO/, value: /^(\d{4})$/ },
    { name: 'referencia', label: /^05 REFER[EÊ]NCIA/, value: /^(\S+)$/, optional: true },
    { name: 'vencimento', label: /^06 VENCIMENTO/, value: DATE },
    { name: 'principal', label: /^07 PRINCIPAL/, value: MONEY },
    { name: 'multa', label: /^08 MULTA/, value: MONEY, optional: true },
    { name: 'juros', label: /^09 JUROS/, value: MONEY, optional: true },
    { name: 'total', label: /^10 TOTAL/, value: MONEY }
  ]
  const labels = ['02 PERÍODO', '04 CÓDIGO', '05 REFERÊNCIA', '06 VENCIMENTO', '07 PRINCIPAL', '08 MULTA', '09 JUROS', '10 TOTAL', '11 AUTENTICAÇÃO']

  it('pairs by order and shape, blank optional boxes taking none; a label of the document that is no field sits in the block', () => {
    const doc = lines(['Título', ...labels, '31/03/2014', '2089', '30/04/2014', '100,00', '100,00', 'rodapé'], ['Autenticação'])
    const [copy] = doc.orderedValues(fields)!
    expect(Object.fromEntries(Object.entries(copy!).map(([k, h]) => [k, h?.value]))).toEqual({ periodo: '31/03/2014', codigo: '2089', vencimento: '30/04/2014', principal: '100,00', total: '100,00' })
    expect(copy!.codigo!.source).toBe('2089')
  })

  it('a value two pairings place differently is a conflict, never a guess', () => {
    const doc = lines([...labels, '31/03/2014', '2089', '30/04/2014', '100,00', '5,00', '105,00'], ['Autenticação'])
    const [copy] = doc.orderedValues(fields)!
    expect(copy!.principal!.value).toBe('100,00')
    expect(copy!.total!.value).toBe('105,00')
    expect(copy!.multa!.conflict).toMatch(/"08 MULTA".*"5,00" or nothing/)
    expect(copy!.juros!.conflict).toBeDefined()
  })

  it('other pieces of the page may stand between the labels and their values, not a label', () => {
    const doc = lines([...labels, '04.03 - Clínicas', 'Declaração Mensal', '31/03/2014', '2089', '30/04/2014', '100,00', '100,00'], ['Autenticação'])
    expect(doc.orderedValues(fields)![0]!.codigo?.value).toBe('2089')
    const stopped = lines([...labels, 'Declaração Mensal', '03 OUTRO RÓTULO', '31/03/2014', '2089', '30/04/2014', '100,00', '100,00'], ['Autenticação', 'Outro Rótulo'])
    expect(stopped.orderedValues(fields)).toBeUndefined()
  })

  it('one record per copy when the block repeats its labels', () => {
    const doc = lines([...labels, ...labels, '31/03/2014', '2089', '30/04/2014', '100,00', '100,00', '31/03/2014', '2089', '30/04/2014', '100,00', '100,00'], ['Autenticação'])
    const copies = doc.orderedValues(fields)!
    expect(copies).toHaveLength(2)
    expect(copies.map((c) => c.codigo?.value)).toEqual(['2089', '2089'])
  })

  it('nothing on a page with positions, or without a block of labels', () => {
    expect(lines(['Título', '02 PERÍODO 31/03/2014', '04 CÓDIGO 2089', 'fim']).orderedValues(fields)).toBeUndefined()
    const laidOut = new TextDocument([{ page: 1, width: 595, height: 842, runs: [run('02 PERÍODO', 36, 800), run('04 CÓDIGO', 36, 790), run('31/03/2014', 200, 780), run('2089', 200, 770)] }])
    expect(laidOut.orderedValues(fields)).toBeUndefined()
  })
})

describe('positionless text: a table handed over column by column', () => {
  const key = { name: 'codigo', header: /^Código$/, cell: /^(\d{4})$/ }
  const others = [
    { name: 'nome', header: /^Denominação$/, cell: [/^(\D+)$/, /^(\d{2}\/\d{4})$/] },
    { name: 'principal', header: /^Principal$/, cell: MONEY },
    { name: 'multa', header: /^Multa$/, cell: MONEY }
  ]

  it('lines the columns up by row when their counts agree, the Totais cell last', () => {
    const doc = lines(['Código', '1001', '1002', 'Totais', 'Denominação', 'IRPJ', '04/2022', 'CSLL', '04/2022', 'Principal', '10,00', '20,00', '30,00', 'Multa', '1,00', '2,00'])
    const table = doc.orderedColumns(key, others, { totals: 'Totais' })!
    expect(table.rows.map((r) => [r.codigo?.[0]?.value, r.nome?.map((h) => h.value), r.principal?.[0]?.value, r.multa?.[0]?.value])).toEqual([
      ['1001', ['IRPJ', '04/2022'], '10,00', '1,00'],
      ['1002', ['CSLL', '04/2022'], '20,00', '2,00']
    ])
    expect(table.totals?.principal?.[0]?.value).toBe('30,00')
    expect(table.unplaced).toEqual([])
  })

  it('does not place a column printed with another count, nor one whose last cell is the sum of the others (a blank row and the total)', () => {
    const short = lines(['Código', '1001', '1002', 'Totais', 'Principal', '10,00', '20,00', '30,00', 'Multa', '3,00']).orderedColumns(key, others, { totals: 'Totais' })!
    expect(short.rows.every((r) => r.multa === undefined)).toBe(true)
    expect(short.unplaced).toEqual([expect.stringMatching(/"multa" prints 1 values for 2 rows/)])
    const blank = lines(['Código', '1001', '1002', 'Totais', 'Multa', '3,00', '3,00']).orderedColumns(key, others, { totals: 'Totais' })!
    expect(blank.rows.every((r) => r.multa === undefined)).toBe(true)
    expect(blank.unplaced).toHaveLength(1)
  })
})

describe('positionless text: headers stacked, blank columns', () => {
  const key = { name: 'codigo', header: /^Código$/, cell: /^(\d{4})$/ }
  const others = [
    { name: 'nome', header: /^Denominação$/, cell: [/^(\D+)$/, /^(\d{2}\/\d{4})$/] },
    { name: 'principal', header: /^Principal$/, cell: MONEY },
    { name: 'multa', header: /^Multa$/, cell: MONEY },
    { name: 'total', header: /^Total$/, cell: MONEY }
  ]

  it('finds the codes after a run of stacked headers, and a totals row after the last column whose blank column\'s cell is a zero', () => {
    // pdfminer's order of an on-time guide: `Código` over `Denominação`, the codes, `Multa`
    // printed with no cell, then the totals row (principal, multa, total) after the last column.
    const doc = lines(['Código', 'Denominação', '1001', '1002', 'Totais', 'Multa', 'Principal', '2,20', '1,40', 'Total', '2,20', '1,40', '3,60', '0,00', '3,60'])
    const table = doc.orderedColumns(key, others, { totals: 'Totais' })!
    expect(table.rows.map((r) => [r.codigo?.[0]?.value, r.principal?.[0]?.value, r.multa?.[0]?.value, r.total?.[0]?.value])).toEqual([
      ['1001', '2,20', undefined, '2,20'],
      ['1002', '1,40', undefined, '1,40']
    ])
    expect([table.totals?.principal?.[0]?.value, table.totals?.multa?.[0]?.value, table.totals?.total?.[0]?.value]).toEqual(['3,60', '0,00', '3,60'])
    // The blank column's totals cell must be a zero: anything else is no totals row.
    const notZero = lines(['Código', 'Denominação', '1001', '1002', 'Totais', 'Multa', 'Principal', '2,20', '1,40', 'Total', '2,20', '1,40', '3,60', '0,10', '3,60'])
    const read = notZero.orderedColumns(key, others, { totals: 'Totais' })!
    expect(read.rows.every((r) => r.total === undefined)).toBe(true)
    expect(read.unplaced).toEqual([expect.stringMatching(/"total" prints 5 values for 2 rows/)])
  })
})

describe('positionless text: a table handed over row by row, its totals row after the last column', () => {
  const key = { name: 'codigo', header: /^Código$/, cell: /^(\d{4})$/ }
  const others = [
    { name: 'nome', header: /^Denominação$/, cell: [/^(\D+)$/, /^(\d{2}\/\d{4})$/] },
    { name: 'principal', header: /^Principal$/, cell: MONEY },
    { name: 'total', header: /^Total$/, cell: MONEY }
  ]

  it('reads the rows under a row of headers, each row\'s cells in the headers\' order, and the totals row when each cell is its column\'s sum', () => {
    const doc = lines(['Código', 'Denominação', '1001', 'IRPJ', '01/2018', '1002', 'CSLL', '01/2018', 'Totais', 'Principal', '2,20', '1,40', 'Total', '3,20', '2,04', '3,60', '5,24'])
    const table = doc.orderedColumns(key, others, { totals: 'Totais' })!
    expect(table.rows.map((r) => [r.codigo?.[0]?.value, r.nome?.map((h) => h.value), r.principal?.[0]?.value, r.total?.[0]?.value])).toEqual([
      ['1001', ['IRPJ', '01/2018'], '2,20', '3,20'],
      ['1002', ['CSLL', '01/2018'], '1,40', '2,04']
    ])
    expect([table.totals?.principal?.[0]?.value, table.totals?.total?.[0]?.value]).toEqual(['3,60', '5,24'])
    expect(table.unplaced).toEqual([])
  })

  it('reads money columns handed over row by row under their headers, the totals row last, and codes and names scattered among them (pdftotext\'s order)', () => {
    const doc = lines(['Código Denominação', '1001', 'Principal', 'Total', '2,20', '3,20', '1,40', '2,04', '3,60', '5,24', 'IRPJ', '01/2018', '1002', 'CSLL', '01/2018', 'Totais'])
    const table = doc.orderedColumns({ ...key, header: /^Código\b/ }, [{ ...others[0]!, header: /Denominação$/ }, ...others.slice(1)], { totals: 'Totais' })!
    expect(table.rows.map((r) => [r.codigo?.[0]?.value, r.nome?.map((h) => h.value), r.principal?.[0]?.value, r.total?.[0]?.value])).toEqual([
      ['1001', ['IRPJ', '01/2018'], '2,20', '3,20'],
      ['1002', ['CSLL', '01/2018'], '1,40', '2,04']
    ])
    expect([table.totals?.principal?.[0]?.value, table.totals?.total?.[0]?.value]).toEqual(['3,60', '5,24'])
    // One code fewer than the money rows say: nothing is lined up by guess.
    const short = lines(['Código Denominação', '1001', 'Principal', 'Total', '2,20', '3,20', '1,40', '2,04', '3,60', '5,24', 'IRPJ', '01/2018', 'CSLL', '01/2018', 'Totais'])
    const read = short.orderedColumns({ ...key, header: /^Código\b/ }, [{ ...others[0]!, header: /Denominação$/ }, ...others.slice(1)], { totals: 'Totais' })!
    expect(read.rows.every((r) => r.principal === undefined && r.total === undefined)).toBe(true)
    expect(read.unplaced.length).toBeGreaterThan(0)
  })

  it('reads money rows after a first whole row under the key\'s headers, the other codes and names further down (pdftotext\'s order of the RELPSN guide)', () => {
    const doc = lines(['Código Denominação', 'Principal', 'Total', '1001', '2,20', '3,20', '1,40', '2,04', '3,60', '5,24', 'IRPJ', '01/2018', '1002', 'CSLL', '01/2018', 'Totais'])
    const table = doc.orderedColumns({ ...key, header: /^Código\b/ }, [{ ...others[0]!, header: /Denominação$/ }, ...others.slice(1)], { totals: 'Totais' })!
    expect(table.rows.map((r) => [r.codigo?.[0]?.value, r.nome?.map((h) => h.value), r.principal?.[0]?.value, r.total?.[0]?.value])).toEqual([
      ['1001', ['IRPJ', '01/2018'], '2,20', '3,20'],
      ['1002', ['CSLL', '01/2018'], '1,40', '2,04']
    ])
    expect([table.totals?.principal?.[0]?.value, table.totals?.total?.[0]?.value]).toEqual(['3,60', '5,24'])
    // The last money row not the sum of the others: no totals row, nothing lined up by guess.
    const wrong = lines(['Código Denominação', 'Principal', 'Total', '1001', '2,20', '3,20', '1,40', '2,04', '3,60', '5,25', 'IRPJ', '01/2018', '1002', 'CSLL', '01/2018', 'Totais'])
    const read = wrong.orderedColumns({ ...key, header: /^Código\b/ }, [{ ...others[0]!, header: /Denominação$/ }, ...others.slice(1)], { totals: 'Totais' })
    expect(read?.rows.some((r) => r.codigo?.[0]?.value === '1002' && r.total !== undefined) ?? false).toBe(false)
  })

  it('does not take trailing cells that are not the sums for a totals row, nor a row missing a cell', () => {
    const wrongSum = lines(['Código', 'Denominação', '1001', 'IRPJ', '01/2018', '1002', 'CSLL', '01/2018', 'Totais', 'Principal', '2,20', '1,40', 'Total', '3,20', '2,04', '3,60', '5,25'])
    const table = wrongSum.orderedColumns(key, others, { totals: 'Totais' })!
    expect(table.rows.every((r) => r.total === undefined)).toBe(true)
    expect(table.unplaced).toEqual([expect.stringMatching(/"total" prints 4 values for 2 rows/)])
    // The second row's name has no period line: the rows stop at the first whole one.
    const broken = lines(['Código', 'Denominação', '1001', 'IRPJ', '01/2018', '1002', 'CSLL', 'Totais'])
    expect(broken.orderedColumns(key, others, { totals: 'Totais' })!.rows.map((r) => r.codigo?.[0]?.value)).toEqual(['1001'])
  })
})

describe('positionless text: a column\'s cells start right under its header', () => {
  const key = { name: 'codigo', header: /^Código$/, cell: /^(\d{4})$/ }
  const others = [{ name: 'multa', header: /^Multa$/, cell: MONEY }, { name: 'principal', header: /^Principal$/, cell: MONEY }]

  it('a blank column takes no values printed further down (a stub\'s), and one more cell smaller than the rows\' sum is no total', () => {
    const doc = lines(['Código', '1162', 'Totais', 'Principal', '1.000,00', '200,00', 'Multa', 'CNPJ:', '1.285,00'])
    const table = doc.orderedColumns(key, others, { totals: 'Totais' })!
    expect(table.rows).toEqual([{ codigo: [expect.objectContaining({ value: '1162' })] }])
    expect(table.totals).toBeUndefined()
    expect(table.unplaced).toEqual([expect.stringMatching(/"principal" prints 2 values for 1 rows/)])
  })
})

describe('positionless text: a label printed in several places', () => {
  it('byOrder reads a label printed once, or in places that agree; places that disagree are a conflict', () => {
    const doc = lines(['Valor do Serviço', 'R$ 15,00', 'Outro', 'Valor do Serviço', 'R$ 15,00', 'Competência', '31/10/2025'])
    expect(doc.byOrder().under('Valor do Serviço')?.value).toBe('R$ 15,00')
    expect(doc.byOrder().under('Competência')?.value).toBe('31/10/2025')
    const two = lines(['Valor do Serviço', 'R$ 15,00', 'Outro', 'Valor do Serviço', 'R$ 16,00', 'fim'])
    expect(two.byOrder().under('Valor do Serviço')?.conflict).toMatch(/printed 2 times.*"R\$ 15,00", "R\$ 16,00"/)
    // As block k of n: the k-th place, only when the label is printed n times.
    expect(two.byOrder(1, 2).under('Valor do Serviço')?.value).toBe('R$ 16,00')
    expect(two.byOrder(1, 3).under('Valor do Serviço')).toBeUndefined()
  })
})

describe('positionless text: runs of labels, then runs of values (byOrder with passOver)', () => {
  const LABELS = ['Número', 'Série', 'Data', 'Nome', 'E-mail', 'Cidade', 'Código', 'Valor', 'TÍTULO']
  const passOver = (n: string): boolean => n === 'TITULO'
  const read = (texts: string[], label: string): string | undefined => lines(texts, LABELS).byOrder(0, 1, { passOver }).under(label)?.value

  it('pairs a row of labels with as many values in order, a title among the values passed over', () => {
    const rows = ['Número', 'Série', 'Data', '171', 'TÍTULO', '900', '01/06/2026', 'Nome', 'E-mail', 'ACME LTDA', 'a@b.c', 'Cidade', 'Belo Horizonte', 'Nome', 'x']
    expect([read(rows, 'Número'), read(rows, 'Série'), read(rows, 'Data'), read(rows, 'E-mail')]).toEqual(['171', '900', '01/06/2026', 'a@b.c'])
    // Without passOver the same text is read by the next line: the last label of a run takes the first row's value.
    expect(lines(rows, LABELS).byOrder().under('Data')?.value).toBe('171')
  })

  it('gives nothing where the counts differ, or a title stands between two labels', () => {
    // Two rows whose counts match: the text hands its grid over row by row.
    const rows = ['Nome', 'E-mail', 'ACME', 'a@b.c', 'Código', 'Valor', '7', 'R$ 1,00']
    const short = [...rows, 'Número', 'Série', 'Data', '171', '01/06/2026', 'Cidade', 'BH']
    expect([read(short, 'Número'), read(short, 'Série'), read(short, 'Data'), read(short, 'Cidade')]).toEqual([undefined, undefined, undefined, 'BH'])
    // Text column by column (nearly every run one label): the next line, as before.
    expect(read(['Número', '171', 'Série', 'Data', '01/06/2026', 'Cidade', 'BH', 'Nome', 'ACME'], 'Data')).toBe('01/06/2026')
    const titled = ['Número', 'TÍTULO', 'Série', '900', 'Nome', 'ACME', 'Cidade', 'BH', 'Data', 'z']
    expect([read(titled, 'Número'), read(titled, 'Série')]).toEqual([undefined, '900'])
  })

  it('splits a value glued to the next label (pypdf) and a title beside a label', () => {
    const glued = ['Número', '171Série', '900Data', '01/06/2026', 'TÍTULO Nome', 'ACME LTDA', 'Cidade', 'BH', 'Nome', 'x', 'Data', 'y']
    expect([read(glued, 'Número'), read(glued, 'Série')]).toEqual(['171', '900'])
  })
})

describe('positionless text: a label printed whole is no wrapped label\'s continuation', () => {
  it('keeps a line that prints a label whole, even where a word of it sits under the start of that label on the line above', () => {
    // `das` (after `Total `) sits under `TOTAL` (after `VALOR `): six characters each, one margin.
    const doc = lines(['TRIBUTAÇÃO', 'VALOR TOTAL DA NFS-E', 'Total das Retenções (ISSQN / Federais)', 'R$ 0,00', 'Valor Líquido'], ['Total das Retenções (ISSQN / Federais)'])
    expect(doc.readingOrder()).toEqual(['TRIBUTAÇÃO', 'VALOR TOTAL DA NFS-E', 'Total das Retenções (ISSQN / Federais)', 'R$ 0,00', 'Valor Líquido'])
    expect(doc.positionless).toBe(true)
    expect(doc.byOrder().under('Total das Retenções (ISSQN / Federais)')?.value).toBe('R$ 0,00')
  })
})

describe('positionless text: a wrapped label over its value', () => {
  it('labelValue reads the value on the line after a label wrapped over two or three lines, and only there', () => {
    const doc = lines(['Receita Bruta', 'Auferida', 'R$ 92.149,89', 'Total do Débito com', 'Exigibilidade', 'Suspensa', 'R$ 0,00'])
    expect(doc.labelValue(/^Receita Bruta\s+Auferida$/, /^\s*R\$ (\S+)$/)?.value).toBe('92.149,89')
    expect(doc.labelValue('Total do Débito com Exigibilidade Suspensa', /^\s*R\$ (\S+)$/)?.value).toBe('0,00')
    // The label's last line followed by another label's part: no value.
    expect(lines(['Receita Bruta', 'Auferida', 'Total do Débito', 'R$ 1,00']).labelValue(/^Receita Bruta\s+Auferida$/, /^\s*R\$ (\S+)$/)).toBeUndefined()
    // With positions, the label's own reader decides (no reading by order).
    const laidOut = new TextDocument([{ page: 1, width: 595, height: 842, runs: [run('Receita Bruta', 36, 800), run('Auferida', 36, 790), run('R$ 5,00', 300, 700), run('x', 200, 600)] }])
    expect(laidOut.labelValue(/^Receita Bruta\s+Auferida$/, /^\s*R\$ (\S+)$/)).toBeUndefined()
  })
})

describe('positionless text: labels and values interleaved (a row of labels merged with its row of values)', () => {
  const fields = [
    { name: 'periodo', label: 'Período de Apuração', value: /^\s*(\d{2}\/\d{4}|\d{2}\/\d{2}\/\d{4})\s*$/ },
    { name: 'vencimento', label: 'Data de Vencimento', value: new RegExp(`^\\s*${DATE.source}\\s*$`) },
    { name: 'numero', label: 'Número do Documento', value: /^\s*(\d{2}\.\d{2}\.\d{5}\.\d{7}-\d)\s*$/ }
  ]
  const labels = fields.map((f) => f.label)

  it('pairs the k-th value with the k-th label, each value after its label, other text between', () => {
    // pdftotext's order of a Sicalc header: each value one label late.
    const doc = lines(['Título', 'Período de Apuração', 'Data de Vencimento', '31/01/2022', 'Número do Documento', '18/02/2022', 'Observações', '07.16.23251.7633954-5', 'Fim'], labels)
    const read = doc.interleavedValues(fields)
    expect([read?.periodo?.value, read?.vencimento?.value, read?.numero?.value]).toEqual(['31/01/2022', '18/02/2022', '07.16.23251.7633954-5'])
    // A block of labels, then its values, is the same order.
    const block = lines(['Título', 'Período de Apuração', 'Data de Vencimento', 'Número do Documento', '01/2022', '18/02/2022', '07.16.23251.7633954-5'], labels).interleavedValues(fields)
    expect(block?.periodo?.value).toBe('01/2022')
  })

  it('reads nothing where the order does not hold: values in another order, a value before its label', () => {
    // pdfminer's order: the labels in one order, the values in another.
    expect(lines(['Título', 'Período de Apuração', 'Número do Documento', 'Data de Vencimento', '31/01/2022', '18/02/2022', '07.16.23251.7633954-5'], labels).interleavedValues(fields)).toBeUndefined()
    // The period handed over ahead of its label, another period-shaped line further down: never taken.
    expect(lines(['Título', '08/2023', 'Período de Apuração', '07/2023', 'Data de Vencimento', '20/09/2023', 'Número do Documento', '07.16.23251.7633954-5'], labels).interleavedValues(fields)).toBeUndefined()
  })
})
