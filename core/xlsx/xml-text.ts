/**
 * Byte-level helpers shared by the sheet scanner and the shared-strings reader.
 * They work on Buffers of well-formed SpreadsheetML: text content never holds a raw
 * `<` (XML 1.0, 2.4), so "the next `<`" always ends a text run.
 */
export const LT = 0x3c
export const GT = 0x3e
export const SLASH = 0x2f
export const BANG = 0x21
export const QMARK = 0x3f
const COLON = 0x3a

/** SpreadsheetML, transitional and strict (ECMA-376 Part 1, 18 and Part 1 Strict). */
export const MAIN_NAMESPACES: ReadonlySet<string> = new Set([
  'http://schemas.openxmlformats.org/spreadsheetml/2006/main',
  'http://purl.oclc.org/ooxml/spreadsheetml/main'
])
const AMP = '&'
const ESCAPE_MARK = '_x'

/** End (exclusive) of the element name starting at `start`: stops at white space, `>` or `/`. */
export function nameEnd (data: Buffer, start: number, limit: number): number {
  let i = start
  while (i < limit) {
    const b = data[i]!
    if (b === 0x20 || b === GT || b === SLASH || b === 0x0a || b === 0x09 || b === 0x0d) return i
    i++
  }
  return i
}

/** Start of the local part of the name in [start, end): after the prefix `x:` when there is one. */
export function localStart (data: Buffer, start: number, end: number): number {
  for (let i = end - 1; i >= start; i--) if (data[i] === COLON) return i + 1
  return start
}

/** True when bytes [start, end) spell the ASCII `name`. */
export function isName (data: Buffer, start: number, end: number, name: string): boolean {
  if (end - start !== name.length) return false
  for (let i = 0; i < name.length; i++) if (data[start + i] !== name.charCodeAt(i)) return false
  return true
}

/** Index of the `>` that ends the tag whose `<` is at or before `from`; -1 if it is not in the buffer yet. */
export function tagEnd (data: Buffer, from: number, limit: number): number {
  const gt = data.indexOf(GT, from)
  return gt === -1 || gt >= limit ? -1 : gt
}

/** [valueStart, valueEnd) of attribute `name` in the tag bytes [start, end). */
export function attributeRange (data: Buffer, start: number, end: number, name: string): [number, number] | undefined {
  let i = start
  while (i < end) {
    const b = data[i]!
    if (b === 0x20 || b === 0x0a || b === 0x09 || b === 0x0d) { i++; continue }
    const nameStart = i
    while (i < end && data[i] !== 0x3d && data[i] !== 0x20) i++
    const nameStop = i
    while (i < end && data[i] !== 0x22 && data[i] !== 0x27) i++
    if (i >= end) return undefined
    const quote = data[i]!
    const valueStart = i + 1
    const valueEnd = data.indexOf(quote, valueStart)
    if (valueEnd === -1 || valueEnd > end) return undefined
    if (isName(data, nameStart, nameStop, name)) return [valueStart, valueEnd]
    i = valueEnd + 1
  }
  return undefined
}

