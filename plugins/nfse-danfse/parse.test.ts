import { describe, expect, it } from 'vitest'
import { extractPdf, pluginCases } from '../../fixtures/extraction/plugin-cases.js'
import { generateDanfse } from './fixtures/generate.js'
import type { DanfseOptions, Omittable } from './fixtures/generate.js'
import { memo, plainContext, runsDocument } from '../../fixtures/extraction/helpers.js'
import { cellLabels, labels } from './fields.js'
import { parseDanfse } from './parse.js'
import { readReal } from '../../fixtures/extraction/real/read.js'

const fixture = memo(generateDanfse)
const pdf = (o: DanfseOptions) => async () => (await fixture(o)).pdf
const truth = async (o: DanfseOptions) => (await fixture(o)).truth

const cases: Array<{ name: string, options: DanfseOptions }> = [
  { name: 'v1.0, tomador with a CNPJ, no intermediary', options: { seed: 1 } },
  { name: 'v1.0, tomador with a CPF, an intermediary', options: { seed: 2, tomador: 'cpf', intermediario: true } },
  { name: 'v1.0, tomador with an alphanumeric CNPJ', options: { seed: 3, tomador: 'alnum' } },
  { name: 'v1.0 on two pages (parties on page 1, taxes and totals on page 2)', options: { seed: 4, twoPages: true, intermediario: true } },
  { name: 'v1.0, tomador not identified', options: { seed: 9, tomador: 'none' } },
  { name: 'v2.0, tomador with a CNPJ, no intermediary, no destinatário', options: { seed: 5, version: '2.0' } },
  { name: 'v2.0, a destinatário of the operation and an intermediary', options: { seed: 10, version: '2.0', destinatario: true, intermediario: true } },
  { name: 'v2.0, tomador with an alphanumeric CNPJ, an intermediary', options: { seed: 6, version: '2.0', tomador: 'alnum', intermediario: true } },
  { name: 'v2.0, tomador with a CPF, two pages', options: { seed: 7, version: '2.0', tomador: 'cpf', twoPages: true } },
  { name: 'v1.0, a service description wrapped over several lines', options: { seed: 15, longDescription: true, intermediario: true } },
  { name: 'v2.0, a service description wrapped over several lines, two pages', options: { seed: 16, version: '2.0', longDescription: true, twoPages: true } },
  { name: 'v2.0 with the footer stub first in the content stream', options: { seed: 8, version: '2.0', stubFirst: true, intermediario: true } }
]

describe('nfse-danfse: fixture → expected data', () => {
  pluginCases(cases.map((c) => ({
    name: `${c.name}: every field equals the generator's truth`,
    pdf: pdf(c.options),
    data: () => truth(c.options),
    pages: c.options.twoPages === true ? 2 : 1,
    result: {
      success: true, documentType: 'NFSE_DANFSE', errors: [], warnings: [],
      engine: { family: 'NFSE', parser: 'nfse-danfse', parserExecuted: true, parserBlocked: false, confidence: 1, confidenceLevel: 'HIGH', missingRules: [] }
    }
  })))
})

describe('nfse-danfse: what the fixtures vary is really read', () => {
  it('reads a CPF tomador, an alphanumeric CNPJ tomador and the intermediary present or absent', async () => {
    const cpf = await truth({ seed: 2, tomador: 'cpf', intermediario: true })
    const alnum = await truth({ seed: 6, version: '2.0', tomador: 'alnum', intermediario: true })
    const none = await truth({ seed: 1 })
    expect(cpf.tomador?.documento).toMatch(/^\d{11}$/)
    expect(alnum.tomador?.documento).toMatch(/^(?=.*[A-Z])[0-9A-Z]{12}\d{2}$/)
    expect(cpf.intermediario?.documento).toMatch(/^\d{14}$/)
    expect(none.intermediario).toBeNull()
    expect((await truth({ seed: 9, tomador: 'none' })).tomador).toBeNull()
    expect((await truth({ seed: 10, version: '2.0', destinatario: true, intermediario: true })).destinatario?.documento).toMatch(/^\d{14}$/)
    const result = await extractPdf(await pdf({ seed: 6, version: '2.0', tomador: 'alnum', intermediario: true })())
    expect((result.data as typeof alnum).tomador?.documento).toBe(alnum.tomador?.documento)
  })
})

