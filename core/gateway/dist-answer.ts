/**
 * Reads an `nfeDistDFeInteresse` answer as its bytes arrive, in one pass, and accepts only
 * what the contract allows where it allows it (issue 32): the SOAP envelope (1.2, or 1.1
 * for a Fault) with no header block (the service's WSDL defines none), a Body holding either
 * a Fault or `nfeDistDFeInteresseResponse` > `nfeDistDFeInteresseResult` > exactly one
 * `retDistDFeInt`, and inside it the sequence of retDistDFeInt_v1.01.xsd: each element once,
 * in order, text only, `loteDistDFeInt` with 1 to 50 `docZip`. Anything else (a second
 * retDistDFeInt, a repeated cStat, markup inside a docZip, an element the schema does not
 * place there) stops the reading with AnswerRefused: the caller answers 503, and stops
 * downloading the rest. Nothing is ever picked from an answer that breaks the rules.
 *
 * The parser is saxes (XML 1.0 well-formedness: one root, no duplicate attribute, only XML
 * characters); no DOCTYPE and no processing instruction (SOAP 1.2 Part 1 §5). Nesting is
 * bounded, so a Fault's free-form Detail cannot grow the element stack without limit.
 *
 * Speed: saxes reads text a character at a time, which for 28 MB of docZip costs seconds.
 * Inside a docZip the text is taken here instead, as long as it is plain Base64 (letters,
 * digits, `+/=`, spaces, tabs, line feeds), which holds no markup, no reference and nothing
 * XML would normalize; anything else in it goes back to saxes. This is safe because the
 * input reaches saxes cut after every `>`: a start tag always ends a write, so when saxes
 * reports `<docZip ...>` it has read nothing after it.
 */
import { SaxesParser } from 'saxes'
import type { SaxesTagNS } from 'saxes'
import { AnswerRefused, charsetOf, decoderFor, sniffEncoding } from './answer-encoding.js'
import type { TextDecoding } from './answer-encoding.js'

export const SOAP12_NS = 'http://www.w3.org/2003/05/soap-envelope'
export const SOAP11_NS = 'http://schemas.xmlsoap.org/soap/envelope/'
export const NFE_WSDL_NS = 'http://www.portalfiscal.inf.br/nfe/wsdl/NFeDistribuicaoDFe'
export const NFE_NS = 'http://www.portalfiscal.inf.br/nfe'

/** `loteDistDFeInt` holds at most 50 `docZip` (retDistDFeInt_v1.01.xsd, `<xs:sequence maxOccurs="50">`; NT 2014.002: up to 50 documents per distNSU answer). */
export const MAX_DOCUMENTS = 50
/** The deepest an answer nests: 7 levels down to a docZip; a Fault's Detail may go deeper, not past this. */
export const MAX_DEPTH = 32

export interface NfeDocument {
  /** The `NSU` attribute as sent; absent only in consChNFe answers, never in distNSU ones. */
  nsu: string | null
  schema: string
  /** Base64 of the gzip stream: the docZip element's text as the XML parser gives it. */
  docZip: string
}

export interface RetDistDFeInt {
  tpAmb: string
  verAplic: string
  cStat: string
  xMotivo: string
  dhResp: string
  ultNSU: string
  maxNSU: string
  documentos: NfeDocument[]
}

export interface SoapFault {
  /** `Sender`/`Receiver` (SOAP 1.2 Code/Value without prefix) or the SOAP 1.1 faultcode. */
  code: string
  reason: string
}

export type DistAnswer = { ret: RetDistDFeInt } | { fault: SoapFault }

/** What may stand inside an element. */
type Content =
  | { kind: 'sequence', rules: Rule[] }
  | { kind: 'choice', rules: Rule[] }
  | { kind: 'text', minChars: number, maxChars: number, pattern?: RegExp, closed: (text: string) => void }
  | { kind: 'skip' }

/** One element a sequence or choice allows, and how often. */
interface Rule {
  uri: string
  local: string
  min: number
  max: number
  content: Content
  /** Reads or checks the start tag's attributes; throws AnswerRefused. */
  opened?: (tag: SaxesTagNS) => void
}

interface Frame { name: string, content: Content, index: number, count: number, children: number, text: string }

