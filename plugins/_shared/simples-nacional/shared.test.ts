/**
 * The family module's checks on their own (the plugins' tests exercise them through parsed
 * fixtures): each passes on consistent values, fails naming what disagrees, and is skipped
 * when a value it needs is missing.
 */
import { describe, expect, it } from 'vitest'
import { barcodeAmountCheck, barcodeDateCheck, barcodeIssuerCheck, barcodeNumberCheck, compositionCheck, rowPeriodsCheck } from './guide.js'
import type { Guia, LinhaComposicao } from './guide.js'
import { declarationNumberOutcome, rbt12Outcome, receiptNumberOutcome } from './pgdas-checks.js'
import type { ReceitaAnterior } from './pgdas-tables.js'

describe('PGDAS-D numbers', () => {
  it('checks the receipt number against its form and the transmission date (YYDDD)', () => {
    // 2026-03-05 is day 064 of 2026.
    expect(receiptNumberOutcome('01.07.26064.1234567-8', '2026-03-05T10:11:12-03:00')).toEqual({ status: 'pass' })
    expect(receiptNumberOutcome('01.07.26064.1234567-8', '2026-03-06T10:11:12-03:00')).toMatchObject({ status: 'fail', message: expect.stringMatching(/26065/) })
    expect(receiptNumberOutcome('01.07.2606.1234567-8', null)).toMatchObject({ status: 'fail' })
    expect(receiptNumberOutcome(null, '2026-03-05')).toEqual({ status: 'skip' })
  })

  it('checks the declaration number: CNPJ básico + period, sequence 001 for an original only', () => {
    expect(declarationNumberOutcome('11222333202602001', '11222333', '2026-02', 'ORIGINAL')).toEqual({ status: 'pass' })
    expect(declarationNumberOutcome('11222333202602002', '11222333', '2026-02', 'RETIFICADORA')).toEqual({ status: 'pass' })
    expect(declarationNumberOutcome('11222333202602001', '11222333', '2026-02', 'RETIFICADORA')).toMatchObject({ status: 'fail' })
    expect(declarationNumberOutcome('11222333202602000', '11222333', '2026-02', null)).toMatchObject({ status: 'fail', message: expect.stringMatching(/000/) })
    expect(declarationNumberOutcome('11222333202601001', '11222333', '2026-02', null, 'apuração')).toMatchObject({ status: 'fail', message: expect.stringMatching(/apuração number/) })
    expect(declarationNumberOutcome(null, '11222333', '2026-02', null)).toEqual({ status: 'skip' })
  })

  it('adds the twelve months before the period in cents and compares them with RBT12', () => {
    const months: ReceitaAnterior[] = Array.from({ length: 12 }, (_, i) => {
      const d = new Date(Date.UTC(2025, 2 + i, 1))
      return { competencia: `${d.getUTCFullYear()}-${String(d.getUTCMonth() + 1).padStart(2, '0')}`, interno: 1000.1, externo: null }
    })
    // 12 × 1,000.10 is 12,001.20 exactly in cents (as floats it is 12001.199999999999).
    expect(rbt12Outcome({ interno: 12001.2, externo: 0, total: 12001.2 }, months, '2026-03')).toEqual({ status: 'pass' })
    expect(rbt12Outcome({ interno: 12001.21, externo: 0, total: 12001.21 }, months, '2026-03')).toMatchObject({ status: 'fail', message: expect.stringMatching(/interno/) })
    expect(rbt12Outcome({ interno: 12001.2, externo: 0, total: 12001.2 }, months.slice(1), '2026-03')).toEqual({ status: 'skip' })
  })
})

function guia (over: Partial<Guia>): Guia {
  return {
    competencia: null, dataVencimento: null, pagarAte: null, numeroDocumento: null, numeroDocumentoFormatado: null, valorTotal: null,
    observacoes: null, composicao: [], totais: null, linhaDigitavel: null, codigoBarras: null, dataEmissao: null, versaoSenda: null, ...over
  }
}
function row (over: Partial<LinhaComposicao>): LinhaComposicao {
  return { codigo: '1001', denominacao: 'IRPJ - SIMPLES NACIONAL', principal: null, multa: null, juros: null, total: null, periodo: null, municipio: null, uf: null, ...over }
}

describe('SENDA guide checks', () => {
  // 44 digits: 8 5 check amount(11) issuer(4) YYDDD(5) document number(17) and 3 more.
  const barcode = `8${'5'}${'0'}${'1'}${'00000012345'}0328${'26084'}${'07202603123456789'}000`

  it('reads the amount, issuer, date and document number where the barcode carries them', () => {
    expect(barcode).toHaveLength(44)
    const g = guia({ codigoBarras: barcode, valorTotal: 123.45, numeroDocumento: '07202603123456789', dataVencimento: '2026-03-25', pagarAte: '2026-03-25' })
    expect(barcodeAmountCheck(g)).toEqual({ status: 'pass' })
    expect(barcodeIssuerCheck(g)).toEqual({ status: 'pass' })
    expect(barcodeNumberCheck(g)).toEqual({ status: 'pass' })
    expect(barcodeDateCheck(g)).toEqual({ status: 'pass' })
    expect(barcodeAmountCheck({ ...g, valorTotal: 123.46 })).toMatchObject({ status: 'fail', message: expect.stringMatching(/123\.45/) })
    expect(barcodeNumberCheck({ ...g, numeroDocumento: '07202603123456780' })).toMatchObject({ status: 'fail' })
    expect(barcodeDateCheck({ ...g, dataVencimento: '2026-03-24', pagarAte: null })).toMatchObject({ status: 'fail' })
    expect(barcodeIssuerCheck({ ...g, codigoBarras: barcode.replace('0328', '0001') })).toMatchObject({ status: 'fail', message: expect.stringMatching(/0001/) })
    expect(barcodeAmountCheck(guia({}))).toEqual({ status: 'skip' })
  })

  it('adds the composition up in cents, row by row and against Totais and the document total', () => {
    const rows = [row({ principal: 10.1, multa: 0.2, juros: null, total: 10.3, periodo: '2026-02' }), row({ codigo: '1002', principal: 20.2, multa: null, juros: 0.1, total: 20.3, periodo: '2026-02' })]
    const g = guia({ competencia: '2026-02', composicao: rows, totais: { principal: 30.3, multa: 0.2, juros: 0.1, total: 30.6 }, valorTotal: 30.6 })
    expect(compositionCheck(g)).toEqual({ status: 'pass' })
    expect(compositionCheck({ ...g, valorTotal: 30.61 })).toMatchObject({ status: 'fail', message: expect.stringMatching(/document total/) })
    expect(compositionCheck({ ...g, composicao: [{ ...rows[0]!, total: 10.31 }, rows[1]!] })).toMatchObject({ status: 'fail', message: expect.stringMatching(/row 1/) })
    expect(rowPeriodsCheck(g)).toEqual({ status: 'pass' })
    expect(rowPeriodsCheck({ ...g, composicao: [rows[0]!, { ...rows[1]!, periodo: '2026-01' }] })).toMatchObject({ status: 'fail', message: expect.stringMatching(/1002/) })
    expect(rowPeriodsCheck({ ...g, competencia: 'DIVERSOS' })).toEqual({ status: 'skip' })
  })
})
