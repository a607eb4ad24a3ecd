/**
 * A byte scanner for the small parts of a package (relationships, workbook, styles) that
 * hands over only the elements near the root, namespaces resolved, and keeps nothing of
 * the rest. It replaced a general element walker (sax) that built an object for every
 * element: a 50 KB upload whose styles part inflated to 19 MB of `<xf/>` cost 7 s of CPU
 * before the first row was read. Parts arrive in chunks (the inflater's), so memory is the
 * chunk and the longest markup construct, not the part.
 */
import { EngineError } from '../errors.js'
import { BANG, GT, LT, QMARK, SLASH, decodeText } from './xml-text.js'

const XML_NAMESPACE = 'http://www.w3.org/XML/1998/namespace'
const QUOTE = 0x22
const APOS = 0x27
const EQUALS = 0x3d
/**
 * The longest tag, comment or processing instruction accepted. The attributes these parts
 * carry are short (Excel caps a format code and a sheet name at 255 characters); a construct
 * this long is not a workbook's, and carrying it from chunk to chunk would cost its length
 * again for every chunk.
 */
export const MAX_CONSTRUCT_BYTES = 1 << 20
/** Deeper than any of these parts nests (styles reach 5 levels, extension lists a few more). */
export const MAX_DEPTH = 256

export interface ShallowAttribute { prefix: string, local: string, uri: string, value: string }

export interface ShallowElement {
  /** 1 for the root. */
  depth: number
  prefix: string
  local: string
  /** Namespace URI ('' for none; an undeclared prefix gets a URI no namespace has). */
  uri: string
  /** Its ancestors near the root, outermost first (length depth - 1). */
  ancestors: readonly ShallowElement[]
  attributes: readonly ShallowAttribute[]
}

interface Frame { name: string, element?: ShallowElement, declarations?: Map<string, string> | undefined }

/**
 * What the caller does with an element: `false` for one whose descendants it does not want
 * (an extension list, a collection it does not read), so they are only counted.
 */
export type OnOpen = (el: ShallowElement) => boolean

/**
 * Calls `onOpen` for every start tag at depth `maxDepth` or less that lies in no element the
 * caller declined, and checks the whole part is well-formed enough to trust (tags closed in
 * order, one root, no DTD). Other elements are only counted: their attributes and namespace
 * declarations are never parsed.
 */
export class ShallowXmlScanner {
  private pending: Buffer | undefined
  private readonly frames: Frame[] = []
  private rootSeen = false
  private ended = false
  /** Depth of the outermost element the caller declined (its descendants are only counted). */
  private declinedDepth = Infinity

  constructor (private readonly part: string, private readonly maxDepth: number, private readonly onOpen: OnOpen) {}

  /** Scans a chunk; the chunk may be reused by its owner afterwards (what is kept is copied). */
  push (chunk: Buffer): void {
    const data = this.pending === undefined ? chunk : Buffer.concat([this.pending, chunk])
    this.pending = undefined
    const stop = this.scan(data)
    if (stop < data.length) {
      if (data.length - stop > MAX_CONSTRUCT_BYTES) this.corrupt(`has a tag or comment longer than ${MAX_CONSTRUCT_BYTES >> 20} MiB, which no workbook writes`)
      this.pending = Buffer.from(data.subarray(stop))
    }
  }

  end (): void {
    if (this.ended) return
    this.ended = true
    if (this.pending !== undefined || this.frames.length > 0 || !this.rootSeen) this.corrupt('is not well-formed XML (it ends inside an element)')
  }

  /** Scans complete constructs; returns where the first incomplete one starts. */
  private scan (data: Buffer): number {
    let pos = 0
    const n = data.length
    while (pos < n) {
      const lt = data.indexOf(LT, pos)
      if (lt === -1) return n
      if (lt + 1 >= n) return lt
      const next = data[lt + 1]!
      if (next === QMARK) {
        const close = data.indexOf('?>', lt + 2)
        if (close === -1) return lt
        pos = close + 2
      } else if (next === BANG) {
        const end = this.special(data, lt)
        if (end === -1) return lt
        pos = end
      } else if (next === SLASH) {
        const gt = data.indexOf(GT, lt + 2)
        if (gt === -1) return lt
        this.close(data.toString('latin1', lt + 2, gt).trimEnd())
        pos = gt + 1
      } else {
        const gt = tagEnd(data, lt + 1)
        if (gt === -1) return lt
        this.open(data, lt + 1, gt)
        pos = gt + 1
      }
    }
    return n
  }

  /** `<!--`, `<![CDATA[` or a declaration at `lt`: returns the index after it, -1 if incomplete. */
  private special (data: Buffer, lt: number): number {
    if (data.length < lt + 9) return -1
    const head = data.toString('latin1', lt + 2, lt + 9)
    if (head.startsWith('--')) {
      const close = data.indexOf('-->', lt + 4)
      return close === -1 ? -1 : close + 3
    }
    if (head === '[CDATA[') {
      if (this.frames.length === 0) this.corrupt('is not well-formed XML (character data outside the root element)')
      const close = data.indexOf(']]>', lt + 9)
      return close === -1 ? -1 : close + 3
    }
    const upper = head.toUpperCase()
    if (upper.startsWith('DOCTYPE') || upper.startsWith('ENTITY')) {
      throw new EngineError('XLSX_DTD_FORBIDDEN', `The part "${this.part}" declares a DTD or XML entities, which workbooks never need; the file is refused.`)
    }
    return this.corrupt('is not well-formed XML (an unknown declaration)')
  }

