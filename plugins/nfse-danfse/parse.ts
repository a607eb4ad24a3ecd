/**
 * Parser of the national DANFSe, layouts v1.0 and v2.0 (documents.md §7 "Fields"). Labels
 * are matched accent- and case-blind, so one label list reads both versions' wordings;
 * every value comes from its cell under its label, inside its section (the parties reuse
 * the same labels). A printed `-` is an empty value: null.
 */
import { MONEY_PATTERN, cnpjChars, conflictHit, competence, isoDateTime, moneyNumber, normalizeText, percentNumber, textValue } from '../../core/plugin-api.js'
import type { Hit, ParseContext, TextDocument, TextLine, TextRegion } from '../../core/plugin-api.js'
import { cellLabels, labels } from './fields.js'

export interface Parte {
  /** CNPJ (14 characters, letters allowed in 1-12), CPF (11 digits) or NIF as printed. */
  documento: string | null
  inscricaoMunicipal: string | null
  nome: string | null
  email: string | null
  telefone: string | null
  endereco: string | null
  municipio: string | null
  uf: string | null
  /** 8 digits. */
  cep: string | null
  /** 7 digits (v2.0 prints it). */
  codigoIbge: string | null
  simplesNacional: string | null
  regimeApuracaoSn: string | null
}

export interface Servico {
  codigoTributacaoNacional: string | null
  codigoTributacaoMunicipal: string | null
  codigoNbs: string | null
  descricao: string | null
  localPrestacao: string | null
  paisPrestacao: string | null
}

export interface Issqn {
  tributacao: string | null
  municipioIncidencia: string | null
  regimeEspecial: string | null
  baseCalculo: number | null
  /** Percent as printed (`2,00 %` → 2). */
  aliquota: number | null
  retido: boolean | null
  valorApurado: number | null
}

export interface Federais { irrf: number | null, cpRetida: number | null, contribuicoesRetidas: number | null, pis: number | null, cofins: number | null }

export interface IbsCbs {
  cst: string | null
  cClassTrib: string | null
  aliquotaIbsUf: number | null
  aliquotaIbsMun: number | null
  valorIbs: number | null
  aliquotaCbs: number | null
  valorCbs: number | null
  total: number | null
  valorLiquidoComIbsCbs: number | null
}

export interface Valores {
  valorServico: number | null
  descontoCondicionado: number | null
  descontoIncondicionado: number | null
  /** v1.0 prints it apart; v2.0 folds it into totalRetencoes (null there). */
  issqnRetido: number | null
  /** v1.0: federal withholdings; v2.0: ISSQN + federal withholdings. */
  totalRetencoes: number | null
  valorLiquido: number | null
}

export interface Danfse {
  versaoLayout: '1.0' | '2.0' | null
  chaveAcesso: string | null
  numeroNfse: string | null
  /** `YYYY-MM` (the DANFSe prints a date of the month). */
  competencia: string | null
  dataHoraEmissao: string | null
  numeroDps: string | null
  serieDps: string | null
  dataHoraEmissaoDps: string | null
  situacao: string | null
  finalidade: string | null
  prestador: Parte | null
  tomador: Parte | null
  intermediario: Parte | null
  destinatario: Parte | null
  servico: Servico | null
  issqn: Issqn | null
  federais: Federais | null
  ibsCbs: IbsCbs | null
  valores: Valores | null
  /** v2.0 footer stub `Nº NFS-e / CHAVE NFS-e`: the number and key printed again. */
  canhoto: { numeroNfse: string | null, chaveAcesso: string | null } | null
  homologacao: boolean
}

/** Every section title of both versions: a section ends where the next one starts. */
const HEADERS = {
  prestador1: 'EMITENTE DA NFS-e',
  prestador2: 'PRESTADOR / FORNECEDOR',
  tomador: ['TOMADOR DO SERVIÇO', 'TOMADOR / ADQUIRENTE'],
  destinatario: ['DESTINATÁRIO DA OPERAÇÃO'],
  intermediario: ['INTERMEDIÁRIO DO SERVIÇO', 'INTERMEDIÁRIO DA OPERAÇÃO'],
  servico: ['SERVIÇO PRESTADO'],
  municipal: ['TRIBUTAÇÃO MUNICIPAL'],
  federal: ['TRIBUTAÇÃO FEDERAL'],
  ibsCbs: ['TRIBUTAÇÃO IBS/CBS', 'TRIBUTAÇÃO IBS / CBS'],
  valores: ['VALOR TOTAL DA NFS-e'],
  end: ['TOTAIS APROXIMADOS DOS TRIBUTOS', 'INFORMAÇÕES COMPLEMENTARES', 'DATA CIENTIFICAÇÃO']
}
const ALL = [HEADERS.prestador2, ...HEADERS.tomador, ...HEADERS.destinatario, ...HEADERS.intermediario, ...HEADERS.servico, ...HEADERS.municipal, ...HEADERS.federal, ...HEADERS.ibsCbs, ...HEADERS.valores, ...HEADERS.end]

