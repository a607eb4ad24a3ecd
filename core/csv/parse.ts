/**
 * CSV records from decoded text, pushed chunk by chunk (RFC 4180, read leniently the
 * way spreadsheet programs read it). A field that starts with `"` is quoted: it runs to
 * the next lone `"`, `""` inside it is one quote, and separators and line breaks inside
 * it are text. A quote anywhere else is an ordinary character, and text between a
 * closing quote and the next separator is kept. Records end at LF, CRLF or a lone CR.
 *
 * The parser keeps its state between pushes, so a record split across chunks is never
 * scanned twice, and it holds at most one record: a record longer than the bound is
 * refused as soon as it passes it, whatever the file's length.
 */
import { EngineError } from '../errors.js'

const QUOTE = 0x22
const LF = 0x0a
const CR = 0x0d

/** Empty fields are null, as empty cells of a sheet are. */
export type CsvField = string | null

/**
 * Called per record that has something in it (a blank line, or a line of separators
 * only, is skipped but counted). `recordNumber` is the row a spreadsheet program shows
 * for it: records count from 1, blank ones included, and a field with line breaks inside
 * is still one row. `fields` belongs to the callee. Return false to stop.
 */
export type RecordVisitor = (recordNumber: number, fields: CsvField[]) => void | boolean

export interface CsvParseLimits {
  /** Longest record, in characters, before it is refused (quoted line breaks included). */
  maxRecordChars: number
  /** Most fields in one record. */
  maxFields: number
}

const enum State { FieldStart, Unquoted, Quoted, QuoteInQuoted }

export class CsvParser {
  /** Line of the text (as a text editor numbers them) at the parse position. */
  line = 1
  /** Records seen, blank ones included. */
  records = 0
  /** Records handed to the visitor. */
  rowsRead = 0
  /** The visitor asked to stop. */
  stopped = false

  private state = State.FieldStart
  private fields: CsvField[] = []
  /** The current field's text so far, when it spans chunks or quotes. */
  private piece = ''
  /** The current field holds a CR inside quotes (normalised to LF when it ends). */
  private pieceHasCr = false
  /** The previous push ended on a CR that ended a record: an LF starting this one belongs to it. */
  private skipLf = false
  /** Characters of the current record given by earlier pushes. */
  private recordChars = 0
  private quoteLine = 0

  private readonly delimiter: number

  constructor (
    private readonly delimiterText: string,
    private readonly onRecord: RecordVisitor,
    private readonly limits: CsvParseLimits
  ) {
    this.delimiter = delimiterText.charCodeAt(0)
  }

  push (text: string): void {
    const n = text.length
    const delimiter = this.delimiter
    let i = 0
    let recordStart = 0
    if (this.skipLf) {
      this.skipLf = false
      if (n > 0 && text.charCodeAt(0) === LF) i = recordStart = 1
    }
    // Where the next quote, CR and LF are (n for none): found once and reused while the
    // parse position stays before them.
    let nextQuote = -1
    let nextCr = -1
    let nextLf = -1
    while (i < n && !this.stopped) {
      if (this.state === State.FieldStart && this.fields.length === 0) {
        // A whole line with no quote in it (nearly every ledger line): split natively.
        if (nextLf < i) nextLf = indexOr(text, '\n', i, n)
        if (nextQuote < i) nextQuote = indexOr(text, '"', i, n)
        if (nextCr < i) nextCr = indexOr(text, '\r', i, n)
        if (nextLf < n && nextQuote > nextLf && nextCr >= nextLf - 1) {
          const end = nextCr === nextLf - 1 ? nextCr : nextLf
          this.endLine(text.slice(i, end).split(this.delimiterText))
          this.line++
          i = recordStart = nextLf + 1
          continue
        }
      }
      switch (this.state) {
        case State.FieldStart:
          if (text.charCodeAt(i) === QUOTE) {
            this.state = State.Quoted
            this.quoteLine = this.line
            i++
            break
          }
          this.state = State.Unquoted
          break
        case State.Unquoted: {
          let j = i
          let c = 0
          for (; j < n; j++) {
            c = text.charCodeAt(j)
            if (c === delimiter || c === LF || c === CR) break
          }
          if (j === n) {
            this.piece += text.slice(i)
            i = n
            break
          }
          this.endField(this.piece === '' ? text.slice(i, j) : this.piece + text.slice(i, j))
          i = j + 1
          this.state = State.FieldStart
          if (c !== delimiter) {
            this.endRecord()
            this.line++
            if (c === CR) {
              if (i < n) {
                if (text.charCodeAt(i) === LF) i++
              } else {
                this.skipLf = true
              }
            }
            recordStart = i
          }
          break
        }
        case State.Quoted: {
          const j = text.indexOf('"', i)
          const segment = j === -1 ? text.slice(i) : text.slice(i, j)
          this.piece += segment
          this.countLines(segment)
          if (j === -1) {
            i = n
          } else {
            this.state = State.QuoteInQuoted
            i = j + 1
          }
          break
        }
        case State.QuoteInQuoted:
          if (text.charCodeAt(i) === QUOTE) {
            this.piece += '"'
            this.state = State.Quoted
            i++
          } else {
            // The quote closed the field; anything up to the separator is kept as it is.
            this.state = State.Unquoted
          }
          break
      }
    }
    if (this.recordInProgress()) {
      this.recordChars += n - recordStart
      if (this.recordChars > this.limits.maxRecordChars) throw this.tooLong()
    } else {
      this.recordChars = 0
    }
  }

