/** How many problem cells a response lists; the counts cover all of them. */
export const MAX_PROBLEM_SAMPLES = 100

/**
 * What can be wrong with a cell. INVALID_* and MISSING_* make a file unfit to
 * import (the import refuses it); NEGATIVE_AMOUNT and ROUNDED_AMOUNT are kept in
 * the totals (with their sign, or rounded half away from zero to the cent) and
 * reported so that a person can check them.
 */
export type ProblemKind =
  | 'INVALID_AMOUNT' | 'NEGATIVE_AMOUNT' | 'ROUNDED_AMOUNT'
  | 'INVALID_DATE' | 'INVALID_INTEGER' | 'MISSING_ID_MOVIM_FINAN'

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