  private open (data: Buffer, start: number, gt: number): void {
    const selfClosing = data[gt - 1] === SLASH
    const tagStop = selfClosing ? gt - 1 : gt
    let nameStop = start
    while (nameStop < tagStop && !isSpace(data[nameStop]!)) nameStop++
    if (nameStop === start) this.corrupt('is not well-formed XML (a tag without a name)')
    const depth = this.frames.length + 1
    if (depth === 1) {
      if (this.rootSeen) this.corrupt('is not well-formed XML (more than one root element)')
      this.rootSeen = true
    }
    if (depth > MAX_DEPTH) this.corrupt(`nests elements more than ${MAX_DEPTH} deep, which no workbook does`)
    if (depth > this.maxDepth || depth > this.declinedDepth) {
      if (!selfClosing) this.frames.push({ name: data.toString('latin1', start, nameStop) })
      return
    }
    const name = data.toString('latin1', start, nameStop)
    const raw = readAttributes(data, nameStop, tagStop, this.part)
    let declarations: Map<string, string> | undefined
    for (const a of raw) {
      if (a.name === 'xmlns') (declarations ??= new Map()).set('', a.value)
      else if (a.name.startsWith('xmlns:')) (declarations ??= new Map()).set(a.name.slice(6), a.value)
    }
    const frame: Frame = { name, declarations }
    const [prefix, local] = splitName(data.toString('utf8', start, nameStop))
    const ancestors = this.frames.slice(0, depth - 1).map((f) => f.element!)
    const resolve = (p: string, isAttribute: boolean): string => {
      if (p === 'xml') return XML_NAMESPACE
      // Attributes take no default namespace (Namespaces in XML 1.0, 6.2).
      if (p === '' && isAttribute) return ''
      const own = declarations?.get(p)
      if (own !== undefined) return own
      for (let i = this.frames.length - 1; i >= 0; i--) {
        const uri = this.frames[i]!.declarations?.get(p)
        if (uri !== undefined) return uri
      }
      // A prefix nobody declared (seen in hand-made exports): it belongs to no known namespace.
      return p === '' ? '' : `undeclared:${p}`
    }
    const attributes: ShallowAttribute[] = []
    for (const a of raw) {
      if (a.name === 'xmlns' || a.name.startsWith('xmlns:')) continue
      const [ap, al] = splitName(a.name)
      attributes.push({ prefix: ap, local: al, uri: resolve(ap, true), value: a.value })
    }
    const element: ShallowElement = { depth, prefix, local, uri: resolve(prefix, false), ancestors, attributes }
    frame.element = element
    if (!selfClosing) this.frames.push(frame)
    if (!this.onOpen(element) && !selfClosing) this.declinedDepth = depth
  }

  private close (name: string): void {
    const top = this.frames.pop()
    if (top === undefined || top.name !== name) this.corrupt(`is not well-formed XML (the end tag </${name}> does not match)`)
    if (this.frames.length < this.declinedDepth) this.declinedDepth = Infinity
  }

  private corrupt (what: string): never {
    throw new EngineError('SHEET_CORRUPT', `The workbook part "${this.part}" ${what}.`)
  }
}

/** Feeds a part (whole or in chunks) through a scanner and ends it. */
export async function scanPart (part: string, source: Buffer | AsyncIterable<Buffer>, maxDepth: number, onOpen: OnOpen): Promise<void> {
  const scanner = new ShallowXmlScanner(part, maxDepth, onOpen)
  if (Buffer.isBuffer(source)) scanner.push(source)
  else for await (const chunk of source) scanner.push(chunk)
  scanner.end()
}

function isSpace (b: number): boolean {
  return b === 0x20 || b === 0x0a || b === 0x09 || b === 0x0d
}

function splitName (name: string): [string, string] {
  const colon = name.indexOf(':')
  return colon === -1 ? ['', name] : [name.slice(0, colon), name.slice(colon + 1)]
}

/** The `>` ending the tag opened before `from`, skipping quoted attribute values (which may hold `>`); -1 if not in the buffer yet. */
function tagEnd (data: Buffer, from: number): number {
  let i = from
  while (true) {
    const gt = data.indexOf(GT, i)
    if (gt === -1) return -1
    // Quotes between i and gt open a value that may run past this `>`.
    let q = i
    let inside = -1
    while (q < gt) {
      const b = data[q]!
      if (b === QUOTE || b === APOS) {
        const close = data.indexOf(b, q + 1)
        if (close === -1) return -1
        if (close > gt) { inside = close; break }
        q = close + 1
      } else q++
    }
    if (inside === -1) return gt
    i = inside + 1
  }
}

/** `name="value"` pairs of the tag bytes [start, end), values decoded. */
function readAttributes (data: Buffer, start: number, end: number, part: string): Array<{ name: string, value: string }> {
  const out: Array<{ name: string, value: string }> = []
  let i = start
  while (i < end) {
    if (isSpace(data[i]!)) { i++; continue }
    const nameStart = i
    while (i < end && data[i] !== EQUALS && !isSpace(data[i]!)) i++
    const name = data.toString('utf8', nameStart, i)
    while (i < end && isSpace(data[i]!)) i++
    if (data[i] !== EQUALS) throw new EngineError('SHEET_CORRUPT', `The workbook part "${part}" is not well-formed XML (an attribute without a value).`)
    i++
    while (i < end && isSpace(data[i]!)) i++
    const quote = data[i]
    if (quote !== QUOTE && quote !== APOS) throw new EngineError('SHEET_CORRUPT', `The workbook part "${part}" is not well-formed XML (an unquoted attribute value).`)
    const valueEnd = data.indexOf(quote, i + 1)
    if (valueEnd === -1 || valueEnd >= end) throw new EngineError('SHEET_CORRUPT', `The workbook part "${part}" is not well-formed XML (an attribute value never closed).`)
    out.push({ name, value: decodeText(data, i + 1, valueEnd) })
    i = valueEnd + 1
  }
  return out
}
