/**
 * A PDF's objects read from its raw bytes the way pdf.js's lexer and parser read them,
 * without pdf.js and without trusting the cross-reference data: what the image census
 * (core/extraction/ocr/image-census.ts) needs to know which images pdf.js will decode,
 * and at what size, before it decodes any.
 *
 * Read as pdf.js reads (its `Lexer` and `Parser`): a name's `#xx` escapes are decoded
 * (`/Wid#74h` is /Width), a dictionary keeps the last value of a key given twice, numbers
 * take pdf.js's forms (`--5`, `+5`, `.5`), `N G R` is a reference. Every `N G obj` header
 * in the file is an object, and so is every object of every object stream: when a number
 * is defined more than once (an incremental update, or a file crafted so that its
 * cross-reference points pdf.js at one definition and another reader at another), every
 * definition is kept, and the census takes the largest answer. A stream's data runs for
 * its /Length when `endstream` follows there (pdf.js's rule), else up to `endstream`.
 */
import { inflateSync } from 'node:zlib'
import { decodeAscii85, decodeAsciiHex } from './raw-content-size.js'

export class Name { constructor (readonly name: string) {} }
export class Ref { constructor (readonly num: number, readonly gen: number) {} }
/** A command (an operator in content), or `<<`, `>>`, `[`, `]`. */
export class Cmd { constructor (readonly cmd: string) {} }
/** A string; its bytes are never needed here. */
export class Str {}
export type Dict = Map<string, Value>
export type Value = number | boolean | null | Name | Ref | Str | Dict | Value[]

/** One definition of an object: its value and, for a stream, where its data lies in the file. */
export interface ObjectDefinition {
  num: number
  gen: number
  value: Value
  /** Stream data, as stored (still encrypted in an encrypted file): byte offsets in the file. */
  data?: { start: number, end: number }
}

// Byte classes of pdf.js's lexer (`specialChars`): 1 whitespace, 2 delimiter.
const CLASS = new Uint8Array(256)
for (const c of [0x00, 0x09, 0x0a, 0x0c, 0x0d, 0x20]) CLASS[c] = 1
for (const c of '()<>[]{}/%') CLASS[c.charCodeAt(0)] = 2

function hexDigit (c: number): number {
  if (c >= 0x30 && c <= 0x39) return c - 0x30
  if ((c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66)) return (c & 0x0f) + 9
  return -1
}

/** Thrown on a token pdf.js refuses. */
class SyntaxEnd extends Error {}

/**
 * Thrown when a file makes the reader work far more than its size warrants: objects whose
 * headers sit inside other objects, each read to the end of the file. No file a person
 * made comes near it; the file is then not measured (and not read).
 */
export class TooMuchWork extends Error {
  constructor () { super('the file\'s objects overlap too much to be read') }
}

/** Tokens a reader may still read, shared by every lexer of one file. */
export interface TokenBudget { left: number }

/** Tokens and objects of `data` from `pos`, by pdf.js's rules. */
export class Lexer {
  constructor (readonly data: Uint8Array, public pos = 0, private readonly budget: TokenBudget = { left: Number.POSITIVE_INFINITY }) {}

  /** Skips whitespace and comments; false at the end. */
  private skip (): boolean {
    const d = this.data
    while (this.pos < d.length) {
      const c = d[this.pos]!
      if (c === 0x25) {
        while (this.pos < d.length && d[this.pos] !== 0x0a && d[this.pos] !== 0x0d) this.pos++
      } else if (CLASS[c] === 1) {
        this.pos++
      } else {
        return true
      }
    }
    return false
  }

  /** The next token: a value other than a container, or a Cmd; undefined at the end. */
  token (): number | boolean | null | Name | Str | Cmd | undefined {
    if (!this.skip()) return undefined
    if (--this.budget.left < 0) throw new TooMuchWork()
    const d = this.data
    const c = d[this.pos]!
    if ((c >= 0x30 && c <= 0x39) || c === 0x2b || c === 0x2d || c === 0x2e) return this.number()
    if (c === 0x2f) return this.name()
    if (c === 0x28) return this.literal()
    if (c === 0x3c) {
      if (d[this.pos + 1] === 0x3c) { this.pos += 2; return new Cmd('<<') }
      const end = d.indexOf(0x3e, this.pos)
      this.pos = end < 0 ? d.length : end + 1
      return new Str()
    }
    if (c === 0x3e) {
      if (d[this.pos + 1] === 0x3e) { this.pos += 2; return new Cmd('>>') }
      this.pos++
      return new Cmd('>')
    }
    if (c === 0x5b || c === 0x5d || c === 0x7b || c === 0x7d) { this.pos++; return new Cmd(String.fromCharCode(c)) }
    if (c === 0x29) throw new SyntaxEnd()
    const start = this.pos
    while (this.pos < d.length && CLASS[d[this.pos]!] === 0 && this.pos - start < 128) this.pos++
    const word = Buffer.from(d.buffer, d.byteOffset + start, this.pos - start).toString('latin1')
    if (word === 'true') return true
    if (word === 'false') return false
    if (word === 'null') return null
    return new Cmd(word)
  }

