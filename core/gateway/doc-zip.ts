/**
 * Opens one distributed document (issue 35, item 2): an NF-e `docZip` or an ADN item's
 * `ArquivoXml`, both Base64 of a gzip stream of one XML document, decoded within bounds,
 * then read once with saxes to take its key fields. Nothing here trusts the authority:
 * - the Base64 text must be the strict alphabet (XML whitespace allowed), at most
 *   MAX_ZIPPED_BYTES once decoded;
 * - gunzip stops at MAX_XML_BYTES (zlib's maxOutputLength: a bomb is never inflated past
 *   it), and the XML may be at most MAX_RATIO times the compressed size;
 * - the XML must be well-formed, UTF-8, without DOCTYPE (so no entity is ever defined or
 *   expanded), without processing instructions, nested at most MAX_DEPTH deep.
 * Any of these failing throws DocumentRefused with one of DOCUMENT_REFUSALS; the caller
 * stores nothing of the answer it came in.
 *
 * The field paths and their sources are in docs/gateway.md, "Documents kept".
 */
import { gunzipSync } from 'node:zlib'
import { SaxesParser } from 'saxes'
import type { SaxesTagNS } from 'saxes'

export const NFE_NS = 'http://www.portalfiscal.inf.br/nfe'
export const NFSE_NS = 'http://www.sped.fazenda.gov.br/nfse'

/** A docZip of a large NF-e (990 items) is a few hundred KiB compressed; 1 MiB leaves room. */
export const MAX_ZIPPED_BYTES = 1024 * 1024
/** The biggest NF-e XML (990 items, every group) stays under 2 MiB; twice that is the cap. */
export const MAX_XML_BYTES = 4 * 1024 * 1024
/** Real NF-e XML compresses 5 to 20 times; a ratio past this is a bomb, not a document. */
export const MAX_RATIO = 100
/** An NF-e nests about 10 deep, an event 6; past this it is not one of them. */
export const MAX_DEPTH = 32

export const DOCUMENT_REFUSALS = {
  DOCZIP_BASE64: 'is not valid Base64',
  DOCZIP_TOO_LARGE: 'is larger than the gateway accepts',
  DOCZIP_BOMB: 'inflates past the gateway\'s bounds (size or compression ratio)',
  DOCZIP_NOT_GZIP: 'is not a gzip stream',
  DOCZIP_DTD: 'holds a DOCTYPE, which a fiscal document never has',
  DOCZIP_XML: 'is not well-formed XML',
  DOCZIP_UNKNOWN: 'is not a document the gateway keeps'
} as const
export type DocumentRefusal = keyof typeof DOCUMENT_REFUSALS

export class DocumentRefused extends Error {
  constructor (readonly code: DocumentRefusal, readonly why: string) {
    super(`${DOCUMENT_REFUSALS[code]}${why === '' ? '' : ` (${why})`}`)
    this.name = 'DocumentRefused'
  }
}

export type DocumentKind = 'resNFe' | 'procNFe' | 'resEvento' | 'procEventoNFe' | 'NFS-e' | 'eventoNFS-e'

/** What is kept of one document beside its XML. Money is the XML's decimal text (exact), never a float. */
export interface DocumentFacts {
  kind: DocumentKind
  chave: string
  emitenteCnpj: string | null
  emitenteNome: string | null
  destinatarioDoc: string | null
  destinatarioNome: string | null
  /** The date-time as written (with its offset), or a bare date (layout 2.00 `dEmi`); null when absent or malformed. */
  dataEmissao: string | null
  /** `1234.56`; null when the document carries no total (events). */
  valorTotal: string | null
  /** autorizada | denegada | cancelada for documents; registrado for events. */
  situacao: 'autorizada' | 'denegada' | 'cancelada' | 'registrado'
  /** Events: the 6-digit code; `nSeqEvento`; whether it cancels `chave` (and was registered). */
  evento: { tipo: string, seq: string, cancela: boolean } | null
}

export interface OpenedDocument { xml: string, facts: DocumentFacts }