/** The QR code's caption, in its detection form: its pieces are no value of a cell. */
const CAPTION = normalizeText('A autenticidade desta NFS-e pode ser verificada pela leitura deste código QR ou pela consulta da chave de acesso no portal nacional da NFS-e')
/** Titles (of the document, of its sections), in their detection form: no cell's label, no cell's value. */
const TITLES = [HEADERS.prestador1, 'Prestador do Serviço', 'DANFSe v', 'Documento Auxiliar da NFS-e', ...ALL].map(normalizeText)

/**
 * Positions lost: lines that are neither a label nor a value in a run of labels followed by
 * a run of values (TextRegion.byOrder): a title (or a title and its note, `… NÃO
 * IDENTIFICADO NA NFS-e`), a line of the QR caption however the caption was wrapped.
 */
function passOver (normalized: string): boolean {
  return TITLES.some((t) => normalized.startsWith(t)) || LONE_TITLES.includes(normalized) || (normalized.length >= 12 && CAPTION.includes(normalized))
}
/** Titles that are also words a value may start with: passed over only alone on their line. */
const LONE_TITLES = ['Prestador', 'NFS-e SEM VALIDADE JURÍDICA'].map(normalizeText)

const MONEY = new RegExp(`(${MONEY_PATTERN})`)

/** A hit narrowed to one capture group of `re` on its value (same evidence box), or undefined. */
function part (hit: Hit | undefined, re: RegExp, group = 1): Hit | undefined {
  if (hit === undefined) return undefined
  const v = re.exec(hit.value)?.[group]
  return v === undefined ? undefined : { ...hit, value: v.trim(), groups: [v] }
}

/** Printed text → trimmed string; `-` or empty → null. */
const str = (t: string): string | null => t.trim() === '-' ? null : textValue(t)
const money = (t: string): number | null => { const m = MONEY.exec(t); return m === null ? null : moneyNumber(m[1]!) }
const digits = (n: number) => (t: string): string | null => { const d = t.replace(/[\s./-]/g, ''); return new RegExp(`^\\d{${n}}$`).test(d) ? d : null }

/** A party's document: CNPJ (numeric or alphanumeric), CPF, or a foreign NIF as printed. */
function documento (t: string): string | null {
  const s = str(t)
  if (s === null) return null
  if (/^\d{3}\.?\d{3}\.?\d{3}-?\d{2}$/.test(s)) return s.replace(/\D/g, '')
  return cnpjChars(s) ?? s
}

/** A CNPJ or a CPF in its printed form, with its dots, slash and dash. */
const FORMATTED_ID = /^(?:\d{2}\.\d{3}\.\d{3}\/\d{4}-\d{2}|\d{3}\.\d{3}\.\d{3}-\d{2})$/

/** `Cidade - UF` (v1.0) or `Cidade / UF` (v2.0). */
const CITY_UF = /^(.*\S)\s*[-/]\s*([A-Z]{2})$/

/** A party's cell reader: the value of its labels (several wordings of one cell). */
type CellReader = (labels: string | string[], options?: { rest?: boolean }) => Hit | undefined

/** True when a party's section says it is not identified: null, not a party of nulls. */
function notIdentified (scope: TextRegion): boolean {
  // `NÃO IDENTIFICADO NA NFS-e` after the title or on the line under it (the section may start a row above a title printed beside its block).
  return scope.isEmpty || scope.lines.slice(0, 3).some((l) => /NAO IDENTIFICAD/.test(normalizeText(l.text)))
}

/** Two readings of one cell: the one given, or a conflict (null and a warning) when they disagree. */
function agreed (label: string, a: Hit | undefined, b: Hit | undefined): Hit | undefined {
  if (a === undefined || b === undefined || a.value === b.value || a.conflict !== undefined || b.conflict !== undefined) return a ?? b
  return conflictHit(a, `the label "${label}" has two readings that disagree, positions lost: "${a.value}" by the order of the parties and "${b.value}" in its party's section; the value is not guessed`)
}

