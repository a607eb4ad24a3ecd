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
const NULL_BYTES = Buffer.from(NULL)

/** A text value as COPY reads it back unchanged (null → `\N`). */
export function copyText (value: string | null): string {
  if (value === null) return NULL
  if (!NEEDS_ESCAPE.test(value)) return value
  return value.replace(/[\\\t\n\r]/g, (ch) => ch === '\\' ? '\\\\' : ch === '\t' ? '\\t' : ch === '\n' ? '\\n' : '\\r')
}

/** Bounds the caches on files whose values never repeat (free-form histories). */
const CACHE_LIMIT = 200_000

/**
 * Encodes the rows of one load into COPY text, batch by batch. Ledger texts and
 * dates repeat (accounts, plans and kinds come from the shared strings table), so
 * each distinct value is escaped and UTF-8 encoded once, then copied as bytes.
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
    this.buffer = Buffer.allocUnsafe(batchBytesHint)
  }

  /** Lines encoded since the last take(). */
  get pending (): number {
    return this.lines
  }

  /** Appends one line for a row of a file without blocking problems so far. */
  add (row: LedgerRow, cells: Cell[], c: ColumnMap): void {
    this.ensure(512)
    this.bytes(this.prefix)
    this.integer(row.rowNumber)
    this.tab()
    this.integerCell(cells[c.id])
    this.tab()
    if (row.groupId === null) this.bytes(NULL_BYTES)
    else this.integer(row.groupId)
    this.tab()
    this.text(row.date)
    this.tab()
    this.integerCell(cells[c.id_conta])
    this.tab()
    this.textCell(cells[c.planejamento_analitico])
    this.tab()
    this.integerCell(cells[c.id_planejamento])
    this.tab()
    this.textCell(cells[c.planejamento])
    this.tab()
    this.textCell(cells[c.tipo])
    this.tab()
    this.textCell(cells[c.cod_planejamento])
    this.tab()
    this.cents(row.creditCents)
    this.tab()
    this.cents(row.debitCents)
    this.tab()
    if (c.historico === undefined) this.bytes(NULL_BYTES)
    else this.textCell(cells[c.historico])
    this.buffer[this.pos++] = NEWLINE
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

  private tab (): void {
    this.buffer[this.pos++] = TAB
  }

  private ensure (room: number): void {
    if (this.pos + room <= this.buffer.length) return
    const bigger = Buffer.allocUnsafe(Math.max(this.buffer.length * 2, this.pos + room))
    this.buffer.copy(bigger, 0, 0, this.pos)
    this.buffer = bigger
  }

  private bytes (src: Buffer): void {
    this.ensure(src.length + 96)
    const buf = this.buffer
    let pos = this.pos
    // Short values dominate; a plain loop beats a native copy call for them.
    if (src.length <= 32) {
      for (let i = 0; i < src.length; i++) buf[pos++] = src[i]!
    } else {
      src.copy(buf, pos)
      pos += src.length
    }
    this.pos = pos
  }

  /** A safe integer in decimal ASCII. */
  private integer (value: number): void {
    const buf = this.buffer
    if (value < 0) {
      buf[this.pos++] = MINUS
      value = -value
    }
    if (value < 10) {
      buf[this.pos++] = ZERO + value
      return
    }
    let digits = 1
    for (let v = value; v >= 10; v = Math.floor(v / 10)) digits++
    let end = this.pos + digits
    this.pos = end
    while (value >= 10) {
      const next = Math.floor(value / 10)
      buf[--end] = ZERO + (value - next * 10)
      value = next
    }
    buf[--end] = ZERO + value
  }

  private integerCell (cell: Cell | undefined): void {
    if (typeof cell === 'number' && Number.isSafeInteger(cell)) {
      this.integer(cell)
      return
    }
    const parsed = readInteger(cell)
    if (parsed.kind === 'ok') this.integer(parsed.value)
    else this.bytes(NULL_BYTES)
  }

  /** Cents as `numeric` text with two decimals: -12345 → `-123.45`. */
  private cents (cents: number): void {
    if (cents < 0) {
      this.buffer[this.pos++] = MINUS
      cents = -cents
    }
    const units = Math.floor(cents / 100)
    const rest = cents - units * 100
    this.integer(units)
    const buf = this.buffer
    buf[this.pos++] = DOT
    buf[this.pos++] = ZERO + Math.floor(rest / 10)
    buf[this.pos++] = ZERO + (rest % 10)
  }

  private textCell (cell: Cell | undefined): void {
    if (typeof cell === 'string') this.text(cell)
    else this.bytes(Buffer.from(copyText(readText(cell))))
  }

  /** A string as COPY text, raw cells trimmed first (as readText does); cached per distinct string. */
  private text (value: string | null): void {
    if (value === null) {
      this.bytes(NULL_BYTES)
      return
    }
    let encoded = this.texts.get(value)
    if (encoded === undefined) {
      if (this.texts.size >= CACHE_LIMIT) this.texts.clear()
      encoded = Buffer.from(copyText(readText(value)))
      this.texts.set(value, encoded)
    }
    this.bytes(encoded)
  }
}