  /** The end of the text: the last record may lack its line break; an open quote is refused. */
  end (): void {
    if (this.stopped) return
    if (this.state === State.Quoted) {
      throw new EngineError('CSV_MALFORMED', `Line ${this.quoteLine} of the CSV file opens a quoted field (") that is never closed: the rest of the file would be one cell. Close that quote, or write a quote inside a quoted field twice ("").`, { line: this.quoteLine, problem: 'unclosed-quote' })
    }
    if (this.recordInProgress()) {
      this.endField(this.piece)
      this.endRecord()
    }
  }

  private recordInProgress (): boolean {
    return this.fields.length > 0 || this.piece !== '' || this.state !== State.FieldStart
  }

  private countLines (segment: string): void {
    if (segment.indexOf('\n') === -1 && segment.indexOf('\r') === -1) return
    for (let k = 0; k < segment.length; k++) {
      const c = segment.charCodeAt(k)
      if (c === LF) this.line++
      else if (c === CR) {
        this.pieceHasCr = true
        if (segment.charCodeAt(k + 1) !== LF) this.line++
      }
    }
  }

  private endField (text: string): void {
    let value: string = text
    if (this.pieceHasCr) {
      // Line breaks inside a cell become LF, as the XLSX reader reads them (XML's rule).
      value = value.replace(/\r\n?/g, '\n')
      this.pieceHasCr = false
    }
    this.piece = ''
    if (this.fields.length >= this.limits.maxFields) throw this.tooManyFields()
    this.fields.push(value === '' ? null : value)
  }

  /** A line's fields from split(): empty ones become null, then the record ends. */
  private endLine (fields: CsvField[]): void {
    if (fields.length > this.limits.maxFields) throw this.tooManyFields()
    for (let k = 0; k < fields.length; k++) if (fields[k] === '') fields[k] = null
    this.fields = fields
    this.endRecord()
  }

  private endRecord (): void {
    const fields = this.fields
    this.fields = []
    this.recordChars = 0
    this.records++
    if (fields.length === 1 && fields[0] === null) return
    let blank = true
    for (let k = 0; k < fields.length; k++) {
      if (fields[k] !== null) { blank = false; break }
    }
    if (blank) return
    this.rowsRead++
    if (this.onRecord(this.records, fields) === false) this.stopped = true
  }

  private tooManyFields (): EngineError {
    return new EngineError('CSV_MALFORMED', `Line ${this.line} of the CSV file has more than ${this.limits.maxFields.toLocaleString('en-US')} fields, more columns than a spreadsheet holds: the file is damaged or is not a ledger.`, { line: this.line, problem: 'too-many-fields' })
  }

  private tooLong (): EngineError {
    const limit = this.limits.maxRecordChars.toLocaleString('en-US')
    if (this.state === State.Quoted) {
      return new EngineError('CSV_MALFORMED', `The quoted field that opens on line ${this.quoteLine} of the CSV file runs past ${limit} characters without closing: its quote (") is probably never closed. Close it, or write a quote inside a quoted field twice ("").`, { line: this.quoteLine, problem: 'unclosed-quote' })
    }
    return new EngineError('CSV_MALFORMED', `Line ${this.line} of the CSV file is longer than ${limit} characters; a ledger line holds a few hundred: the file is damaged or is not a ledger.`, { line: this.line, problem: 'line-too-long' })
  }
}

/** Offset of `char` in text[from, n), or n when it is not there. */
function indexOr (text: string, char: string, from: number, n: number): number {
  const at = text.indexOf(char, from)
  return at === -1 ? n : at
}
