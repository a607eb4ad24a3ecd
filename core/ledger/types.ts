/** How many problem cells a response lists; the counts cover all of them. */
export const MAX_PROBLEM_SAMPLES = 100

/**
 * What can be wrong with a cell. INVALID_*, MISSING_*, UNCOMPUTED_FORMULA,
 * TEXT_TOO_LONG and TEXT_AT_CELL_LIMIT make a file unfit to import (the import refuses it); NEGATIVE_AMOUNT
 * and ROUNDED_AMOUNT are kept in the totals (with their sign, or rounded half away
 * from zero to the cent) and reported so that a person can check them.
 */
export type ProblemKind =
  | 'INVALID_AMOUNT' | 'NEGATIVE_AMOUNT' | 'ROUNDED_AMOUNT'
  | 'INVALID_DATE' | 'INVALID_INTEGER' | 'MISSING_ID' | 'MISSING_ID_MOVIM_FINAN'
  /** A formula saved without its computed value: the value is unknown (it counts as zero in the totals). */
  | 'UNCOMPUTED_FORMULA'
  /** Text longer than a cell can hold in Excel (32,767 characters): crafted or damaged. */
  | 'TEXT_TOO_LONG'
  /**
   * Text of exactly 32,767 characters, the cell's limit: the program that wrote the file cut
   * a longer text (LibreOffice does, without a word, when it saves a longer one). Importing
   * it would store the cut text as if it were whole.
   */
  | 'TEXT_AT_CELL_LIMIT'

/** What each problem means, in a sentence for the person fixing the file. */
export const PROBLEM_MESSAGES: Record<ProblemKind, string> = {
  INVALID_AMOUNT: 'The amount cannot be read as a number: use digits with a comma or point for the cents (1.234,56 or 1234.56).',
  NEGATIVE_AMOUNT: 'The amount is negative; it is kept with its sign in the totals. Check that this is intended.',
  ROUNDED_AMOUNT: 'The amount has more than two decimals; it was rounded half away from zero to the cent.',
  INVALID_DATE: 'The date cannot be read or does not exist: use a date cell, dd/mm/yyyy or yyyy-mm-dd.',
  INVALID_INTEGER: 'The cell must hold a whole number.',
  MISSING_ID: 'The row has no id: without the source row\'s id an import cannot tell this movement from one already imported.',
  MISSING_ID_MOVIM_FINAN: 'The row has no id_movim_finan, so its group cannot be balanced.',
  UNCOMPUTED_FORMULA: 'The cell holds a formula that was saved without its value (the program that wrote the file does not compute formulas). Open the file in Excel or LibreOffice and save it, so that the values are computed, then send it again.',
  TEXT_TOO_LONG: 'The text is longer than the 32,767 characters an Excel cell can hold; the file is damaged or was not written by a spreadsheet program.',
  TEXT_AT_CELL_LIMIT: 'The text fills the cell to its limit of 32,767 characters: the program that wrote the file most likely cut a longer text there. Shorten the text in the source and send the file again.'
}

export interface CellProblem {
  kind: ProblemKind
  /** Row number as the spreadsheet shows it. */
  rowNumber: number
  column: string
  /** The cell as read, for the person fixing the file. */
  value: string
}

/** The result of one read of a ledger, in integer cents. Wire names are mapped in server/. */
export interface LedgerAnalysis {
  totalRows: number
  totalBatches: number
  totalDebitCents: number
  totalCreditCents: number
  differenceCents: number
  distinctGroups: number
  minDate: string | null
  maxDate: string | null
  types: Record<string, number>
  rowsWithBothDebitCredit: number
  rowsWithoutValues: number
  unbalancedGroups: number
  problemCounts: Record<ProblemKind, number>
  problemSamples: CellProblem[]
}

export interface DiagnosticLine {
  rowNumber: number
  type: string | null
  accountId: number | null
  planningId: number | null
  description: string | null
  debitCents: number
  creditCents: number
  history: string | null
}

export interface DiagnosticGroup {
  groupId: number
  date: string | null
  debitCents: number
  creditCents: number
  differenceCents: number
  description: string | null
  history: string | null
  /** Every row of the group; `lines` lists fewer only when the listing cap cut the group short. */
  lineCount: number
  lines: DiagnosticLine[]
}

export interface LedgerDiagnosis {
  analysis: LedgerAnalysis
  /** The unbalanced groups, in order of first appearance, up to the listing cap (see diagnoseLedger). */
  groups: DiagnosticGroup[]
  /** Unbalanced groups past the cap: counted in the analysis, not listed. */
  omittedGroups: number
  /** Rows of unbalanced groups not listed: those of omitted groups and any cut from the last listed one. */
  omittedLines: number
}