/** A hit that is a conflict (`ctx.take`: null and a warning saying why). */
/**
 * Positions lost, a cell's value may have been paired by order: one of another cell's shape
 * is not taken. A party's document is one word (a CNPJ, a CPF, a NIF), never a name.
 */
const oneWord = (read: (t: string) => string | null) => (t: string): string | null => /\s/.test(t.trim().replace(/^[\d./-]+$/, '')) ? null : read(t)
/** A state or a purpose is words, never a number or a document. */
const words = (t: string): string | null => /\p{L}{3}/u.test(t) ? str(t) : null

/** A line that is wholly a CNPJ or a CPF in its printed form (the document's shape, no other cell's). */
const FORMATTED_ID_LINE = /^\s*(\d{2}\.\d{3}\.\d{3}\/\d{4}-\d{2}|\d{3}\.\d{3}\.\d{3}-\d{2})\s*$/
/** The party cells' labels (the wordings `parte` reads). */
const PARTY_LABELS = ['CNPJ / CPF / NIF', 'Inscrição Municipal', 'Indicador Municipal (Inscrição)', 'Nome / Nome Empresarial', 'E-mail', 'Telefone', 'Endereço', '*Endereço',
  'Município', 'Município / Sigla UF', 'Código IBGE / CEP', 'CEP', 'Simples Nacional na Data de Competência', 'Regime de Apuração Tributária pelo SN']

/**
 * Positions lost, a party's document that no order gives (pdftotext -raw runs the label into
 * the section's title, `TOMADOR DO SERVIÇO CNPJ / CPF / NIF`): its value by shape, only when
 * the section prints the label before exactly one line that is wholly a CNPJ or a CPF as
 * printed, no other cell of the section takes that line, and no other party's section prints
 * the same number (a value handed over inside the wrong section).
 */
function documentByShape (scope: TextRegion, others: TextRegion[], inSection: (label: string) => Hit | undefined): Hit | undefined {
  const label = normalizeText('CNPJ / CPF / NIF')
  const at = scope.lines.findIndex((l) => normalizeText(l.text).includes(label))
  if (at < 0) return undefined
  const found = scope.findAll(FORMATTED_ID_LINE)
  if (found.length !== 1) return undefined
  const hit = found[0]!
  const line = scope.lines.findIndex((l) => l.page === hit.page && Math.abs(l.box.y - hit.box.y) < 0.5)
  if (line <= at) return undefined
  const same = (h: Hit | undefined): boolean => h !== undefined && h.page === hit.page && Math.abs(h.box.y - hit.box.y) < 0.5
  if (PARTY_LABELS.some((l) => same(inSection(l)))) return undefined
  const digitsOf = (t: string): string => t.replace(/\D/g, '')
  if (others.some((o) => o.findAll(FORMATTED_ID_LINE).some((h) => digitsOf(h.value) === digitsOf(hit.value)))) return undefined
  return hit
}