const BASE64 = /^[A-Za-z0-9+/\s]*={0,2}\s*$/
/** With its offset (TDateTimeUTC): a date-time without one would be read in the database session's zone. */
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,6})?(?:Z|[+-]\d{2}:\d{2})$/
const DECIMAL = /^\d{1,15}(?:\.\d{1,2})?$/
const DIGITS = /^[0-9A-Z]{11,14}$/
/** NF-e events that cancel the note (110111 Cancelamento; 110112 Cancelamento por substituição, NFC-e). */
export const NFE_CANCEL_EVENTS = new Set(['110111', '110112'])
/** NFS-e events that cancel it: 101101 Cancelamento, 105102 por substituição, 105104 deferido por análise fiscal, 305101 por ofício. */
export const NFSE_CANCEL_EVENTS = new Set(['101101', '105102', '105104', '305101'])
/** ADN `TipoEvento` names of the same events (the names match the codes' titles; the mapping is not in the OpenAPI). */
const ADN_CANCEL_NAMES: Record<string, string> = {
  CANCELAMENTO: '101101', CANCELAMENTO_POR_SUBSTITUICAO: '105102', CANCELAMENTO_DEFERIDO_ANALISE_FISCAL: '105104', CANCELAMENTO_POR_OFICIO: '305101'
}
/** retEvento cStat of a registered event that may be applied: 135 registered and linked, 155 late cancellation. */
const APPLIED_EVENT_CSTAT = new Set(['135', '155'])

/** Base64 → gzip → UTF-8 XML, within the bounds above. */
export function inflateDocument (base64: string): string {
  if (base64.length > Math.ceil(MAX_ZIPPED_BYTES / 3) * 4 * 1.1) throw new DocumentRefused('DOCZIP_TOO_LARGE', `${base64.length} Base64 characters`)
  if (!BASE64.test(base64)) throw new DocumentRefused('DOCZIP_BASE64', 'a character outside the Base64 alphabet')
  const compact = base64.replace(/\s+/g, '')
  if (compact.length % 4 !== 0 || compact.length === 0) throw new DocumentRefused('DOCZIP_BASE64', 'its length is not a multiple of 4')
  const zipped = Buffer.from(compact, 'base64')
  if (zipped.length > MAX_ZIPPED_BYTES) throw new DocumentRefused('DOCZIP_TOO_LARGE', `${zipped.length} bytes compressed`)
  if (zipped[0] !== 0x1f || zipped[1] !== 0x8b) throw new DocumentRefused('DOCZIP_NOT_GZIP', 'no gzip header')
  const cap = Math.min(MAX_XML_BYTES, zipped.length * MAX_RATIO)
  let xml: Buffer
  try {
    xml = gunzipSync(zipped, { maxOutputLength: cap + 1 })
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE' || e instanceof RangeError) {
      throw new DocumentRefused('DOCZIP_BOMB', `more than ${cap} bytes from ${zipped.length}`)
    }
    throw new DocumentRefused('DOCZIP_NOT_GZIP', (e as Error).message)
  }
  if (xml.length > cap) throw new DocumentRefused('DOCZIP_BOMB', `more than ${cap} bytes from ${zipped.length}`)
  const text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false })
  try {
    return text.decode(xml)
  } catch {
    throw new DocumentRefused('DOCZIP_XML', 'not UTF-8')
  }
}

interface Reading {
  root: string
  ns: string
  /** Element path below the root, local names joined by '/'. */
  values: Map<string, string>
  attrs: Map<string, string>
}

/** One saxes pass: every leaf text by its path (first occurrence), and a few attributes. */
function readXml (xml: string): Reading {
  const parser = new SaxesParser({ xmlns: true, position: false })
  const path: string[] = []
  const values = new Map<string, string>()
  const attrs = new Map<string, string>()
  let root = ''
  let ns = ''
  let text = ''
  parser.on('error', (e) => { throw new DocumentRefused('DOCZIP_XML', e.message.replace(/\.$/, '')) })
  parser.on('doctype', () => { throw new DocumentRefused('DOCZIP_DTD', '') })
  parser.on('processinginstruction', () => { throw new DocumentRefused('DOCZIP_XML', 'a processing instruction') })
  parser.on('opentag', (tag: SaxesTagNS) => {
    if (path.length === 0 && root !== '') throw new DocumentRefused('DOCZIP_XML', 'more than one root')
    if (path.length === 0) { root = tag.local; ns = tag.uri }
    path.push(tag.local)
    if (path.length > MAX_DEPTH) throw new DocumentRefused('DOCZIP_XML', `nested deeper than ${MAX_DEPTH}`)
    const here = path.slice(1).join('/')
    for (const a of Object.values(tag.attributes)) {
      if (a.uri === '' && (a.local === 'Id' || a.local === 'versao')) {
        const key = `${here}@${a.local}`
        if (!attrs.has(key)) attrs.set(key, a.value)
      }
    }
    text = ''
  })
  parser.on('text', (t) => { text += t })
  parser.on('closetag', () => {
    const here = path.slice(1).join('/')
    if (here !== '' && !values.has(here) && text.trim() !== '') values.set(here, text.trim())
    text = ''
    path.pop()
  })
  parser.write(xml).close()
  return { root, ns, values, attrs }
}

