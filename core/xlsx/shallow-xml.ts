/**
 * A byte scanner for the small parts of a package (relationships, workbook, styles) that
 * hands over only the elements near the root, namespaces resolved, and keeps nothing of
 * the rest. It replaced a general element walker (sax) that built an object for every
 * element: a 50 KB upload whose styles part inflated to 19 MB of `<xf/>` cost 7 s of CPU
 * before the first row was read. Parts arrive in chunks (the inflater's), so memory is the
 * chunk and the longest markup construct, not the part.
 */
import { EngineError } from '../errors.js'
import { BANG, GT, LT, QMARK, SLASH, decodeText, isName } from './xml-text.js'

const XML_NAMESPACE = 'http://www.w3.org/XML/1998/namespace'
const QUOTE = 0x22
const APOS = 0x27
const EQUALS = 0x3d
const COLON = 0x3a
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

/** An element's name, namespace resolved. */
export interface ShallowName {
  prefix: string
  local: string
  /** Namespace URI ('' for none; an undeclared prefix gets a URI no namespace has). */
  uri: string
}

export interface ShallowElement extends ShallowName {
  /** 1 for the root. */
  depth: number
  /** Its ancestors, outermost first (length depth - 1). */
  ancestors: readonly ShallowName[]
  /** An unprefixed attribute's decoded value. Valid only during the call that hands the element over. */
  attribute (local: string): string | undefined
  /** Every attribute but namespace declarations, namespaces resolved. Valid only during that call. */
  attributes (): ShallowAttribute[]
}

interface Frame { name: string, element?: ShallowName | undefined, declarations?: Map<string, string> | undefined }

/**
 * What the caller does with an element: `false` for one whose descendants it does not want
 * (an extension list, a collection it does not read), so they are only counted.
 */
export type OnOpen = (el: ShallowElement) => boolean

const enum Tag { Incomplete = -1 }

/**
 * Calls `onOpen` for every start tag at depth `maxDepth` or less that lies in no element the
 * caller declined, and checks the whole part is well-formed enough to trust (tags closed in
 * order, one root, no DTD). Other elements are only counted: no string or object is made
 * for them but the name an end tag must match.
 */
export class ShallowXmlScanner {
  private pending: Buffer | undefined
  private readonly frames: Frame[] = []
  private rootSeen = false
  private ended = false
  /** Depth of the outermost element the caller declined (its descendants are only counted). */
  private declinedDepth = Infinity
  /** [nameStart, nameEnd, valueStart, valueEnd] of each attribute of the tag being read. */
  readonly ranges: number[] = []
  private selfClosing = false

  constructor (private readonly part: string, private readonly maxDepth: number, private readonly onOpen: OnOpen) {}