const SKIP: Content = { kind: 'skip' }
const ELEMENT_SPACE = /^[ \t\r\n]*$/
/** xs:base64Binary's lexical form: the Base64 alphabet, padding and XML whitespace. */
const BASE64 = /^[A-Za-z0-9+/=\s]*$/
/** The first character that is not plain Base64 text (CR excluded: XML turns CR LF into LF). */
const NOT_PLAIN = /[^A-Za-z0-9+/= \t\n]/g

const rule = (uri: string, local: string, content: Content, min = 1, max = 1, opened?: (tag: SaxesTagNS) => void): Rule =>
  ({ uri, local, min, max, content, ...(opened === undefined ? {} : { opened }) })
const sequence = (...rules: Rule[]): Content => ({ kind: 'sequence', rules })
const text = (closed: (t: string) => void, maxChars: number, pattern?: RegExp, minChars = 1): Content =>
  ({ kind: 'text', minChars, maxChars, ...(pattern === undefined ? {} : { pattern }), closed })

function attribute (tag: SaxesTagNS, local: string): string | undefined {
  for (const a of Object.values(tag.attributes)) if (a.uri === '' && a.local === local) return a.value
  return undefined
}

export class DistAnswerReader {
  private readonly parser = new SaxesParser({ xmlns: true, position: false })
  private readonly stack: Frame[]
  private readonly charset: string | undefined
  private decoder: TextDecoding | undefined
  private head = Buffer.alloc(0)
  private ret: RetDistDFeInt | undefined
  private fault: Partial<SoapFault> | undefined
  /** Inside a docZip whose text has so far been plain Base64: the next text is taken here. */
  private base64Text = false

  /** `contentType`: the answer's Content-Type header (its charset counts). */
  constructor (contentType: string | undefined) {
    this.charset = charsetOf(contentType)
    this.stack = [{ name: '', content: { kind: 'choice', rules: [this.envelope(SOAP12_NS), this.envelope(SOAP11_NS)] }, index: 0, count: 0, children: 0, text: '' }]
    const p = this.parser
    p.on('error', (e) => { throw new AnswerRefused(`it is not well-formed XML (${e.message.replace(/\.$/, '')})`) })
    p.on('doctype', () => { throw new AnswerRefused('it has a DOCTYPE, which a SOAP message may not have') })
    p.on('processinginstruction', () => { throw new AnswerRefused('it has a processing instruction, which a SOAP message may not have') })
    p.on('opentag', (tag) => this.open(tag))
    p.on('text', (t) => this.text(t))
    p.on('cdata', (t) => this.text(t))
    p.on('closetag', () => this.close())
  }

  /** The next bytes of the answer. */
  write (bytes: Buffer): void {
    if (this.decoder === undefined) {
      this.head = Buffer.concat([this.head, bytes])
      const encoding = sniffEncoding(this.head, this.charset, false)
      if (encoding === undefined) return
      this.decoder = decoderFor(encoding)
      bytes = this.head
      this.head = Buffer.alloc(0)
    }
    this.feed(this.decoder.write(bytes))
  }

  /** Hands text to saxes cut after every `>`, and takes plain Base64 inside a docZip itself. */
  private feed (s: string): void {
    let at = 0
    while (at < s.length) {
      if (this.base64Text) {
        NOT_PLAIN.lastIndex = at
        const stop = NOT_PLAIN.exec(s)?.index ?? s.length
        if (stop > at) this.text(s.slice(at, stop))
        at = stop
        if (at === s.length) return
        // The end tag, or something saxes must judge: it reads the rest of this element.
        this.base64Text = false
      }
      const gt = s.indexOf('>', at)
      const end = gt < 0 ? s.length : gt + 1
      this.parser.write(s.slice(at, end))
      at = end
    }
  }

  /** The answer has ended: its retDistDFeInt or its Fault. */
  end (): DistAnswer {
    if (this.decoder === undefined) {
      this.decoder = decoderFor(sniffEncoding(this.head, this.charset, true)!)
      this.feed(this.decoder.write(this.head))
    }
    this.feed(this.decoder.end())
    this.parser.close()
    if (this.ret !== undefined) return { ret: this.ret }
    // The model admits a Body only with a complete retDistDFeInt or Fault in it.
    return { fault: { code: this.fault?.code ?? '', reason: this.fault?.reason ?? '' } }
  }