const dateTime = (v: string | undefined): string | null => v !== undefined && DATE_TIME.test(v) && !Number.isNaN(Date.parse(v)) ? v : null
const money = (v: string | undefined): string | null => v !== undefined && DECIMAL.test(v) ? v : null
const cnpjOrCpf = (r: Reading, base: string): string | null => {
  const v = r.values.get(`${base}CNPJ`) ?? r.values.get(`${base}CPF`) ?? null
  return v !== null && DIGITS.test(v) ? v : null
}
const name = (v: string | undefined): string | null => v === undefined ? null : v.slice(0, 200)

/** Status of a processed NF-e from its protocol's cStat (MOC: 100/150 authorised, 110/301/302/303 denied). */
function protocolStatus (cStat: string | undefined): 'autorizada' | 'denegada' {
  return cStat !== undefined && ['110', '301', '302', '303'].includes(cStat) ? 'denegada' : 'autorizada'
}

/** An NF-e `docZip`: its schema attribute says which document it is; the root must agree. */
export function openNfeDocument (docZip: string, schema: string): OpenedDocument {
  const xml = inflateDocument(docZip)
  const r = readXml(xml)
  const prefix = schema.split('_v')[0]
  if (r.ns !== NFE_NS) throw new DocumentRefused('DOCZIP_UNKNOWN', `root ${r.root} outside the NF-e namespace`)
  const key = (v: string | undefined): string => {
    if (v === undefined || !/^\d{44}$/.test(v)) throw new DocumentRefused('DOCZIP_UNKNOWN', 'no 44-digit access key')
    return v
  }
  if (prefix === 'resNFe' && r.root === 'resNFe') {
    const cSit = r.values.get('cSitNFe')
    return {
      xml,
      facts: {
        kind: 'resNFe',
        chave: key(r.values.get('chNFe')),
        emitenteCnpj: cnpjOrCpf(r, ''),
        emitenteNome: name(r.values.get('xNome')),
        destinatarioDoc: null,
        destinatarioNome: null,
        dataEmissao: dateTime(r.values.get('dhEmi')),
        valorTotal: money(r.values.get('vNF')),
        situacao: cSit === '2' ? 'denegada' : cSit === '3' ? 'cancelada' : 'autorizada',
        evento: null
      }
    }
  }
  if (prefix === 'procNFe' && r.root === 'nfeProc') {
    const inf = 'NFe/infNFe/'
    const fromId = r.attrs.get('NFe/infNFe@Id')?.replace(/^NFe/, '')
    return {
      xml,
      facts: {
        kind: 'procNFe',
        chave: key(r.values.get('protNFe/infProt/chNFe') ?? fromId),
        emitenteCnpj: cnpjOrCpf(r, `${inf}emit/`),
        emitenteNome: name(r.values.get(`${inf}emit/xNome`)),
        destinatarioDoc: cnpjOrCpf(r, `${inf}dest/`) ?? r.values.get(`${inf}dest/idEstrangeiro`) ?? null,
        destinatarioNome: name(r.values.get(`${inf}dest/xNome`)),
        dataEmissao: dateTime(r.values.get(`${inf}ide/dhEmi`)) ?? (/^\d{4}-\d{2}-\d{2}$/.test(r.values.get(`${inf}ide/dEmi`) ?? '') ? r.values.get(`${inf}ide/dEmi`)! : null),
        valorTotal: money(r.values.get(`${inf}total/ICMSTot/vNF`)),
        situacao: protocolStatus(r.values.get('protNFe/infProt/cStat')),
        evento: null
      }
    }
  }
  if (prefix === 'resEvento' && r.root === 'resEvento') {
    const tipo = r.values.get('tpEvento') ?? ''
    return { xml, facts: eventFacts('resEvento', key(r.values.get('chNFe')), r, '', tipo, NFE_CANCEL_EVENTS.has(tipo)) }
  }
  if (prefix === 'procEventoNFe' && r.root === 'procEventoNFe') {
    const tipo = r.values.get('evento/infEvento/tpEvento') ?? ''
    const registered = APPLIED_EVENT_CSTAT.has(r.values.get('retEvento/infEvento/cStat') ?? '')
    return { xml, facts: eventFacts('procEventoNFe', key(r.values.get('evento/infEvento/chNFe')), r, 'evento/infEvento/', tipo, registered && NFE_CANCEL_EVENTS.has(tipo)) }
  }
  throw new DocumentRefused('DOCZIP_UNKNOWN', `schema ${schema.slice(0, 40)} with root ${r.root}`)
}

