/**
 * Reads NFeRecepcaoEvento4's answer: SOAP 1.2 (or 1.1 for a Fault) `Envelope` > `Body` >
 * `nfeResultMsg` > one `retEnvEvento` 1.00 (batch level: idLote, tpAmb, verAplic, cOrgao, cStat,
 * xMotivo; then 0 to 20 `retEvento`, each with its `infEvento` of per-event results), or a
 * `Fault`. The answer is untrusted: no DOCTYPE, no processing instruction, well-formed, at most
 * 1 MiB (20 results are a few KB), and the fields the gateway acts on checked against their types
 * (TRetEnvEvento / TretEvento of leiauteConfRecebto_v1.00.xsd); anything else is AnswerRefused.
 * Each retEvento is also kept as the exact text the authority sent, for procEventoNFe (a signature
 * the authority may put on it stays verifiable).
 */
import { SaxesParser } from 'saxes'
import type { SaxesTagNS } from 'saxes'
import { AnswerRefused } from './answer-encoding.js'
import { EVENTO_WSDL_NS, NFE_NS, SOAP12_NS } from './manifestacao-xml.js'

const SOAP11_NS = 'http://schemas.xmlsoap.org/soap/envelope/'
export const MAX_ANSWER_BYTES = 1024 * 1024
const MAX_DEPTH = 32

export interface RetEvento {
  cStat: string
  xMotivo: string
  chNFe: string | undefined
  tpEvento: string | undefined
  nSeqEvento: string | undefined
  dhRegEvento: string | undefined
  nProt: string | undefined
  /** The retEvento element as XML text, with its namespace declared: what procEventoNFe carries. */
  xml: string
}

export interface RetEnvEvento {
  idLote: string
  tpAmb: string
  cStat: string
  xMotivo: string
  eventos: RetEvento[]
}

export type EventoAnswer = { ret: RetEnvEvento } | { fault: { code: string, reason: string } }

interface El { uri: string, local: string, prefix: string, attrs: Record<string, string>, children: El[], text: string, start: number, end: number }

/** The answer as a tree (saxes: well-formed XML 1.0, namespaces), each element with its place in the text. */
function parseTree (xml: string): El {
  const parser = new SaxesParser({ xmlns: true })
  const stack: El[] = []
  let root: El | undefined
  parser.on('opentag', (tag: SaxesTagNS) => {
    if (stack.length >= MAX_DEPTH) throw new AnswerRefused(`elements nested deeper than ${MAX_DEPTH}`)
    const attrs: Record<string, string> = {}
    for (const a of Object.values(tag.attributes)) if (a.prefix !== 'xmlns' && a.name !== 'xmlns') attrs[a.local] = a.value
    // Attribute values cannot hold a literal '<', so the last one before the tag's end is its start.
    const el: El = { uri: tag.uri, local: tag.local, prefix: tag.prefix, attrs, children: [], text: '', start: xml.lastIndexOf('<', parser.position - 1), end: -1 }
    const parent = stack[stack.length - 1]
    if (parent !== undefined) {
      if (parent.text.trim() !== '') throw new AnswerRefused(`text beside elements inside <${parent.local}>`)
      parent.children.push(el)
    }
    if (root !== undefined && parent === undefined) throw new AnswerRefused('more than one root element')
    root ??= el
    stack.push(el)
  })
  parser.on('text', (t) => {
    const top = stack[stack.length - 1]
    if (top === undefined) return
    if (top.children.length > 0 && t.trim() !== '') throw new AnswerRefused(`text beside elements inside <${top.local}>`)
    top.text += t
  })
  parser.on('cdata', () => { throw new AnswerRefused('CDATA') })
  parser.on('processinginstruction', () => { throw new AnswerRefused('a processing instruction') })
  parser.on('doctype', () => { throw new AnswerRefused('a DOCTYPE (no DTD is allowed in SOAP)') })
  parser.on('closetag', () => { stack.pop()!.end = parser.position })
  try {
    parser.write(xml).close()
  } catch (e) {
    if (e instanceof AnswerRefused) throw e
    throw new AnswerRefused(`XML that is not well-formed (${(e as Error).message.split('\n')[0]!.slice(0, 120)})`)
  }
  if (root === undefined) throw new AnswerRefused('no root element')
  return root
}

function children (el: El): El[] {
  return el.children
}

function one (parent: El, uri: string, local: string): El {
  const found = parent.children.filter((c) => c.uri === uri && c.local === local)
  if (found.length !== 1) throw new AnswerRefused(`<${parent.local}> holds ${found.length} <${local}> (exactly one expected)`)
  return found[0]!
}