  private number (): number {
    const d = this.data
    let sign = 1
    if (d[this.pos] === 0x2d) {
      sign = -1
      this.pos++
      if (d[this.pos] === 0x2d) this.pos++
    } else if (d[this.pos] === 0x2b) {
      this.pos++
    }
    while (d[this.pos] === 0x0a || d[this.pos] === 0x0d) this.pos++
    let value = 0
    let divide = 0
    let digits = 0
    for (; this.pos < d.length; this.pos++) {
      const c = d[this.pos]!
      if (c >= 0x30 && c <= 0x39) {
        value = value * 10 + (c - 0x30)
        if (divide > 0) divide *= 10
        digits++
      } else if (c === 0x2e && divide === 0) {
        divide = 1
      } else if (c === 0x2d) {
        // pdf.js ignores a minus sign inside a number.
      } else {
        break
      }
    }
    return digits === 0 ? 0 : sign * (divide > 0 ? value / divide : value)
  }

  private name (): Name {
    const d = this.data
    let out = ''
    this.pos++
    while (this.pos < d.length && CLASS[d[this.pos]!] === 0) {
      const c = d[this.pos++]!
      const h1 = c === 0x23 ? hexDigit(d[this.pos] ?? -1) : -1
      const h2 = h1 >= 0 ? hexDigit(d[this.pos + 1] ?? -1) : -1
      if (h2 >= 0) {
        out += String.fromCharCode(h1 * 16 + h2)
        this.pos += 2
      } else {
        out += String.fromCharCode(c)
      }
    }
    return new Name(out)
  }

  private literal (): Str {
    const d = this.data
    let depth = 0
    for (; this.pos < d.length; this.pos++) {
      const c = d[this.pos]!
      if (c === 0x5c) { this.pos++; continue }
      if (c === 0x28) depth++
      else if (c === 0x29 && --depth === 0) { this.pos++; break }
    }
    return new Str()
  }

  /**
   * The next object: containers built, `N G R` made a reference. A Cmd other than a
   * container's is returned as is (the caller decides what an operator means).
   */
  object (depth = 0): Value | Cmd | undefined {
    const t = this.token()
    if (depth > 64) throw new SyntaxEnd()
    if (t instanceof Cmd) {
      if (t.cmd === '[') {
        const array: Value[] = []
        for (;;) {
          const v = this.object(depth + 1)
          if (v === undefined) return array
          if (v instanceof Cmd) {
            if (v.cmd === ']') return array
            continue
          }
          array.push(v)
        }
      }
      if (t.cmd === '<<') return this.dictionary(depth)
      return t
    }
    if (typeof t === 'number' && Number.isInteger(t) && t >= 0) {
      const save = this.pos
      const gen = this.token()
      if (typeof gen === 'number' && Number.isInteger(gen) && gen >= 0) {
        const r = this.token()
        if (r instanceof Cmd && r.cmd === 'R') return new Ref(t, gen)
      }
      this.pos = save
    }
    return t
  }

  /** The rest of a dictionary after its `<<`: keys that are not names are skipped, the last value of a key wins. */
  dictionary (depth = 0): Dict {
    const dict: Dict = new Map()
    for (;;) {
      const key = this.object(depth + 1)
      if (key === undefined) return dict
      if (key instanceof Cmd && key.cmd === '>>') return dict
      if (!(key instanceof Name)) continue
      const value = this.object(depth + 1)
      if (value === undefined) return dict
      if (value instanceof Cmd) {
        if (value.cmd === '>>') return dict
        continue
      }
      dict.set(key.name, value)
    }
  }
}