describe('nfse-danfse: missing fields are null, never invented', () => {
  const omittable: Array<[Omittable, (d: Record<string, any>) => unknown]> = [
    ['competencia', (d) => d.competencia],
    ['prestador.telefone', (d) => d.prestador.telefone],
    ['tomador.email', (d) => d.tomador.email],
    ['issqn.aliquota', (d) => d.issqn.aliquota],
    ['servico.localPrestacao', (d) => d.servico.localPrestacao],
    ['valores.valorLiquido', (d) => d.valores.valorLiquido]
  ]
  for (const version of ['1.0', '2.0'] as const) {
    for (const [field, read] of omittable) {
      it(`v${version}: returns null for ${field} when the PDF does not print it`, async () => {
        const options: DanfseOptions = { seed: 11, version, omit: [field] }
        const result = await extractPdf(await pdf(options)())
        expect(result.success).toBe(true)
        expect(read(result.data as Record<string, any>)).toBeNull()
        expect(result.data).toEqual(await truth(options))
        expect(result.evidence[field]).toBeUndefined()
      })
    }
  }

  it('reads a DANFSe without its access key (detection still high enough), the key checks skipped', async () => {
    const options: DanfseOptions = { seed: 12, omit: ['chaveAcesso'] }
    const result = await extractPdf(await pdf(options)())
    expect(result).toMatchObject({ success: true, documentType: 'NFSE_DANFSE', data: { chaveAcesso: null } })
    expect(result.data).toEqual(await truth(options))
    // The key is a field every DANFSe prints: its absence counts against confidence too.
    expect(result.engine.missingRules).toEqual(['chave-acesso', 'field:chaveAcesso'])
    expect(result.engine.matchedRules.filter((r) => r.startsWith('check:chave'))).toEqual([])
  })

  it('prints "-" for empty values and returns null for them', async () => {
    const result = await extractPdf(await pdf({ seed: 1 })())
    const d = result.data as Record<string, any>
    expect(d.valores.descontoCondicionado).toBeNull()
    expect(d.federais.cpRetida).toBeNull()
    expect(d.servico.paisPrestacao).toBeNull()
    expect(d.prestador.regimeApuracaoSn).toBeNull()
  })
})

describe('nfse-danfse: consistency checks, homologation and evidence', () => {
  it('lowers confidence with a warning when the key holds another NFS-e number than the printed one', async () => {
    const good = await extractPdf(await pdf({ seed: 13, version: '2.0' })())
    const bad = await extractPdf(await pdf({ seed: 13, version: '2.0', keyNumberMismatch: true })())
    expect(good.engine.matchedRules).toContain('check:chave-numero')
    expect(bad.engine.missingRules).toContain('check:chave-numero')
    expect(bad.warnings).toEqual([expect.objectContaining({ code: 'PLUGIN_CHECK_FAILED', message: expect.stringMatching(/^chave-numero: the access key holds NFS-e number \d+, the DANFSe prints \d+$/) })])
    expect(bad.engine.confidence).toBeLessThan(good.engine.confidence)
    // The printed number is reported as printed, not "corrected" from the key.
    expect((bad.data as { numeroNfse: string }).numeroNfse).toBe((await truth({ seed: 13, version: '2.0' })).numeroNfse)
  })

  it('flags a homologation print (NFS-e SEM VALIDADE JURÍDICA) with a warning and homologacao: true', async () => {
    const options: DanfseOptions = { seed: 14, homologacao: true }
    const result = await extractPdf(await pdf(options)())
    expect(result).toMatchObject({ success: true, documentType: 'NFSE_DANFSE', data: { homologacao: true } })
    expect(result.data).toEqual(await truth(options))
    expect(result.warnings).toEqual([expect.objectContaining({ code: 'NFSE_HOMOLOGACAO', field: 'homologacao' })])
  })

  it('reports where a value was read: page and line of the two-page variant', async () => {
    const options: DanfseOptions = { seed: 4, twoPages: true, intermediario: true }
    const result = await extractPdf(await pdf(options)())
    const t = await truth(options)
    expect(result.evidence.chaveAcesso).toEqual({ page: 1, source: t.chaveAcesso, box: expect.objectContaining({ x: expect.closeTo(40, 0) }) })
    expect(result.evidence['valores.valorLiquido']?.page).toBe(2)
    expect(result.evidence['tomador.documento']?.box.x).toBeCloseTo(180, 0)
  })
})

