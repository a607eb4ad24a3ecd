/**
 * Ledger rows as lines of PostgreSQL's COPY text format, in the column order of
 * MOVEMENT_COLUMNS. Amounts go as exact `numeric` text built from integer cents;
 * texts are escaped (backslash, tab, newline, carriage return); empty is `\N`.
 *
 * Lines are written straight into a byte buffer, one batch at a time: building
 * strings and encoding them afterwards cost about three times as much per row
 * (measured on 200k ledger rows: ~1.35 µs against ~0.45 µs).
 */
import { readInteger, readText } from '../ledger/index.js'
import type { ColumnMap, LedgerRow } from '../ledger/index.js'
import type { Cell } from '../xlsx/index.js'

export const MOVEMENT_COLUMNS = [
  'importacao_seq', 'linha_origem', 'id', 'id_movim_finan', 'data', 'id_conta', 'planejamento_analitico',
  'id_planejamento', 'planejamento', 'tipo', 'cod_planejamento', 'credito', 'debito', 'historico'
] as const

export const COPY_MOVEMENTS_SQL = `COPY movimentos (${MOVEMENT_COLUMNS.join(', ')}) FROM STDIN`

const NULL = '\\N'
const NEEDS_ESCAPE = /[\\\t\n\r]/
const TAB = 9
const NEWLINE = 10
const DOT = 46
const MINUS = 45
const ZERO = 48

/** A text value as COPY reads it back unchanged (null → `\N`). */
export function copyText (value: string | null): string {
  if (value === null) return NULL
  if (!NEEDS_ESCAPE.test(value)) return value
  return value.replace(/[\\\t\n\r]/g, (ch) => ch === '\\' ? '\\\\' : ch === '\t' ? '\\t' : ch === '\n' ? '\\n' : '\\r')
}

/** Bounds the text cache on files whose values never repeat (free-form histories). */
const CACHE_LIMIT = 200_000
/** Room for every fixed-width field of a line (numbers, separators, \\N); texts ensure their own. */
const LINE_ROOM = 14 * 24

/**
 * Encodes the rows of one load into COPY text, batch by batch, straight into a byte
 * buffer. Ledger texts and dates repeat (accounts, plans and kinds come from the
 * shared strings table), so each distinct value is escaped and UTF-8 encoded once,
 * then copied as bytes.
 */
export class MovementEncoder {
  private readonly texts = new Map<string, Buffer>()
  private readonly prefix: Buffer
  private buffer: Buffer
  private pos = 0
  private lines = 0

  /** `batchBytesHint`: the expected size of one batch, to size buffers without regrowing. */
  constructor (importacaoSeq: string, private readonly batchBytesHint = 256 * 1024) {
    if (!/^\d+$/.test(importacaoSeq)) throw new RangeError(`importation sequence must be digits, got "${importacaoSeq}"`)
    this.prefix = Buffer.from(`${importacaoSeq}\t`)
    this.buffer = Buffer.allocUnsafe(Math.max(batchBytesHint, LINE_ROOM + this.prefix.length))
  }

  /** Lines encoded since the last take(). */
  get pending (): number {
    return this.lines
  }

  /** Appends one line for a row of a file without blocking problems so far. */
  add (row: LedgerRow, cells: Cell[], c: ColumnMap): void {
    this.ensure(LINE_ROOM + this.prefix.length)
    let buf = this.buffer
    let pos = copyBytes(buf, this.pos, this.prefix)
    pos = writeInteger(buf, pos, row.rowNumber)
    buf[pos++] = TAB
    pos = this.integerCell(buf, pos, cells[c.id])
    buf[pos++] = TAB
    pos = row.groupId === null ? writeNull(buf, pos) : writeInteger(buf, pos, row.groupId)
    buf[pos++] = TAB
    pos = row.date === null ? writeNull(buf, pos) : this.text(pos, row.date)
    buf = this.buffer
    buf[pos++] = TAB
    pos = this.integerCell(buf, pos, cells[c.id_conta])
    buf[pos++] = TAB
    pos = this.textCell(pos, cells[c.planejamento_analitico])
    buf = this.buffer
    buf[pos++] = TAB
    pos = this.integerCell(buf, pos, cells[c.id_planejamento])
    buf[pos++] = TAB
    pos = this.textCell(pos, cells[c.planejamento])
    pos = this.tabThenText(pos, cells[c.tipo])
    pos = this.tabThenText(pos, cells[c.cod_planejamento])
    buf = this.buffer
    buf[pos++] = TAB
    pos = writeCents(buf, pos, row.creditCents)
    buf[pos++] = TAB
    pos = writeCents(buf, pos, row.debitCents)
    buf[pos++] = TAB
    pos = c.historico === undefined ? writeNull(buf, pos) : this.textCell(pos, cells[c.historico])
    this.buffer[pos++] = NEWLINE
    this.pos = pos
    this.lines++
  }

  /**
   * The lines encoded so far, as a buffer of their own (the caller hands it to a
   * socket, which keeps it until written, so it is never reused here).
   */
  take (): Buffer {
    const out = this.buffer.subarray(0, this.pos)
    this.buffer = Buffer.allocUnsafe(Math.max(this.batchBytesHint, this.buffer.length))
    this.pos = 0
    this.lines = 0
    return out
  }