/** Where a stream's data starts after the dictionary ending at `pos` (`stream` and its end of line), or -1. */
function streamStart (data: Uint8Array, pos: number): number {
  let p = pos
  while (p < data.length && CLASS[data[p]!] === 1) p++
  if (Buffer.from(data.buffer, data.byteOffset + p, Math.min(6, data.length - p)).toString('latin1') !== 'stream') return -1
  p += 6
  if (data[p] === 0x0d) p++
  if (data[p] === 0x0a) p++
  return p
}

const ENDSTREAM = Buffer.from('endstream', 'latin1')

/** The object numbers and offsets an object stream's header lists (`/N` pairs before `/First`). */
function objectStreamEntries (data: Uint8Array, dict: Dict): Array<[number, number]> {
  const n = dict.get('N')
  const first = dict.get('First')
  if (typeof n !== 'number' || typeof first !== 'number') return []
  const lexer = new Lexer(data.subarray(0, Math.min(first, data.length)))
  const out: Array<[number, number]> = []
  for (let i = 0; i < n; i++) {
    const num = lexer.token()
    const offset = lexer.token()
    if (typeof num !== 'number' || typeof offset !== 'number') break
    out.push([num, first + offset])
  }
  return out
}

export interface RawObjectsOptions {
  /** Decrypts one stream's data (an encrypted file's); absent: data is taken as stored. */
  decrypt?: (data: Uint8Array, num: number, gen: number) => Uint8Array
  /** Most bytes one stream may decode to here; past it the stream counts as unreadable. Default 8 MiB. */
  maxDecodedBytes?: number
}

/** Every object of a file, every definition of each, found as pdf.js's recovery finds them. */
export class RawObjects {
  private readonly byNumber = new Map<number, ObjectDefinition[]>()
  private readonly decoded = new Map<ObjectDefinition, Uint8Array | undefined>()
  private readonly maxDecodedBytes: number
  /** Offsets of every `endstream`, in order: a stream without a usable /Length ends at the first after its start. */
  private readonly endstreams: number[] = []
  /**
   * Every object's tokens together: four a byte of the file and a million more is far
   * beyond any real file (each byte is read once, a few twice where objects are nested in
   * object streams); throws TooMuchWork past it.
   */
  private readonly budget: TokenBudget
  /** True when an object stream could not be decoded here: objects pdf.js finds may be missing. */
  readonly incomplete: boolean = false

  /** Throws TooMuchWork for a file whose objects overlap without end (see TokenBudget). */
  constructor (readonly bytes: Uint8Array, private readonly options: RawObjectsOptions = {}) {
    this.maxDecodedBytes = options.maxDecodedBytes ?? 8 << 20
    this.budget = { left: 4 * bytes.length + 1_000_000 }
    const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1')
    for (let at = text.indexOf('endstream'); at >= 0; at = text.indexOf('endstream', at + 9)) this.endstreams.push(at)
    for (const m of text.matchAll(/(\d+)[ \t\r\n\f\0]+(\d+)[ \t\r\n\f\0]+obj\b/g)) {
      const object = this.parseAt(Number(m[1]), Number(m[2]), m.index + m[0].length)
      if (object !== undefined) this.add(object)
    }
    // Objects inside object streams (ISO 32000-1 7.5.7): never streams themselves.
    for (const list of [...this.byNumber.values()]) {
      for (const holder of list) {
        if (!(holder.value instanceof Map) || !isName(holder.value.get('Type'), 'ObjStm')) continue
        const data = this.streamData(holder)
        if (data === undefined) {
          this.incomplete = true
          continue
        }
        for (const [num, offset] of objectStreamEntries(data, holder.value)) {
          try {
            const value = new Lexer(data, offset, this.budget).object()
            if (value !== undefined && !(value instanceof Cmd)) this.add({ num, gen: 0, value })
          } catch (err) {
            if (err instanceof TooMuchWork) throw err
            // A damaged entry: pdf.js cannot read it either.
          }
        }
      }
    }
  }

  private add (object: ObjectDefinition): void {
    const list = this.byNumber.get(object.num)
    if (list === undefined) this.byNumber.set(object.num, [object])
    else list.push(object)
  }