/** The text of a child of the NF-e namespace, checked against its type; undefined when absent and optional. */
function field (parent: El, local: string, pattern: RegExp, required: true): string
function field (parent: El, local: string, pattern: RegExp, required: false): string | undefined
function field (parent: El, local: string, pattern: RegExp, required: boolean): string | undefined {
  const found = children(parent).filter((c) => c.local === local)
  if (found.length === 0) {
    if (required) throw new AnswerRefused(`<${parent.local}> has no <${local}>`)
    return undefined
  }
  const el = found[0]!
  if (found.length > 1 || el.uri !== NFE_NS || el.children.length > 0) throw new AnswerRefused(`<${local}> is repeated, outside the NF-e namespace or not text`)
  const text = el.text
  if (!pattern.test(text)) throw new AnswerRefused(`<${local}> "${text.slice(0, 40)}" is outside its type`)
  return text
}

const CSTAT = /^[0-9]{3}$/
const XMOTIVO = /^[\s\S]{1,255}$/

export function parseEventoAnswer (xml: string): EventoAnswer {
  if (Buffer.byteLength(xml, 'utf8') > MAX_ANSWER_BYTES) throw new AnswerRefused('an answer larger than 1 MiB')
  if (/<!DOCTYPE|<!ENTITY/i.test(xml)) throw new AnswerRefused('a DOCTYPE (no DTD is allowed in SOAP)')
  const envelope = parseTree(xml)
  const soap = envelope.uri
  if (envelope.local !== 'Envelope' || (soap !== SOAP12_NS && soap !== SOAP11_NS)) throw new AnswerRefused('the root is not a SOAP Envelope')
  const parts = children(envelope)
  const header = parts.find((c) => c.local === 'Header' && c.uri === soap)
  if (header !== undefined && children(header).length > 0) throw new AnswerRefused('a SOAP header block (the service defines none)')
  const body = one(envelope, soap, 'Body')
  const content = children(body)
  if (content.length !== 1) throw new AnswerRefused(`the SOAP Body holds ${content.length} elements`)
  const first = content[0]!
  if (first.local === 'Fault' && first.uri === soap) {
    const find = (el: El, local: string): El | undefined => el.local === local ? el : el.children.map((c) => find(c, local)).find((x) => x !== undefined)
    const code = find(first, soap === SOAP12_NS ? 'Value' : 'faultcode')?.text ?? ''
    const reason = find(first, soap === SOAP12_NS ? 'Text' : 'faultstring')?.text ?? ''
    return { fault: { code: code.replace(/^[^:]*:/, '').slice(0, 60), reason: reason.slice(0, 500) } }
  }
  if (soap !== SOAP12_NS) throw new AnswerRefused('a SOAP 1.1 answer to a SOAP 1.2 request')
  if (first.local !== 'nfeResultMsg' || first.uri !== EVENTO_WSDL_NS) throw new AnswerRefused(`the Body holds <${first.local}>, not nfeResultMsg`)
  const ret = one(first, NFE_NS, 'retEnvEvento')
  if (ret.attrs.versao !== '1.00') throw new AnswerRefused('retEnvEvento is not versao 1.00')
  const retEventos = children(ret).filter((c) => c.local === 'retEvento')
  if (retEventos.length > 20) throw new AnswerRefused(`${retEventos.length} retEvento (at most 20)`)
  return {
    ret: {
      idLote: field(ret, 'idLote', /^[0-9]{1,15}$/, true),
      tpAmb: field(ret, 'tpAmb', /^[12]$/, true),
      cStat: field(ret, 'cStat', CSTAT, true),
      xMotivo: field(ret, 'xMotivo', XMOTIVO, true),
      eventos: retEventos.map((r) => {
        // Kept as text inside procEventoNFe, which declares the NF-e namespace as its default: so no prefixes.
        if (r.uri !== NFE_NS || r.prefix !== '' || r.children.some((c) => c.uri === NFE_NS && c.prefix !== '')) throw new AnswerRefused('retEvento outside the NF-e default namespace')
        const inf = one(r, NFE_NS, 'infEvento')
        return {
          cStat: field(inf, 'cStat', CSTAT, true),
          xMotivo: field(inf, 'xMotivo', XMOTIVO, true),
          chNFe: field(inf, 'chNFe', /^[0-9]{44}$/, false),
          tpEvento: field(inf, 'tpEvento', /^[0-9]{6}$/, false),
          nSeqEvento: field(inf, 'nSeqEvento', /^[0-9]{1,2}$/, false),
          dhRegEvento: field(inf, 'dhRegEvento', /^[0-9T:+-]{19,25}$/, false),
          nProt: field(inf, 'nProt', /^[0-9]{15}$/, false),
          xml: xml.slice(r.start, r.end)
        }
      })
    }
  }
}
