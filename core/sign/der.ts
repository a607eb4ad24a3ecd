/**
 * A small DER encoder and reader (ITU-T X.690). The CMS we emit is built from these
 * byte-exact pieces rather than through node-forge's ASN.1 objects, so certificate
 * names and serials are copied verbatim from the certificates and the signed-attribute
 * SET can be sorted on its final encodings (X.690 §11.6).
 */

export const TAG = {
  BOOLEAN: 0x01,
  INTEGER: 0x02,
  BIT_STRING: 0x03,
  OCTET_STRING: 0x04,
  NULL: 0x05,
  OID: 0x06,
  UTF8_STRING: 0x0c,
  PRINTABLE_STRING: 0x13,
  IA5_STRING: 0x16,
  UTC_TIME: 0x17,
  GENERALIZED_TIME: 0x18,
  SEQUENCE: 0x30,
  SET: 0x31
} as const

function encodeLength (length: number): Buffer {
  if (length < 0x80) return Buffer.from([length])
  const bytes: number[] = []
  for (let n = length; n > 0; n = Math.floor(n / 256)) bytes.unshift(n & 0xff)
  return Buffer.from([0x80 | bytes.length, ...bytes])
}

/** One TLV with the given tag byte around the concatenated contents. */
export function tlv (tag: number, ...contents: Uint8Array[]): Buffer {
  const body = Buffer.concat(contents)
  return Buffer.concat([Buffer.from([tag]), encodeLength(body.length), body])
}

export const seq = (...items: Uint8Array[]): Buffer => tlv(TAG.SEQUENCE, ...items)
export const octets = (bytes: Uint8Array): Buffer => tlv(TAG.OCTET_STRING, bytes)
export const derNull = (): Buffer => Buffer.from([TAG.NULL, 0])
/** Context-specific constructed tag [n] (explicit tagging, or implicit over a constructed type). */
export const ctx = (n: number, ...items: Uint8Array[]): Buffer => tlv(0xa0 | n, ...items)

/** A DER SET OF: elements sorted by their encodings (X.690 §11.6). */
export function setOf (...items: Buffer[]): Buffer {
  return tlv(TAG.SET, ...[...items].sort(compareDer))
}

/** Octet-wise comparison where a shorter encoding counts as padded with zeros at its end. */
export function compareDer (a: Uint8Array, b: Uint8Array): number {
  const n = Math.max(a.length, b.length)
  for (let i = 0; i < n; i++) {
    const x = a[i] ?? 0
    const y = b[i] ?? 0
    if (x !== y) return x - y
  }
  return 0
}

export function integer (value: number | bigint): Buffer {
  let hex = BigInt(value).toString(16)
  if (hex.length % 2 === 1) hex = `0${hex}`
  let bytes = Buffer.from(hex, 'hex')
  if ((bytes[0] ?? 0) & 0x80) bytes = Buffer.concat([Buffer.from([0]), bytes])
  return tlv(TAG.INTEGER, bytes)
}

/**
 * Encoded OBJECT IDENTIFIERs by dotted form. A signature writes the same eight or so each
 * time, and the BigInt arithmetic of encodeOid made that about 40 µs a signature.
 */
const encodedOids = new Map<string, Buffer>()

export function oid (dotted: string): Buffer {
  let encoded = encodedOids.get(dotted)
  if (encoded === undefined) {
    encoded = encodeOid(dotted)
    // Bounded for tools that encode many; the signer itself needs a dozen at most.
    if (encodedOids.size < 256) encodedOids.set(dotted, encoded)
  }
  // A copy, so that a caller writing into its buffer cannot change the next signature's.
  return Buffer.from(encoded)
}

function encodeOid (dotted: string): Buffer {
  const parts = dotted.split('.').map((p) => BigInt(p))
  const [first = 0n, second = 0n, ...rest] = parts
  const out: number[] = []
  for (const arc of [first * 40n + second, ...rest]) {
    const chunk: number[] = [Number(arc & 0x7fn)]
    for (let v = arc >> 7n; v > 0n; v >>= 7n) chunk.unshift(Number(v & 0x7fn) | 0x80)
    out.push(...chunk)
  }
  return tlv(TAG.OID, Buffer.from(out))
}

export function decodeOid (content: Uint8Array): string {
  const arcs: bigint[] = []
  let value = 0n
  for (const byte of content) {
    value = (value << 7n) | BigInt(byte & 0x7f)
    if ((byte & 0x80) === 0) { arcs.push(value); value = 0n }
  }
  const [head = 0n, ...rest] = arcs
  const first = head < 80n ? head / 40n : 2n
  return [first, head - first * 40n, ...rest].join('.')
}

/** A parsed TLV: `bytes` is the whole element, `content` its value octets. */
export interface DerNode {
  tag: number
  bytes: Buffer
  content: Buffer
  /** Offset of the element within the buffer it was read from. */
  offset: number
}

/** Reads the element at `offset`; throws on a truncated or indefinite-length encoding. */
export function readNode (buffer: Buffer, offset = 0): DerNode {
  if (offset + 2 > buffer.length) throw new RangeError('DER: truncated element')
  const tag = buffer[offset]!
  if ((tag & 0x1f) === 0x1f) throw new RangeError('DER: high tag numbers are not supported')
  let length = buffer[offset + 1]!
  let header = 2
  if (length & 0x80) {
    const count = length & 0x7f
    if (count === 0 || count > 4) throw new RangeError('DER: unsupported length form')
    if (offset + 2 + count > buffer.length) throw new RangeError('DER: truncated length')
    length = 0
    for (let i = 0; i < count; i++) length = length * 256 + buffer[offset + 2 + i]!
    header += count
  }
  const end = offset + header + length
  if (end > buffer.length) throw new RangeError('DER: element runs past the end')
  return { tag, bytes: buffer.subarray(offset, end), content: buffer.subarray(offset + header, end), offset }
}

/** The elements inside a constructed node. */
export function children (node: DerNode): DerNode[] {
  const out: DerNode[] = []
  let at = 0
  while (at < node.content.length) {
    const child = readNode(node.content, at)
    out.push(child)
    at += child.bytes.length
  }
  return out
}

export function child (node: DerNode, index: number): DerNode {
  const found = children(node)[index]
  if (found === undefined) throw new RangeError(`DER: element ${index} missing`)
  return found
}
