/**
 * Ledger rows as PostgreSQL's binary COPY format (the "COPY ... FROM STDIN
 * (FORMAT binary)" protocol of the COPY reference page), in the column order of
 * MOVEMENT_COLUMNS.
 *
 * Binary rather than text because the server then parses nothing: integers, the
 * date and the amounts arrive as their stored representation, and texts need no
 * escaping (a tab, a newline, a backslash or a literal `\N` in a cell is just a
 * byte). Measured on 500k ledger rows, the server's CPU for the COPY fell by about
 * a sixth against the same rows as COPY text.
 *
 * A stream is COPY_HEADER, any number of encoded rows, then COPY_TRAILER. Each row
 * is a 16-bit field count, then per field a 32-bit byte length (-1 for NULL) and
 * the bytes, all integers big-endian:
 * - bigint: 8 bytes two's complement; integer: 4 bytes;
 * - date: 4 bytes, days since 2000-01-01;
 * - numeric: ndigits, weight, sign (0 or 0x4000), dscale (16 bits each), then
 *   ndigits base-10000 digits of 16 bits, most significant first; the value is
 *   the sum of digit[i] * 10000^(weight - i). Amounts are built from integer cents,
 *   so they are exact by construction;
 * - text: the UTF-8 bytes.
 */
import { EngineError } from '../errors.js'
import { readInteger, readText } from '../ledger/index.js'
import type { ColumnMap, LedgerRow } from '../ledger/index.js'
import type { Cell } from '../xlsx/index.js'

export const MOVEMENT_COLUMNS = [
  'importacao_seq', 'linha_origem', 'id', 'id_movim_finan', 'data', 'id_conta', 'planejamento_analitico',
  'id_planejamento', 'planejamento', 'tipo', 'cod_planejamento', 'credito', 'debito', 'historico'
] as const

export const COPY_MOVEMENTS_SQL = `COPY movimentos (${MOVEMENT_COLUMNS.join(', ')}) FROM STDIN (FORMAT binary)`

/** Signature, flags (no OIDs) and header-extension length of a binary COPY stream. */
export const COPY_HEADER = Buffer.from([0x50, 0x47, 0x43, 0x4f, 0x50, 0x59, 0x0a, 0xff, 0x0d, 0x0a, 0x00, 0, 0, 0, 0, 0, 0, 0, 0])
/** A field count of -1 ends the stream. */
export const COPY_TRAILER = Buffer.from([0xff, 0xff])

/** Bounds the text cache on files whose values never repeat (free-form histories). */
const CACHE_LIMIT = 200_000
/**
 * And its bytes: a CSV makes long unique texts cheap to send (50k rows of 4 KB histories
 * held 220 MB of cache and took the thread to 523 MB), and a workbook's inline strings too.
 */
const CACHE_MAX_BYTES = 32 * 1024 * 1024
/** Room for every fixed-width field of a row (everything but the texts, which ensure their own). */
const ROW_ROOM = 2 + 14 * 4 + 5 * 8 + 4 + 4 + 2 * (8 + 2 * 6)
/** Day number of 2000-01-01 counted from 1970-01-01, PostgreSQL's date epoch. */
const PG_EPOCH_DAYS = 10_957
const DAY_MS = 86_400_000
const NUMERIC_NEG = 0x4000

/**
 * Encodes the rows of one load, batch by batch, straight into a byte buffer.
 * Ledger texts and dates repeat (accounts, plans and kinds come from the shared
 * strings table), so each distinct value is trimmed and UTF-8 encoded once, with
 * its length in front, and then copied as bytes.
 */
export class MovementEncoder {
  private readonly texts = new Map<string, Buffer>()
  private cachedBytes = 0
  private readonly days = new Map<string, number>()
  /** Field count and the importation's sequence: the same first 14 bytes on every row. */
  private readonly prefix: Buffer
  private buffer: Buffer
  private pos = 0
  private rows = 0

  /** `batchBytesHint`: the expected size of one batch, to size buffers without regrowing. */
  constructor (importacaoSeq: string, private readonly batchBytesHint = 256 * 1024) {
    if (!/^\d{1,18}$/.test(importacaoSeq)) throw new RangeError(`importation sequence must be a bigint in digits, got "${importacaoSeq}"`)
    this.prefix = Buffer.alloc(14)
    this.prefix.writeInt16BE(MOVEMENT_COLUMNS.length, 0)
    this.prefix.writeInt32BE(8, 2)
    this.prefix.writeBigInt64BE(BigInt(importacaoSeq), 6)
    this.buffer = Buffer.allocUnsafe(Math.max(batchBytesHint, ROW_ROOM + this.prefix.length))
  }