const NAMED_ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" }
const ENTITY = /&(#x[0-9a-fA-F]+|#[0-9]+|[a-zA-Z]+);/g
/** ST_Xstring escapes characters XML cannot carry as `_xHHHH_` (ECMA-376 Part 1, 22.9.2.19). */
const XSTRING_ESCAPE = /_x([0-9A-Fa-f]{4})_/g

/** A literal CR LF or a lone CR (XML 1.0, 2.11). */
const LITERAL_LINE_END = /\r\n?/g

/**
 * Line ends as an XML processor hands them over: every literal CR LF and lone CR
 * becomes LF before anything else is decoded (XML 1.0, 2.11). A CR that is data is
 * written as `&#13;` or `_x000D_` and survives, because those are decoded after.
 */
function normalizeLineEnds (text: string): string {
  return text.includes('\r') ? text.replace(LITERAL_LINE_END, '\n') : text
}

/** UTF-8 text in [start, end) with line ends normalized, then XML entities and ST_Xstring escapes resolved. */
export function decodeText (data: Buffer, start: number, end: number): string {
  let text = normalizeLineEnds(data.toString('utf8', start, end))
  if (text.includes(AMP)) text = text.replace(ENTITY, replaceEntity)
  if (text.includes(ESCAPE_MARK)) text = text.replace(XSTRING_ESCAPE, (_m, hex: string) => String.fromCharCode(parseInt(hex, 16)))
  return text
}

function replaceEntity (match: string, body: string): string {
  if (body.charCodeAt(0) === 0x23) {
    const code = body.charCodeAt(1) === 0x78 ? parseInt(body.slice(2), 16) : parseInt(body.slice(1), 10)
    return code <= 0x10ffff ? String.fromCodePoint(code) : match
  }
  return NAMED_ENTITIES[body] ?? match
}

/**
 * Concatenated text of a string item (`<si>` or `<is>`) in [start, end): plain `<t>`
 * and rich-text runs `<r><t>`, skipping phonetic runs `<rPh>` as Excel does when it
 * shows the cell (ECMA-376 Part 1, 18.4.6).
 */
export function richText (data: Buffer, start: number, end: number): string {
  let text = ''
  let pos = start
  while (pos < end) {
    const lt = data.indexOf(LT, pos)
    if (lt === -1 || lt >= end) break
    if (data[lt + 1] === SLASH) { pos = lt + 2; continue }
    const ne = nameEnd(data, lt + 1, end)
    const ls = localStart(data, lt + 1, ne)
    const gt = tagEnd(data, ne, end)
    if (gt === -1) break
    const selfClosing = data[gt - 1] === SLASH
    if (!selfClosing && isName(data, ls, ne, 't')) {
      pos = textContent(data, gt + 1, end, (piece) => { text += piece })
    } else if (!selfClosing && isName(data, ls, ne, 'rPh')) {
      // Searched within the item only: an unclosed run must not send every item's search to the end of the part.
      const close = data.subarray(0, end).indexOf(closingTag(data, lt + 1, ne), gt + 1)
      pos = close === -1 ? end : close
    } else {
      pos = gt + 1
    }
  }
  return text
}

const CDATA_OPEN = Buffer.from('<![CDATA[')
const CDATA_CLOSE = Buffer.from(']]>')

/**
 * Text of an element from `from` to its end tag: character data with entities
 * resolved, and CDATA sections taken verbatim (XML 1.0, 2.7). Returns where the end
 * tag starts.
 */
function textContent (data: Buffer, from: number, end: number, append: (piece: string) => void): number {
  let pos = from
  while (pos < end) {
    let lt = data.indexOf(LT, pos)
    if (lt === -1 || lt > end) lt = end
    if (lt > pos) append(decodeText(data, pos, lt))
    if (lt >= end || data[lt + 1] !== BANG || data.compare(CDATA_OPEN, 0, CDATA_OPEN.length, lt, lt + CDATA_OPEN.length) !== 0) return lt
    // Within the element only (see richText's rPh).
    const close = data.subarray(0, end).indexOf(CDATA_CLOSE, lt + CDATA_OPEN.length)
    if (close === -1) return end
    append(normalizeLineEnds(data.toString('utf8', lt + CDATA_OPEN.length, close)))
    pos = close + CDATA_CLOSE.length
  }
  return pos
}

const closingTags = new Map<string, Buffer>()
/**
 * A file uses a handful of element names; the cache keeps the first few. A file that
 * invents a prefix per element must not grow it in a thread that serves later requests.
 */
const CLOSING_TAGS_KEPT = 64
/** `</name>` for the (possibly prefixed) element name in [start, end), cached. */
export function closingTag (data: Buffer, start: number, end: number): Buffer {
  const name = data.toString('latin1', start, end)
  let tag = closingTags.get(name)
  if (tag === undefined) {
    tag = Buffer.from(`</${name}>`, 'latin1')
    if (closingTags.size < CLOSING_TAGS_KEPT) closingTags.set(name, tag)
  }
  return tag
}

/** True when an XML part declares a DTD or entities, which we refuse rather than expand (billion-laughs defence). */
export function hasDoctype (data: Buffer, start = 0, end = data.length): boolean {
  let pos = start
  while (true) {
    const i = data.indexOf('<!', pos)
    if (i === -1 || i >= end) return false
    const head = data.toString('latin1', i + 2, Math.min(i + 9, data.length)).toUpperCase()
    if (head.startsWith('DOCTYPE') || head.startsWith('ENTITY')) return true
    pos = i + 2
  }
}