  /** Scans a chunk; the chunk may be reused by its owner afterwards (what is kept is copied). */
  push (chunk: Buffer): void {
    const data = this.pending === undefined ? chunk : Buffer.concat([this.pending, chunk])
    this.pending = undefined
    const stop = this.scan(data)
    if (stop < data.length) {
      if (data.length - stop > MAX_CONSTRUCT_BYTES) this.tooLong()
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
        const gt = this.open(data, lt + 1)
        if (gt === Tag.Incomplete) return lt
        pos = gt + 1
      }
      if (pos - lt > MAX_CONSTRUCT_BYTES) this.tooLong()
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

  /** The start tag whose name begins at `start`: returns the index of its `>`, or Incomplete. */
  private open (data: Buffer, start: number): number {
    let nameStop = start
    const n = data.length
    while (nameStop < n) {
      const b = data[nameStop]!
      if (isSpace(b) || b === GT || b === SLASH) break
      nameStop++
    }
    if (nameStop === start) this.corrupt('is not well-formed XML (a tag without a name)')
    const gt = this.readAttributes(data, nameStop)
    if (gt === Tag.Incomplete) return gt
    const selfClosing = this.selfClosing
    const depth = this.frames.length + 1
    if (depth === 1) {
      if (this.rootSeen) this.corrupt('is not well-formed XML (more than one root element)')
      this.rootSeen = true
    }
    if (depth > MAX_DEPTH) this.corrupt(`nests elements more than ${MAX_DEPTH} deep, which no workbook does`)
    if (depth > this.maxDepth || depth > this.declinedDepth) {
      if (!selfClosing) this.frames.push({ name: data.toString('latin1', start, nameStop) })
      return gt
    }
    const ranges = this.ranges
    let declarations: Map<string, string> | undefined
    for (let i = 0; i < ranges.length; i += 4) {
      if (!startsWithXmlns(data, ranges[i]!, ranges[i + 1]!)) continue
      const nameLength = ranges[i + 1]! - ranges[i]!
      if (nameLength !== 5 && data[ranges[i]! + 5] !== COLON) continue
      const prefix = nameLength === 5 ? '' : data.toString('utf8', ranges[i]! + 6, ranges[i + 1])
      ;(declarations ??= new Map()).set(prefix, decodeText(data, ranges[i + 2]!, ranges[i + 3]!))
    }
    const frame: Frame = { name: data.toString('latin1', start, nameStop), declarations }
    if (!selfClosing) this.frames.push(frame)
    const own = selfClosing ? 1 : 0
    const [prefix, local] = splitName(data.toString('utf8', start, nameStop))
    const name: ShallowName = { prefix, local, uri: this.resolve(prefix, false, declarations, own) }
    frame.element = name
    const ancestors: ShallowName[] = []
    for (let i = 0; i < depth - 1; i++) ancestors.push(this.frames[i]!.element!)
    const element = new ReportedElement(this, name, depth, ancestors, data, declarations, own)
    if (!this.onOpen(element) && !selfClosing) this.declinedDepth = depth
    return gt
  }

  /**
   * Reads the attributes after the name into `ranges`, values found by their quotes (a value
   * may hold `>`); returns the index of the tag's `>`, or Incomplete when it is not in `data` yet.
   */
  private readAttributes (data: Buffer, from: number): number {
    const ranges = this.ranges
    ranges.length = 0
    const n = data.length
    let i = from
    while (true) {
      while (i < n && isSpace(data[i]!)) i++
      if (i >= n) return Tag.Incomplete
      const b = data[i]!
      if (b === GT) { this.selfClosing = false; return i }
      if (b === SLASH) {
        if (i + 1 >= n) return Tag.Incomplete
        if (data[i + 1] !== GT) this.corrupt('is not well-formed XML (a stray "/" in a tag)')
        this.selfClosing = true
        return i + 1
      }
      const nameStart = i
      while (i < n && data[i] !== EQUALS && !isSpace(data[i]!) && data[i] !== GT) i++
      const nameEnd = i
      while (i < n && isSpace(data[i]!)) i++
      if (i >= n) return Tag.Incomplete
      if (data[i] !== EQUALS) this.corrupt('is not well-formed XML (an attribute without a value)')
      i++
      while (i < n && isSpace(data[i]!)) i++
      if (i >= n) return Tag.Incomplete
      const quote = data[i]
      if (quote !== QUOTE && quote !== APOS) this.corrupt('is not well-formed XML (an unquoted attribute value)')
      const valueEnd = data.indexOf(quote, i + 1)
      if (valueEnd === -1) return Tag.Incomplete
      ranges.push(nameStart, nameEnd, i + 1, valueEnd)
      i = valueEnd + 1
    }
  }

  /**
   * A prefix's namespace: the element's own declarations, then its ancestors' (`skip` leaves out
   * the top frame, which is the element itself when it was pushed).
   */
  resolve (prefix: string, isAttribute: boolean, own: Map<string, string> | undefined, skip: number): string {
    if (prefix === 'xml') return XML_NAMESPACE
    // Attributes take no default namespace (Namespaces in XML 1.0, 6.2).
    if (prefix === '' && isAttribute) return ''
    const mine = own?.get(prefix)
    if (mine !== undefined) return mine
    for (let i = this.frames.length - 2 + skip; i >= 0; i--) {
      const uri = this.frames[i]!.declarations?.get(prefix)
      if (uri !== undefined) return uri
    }
    // A prefix nobody declared (seen in hand-made exports): it belongs to no known namespace.
    return prefix === '' ? '' : `undeclared:${prefix}`
  }

  private close (name: string): void {
    const top = this.frames.pop()
    if (top === undefined || top.name !== name) this.corrupt(`is not well-formed XML (the end tag </${name}> does not match)`)
    if (this.frames.length < this.declinedDepth) this.declinedDepth = Infinity
  }

  private tooLong (): never {
    return this.corrupt(`has a tag or comment longer than ${MAX_CONSTRUCT_BYTES >> 20} MiB, which no workbook writes`)
  }

  private corrupt (what: string): never {
    throw new EngineError('SHEET_CORRUPT', `The workbook part "${this.part}" ${what}.`)
  }
}

/** An element handed over; its attributes are read from the scanner's buffer, so only during the call. */
class ReportedElement implements ShallowElement {
  readonly prefix: string
  readonly local: string
  readonly uri: string

  constructor (
    private readonly scanner: ShallowXmlScanner,
    name: ShallowName,
    readonly depth: number,
    readonly ancestors: readonly ShallowName[],
    private readonly data: Buffer,
    private readonly declarations: Map<string, string> | undefined,
    private readonly own: number
  ) {
    this.prefix = name.prefix
    this.local = name.local
    this.uri = name.uri
  }

  attribute (wanted: string): string | undefined {
    const { ranges } = this.scanner
    for (let i = 0; i < ranges.length; i += 4) {
      if (isName(this.data, ranges[i]!, ranges[i + 1]!, wanted)) return decodeText(this.data, ranges[i + 2]!, ranges[i + 3]!)
    }
    return undefined
  }

  attributes (): ShallowAttribute[] {
    const { ranges } = this.scanner
    const out: ShallowAttribute[] = []
    for (let i = 0; i < ranges.length; i += 4) {
      const [ap, al] = splitName(this.data.toString('utf8', ranges[i], ranges[i + 1]))
      if (ap === 'xmlns' || (ap === '' && al === 'xmlns')) continue
      out.push({ prefix: ap, local: al, uri: this.scanner.resolve(ap, true, this.declarations, this.own), value: decodeText(this.data, ranges[i + 2]!, ranges[i + 3]!) })
    }
    return out
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

/** True when the attribute name in [start, end) begins with `xmlns`. */
function startsWithXmlns (data: Buffer, start: number, end: number): boolean {
  return end - start >= 5 && data[start] === 0x78 && data[start + 1] === 0x6d && data[start + 2] === 0x6c && data[start + 3] === 0x6e && data[start + 4] === 0x73
}