describe('nfse-danfse: real prints of the national portal and of other generators', () => {
  // Each reads every field a person reads on it, save the ones named (their reading is in SOURCES.md).
  const cases: Array<{ name: string, unread: string[], why: string }> = [
    // The QR caption shares the DPS date's line; the 2023 edition prints no `Total das Retenções`.
    { name: 'nfse-danfse/kauannery-adn-homologacao6', unread: ['valores.totalRetencoes'], why: 'the DPS date beside the QR caption' },
    // BrazilFiscalReport names cells longer: `Local da Prestação / Sigla UF / País`, `Tipo de Tributação do ISSQN`, `TRIBUTAÇÃO IBS / CBS`.
    { name: 'nfse-danfse/brazilfiscalreport-rogerio-v2', unread: [], why: 'the longer cell names of BrazilFiscalReport' },
    // `*Endereço`, a customer's municipality printed as a bare IBGE code; the stub sits too far under its labels.
    { name: 'nfse-danfse/faluba-telas-uniao-v2', unread: [], why: '`*Endereço`, a municipality without its UF, the stub key on the line under its label (`**** DATA CIENTIFICAÇÃO:` row)' },
    // `Número do DPS`, `Série do DPS`.
    { name: 'nfse-danfse/gcviana-sercon-v1', unread: [], why: 'the DPS cells named `do DPS`' }
  ]
  for (const c of cases) {
    it(`${c.name}: ${c.why}`, async () => {
      const { comparison } = await readReal(c.name)
      expect({ missing: comparison.missing, wrong: comparison.wrong }).toEqual({ missing: c.unread, wrong: [] })
    }, 120_000)
  }
})

describe('nfse-danfse: the access key on the line below its label (issue 33: a third-party drawing)', () => {
  const KEY = '43143022212345678000195000000000012325070987654321'
  it('reads the key printed under its label, wider than the label and starting left of it, or after it', () => {
    for (const runs of [
      [['DANFSe v1.0', 40, 790], ['Chave de Acesso da NFS-e', 200, 760], [KEY, 150, 749]],
      [['DANFSe v1.0', 40, 790], ['Chave de Acesso da NFS-e', 40, 760], [KEY, 40, 749], ['Número da NFS-e', 300, 760], ['123', 300, 749]],
      [['DANFSe v1.0', 40, 790], ['Chave de Acesso da NFS-e:', 40, 760], [KEY, 160, 760]],
      // v2.0 capitals, the key under its label with the QR caption beside it, a row of labels under it.
      [['DANFSe v2.0', 40, 790], ['CHAVE DE ACESSO DA NFS-E', 26, 782], [KEY, 26, 774], ['A autenticidade desta NFS-e pode ser verificada', 420, 774], ['NÚMERO DA NFS-E', 26, 762], ['83', 26, 754]]
    ] as Array<Array<[string, number, number]>>) {
      const ctx = plainContext()
      expect(parseDanfse(runsDocument(runs, labels, cellLabels), ctx).chaveAcesso).toBe(KEY)
      expect(ctx.conflicts).toEqual([])
    }
  })

  it('gives null with a conflict, not a guess, when the key after the label and the one under it differ', () => {
    const other = `${KEY.slice(0, 40)}1111111111`
    const ctx = plainContext()
    const runs: Array<[string, number, number]> = [['DANFSe v1.0', 40, 790], ['Chave de Acesso da NFS-e:', 40, 760], [KEY, 160, 760], [other, 40, 749]]
    expect(parseDanfse(runsDocument(runs, labels, cellLabels), ctx).chaveAcesso).toBeNull()
    expect(ctx.conflicts).toEqual(['chaveAcesso'])
  })
})

describe('nfse-danfse: a party grid with the one-word cells `Telefone`, `Município`, `CEP` (issue 33)', () => {
  // v1.0's party block: the e-mail cell left empty, the next row of labels under it.
  const runs: Array<[string, number, number]> = [
    ['DANFSe v1.0', 40, 790],
    ['EMITENTE DA NFS-e', 40, 700], ['CNPJ / CPF / NIF', 180, 700], ['Inscrição Municipal', 320, 700], ['Telefone', 460, 700],
    ['Prestador do Serviço', 40, 691], ['31.938.403/0001-00', 180, 691], ['9812212', 320, 691], ['(38) 3258-4118', 460, 691],
    ['Nome / Nome Empresarial', 40, 680], ['E-mail', 320, 680],
    ['Alfa Consultoria Ltda', 40, 671],
    ['Endereço', 40, 660], ['Município', 320, 660], ['CEP', 460, 660],
    ['Rua do CEP Antigo, 10', 40, 651], ['Salvador - BA', 320, 651], ['40015-970', 460, 651],
    ['SERVIÇO PRESTADO', 40, 620], ['Descrição do Serviço', 40, 611],
    ['Serviços prestados no município de Salvador, IRRF retido', 40, 602]
  ]

  it('reads each cell under its label, an empty cell as null, and a value holding one of those words whole', () => {
    const ctx = plainContext()
    const data = parseDanfse(runsDocument(runs, labels, cellLabels), ctx)
    expect(data.prestador).toMatchObject({ documento: '31938403000100', inscricaoMunicipal: '9812212', telefone: '(38) 3258-4118', email: null, endereco: 'Rua do CEP Antigo, 10', municipio: 'Salvador', uf: 'BA', cep: '40015970' })
    expect(data.servico?.descricao).toBe('Serviços prestados no município de Salvador, IRRF retido')
    expect(ctx.conflicts).toEqual([])
  })

  it('takes the next row\'s label for the empty cell\'s value when the one-word labels are not declared (what cellLabels prevents)', () => {
    expect(parseDanfse(runsDocument(runs, labels), plainContext()).prestador?.email).toBe('Município CEP')
  })
})