  private parseAt (num: number, gen: number, at: number): ObjectDefinition | undefined {
    const lexer = new Lexer(this.bytes, at, this.budget)
    let value: Value | Cmd | undefined
    try {
      value = lexer.object()
    } catch (err) {
      if (err instanceof TooMuchWork) throw err
      return undefined
    }
    if (value === undefined || value instanceof Cmd) return undefined
    if (!(value instanceof Map)) return { num, gen, value }
    const start = streamStart(this.bytes, lexer.pos)
    if (start < 0) return { num, gen, value }
    return { num, gen, value, data: { start, end: this.streamEnd(value, start) } }
  }

  private streamEnd (dict: Dict, start: number): number {
    const length = dict.get('Length')
    const data = this.bytes
    if (typeof length === 'number' && Number.isInteger(length) && length >= 0 && start + length <= data.length) {
      let p = start + length
      while (p < data.length && CLASS[data[p]!] === 1) p++
      if (Buffer.from(data.buffer, data.byteOffset + p, Math.min(9, data.length - p)).equals(ENDSTREAM)) return start + length
    }
    // The first `endstream` at or after `start` (binary search over the offsets found once).
    let lo = 0
    let hi = this.endstreams.length
    while (lo < hi) {
      const mid = (lo + hi) >> 1
      if (this.endstreams[mid]! < start) lo = mid + 1
      else hi = mid
    }
    return this.endstreams[lo] ?? data.length
  }

  /** Every definition of object `num`. */
  definitions (num: number): ObjectDefinition[] {
    return this.byNumber.get(num) ?? []
  }

  /** Every definition of every object. */
  * all (): Generator<ObjectDefinition> {
    for (const list of this.byNumber.values()) yield * list
  }

  /** The values `value` stands for: itself, or every definition of the object it refers to (none when there is none). */
  resolve (value: Value | undefined): Value[] {
    if (value === undefined) return []
    if (!(value instanceof Ref)) return [value]
    return this.definitions(value.num).map((o) => o.value)
  }

  /** Like `resolve`, with the stream data of each definition. */
  resolveObjects (value: Value | undefined): ObjectDefinition[] {
    if (value === undefined) return []
    if (value instanceof Ref) return this.definitions(value.num)
    return [{ num: -1, gen: 0, value }]
  }

  /** A stream's data as stored, decrypted; undefined for an object that is no stream. */
  rawData (object: ObjectDefinition): Uint8Array | undefined {
    if (object.data === undefined) return undefined
    const stored = this.bytes.subarray(object.data.start, object.data.end)
    const type = object.value instanceof Map ? object.value.get('Type') : undefined
    // Cross-reference streams are never encrypted (ISO 32000-1 7.6.1).
    if (this.options.decrypt === undefined || isName(type, 'XRef')) return stored
    return this.options.decrypt(stored, object.num, object.gen)
  }

  /**
   * A stream's data through its filters, when they are ones this reader decodes (Flate,
   * LZW, run-length, ASCIIHex, ASCII85; no predictor) and it stays within maxDecodedBytes;
   * undefined otherwise. Decoded once.
   */
  streamData (object: ObjectDefinition): Uint8Array | undefined {
    if (this.decoded.has(object)) return this.decoded.get(object)
    let data = this.rawData(object)
    const dict = object.value instanceof Map ? object.value : undefined
    if (data !== undefined && dict !== undefined) {
      const chain = this.filters(dict)
      const early = this.resolve(decodeParams(dict)).flatMap((v) => Array.isArray(v) ? v.flatMap((x) => this.resolve(x)) : [v])
        .map((p) => p instanceof Map ? p.get('EarlyChange') : undefined).find((e): e is number => typeof e === 'number')
      data = chain === undefined ? undefined : decodeChain(data, chain, this.maxDecodedBytes, early ?? 1)
    }
    this.decoded.set(object, data)
    return data
  }

  /**
   * The names of a stream's filters, read as pdf.js's `Parser.filter` reads them (/F before
   * /Filter, /DP before /DecodeParms; a value that is neither a name nor an array means no
   * filter), or undefined when the data cannot be read here: an array item that is not a
   * name (pdf.js refuses the stream), or a predictor to undo.
   */
  filters (dict: Dict): string[] | undefined {
    const value = this.resolve(dict.get('F') ?? dict.get('Filter'))[0]
    const items = value instanceof Name ? [value] : Array.isArray(value) ? value.map((x) => this.resolve(x)[0]) : []
    if (!items.every((item) => item instanceof Name)) return undefined
    const params = this.resolve(decodeParams(dict))[0]
    const withPredictor = (p: Value | undefined): boolean => this.resolve(p).some((d) => d instanceof Map && typeof d.get('Predictor') === 'number' && (d.get('Predictor') as number) > 1)
    if (Array.isArray(params) ? params.some(withPredictor) : withPredictor(params)) return undefined
    return (items as Name[]).map((n) => n.name)
  }
}

