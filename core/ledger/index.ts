/** Ledger analysis and diagnosis over rows from any sheet source. */
export { analyzeLedger, diagnoseLedger } from './ledger.js'
export type { SheetSource, LedgerOptions } from './ledger.js'
export { LedgerAnalyzer } from './analyzer.js'
export type { LedgerRow } from './analyzer.js'
export { REQUIRED_COLUMNS, HISTORY_COLUMN, mapColumns } from './columns.js'
export { readAmount, readDate, readInteger, readText } from './values.js'
export { MAX_PROBLEM_SAMPLES } from './types.js'
export type { CellProblem, DiagnosticGroup, DiagnosticLine, LedgerAnalysis, LedgerDiagnosis, ProblemKind } from './types.js'