describe('nfse-danfse: text column by column, positions lost (issue 33)', () => {
  const column = (texts: string[]): Array<[string, number, number]> => texts.map((t, i) => [t, 36, 800 - i * 10])

  it('reads each party\'s cells by the parties\' order, and gives null, not the other party\'s value, where that order is broken', () => {
    const runs = column([
      'DANFSe v1.0', 'EMITENTE DA NFS-e', 'Prestador do Serviço', 'Nome / Nome Empresarial', 'TOMADOR DO SERVIÇO',
      // The tomador's address handed over inside its section, the prestador's further down.
      'Endereço', 'Rua B, 2', 'SERVIÇO PRESTADO', 'Descrição do Serviço', 'Consultoria',
      'CNPJ / CPF / NIF', '31.938.403/0001-00', 'CNPJ / CPF / NIF', '89.626.338/0001-67',
      'Telefone', '(38) 3258-4118', 'Telefone', '(94) 3481-9680', 'Endereço', 'Rua A, 1'
    ])
    const ctx = plainContext()
    const data = parseDanfse(runsDocument(runs, labels, cellLabels), ctx)
    expect(data.prestador).toMatchObject({ documento: '31938403000100', telefone: '(38) 3258-4118', endereco: null })
    // The tomador's section holds an address, but which party's is not known: the same order
    // comes from the prestador's address handed over inside the tomador's section (below).
    expect(data.tomador).toMatchObject({ documento: '89626338000167', telefone: '(94) 3481-9680', endereco: null })
    expect(ctx.conflicts).toContain('tomador.endereco')
  })

  it('gives null, not the prestador\'s value, where the prestador\'s cell is handed over inside the tomador\'s section', () => {
    // pdfminer's order of a real print: the prestador's last row after the tomador's title, the tomador's after the next title.
    const runs = column([
      'DANFSe v1.0', 'EMITENTE DA NFS-e', 'CNPJ / CPF / NIF', '31.938.403/0001-00', 'TOMADOR DO SERVIÇO', 'CEP', '30120-060',
      'CNPJ / CPF / NIF', '89.626.338/0001-67', 'SERVIÇO PRESTADO', 'CEP', '30130-919', 'Descrição do Serviço', 'Consultoria'
    ])
    const ctx = plainContext()
    const data = parseDanfse(runsDocument(runs, labels, cellLabels), ctx)
    expect([data.prestador?.cep, data.tomador?.cep]).toEqual([null, null])
    expect(ctx.conflicts).toContain('tomador.cep')
  })

  it('pairs a row of labels with the row of values after it, by order, only when the counts match', () => {
    const runs = column([
      'DANFSe v1.0', 'Número da NFS-e', 'Competência da NFS-e', 'Data e Hora da emissão da NFS-e', '2666', '01/06/2026', '01/06/2026 10:07:04',
      // One value too few: which is whose is not known.
      'Número da DPS', 'Série da DPS', 'Data e Hora da emissão da DPS', '1697', '01/06/2026 00:00:00',
      'A autenticidade desta NFS-e pode ser verificada', 'pela leitura deste código QR ou pela consulta da',
      // Titles between the labels and their values, the caption among them: passed over.
      'EMITENTE DA NFS-e', 'CNPJ / CPF / NIF', 'Inscrição Municipal', 'Telefone', 'Prestador do Serviço', '26.230.037/0001-08', '-', '(31) 3271-3267',
      'Nome / Nome Empresarial', 'E-mail', 'SERCON MEDICINA', 'financeiro@sercon.com.br',
      // A title between two runs of labels: the first run has no values.
      'TOMADOR DO SERVIÇO', 'Inscrição Municipal', 'TRIBUTAÇÃO MUNICIPAL', 'Tributação do ISSQN', 'Município de Incidência do ISSQN', 'Operação Tributável', 'Belo Horizonte',
      'SERVIÇO PRESTADO', 'Descrição do Serviço', 'Exames clínicos de', 'rotina'
    ])
    const ctx = plainContext()
    const data = parseDanfse(runsDocument(runs, labels, cellLabels), ctx)
    expect(data).toMatchObject({ numeroNfse: '2666', competencia: '2026-06', dataHoraEmissao: '2026-06-01T10:07:04', numeroDps: null, serieDps: null, dataHoraEmissaoDps: null })
    expect(data.prestador).toMatchObject({ documento: '26230037000108', inscricaoMunicipal: null, telefone: '(31) 3271-3267', nome: 'SERCON MEDICINA', email: 'financeiro@sercon.com.br' })
    expect(data.issqn).toMatchObject({ tributacao: 'Operação Tributável', municipioIncidencia: 'Belo Horizonte' })
    expect(data.servico?.descricao).toBe('Exames clínicos de rotina')
  })

  it('reads a party\'s document by its shape where its label ran into the section\'s title, only when one such value stands there', () => {
    // pdftotext -raw of the portal's print: `TOMADOR DO SERVIÇO CNPJ / CPF / NIF` on one line.
    const text = (tomador: string[]): Array<[string, number, number]> => column([
      'DANFSe v1.0', 'EMITENTE DA NFS-e', 'CNPJ / CPF / NIF', '62.018.490/0001-00', 'Nome / Nome Empresarial', 'KAUAN',
      'TOMADOR DO SERVIÇO CNPJ / CPF / NIF', ...tomador, 'Nome / Nome Empresarial', 'GOOGLE',
      'INTERMEDIÁRIO DO SERVIÇO NÃO IDENTIFICADO NA NFS-e', 'SERVIÇO PRESTADO', 'Descrição do Serviço', 'Consultoria'
    ])
    const read = (tomador: string[]): string | null | undefined => parseDanfse(runsDocument(text(tomador), labels, cellLabels), plainContext()).tomador?.documento
    expect(read(['06.990.590/0001-23', 'Inscrição Municipal', '-'])).toBe('06990590000123')
    expect(read(['123.456.789-09'])).toBe('12345678909')
    // Two candidates, or the prestador's number handed over in the tomador's section: not guessed.
    expect(read(['06.990.590/0001-23', 'Inscrição Municipal', '11.222.333/0001-81'])).toBeNull()
    expect(read(['62.018.490/0001-00'])).toBeNull()
  })

  it('reads the incidence municipality whose label was joined with its neighbour\'s, by its shape, only when one line can be it', () => {
    // A library's column order of the portal's print: `País Resultado…` and `Município de Incidência…` joined, one `-` under
    // them; the municipality handed over under the service's place, a second `City - UF` after its one-line value.
    const text = (under: string, extra: string[] = []): Array<[string, number, number]> => column([
      'DANFSe v1.0', 'SERVIÇO PRESTADO', 'Descrição do Serviço', 'Consultoria', 'TRIBUTAÇÃO MUNICIPAL', 'Tributação do ISSQN', 'Operação Tributável',
      'País Resultado da Prestação do Serviço Município de Incidência do ISSQN', under, 'Regime Especial de Tributação', 'Nenhum',
      'Local da Prestação', 'São Paulo - SP', 'Feira de Santana - BA', 'Número Processo Suspensão', '-', ...extra
    ])
    const read = (under: string, extra?: string[]): string | null | undefined => parseDanfse(runsDocument(text(under, extra), labels, cellLabels), plainContext()).issqn?.municipioIncidencia
    expect(read('-')).toBe('Feira de Santana - BA')
    // The value under the joined labels could be the municipality, or a second such line stands elsewhere: not guessed.
    expect(read('Salvador - BA')).toBeNull()
    expect(read('-', ['Município', 'Salvador - BA', 'Niterói - RJ', 'CEP', '-'])).toBeNull()
  })

  it('reads an address wrapped over two lines whole: the order gives its first line, the section the whole cell', () => {
    const runs = column(['DANFSe v1.0', 'EMITENTE DA NFS-e', 'Endereço', 'Rua A, 1', 'TOMADOR DO SERVIÇO', 'Endereço', 'Rua B, 2, Sala 3', 'Bloco C', 'SERVIÇO PRESTADO', 'Descrição do Serviço', 'Consultoria'])
    const ctx = plainContext()
    const data = parseDanfse(runsDocument(runs, labels, cellLabels), ctx)
    expect([data.prestador?.endereco, data.tomador?.endereco]).toEqual(['Rua A, 1', 'Rua B, 2, Sala 3 Bloco C'])
    expect(ctx.conflicts).toEqual([])
  })
})