/** A stream's or an inline image's decode parameters, as pdf.js looks them up (/DP before /DecodeParms). */
export function decodeParams (dict: Dict): Value | undefined {
  return dict.get('DP') ?? dict.get('DecodeParms')
}

/** LZW (ISO 32000-1 7.4.4), as pdf.js's LZWStream decodes it; undefined past `ceiling` bytes. */
function decodeLzw (data: Uint8Array, earlyChange: number, ceiling: number): Uint8Array | undefined {
  const chunks: Uint8Array[] = []
  let length = 0
  let table: Uint8Array[] = []
  const reset = (): void => { table = Array.from({ length: 258 }, (_, i) => Uint8Array.of(i)) }
  reset()
  let width = 9
  let previous: Uint8Array | undefined
  let bits = 0
  let held = 0
  for (let i = 0; ;) {
    while (held < width && i < data.length) { bits = ((bits << 8) | data[i++]!) >>> 0; held += 8 }
    if (held < width) break
    const code = (bits >>> (held - width)) & ((1 << width) - 1)
    held -= width
    bits &= (1 << held) - 1
    if (code === 256) { reset(); width = 9; previous = undefined; continue }
    if (code === 257) break
    let entry: Uint8Array
    if (code < table.length) entry = table[code]!
    else if (code === table.length && previous !== undefined) entry = Uint8Array.from([...previous, previous[0]!])
    else break
    chunks.push(entry)
    length += entry.length
    if (length > ceiling) return undefined
    if (previous !== undefined && table.length < 4096) table.push(Uint8Array.from([...previous, entry[0]!]))
    previous = entry
    if (table.length + earlyChange >= 1 << width && width < 12) width++
  }
  return Buffer.concat(chunks)
}

/** Run-length (ISO 32000-1 7.4.5); undefined past `ceiling` bytes. */
function decodeRunLength (data: Uint8Array, ceiling: number): Uint8Array | undefined {
  const chunks: Buffer[] = []
  let length = 0
  for (let i = 0; i < data.length;) {
    const n = data[i++]!
    if (n === 128) break
    const chunk = n < 128 ? Buffer.from(data.subarray(i, i + n + 1)) : Buffer.alloc(257 - n, data[i] ?? 0)
    i += n < 128 ? n + 1 : 1
    chunks.push(chunk)
    length += chunk.length
    if (length > ceiling) return undefined
  }
  return Buffer.concat(chunks)
}

/**
 * `data` through `filters` (Flate, LZW, run-length, ASCIIHex, ASCII85), or undefined for a
 * filter not decoded here, damaged Flate data, or past `ceiling` bytes.
 */
export function decodeChain (data: Uint8Array, filters: readonly string[], ceiling: number, earlyChange = 1): Uint8Array | undefined {
  let out: Uint8Array | undefined = data
  for (const filter of filters) {
    if (filter === 'FlateDecode' || filter === 'Fl') {
      try {
        out = inflateSync(out, { maxOutputLength: Math.max(1, ceiling + 1), finishFlush: 2 /* Z_SYNC_FLUSH: a truncated stream gives what it has */ })
      } catch {
        // Past the ceiling, or damaged: what pdf.js would read from it is not known here.
        return undefined
      }
    } else if (filter === 'LZWDecode' || filter === 'LZW') {
      out = decodeLzw(out, earlyChange, ceiling)
    } else if (filter === 'RunLengthDecode' || filter === 'RL') {
      out = decodeRunLength(out, ceiling)
    } else if (filter === 'ASCIIHexDecode' || filter === 'AHx') {
      out = decodeAsciiHex(Buffer.from(out))
    } else if (filter === 'ASCII85Decode' || filter === 'A85') {
      out = decodeAscii85(out, ceiling)
    } else {
      return undefined
    }
    if (out === undefined || out.length > ceiling) return undefined
  }
  return out
}

export function isName (value: Value | undefined, name: string): boolean {
  return value instanceof Name && value.name === name
}