  private envelope (ns: string): Rule {
    const fault = ns === SOAP12_NS
      ? sequence(
        rule(ns, 'Code', sequence(rule(ns, 'Value', text((t) => { this.faultPart('code', t.replace(/^[^:]*:/, '').trim()) }, 256)), rule(ns, 'Subcode', SKIP, 0))),
        rule(ns, 'Reason', sequence(rule(ns, 'Text', text((t) => { this.faultPart('reason', t.trim()) }, 4096, undefined, 0), 1, Infinity))),
        rule(ns, 'Node', SKIP, 0), rule(ns, 'Role', SKIP, 0), rule(ns, 'Detail', SKIP, 0))
      : sequence(
        // SOAP 1.1 §4.4: the Fault's children are unqualified.
        rule('', 'faultcode', text((t) => { this.faultPart('code', t.replace(/^[^:]*:/, '').trim()) }, 256)),
        rule('', 'faultstring', text((t) => { this.faultPart('reason', t.trim()) }, 4096, undefined, 0)),
        rule('', 'faultactor', SKIP, 0), rule('', 'detail', SKIP, 0))
    const answer = rule(NFE_WSDL_NS, 'nfeDistDFeInteresseResponse', sequence(
      rule(NFE_WSDL_NS, 'nfeDistDFeInteresseResult', sequence(this.retDistDFeInt()))))
    return rule(ns, 'Envelope', sequence(
      // The service's WSDL defines no SOAP header: an empty Header is allowed, a header block is not.
      rule(ns, 'Header', sequence(), 0),
      // The request goes out in SOAP 1.2; a 1.1 envelope can only be a server's Fault.
      rule(ns, 'Body', { kind: 'choice', rules: [rule(ns, 'Fault', fault, 1, 1, () => { this.fault = {} }), ...(ns === SOAP12_NS ? [answer] : [])] })))
  }

  private faultPart (part: keyof SoapFault, value: string): void {
    // Reason may carry one Text per language: the first is read.
    if (this.fault !== undefined && this.fault[part] === undefined) this.fault[part] = value
  }

  /** retDistDFeInt_v1.01.xsd. Fields handed on or acted upon are checked against their types; verAplic and dhResp only bounded. */
  private retDistDFeInt (): Rule {
    const ret: RetDistDFeInt = { tpAmb: '', verAplic: '', cStat: '', xMotivo: '', dhResp: '', ultNSU: '', maxNSU: '', documentos: [] }
    const field = (local: keyof Omit<RetDistDFeInt, 'documentos'>, maxChars: number, pattern?: RegExp): Rule =>
      rule(NFE_NS, local, text((t) => { ret[local] = t }, maxChars, pattern))
    let doc: NfeDocument | undefined
    const docZip = rule(NFE_NS, 'docZip', text((t) => {
      doc!.docZip = t
      ret.documentos.push(doc!)
    }, Infinity, BASE64, 0), 1, MAX_DOCUMENTS, (tag) => {
      this.base64Text = true
      const nsu = attribute(tag, 'NSU')
      const schema = attribute(tag, 'schema')
      if (nsu !== undefined && !/^[0-9]{15}$/.test(nsu)) throw new AnswerRefused(`a docZip has NSU "${nsu.slice(0, 40)}", not 15 digits`)
      if (schema === undefined) throw new AnswerRefused('a docZip has no schema attribute, which retDistDFeInt_v1.01.xsd requires')
      doc = { nsu: nsu ?? null, schema, docZip: '' }
    })
    return rule(NFE_NS, 'retDistDFeInt', sequence(
      field('tpAmb', 1, /^[12]$/),
      field('verAplic', 20),
      field('cStat', 3, /^[0-9]{3}$/),
      field('xMotivo', 255),
      field('dhResp', 64),
      field('ultNSU', 15, /^[0-9]{15}$/),
      field('maxNSU', 15, /^[0-9]{15}$/),
      rule(NFE_NS, 'loteDistDFeInt', sequence(docZip), 0)
    ), 1, 1, (tag) => {
      const versao = attribute(tag, 'versao')
      if (versao !== '1.01') throw new AnswerRefused(`its retDistDFeInt has versao ${versao === undefined ? '(none)' : `"${versao.slice(0, 20)}"`}; the gateway reads layout 1.01`)
      this.ret = ret
    })
  }