/** Every label and cell label, and the titles, in their detection form. */
const LABEL_FORMS = new Set([...labels, ...cellLabels].map(normalizeText))
const labelLine = (l: TextLine | undefined): boolean => { if (l === undefined) return false; const n = normalizeText(l.text).replace(/\s*:$/, ''); return LABEL_FORMS.has(n) || passOver(n) }
/** A municipality with its state (`Feira de Santana - BA`, `Belo Horizonte / MG`): no country, code or date has this shape. */
const MUNICIPIO_UF = /^\s*\p{L}[\p{L} .'-]*\p{L}\s+[-/]\s+[A-Z]{2}\s*$/u

/**
 * Positions lost, a municipality cell whose label a library joined with its neighbour's into
 * one piece (`País Resultado da Prestação do Serviço Município de Incidência do ISSQN`) while
 * one value line only follows the piece (which of the two it is, is not known) and the other
 * went down another cell's block: after a label's one-line municipality, a second line of the
 * same shape that no label takes. Read only when the piece is printed once, the value under
 * it is not of the municipality's shape, and the document holds exactly one such line.
 */
function joinedMunicipality (doc: TextRegion, label: string): Hit | undefined {
  const wanted = normalizeText(label)
  const lines = doc.lines
  // Most documents print the label whole: one look for its words at a line's end or start.
  const joined = lines.flatMap((l, i) => {
    const n = normalizeText(l.text)
    if (n === wanted || !n.includes(wanted)) return []
    const other = n.startsWith(`${wanted} `) ? n.slice(wanted.length + 1) : n.endsWith(` ${wanted}`) ? n.slice(0, -wanted.length - 1) : undefined
    return other !== undefined && LABEL_FORMS.has(other) ? [i] : []
  })
  if (joined.length !== 1) return undefined
  const j = joined[0]!
  const under = lines[j + 1]
  if (under === undefined || labelLine(under) || MUNICIPIO_UF.test(under.text) || (j + 2 < lines.length && !labelLine(lines[j + 2]))) return undefined
  const found = lines.flatMap((l, i) => i >= 2 && MUNICIPIO_UF.test(l.text) && MUNICIPIO_UF.test(lines[i - 1]!.text) && !labelLine(lines[i - 1]) &&
    LABEL_FORMS.has(normalizeText(lines[i - 2]!.text).replace(/\s*:$/, '')) && (i + 1 === lines.length || labelLine(lines[i + 1])) ? [l] : [])
  if (found.length !== 1) return undefined
  const line = found[0]!
  const text = line.text.trim()
  return doc.findAll(new RegExp(`^\\s*(${text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')})\\s*$`, 'u')).find((h) => h.page === line.page && Math.abs(h.box.y - line.box.y) < 0.5 && h.value === text)
}

function parte (cell: CellReader, ctx: ParseContext, field: string, ordered: boolean): Parte {
  const city = cell(['Município', 'Município / Sigla UF'])
  const ibgeCep = cell('Código IBGE / CEP')
  const cepHit = cell('CEP') ?? part(ibgeCep, /\/\s*(.+)$/)
  const take = <T>(name: string, hit: Hit | undefined, convert: (t: string) => T | null): T | null => ctx.take(`${field}.${name}`, hit, convert)
  return {
    documento: take('documento', cell('CNPJ / CPF / NIF'), ordered ? oneWord(documento) : documento),
    // A CNPJ or CPF as printed is the document's cell, not this one (text whose labels and values came in different orders).
    inscricaoMunicipal: take('inscricaoMunicipal', cell(['Inscrição Municipal', 'Indicador Municipal (Inscrição)']), (t) => FORMATTED_ID.test(t.trim()) ? null : str(t)),
    nome: take('nome', cell('Nome / Nome Empresarial'), str),
    email: take('email', cell('E-mail'), str),
    telefone: take('telefone', cell('Telefone'), str),
    // FalubaLuan/GerarDanfse marks the label `*Endereço`.
    endereco: take('endereco', cell(['Endereço', '*Endereço'], { rest: true }), str),
    // A cell without the UF (a bare IBGE code in some drawings) is the municipality whole.
    municipio: take('municipio', part(city, CITY_UF, 1) ?? city, str),
    uf: take('uf', part(city, CITY_UF, 2), str),
    cep: take('cep', cepHit, digits(8)),
    codigoIbge: take('codigoIbge', part(ibgeCep, /^([^/]+)\//), digits(7)),
    simplesNacional: take('simplesNacional', cell('Simples Nacional na Data de Competência'), str),
    regimeApuracaoSn: take('regimeApuracaoSn', cell('Regime de Apuração Tributária pelo SN'), str)
  }
}

function retido (t: string): boolean | null {
  const n = normalizeText(t)
  if (n.startsWith('NAO RETIDO')) return false
  return n.startsWith('RETIDO') ? true : null
}

export function parseDanfse (doc: TextDocument, ctx: ParseContext): Danfse {
  const version = doc.find(/DANFSe v([12]\.0)\b/i)
  const versaoLayout = ctx.take('versaoLayout', version, (t) => t === '1.0' || t === '2.0' ? t : null)
  const v2 = versaoLayout === '2.0'
  // The header: from the top down to the first party. In v2.0 `EMITENTE DA NFS-e` is a header cell.
  const prestadorHeader = v2 ? HEADERS.prestador2 : HEADERS.prestador1
  const top = doc.before(prestadorHeader)
  // Positions lost (text handed over column by column): sections mean nothing; a label printed
  // once is read on the whole document (every place it is printed must agree).
  const ordered = doc.positionless
  // Read by runs of labels and of values, the text's order judged on the whole document.
  const inRuns = { passOver, orderOf: doc.lines }
  const head = ordered ? doc.byOrder(0, 1, inRuns) : top.isEmpty ? doc : top
  // v2.0 generators centre a section's title beside its block, some on its second row of labels.
  const section = (headers: string[]): TextRegion => doc.section(headers, ALL.filter((h) => !headers.includes(h)), { titleBeside: true })
  // Not the parties: their labels repeat, and the order of their places need not be theirs.
  const sec = (headers: string[]): TextRegion => ordered && !section(headers).isEmpty ? doc.byOrder(0, 1, inRuns) : section(headers)

  // The parties' sections; printed in this order on every layout seen, but the order read is the page's.
  const partySections = {
    prestador: doc.section(prestadorHeader, ALL.filter((h) => h !== prestadorHeader), { titleBeside: true }),
    tomador: section(HEADERS.tomador),
    destinatario: section(HEADERS.destinatario),
    intermediario: section(HEADERS.intermediario)
  }
  // Positions lost: a party's label is printed once per identified party, its places in the
  // parties' order (each column top to bottom). The k-th of n places is the k-th party's when
  // the label is printed n times; else (and as a second reading) the party's section.
  const identified = (Object.keys(partySections) as Array<keyof typeof partySections>)
    .filter((k) => !notIdentified(partySections[k]))
    .sort((a, b) => doc.lines.indexOf(partySections[a].lines[0]!) - doc.lines.indexOf(partySections[b].lines[0]!))
  // The party whose section holds a value's line (positions lost: each line its own y), or -1.
  const holder = (hit: Hit): number => identified.findIndex((k) => partySections[k].lines.some((l) => l.page === hit.page && Math.abs(l.box.y - hit.box.y) < 0.5))
  const party = (key: keyof typeof partySections): Parte | null => {
    const scope = partySections[key]
    if (notIdentified(scope)) return null
    if (!ordered) return parte((labels, options) => scope.under(labels, options), ctx, key, false)
    const k = identified.indexOf(key)
    const inRunsOf = (labels: string | string[], options?: { rest?: boolean }): Hit | undefined => scope.byOrder(0, 1, inRuns).under(labels, options)
    return parte((labels, options) => {
      const read = cellByOrder(labels, options)
      if (read !== undefined || labels !== 'CNPJ / CPF / NIF') return read
      return documentByShape(scope, identified.filter((o) => o !== key).map((o) => partySections[o]), (l) => inRunsOf(l))
    }, ctx, key, true)
    function cellByOrder (labels: string | string[], options?: { rest?: boolean }): Hit | undefined {
      // The order holds only when no place of the label sits in another party's section than its rank says.
      const places = identified.map((_, j) => doc.byOrder(j, identified.length, inRuns).under(labels, options))
      const broken = places.some((h, j) => h !== undefined && h.conflict === undefined && holder(h) >= 0 && holder(h) !== j)
      const inSection = scope.byOrder(0, 1, inRuns).under(labels, options)
      // Where the order is broken, a party's section may hold another party's place of the
      // label as well as its own (pdfminer hands a prestador's CEP over inside the tomador's
      // section, BrazilFiscalReport a tomador's address before the prestador's): not guessed.
      if (broken) {
        const label = Array.isArray(labels) ? labels[0]! : labels
        return inSection === undefined || inSection.conflict !== undefined ? inSection : conflictHit(inSection, `the label "${label}" is printed once per party, positions lost, but its places do not follow the parties' order; the value is not guessed`)
      }
      const byOrder = places[k]
      // A cell wrapped over lines (an address): the order reads its first line, the section the whole cell.
      const wrapped = options?.rest === true && byOrder !== undefined && inSection !== undefined && inSection.value.startsWith(`${byOrder.value} `)
      return agreed(Array.isArray(labels) ? labels[0]! : labels, wrapped ? inSection : byOrder, inSection)
    }
  }

  // Words run together or a space after the hyphen (pypdf's text of the portal's print) still say it.
  const homologacao = /NFS- ?E ?SEM ?VALIDADE ?JURIDICA/.test(doc.normalized)
  if (homologacao) ctx.report({ code: 'NFSE_HOMOLOGACAO', message: 'The DANFSe is marked "NFS-e SEM VALIDADE JURÍDICA": a homologation (test) print with no legal value.', field: 'homologacao' })

  const servico = sec(HEADERS.servico)
  const nacionalMunicipal = servico.under('Código de Tributação Nacional / Municipal')
  const municipal = sec(HEADERS.municipal)
  const federal = sec(HEADERS.federal)
  const ibs = sec(HEADERS.ibsCbs)
  const valores = sec(HEADERS.valores)
  const cstHit = ibs.under('CST / cClassTrib')
  const ibsRates = ibs.under('Alíquota - IBS UF / IBS Mun')
  // The stub's label is a run of its own in the portal's print; a drawing that prefixes its row (`**** DATA CIENTIFICAÇÃO:`) is read by the label's reader.
  const stub = doc.section('DATA CIENTIFICAÇÃO').under('Nº NFS-e / CHAVE NFS-e') ??
    doc.labelValue(/N[º°o]\.?\s*NFS-e\s*\/\s*CHAVE\s+NFS-e/i, /^\s*(\d+\s*\/\s*[0-9A-Z]{50})\s*$/)
  const keyOf = (t: string): string | null => { const k = t.replace(/\s+/g, '').toUpperCase(); return /^\d{9}[0-9A-Z]{14}\d{27}$/.test(k) ? k : null }
  const numberOf = (t: string): string | null => /^\d+$/.test(t.trim()) ? t.trim() : null
  const leadingDateTime = (t: string): string | null => { const m = /^\s*(\d{2}\/\d{2}\/\d{4}\s+\d{2}:\d{2}(?::\d{2})?)(?:\s|$)/.exec(t); return m === null ? null : isoDateTime(m[1]!) }

  return {
    versaoLayout,
    // By the label's reader (after it, under it even where the key is wider than the label, a wrapped label), else its grid cell.
    chaveAcesso: ctx.take('chaveAcesso', head.labelValue(/Chave ?de ?Acesso ?da ?NFS- ?e:?/i, /^\s*:?\s*(\d[\dA-Z ]{48,70}\d)\s*$/) ?? head.under('Chave de Acesso da NFS-e'), keyOf),
    numeroNfse: ctx.take('numeroNfse', head.under('Número da NFS-e'), numberOf),
    competencia: ctx.take('competencia', head.under('Competência da NFS-e'), (t) => { const m = /^\d{2}\/(\d{2}\/\d{4})$/.exec(t.trim()); return m === null ? null : competence(m[1]!) }),
    dataHoraEmissao: ctx.take('dataHoraEmissao', head.under('Data e Hora da emissão da NFS-e'), isoDateTime),
    // Some third-party drawings write `do DPS`.
    numeroDps: ctx.take('numeroDps', head.under(['Número da DPS', 'Número do DPS']), str),
    serieDps: ctx.take('serieDps', head.under(['Série da DPS', 'Série do DPS']), str),
    // The QR code's caption (`A autenticidade desta NFS-e…`) starts on this cell's line, right of it.
    dataHoraEmissaoDps: ctx.take('dataHoraEmissaoDps', head.under('Data e Hora da emissão da DPS'), leadingDateTime),
    situacao: ctx.take('situacao', head.under('Situação da NFS-e'), ordered ? words : str),
    finalidade: ctx.take('finalidade', head.under('Finalidade'), ordered ? words : str),
    prestador: party('prestador'),
    tomador: party('tomador'),
    intermediario: party('intermediario'),
    destinatario: party('destinatario'),
    servico: servico.isEmpty
      ? null
      : {
          codigoTributacaoNacional: ctx.take('servico.codigoTributacaoNacional', servico.under('Código de Tributação Nacional', { rest: ordered }) ?? part(nacionalMunicipal, /^([^/]+)\//), (t) => /^(\d{2}\.\d{2}\.\d{2})\b/.exec(t.trim())?.[1] ?? null),
          codigoTributacaoMunicipal: ctx.take('servico.codigoTributacaoMunicipal', servico.under('Código de Tributação Municipal') ?? part(nacionalMunicipal, /\/\s*(.+)$/), str),
          codigoNbs: ctx.take('servico.codigoNbs', servico.under('Código da NBS'), str),
          descricao: ctx.take('servico.descricao', (ordered ? section(HEADERS.servico).byOrder(0, 1, inRuns) : servico).under('Descrição do Serviço', { rest: true }), str),
          // Third-party drawings name some cells longer (BrazilFiscalReport: `Local da Prestação / Sigla UF / País`, kept whole).
          localPrestacao: ctx.take('servico.localPrestacao', servico.under(['Local da Prestação', 'Local da Prestação / Sigla UF / País']), str),
          paisPrestacao: ctx.take('servico.paisPrestacao', servico.under('País da Prestação'), str)
        },
    issqn: municipal.isEmpty
      ? null
      : {
          tributacao: ctx.take('issqn.tributacao', municipal.under(['Tributação do ISSQN', 'Tipo de Tributação do ISSQN']), str),
          municipioIncidencia: ctx.take('issqn.municipioIncidencia', municipal.under(['Município de Incidência do ISSQN', 'Município / Sigla UF / País de Incidência do ISSQN']) ??
            (ordered ? joinedMunicipality(doc, 'Município de Incidência do ISSQN') : undefined), str),
          regimeEspecial: ctx.take('issqn.regimeEspecial', municipal.under(['Regime Especial de Tributação', 'Regime Especial de Tributação do ISSQN']), str),
          baseCalculo: ctx.take('issqn.baseCalculo', municipal.under('BC ISSQN'), money),
          aliquota: ctx.take('issqn.aliquota', municipal.under('Alíquota Aplicada'), percentNumber),
          retido: ctx.take('issqn.retido', municipal.under('Retenção do ISSQN'), retido),
          valorApurado: ctx.take('issqn.valorApurado', municipal.under('ISSQN Apurado'), money)
        },
    federais: federal.isEmpty
      ? null
      : {
          irrf: ctx.take('federais.irrf', federal.under('IRRF'), money),
          cpRetida: ctx.take('federais.cpRetida', federal.under('Contribuição Previdenciária - Retida'), money),
          contribuicoesRetidas: ctx.take('federais.contribuicoesRetidas', federal.under('Contribuições Sociais - Retidas'), money),
          pis: ctx.take('federais.pis', federal.under('PIS - Débito Apuração Própria'), money),
          cofins: ctx.take('federais.cofins', federal.under('COFINS - Débito Apuração Própria'), money)
        },
    ibsCbs: ibs.isEmpty
      ? null
      : {
          cst: ctx.take('ibsCbs.cst', part(cstHit, /^([^/]+)\//), str),
          cClassTrib: ctx.take('ibsCbs.cClassTrib', part(cstHit, /\/\s*(.+)$/), str),
          aliquotaIbsUf: ctx.take('ibsCbs.aliquotaIbsUf', part(ibsRates, /^([^/]+)\//), percentNumber),
          aliquotaIbsMun: ctx.take('ibsCbs.aliquotaIbsMun', part(ibsRates, /\/\s*(.+)$/), percentNumber),
          valorIbs: ctx.take('ibsCbs.valorIbs', ibs.under('Valor Total Apurado - IBS'), money),
          aliquotaCbs: ctx.take('ibsCbs.aliquotaCbs', ibs.under('Alíquota - CBS'), percentNumber),
          valorCbs: ctx.take('ibsCbs.valorCbs', ibs.under('Valor Total Apurado - CBS'), money),
          total: ctx.take('ibsCbs.total', valores.under('Total do IBS/CBS'), money),
          valorLiquidoComIbsCbs: ctx.take('ibsCbs.valorLiquidoComIbsCbs', valores.under('Valor Líquido da NFS-e + IBS/CBS'), money)
        },
    valores: valores.isEmpty
      ? null
      : {
          valorServico: ctx.take('valores.valorServico', valores.under(['Valor do Serviço', 'Valor da Operação / Serviço']), money),
          descontoCondicionado: ctx.take('valores.descontoCondicionado', valores.under('Desconto Condicionado'), money),
          descontoIncondicionado: ctx.take('valores.descontoIncondicionado', valores.under('Desconto Incondicionado'), money),
          issqnRetido: ctx.take('valores.issqnRetido', valores.under('ISSQN Retido'), money),
          totalRetencoes: ctx.take('valores.totalRetencoes', valores.under(['Total das Retenções Federais', 'Total das Retenções (ISSQN / Federais)']), money),
          valorLiquido: ctx.take('valores.valorLiquido', valores.under('Valor Líquido da NFS-e'), money)
        },
    canhoto: stub === undefined
      ? null
      : {
          numeroNfse: ctx.take('canhoto.numeroNfse', part(stub, /^(\S+)\s*\//), numberOf),
          chaveAcesso: ctx.take('canhoto.chaveAcesso', part(stub, /\/\s*(\S+)$/), keyOf)
        },
    homologacao
  }
}