function eventFacts (kind: DocumentKind, chave: string, r: Reading, base: string, tipo: string, cancela: boolean): DocumentFacts {
  if (!/^\d{6}$/.test(tipo)) throw new DocumentRefused('DOCZIP_UNKNOWN', 'an event without a 6-digit tpEvento')
  const seq = r.values.get(`${base}nSeqEvento`) ?? '1'
  return {
    kind,
    chave,
    emitenteCnpj: cnpjOrCpf(r, base),
    emitenteNome: null,
    destinatarioDoc: null,
    destinatarioNome: null,
    dataEmissao: dateTime(r.values.get(`${base}dhEvento`)),
    valorTotal: null,
    situacao: 'registrado',
    evento: { tipo, seq: /^\d{1,2}$/.test(seq) ? seq : '1', cancela }
  }
}

/** An ADN item (`LoteDFe[]`): `TipoDocumento` NFSE or EVENTO, `ChaveAcesso` 50 digits, `ArquivoXml`. */
export function openNfseDocument (adnItem: object): OpenedDocument {
  const item = adnItem as Record<string, unknown>
  const tipoDocumento = item.TipoDocumento
  const chave = item.ChaveAcesso
  if (typeof item.ArquivoXml !== 'string') throw new DocumentRefused('DOCZIP_BASE64', 'ArquivoXml is not a string')
  if (typeof chave !== 'string' || !/^\d{50}$/.test(chave)) throw new DocumentRefused('DOCZIP_UNKNOWN', 'no 50-digit ChaveAcesso')
  const xml = inflateDocument(item.ArquivoXml)
  const r = readXml(xml)
  if (r.ns !== NFSE_NS) throw new DocumentRefused('DOCZIP_UNKNOWN', `root ${r.root} outside the NFS-e namespace`)
  if (tipoDocumento === 'NFSE' && r.root === 'NFSe') {
    const inf = 'infNFSe/'
    const dps = `${inf}DPS/infDPS/`
    return {
      xml,
      facts: {
        kind: 'NFS-e',
        chave,
        emitenteCnpj: cnpjOrCpf(r, `${inf}emit/`),
        emitenteNome: name(r.values.get(`${inf}emit/xNome`)),
        destinatarioDoc: cnpjOrCpf(r, `${dps}toma/`),
        destinatarioNome: name(r.values.get(`${dps}toma/xNome`)),
        dataEmissao: dateTime(r.values.get(`${dps}dhEmi`) ?? r.values.get(`${inf}dhProc`)),
        valorTotal: money(r.values.get(`${inf}valores/vLiq`) ?? r.values.get(`${dps}valores/vServPrest/vServ`)),
        situacao: 'autorizada',
        evento: null
      }
    }
  }
  if (tipoDocumento === 'EVENTO' && r.root === 'evento') {
    // The code: the infPedReg child named e<code> (NFS-e event XSD); else the ADN's TipoEvento name.
    let tipo: string | undefined
    for (const path of r.values.keys()) {
      const m = /(?:^|\/)e(\d{6})(?:\/|$)/.exec(path)
      if (m !== null) { tipo = m[1]; break }
    }
    tipo ??= typeof item.TipoEvento === 'string' ? ADN_CANCEL_NAMES[item.TipoEvento] : undefined
    tipo ??= '000000'
    return {
      xml,
      facts: {
        kind: 'eventoNFS-e',
        chave,
        emitenteCnpj: null,
        emitenteNome: null,
        destinatarioDoc: null,
        destinatarioNome: null,
        dataEmissao: typeof item.DataHoraGeracao === 'string' ? dateTime(item.DataHoraGeracao) : null,
        valorTotal: null,
        situacao: 'registrado',
        evento: { tipo, seq: '1', cancela: NFSE_CANCEL_EVENTS.has(tipo) }
      }
    }
  }
  throw new DocumentRefused('DOCZIP_UNKNOWN', `TipoDocumento ${String(tipoDocumento).slice(0, 20)} with root ${r.root}`)
}