  private ensure (room: number): void {
    this.ensureAt(this.pos, room)
  }

  /** Makes room for `room` more bytes after `pos` (the line being written ends there). */
  private ensureAt (pos: number, room: number): void {
    if (pos + room <= this.buffer.length) return
    const bigger = Buffer.allocUnsafe(Math.max(this.buffer.length * 2, pos + room))
    this.buffer.copy(bigger, 0, 0, pos)
    this.buffer = bigger
  }

  private tabThenText (pos: number, cell: Cell | undefined): number {
    this.buffer[pos++] = TAB
    return this.textCell(pos, cell)
  }

  private integerCell (buf: Buffer, pos: number, cell: Cell | undefined): number {
    if (typeof cell === 'number' && Number.isSafeInteger(cell)) return writeInteger(buf, pos, cell)
    const parsed = readInteger(cell)
    return parsed.kind === 'ok' ? writeInteger(buf, pos, parsed.value) : writeNull(buf, pos)
  }

  private textCell (pos: number, cell: Cell | undefined): number {
    if (typeof cell === 'string') return this.text(pos, cell)
    const text = readText(cell)
    return text === null ? writeNull(this.buffer, pos) : this.text(pos, text)
  }

  /**
   * A string as COPY text, trimmed as readText does. The buffer may grow (a typed
   * array drops writes past its end silently, so every text leaves LINE_ROOM after
   * it): callers reload `this.buffer` after this.
   */
  private text (pos: number, value: string): number {
    let encoded = this.texts.get(value)
    if (encoded === undefined) {
      if (this.texts.size >= CACHE_LIMIT) this.texts.clear()
      encoded = Buffer.from(copyText(readText(value)))
      this.texts.set(value, encoded)
    }
    // Room for the text and whatever fixed-width fields of the line follow it.
    this.ensureAt(pos, encoded.length + LINE_ROOM)
    // One native copy: on short ledger texts it beats a byte loop by half.
    this.buffer.set(encoded, pos)
    return pos + encoded.length
  }
}

const BACKSLASH = 92

function writeNull (buf: Buffer, pos: number): number {
  buf[pos] = BACKSLASH
  buf[pos + 1] = 78 // N
  return pos + 2
}

function copyBytes (buf: Buffer, pos: number, src: Buffer): number {
  const length = src.length
  // Short values dominate; a plain loop beats a native copy call for them.
  if (length > 32) return pos + src.copy(buf, pos)
  for (let i = 0; i < length; i++) buf[pos + i] = src[i]!
  return pos + length
}

/** '00' to '99' as ASCII pairs: integers are written two digits per division. */
const DIGIT_PAIRS = Uint8Array.from({ length: 200 }, (_, i) => ZERO + (i & 1 ? (i >> 1) % 10 : Math.floor((i >> 1) / 10)))

/** A safe integer in decimal ASCII; small ones (nearly all) in 32-bit arithmetic. */
function writeInteger (buf: Buffer, pos: number, value: number): number {
  if (value < 0) {
    buf[pos++] = MINUS
    value = -value
  }
  if (value > 0x7fffffff) return writeLargeInteger(buf, pos, value)
  let v = value | 0
  const end = pos + digitCount(v)
  let at = end
  while (v >= 100) {
    const next = (v / 100) | 0
    const pair = (v - next * 100) << 1
    buf[at - 1] = DIGIT_PAIRS[pair + 1]!
    buf[at - 2] = DIGIT_PAIRS[pair]!
    at -= 2
    v = next
  }
  if (v >= 10) {
    buf[at - 1] = DIGIT_PAIRS[(v << 1) + 1]!
    buf[at - 2] = DIGIT_PAIRS[v << 1]!
  } else {
    buf[at - 1] = ZERO + v
  }
  return end
}

function digitCount (v: number): number {
  if (v < 100000) return v < 100 ? (v < 10 ? 1 : 2) : v < 1000 ? 3 : v < 10000 ? 4 : 5
  return v < 10000000 ? (v < 1000000 ? 6 : 7) : v < 100000000 ? 8 : v < 1000000000 ? 9 : 10
}

function writeLargeInteger (buf: Buffer, pos: number, value: number): number {
  let digits = 1
  for (let v = value; v >= 10; v = Math.floor(v / 10)) digits++
  const end = pos + digits
  let at = end
  while (value >= 10) {
    const next = Math.floor(value / 10)
    buf[--at] = ZERO + (value - next * 10)
    value = next
  }
  buf[--at] = ZERO + value
  return end
}

/** Cents as `numeric` text with two decimals: -12345 → `-123.45`. */
function writeCents (buf: Buffer, pos: number, cents: number): number {
  if (cents < 0) {
    buf[pos++] = MINUS
    cents = -cents
  }
  const units = Math.floor(cents / 100)
  const rest = cents - units * 100
  pos = writeInteger(buf, pos, units)
  buf[pos] = DOT
  buf[pos + 1] = ZERO + Math.floor(rest / 10)
  buf[pos + 2] = ZERO + (rest % 10)
  return pos + 3
}
