/**
 * The shapes of a document's text as the engine and plugins see it (text.ts builds them).
 * Coordinates are PDF user space of the page (origin bottom-left, y up), in points.
 */

export interface Box { x: number, y: number, width: number, height: number }

/** One run of text as the PDF draws it, or a word as OCR read it (with Tesseract's confidence in it, 0 to 1). */
export interface TextRun { text: string, box: Box, confidence?: number }

/** A visual line: runs sharing a baseline band, left to right. */
export interface TextLine {
  /** 1-based page number. */
  page: number
  text: string
  box: Box
  /** The runs of the line and where each starts in `text`. */
  runs: Array<{ run: TextRun, start: number }>
}

/** Where a value was read: what a person needs to check it in a second. */
export interface Evidence {
  page: number
  /** The line the value was read from, as rebuilt. */
  source: string
  /** The box of the value's runs on that page. */
  box: Box
  /** Read by OCR: the lowest confidence (0 to 1) of the words the value was read from. */
  confidence?: number
}

/** A value found in the text, with its evidence. */
export interface Hit extends Evidence {
  /** The captured value (first capture group, or the whole match). */
  value: string
  /** Every capture group of the match. */
  groups: Array<string | undefined>
  /** Each capture group as a hit of its own (its own box), undefined where the group did not take part. */
  parts: Array<Hit | undefined>
  /**
   * Set when two readings of a label disagree (label-value.ts): the value is empty, and
   * `ctx.take` gives null and a `LABEL_VALUE_CONFLICT` warning with this sentence.
   */
  conflict?: string
}

/** `source` says where the runs came from: the PDF's text layer (the default) or OCR of the page's image. */
export interface PageText { page: number, width: number, height: number, runs: TextRun[], source?: 'TEXT_LAYER' | 'OCR' }

/**
 * What a structural query looks for on a line. A RegExp is tried on the line's text; a
 * string is compared accent- and case-blind with the start of one of the line's runs
 * (`'TOMADOR DO SERVIÇO'` finds the run `Tomador do Serviço`), which is how a heading or a
 * column title printed as its own piece of text is recognised.
 */
export type Label = RegExp | string

export interface SearchOptions {
  /** Only this 1-based page. */
  page?: number
  /** Only lines whose box lies inside this region (user space of its page). */
  within?: Box
}

/** Options of `table` and `column`: where the rows stop. */
export interface RowOptions {
  /** Each non-empty cell must match this (its first group, if any, is the value); a row where one does not ends the table. */
  cell?: RegExp
  /** A line matching this ends the table. */
  until?: Label
  /** At most this many rows. */
  maxRows?: number
  /** A vertical gap larger than this many points between rows ends the table (default: one and a half line heights). */
  maxGap?: number
}

/** One row of a table read by its column headers: the line and one cell per column (undefined where the column is empty). */
export interface TableRow { line: TextLine, cells: Array<Hit | undefined> }