  private open (tag: SaxesTagNS): void {
    const parent = this.stack[this.stack.length - 1]!
    if (this.stack.length > MAX_DEPTH) throw new AnswerRefused(`its elements nest deeper than ${MAX_DEPTH} levels`)
    parent.children++
    let content: Content = SKIP
    if (parent.content.kind === 'text') {
      throw new AnswerRefused(`${whose(parent)} holds an element (${tag.local}) where the schema allows only text`)
    } else if (parent.content.kind !== 'skip') {
      const r = parent.content.kind === 'sequence' ? this.next(parent, parent.content.rules, tag) : this.choose(parent, parent.content.rules, tag)
      r.opened?.(tag)
      content = r.content
    }
    this.stack.push({ name: tag.local, content, index: 0, count: 0, children: 0, text: '' })
  }

  private next (parent: Frame, rules: Rule[], tag: SaxesTagNS): Rule {
    while (parent.index < rules.length) {
      const r = rules[parent.index]!
      if (r.uri === tag.uri && r.local === tag.local) {
        if (parent.count >= r.max) {
          throw new AnswerRefused(r.max === 1
            ? `${whose(parent)} holds more than one ${r.local}`
            : `${whose(parent)} holds more than ${r.max} ${r.local} elements, the most the schema allows`)
        }
        parent.count++
        return r
      }
      if (parent.count < r.min) throw new AnswerRefused(`${whose(parent)} holds ${described(tag)} where the schema expects ${r.local}`)
      parent.index++
      parent.count = 0
    }
    throw new AnswerRefused(`${whose(parent)} holds ${described(tag)}, which the schema does not allow there`)
  }

  private choose (parent: Frame, rules: Rule[], tag: SaxesTagNS): Rule {
    const r = rules.find((x) => x.uri === tag.uri && x.local === tag.local)
    if (r === undefined) throw new AnswerRefused(`${whose(parent)} holds ${described(tag)}, which the schema does not allow there`)
    if (parent.children > 1) throw new AnswerRefused(`${whose(parent)} holds more than one element`)
    return r
  }

  private text (t: string): void {
    const top = this.stack[this.stack.length - 1]!
    const content = top.content
    if (content.kind === 'text') {
      top.text += t
      if (top.text.length > content.maxChars) throw new AnswerRefused(`${whose(top)} is longer than the ${content.maxChars} characters the schema allows`)
    } else if (content.kind !== 'skip' && !ELEMENT_SPACE.test(t)) {
      throw new AnswerRefused(`${whose(top)} holds text where the schema allows only elements`)
    }
  }

  private close (): void {
    this.base64Text = false
    const frame = this.stack.pop()!
    const content = frame.content
    if (content.kind === 'text') {
      if (frame.text.length < content.minChars) throw new AnswerRefused(`${whose(frame)} is empty`)
      if (content.pattern !== undefined && !content.pattern.test(frame.text)) {
        throw new AnswerRefused(`${whose(frame)} is "${frame.text.slice(0, 40)}${frame.text.length > 40 ? '…' : ''}", which its schema type does not allow`)
      }
      content.closed(frame.text)
    } else if (content.kind === 'sequence') {
      for (let i = frame.index; i < content.rules.length; i++) {
        const r = content.rules[i]!
        if ((i === frame.index ? frame.count : 0) < r.min) throw new AnswerRefused(`${whose(frame)} has no ${r.local}`)
      }
    } else if (content.kind === 'choice' && frame.children === 0) {
      throw new AnswerRefused(`${whose(frame)} is empty`)
    }
  }
}

/** How a message names an element: "its retDistDFeInt", or "it" for the document itself. */
function whose (frame: Frame): string {
  return frame.name === '' ? 'it' : `its ${frame.name}`
}

function described (tag: SaxesTagNS): string {
  return tag.uri === '' ? `${tag.local} (no namespace)` : `${tag.local} (namespace ${tag.uri})`
}

/** Reads a whole answer at once (tests, and callers that already hold it). Throws AnswerRefused. */
export function parseDistAnswer (xml: string | Buffer, contentType?: string): DistAnswer {
  const reader = new DistAnswerReader(contentType)
  reader.write(typeof xml === 'string' ? Buffer.from(xml, 'utf8') : xml)
  return reader.end()
}