  /** Sheet row of the row being encoded, for messages. */
  private rowNumber = 0

  /** Rows encoded since the last take(). */
  get pending (): number {
    return this.rows
  }

  /** Appends one row of a file without blocking problems so far. */
  add (row: LedgerRow, cells: Cell[], c: ColumnMap): void {
    this.rowNumber = row.rowNumber
    this.ensureAt(this.pos, ROW_ROOM + this.prefix.length)
    let buf = this.buffer
    buf.set(this.prefix, this.pos)
    let pos = this.pos + this.prefix.length
    pos = writeInt4(buf, pos, row.rowNumber)
    pos = this.integerCell(buf, pos, cells[c.id])
    pos = row.groupId === null ? writeNull(buf, pos) : writeInt8(buf, pos, row.groupId)
    pos = row.date === null ? writeNull(buf, pos) : writeDate(buf, pos, this.dayOf(row.date))
    pos = this.integerCell(buf, pos, cells[c.id_conta])
    pos = this.textCell(pos, cells[c.planejamento_analitico], 'planejamento_analitico')
    buf = this.buffer
    pos = this.integerCell(buf, pos, cells[c.id_planejamento])
    pos = this.textCell(pos, cells[c.planejamento], 'planejamento')
    pos = this.textCell(pos, cells[c.tipo], 'tipo')
    pos = this.textCell(pos, cells[c.cod_planejamento], 'cod_planejamento')
    buf = this.buffer
    pos = writeCents(buf, pos, row.creditCents)
    pos = writeCents(buf, pos, row.debitCents)
    this.pos = c.historico === undefined ? writeNull(buf, pos) : this.textCell(pos, cells[c.historico], 'historico')
    this.rows++
  }

  /**
   * The rows encoded so far, as a buffer of their own (the caller hands it to a
   * socket, which keeps it until written, so it is never reused here).
   */
  take (): Buffer {
    const out = this.buffer.subarray(0, this.pos)
    this.buffer = Buffer.allocUnsafe(Math.max(this.batchBytesHint, this.buffer.length))
    this.pos = 0
    this.rows = 0
    return out
  }

  /** Makes room for `room` more bytes after `pos` (the row being written ends there). */
  private ensureAt (pos: number, room: number): void {
    if (pos + room <= this.buffer.length) return
    const bigger = Buffer.allocUnsafe(Math.max(this.buffer.length * 2, pos + room))
    this.buffer.copy(bigger, 0, 0, pos)
    this.buffer = bigger
  }

  private integerCell (buf: Buffer, pos: number, cell: Cell | undefined): number {
    if (typeof cell === 'number' && Number.isSafeInteger(cell)) return writeInt8(buf, pos, cell)
    const parsed = readInteger(cell)
    return parsed.kind === 'ok' ? writeInt8(buf, pos, parsed.value) : writeNull(buf, pos)
  }

  /**
   * A text cell as readText reads it (trimmed; numbers and booleans as they print;
   * empty is NULL). The buffer may grow, and a typed array drops writes past its end
   * without a word, so every text leaves ROW_ROOM after it; callers reload
   * `this.buffer` after this.
   */
  private textCell (pos: number, cell: Cell | undefined, column: string): number {
    const key = typeof cell === 'string' ? cell : readText(cell)
    if (key === null) return writeNull(this.buffer, pos)
    let encoded = this.texts.get(key)
    if (encoded === undefined) {
      if (this.texts.size >= CACHE_LIMIT || this.cachedBytes >= CACHE_MAX_BYTES) {
        this.texts.clear()
        this.cachedBytes = 0
      }
      // Checked once per distinct text, as it is encoded: PostgreSQL text cannot hold U+0000,
      // and COPY would fail on it with a database error (a 500) instead of a refusal.
      if (key.includes('\u0000')) {
        throw new EngineError('LEDGER_INVALID_CELLS', `Row ${this.rowNumber}, column ${column} holds a NUL character (U+0000), which the database cannot store as text; nothing was written. Remove it from the cell and send the file again.`, { invalid_cells: 1 })
      }
      encoded = lengthPrefixed(readText(key))
      // Its own copy: a CSV cell is a slice of a 64 KiB chunk of text, which the key would keep alive.
      this.texts.set(ownCopy(key), encoded)
      this.cachedBytes += 2 * key.length + encoded.length
    }
    this.ensureAt(pos, encoded.length + ROW_ROOM)
    // One native copy: on short ledger texts it beats a byte loop by half.
    this.buffer.set(encoded, pos)
    return pos + encoded.length
  }

  /** Days since PostgreSQL's epoch of an ISO `YYYY-MM-DD` date (the analyzer's form). */
  private dayOf (iso: string): number {
    let day = this.days.get(iso)
    if (day === undefined) {
      day = Date.parse(`${iso}T00:00:00Z`) / DAY_MS - PG_EPOCH_DAYS
      if (!Number.isInteger(day)) throw new RangeError(`not an ISO calendar date: "${iso}"`)
      if (this.days.size >= CACHE_LIMIT) this.days.clear()
      this.days.set(iso, day)
    }
    return day
  }
}

/** A text's length and UTF-8 bytes, ready to copy; an empty text (all spaces) is NULL. */
function lengthPrefixed (text: string | null): Buffer {
  if (text === null) return Buffer.from([0xff, 0xff, 0xff, 0xff])
  const length = Buffer.byteLength(text)
  const out = Buffer.allocUnsafe(4 + length)
  out.writeInt32BE(length, 0)
  out.write(text, 4)
  return out
}

function writeNull (buf: Buffer, pos: number): number {
  buf[pos] = 0xff
  buf[pos + 1] = 0xff
  buf[pos + 2] = 0xff
  buf[pos + 3] = 0xff
  return pos + 4
}

/** A 32-bit big-endian integer, without a length. */
function put32 (buf: Buffer, pos: number, value: number): void {
  buf[pos] = value >>> 24
  buf[pos + 1] = (value >>> 16) & 0xff
  buf[pos + 2] = (value >>> 8) & 0xff
  buf[pos + 3] = value & 0xff
}

function writeInt4 (buf: Buffer, pos: number, value: number): number {
  put32(buf, pos, 4)
  put32(buf, pos + 4, value)
  return pos + 8
}

/** A safe integer as a bigint field: high and low 32-bit halves of its two's complement. */
function writeInt8 (buf: Buffer, pos: number, value: number): number {
  put32(buf, pos, 8)
  const high = Math.floor(value / 4294967296)
  put32(buf, pos + 4, high | 0)
  put32(buf, pos + 8, (value - high * 4294967296) >>> 0)
  return pos + 12
}

function writeDate (buf: Buffer, pos: number, days: number): number {
  put32(buf, pos, 4)
  put32(buf, pos + 4, days)
  return pos + 8
}

function put16 (buf: Buffer, pos: number, value: number): void {
  buf[pos] = (value >>> 8) & 0xff
  buf[pos + 1] = value & 0xff
}

/**
 * Cents as a `numeric` with two decimals. The whole units become base-10000 digits
 * (weight = their count - 1) and the cents one more digit after the point (cents *
 * 100); trailing zero digits are left out, as PostgreSQL stores them.
 * 123456789 cents = 1,234,567.89 → digits [123, 4567, 8900], weight 1.
 */
function writeCents (buf: Buffer, pos: number, cents: number): number {
  const negative = cents < 0
  if (negative) cents = -cents
  let units = Math.floor(cents / 100)
  const fraction = (cents - units * 100) * 100
  // Base-10000 groups of the units, least significant first. A safe integer of cents
  // has at most 14 digits of units, so four groups hold any of them.
  const g0 = units % 10000
  units = Math.floor(units / 10000)
  const g1 = units % 10000
  units = Math.floor(units / 10000)
  const g2 = units % 10000
  const g3 = Math.floor(units / 10000)
  const groups = g3 > 0 ? 4 : g2 > 0 ? 3 : g1 > 0 ? 2 : g0 > 0 ? 1 : 0
  // Without cents, trailing zero groups of the units are left out too (10000.00 is one digit).
  let lowest = 0
  if (fraction === 0) while (lowest < groups && groupAt(lowest, g0, g1, g2, g3) === 0) lowest++
  const ndigits = groups - lowest + (fraction === 0 ? 0 : 1)
  put32(buf, pos, 8 + 2 * ndigits)
  put16(buf, pos + 4, ndigits)
  put16(buf, pos + 6, ndigits === 0 ? 0 : groups - 1)
  put16(buf, pos + 8, negative && ndigits > 0 ? NUMERIC_NEG : 0)
  put16(buf, pos + 10, 2)
  let at = pos + 12
  for (let i = groups - 1; i >= lowest; i--) {
    put16(buf, at, groupAt(i, g0, g1, g2, g3))
    at += 2
  }
  if (fraction !== 0) {
    put16(buf, at, fraction)
    at += 2
  }
  return at
}

function groupAt (i: number, g0: number, g1: number, g2: number, g3: number): number {
  return i === 0 ? g0 : i === 1 ? g1 : i === 2 ? g2 : g3
}

/**
 * `text` in a string of its own. Slicing a concatenation makes V8 flatten it into a new
 * string first; a slice of a longer string would keep that whole string alive.
 */
function ownCopy (text: string): string {
  return (' ' + text).slice(1)
}
