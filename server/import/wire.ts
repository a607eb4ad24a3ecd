/**
 * Wire shapes of the import service (spec 1, section 2). Field names here are the
 * contract; core keeps English names and integer cents, converted only here.
 */
import { centsToNumber } from '../../core/money/index.js'
import type { ProcessResult, StoredDiagnosis } from '../../core/importer/process-ledger.js'
import type { OverlapReport, OverlappedImport } from '../../core/importer/movement-keys.js'
import type { Code } from '../../core/errors.js'
import { PROBLEM_MESSAGES, countBlocking } from '../../core/ledger/index.js'
import type { CellProblem, DiagnosticGroup, LedgerAnalysis, ProblemKind } from '../../core/ledger/index.js'

export interface FileFacts { fileName: string, sha256: string }

export interface AnalyzeResponse {
  success: true
  file_name: string
  sha256: string
  total_rows: number
  total_batches: number
  total_debit: number
  total_credit: number
  difference: number
  distinct_id_movim_finan: number
  min_date: string | null
  max_date: string | null
  types: Record<string, number>
  rows_with_both_debit_credit: number
  rows_without_values: number
  unbalanced_lots: number
  /** Not in the spec: cells that could not be read as their column's type (see README). */
  invalid_cells: number
  /** Not in the spec: amounts below zero, kept with their sign in the totals. */
  negative_amounts: number
  /** Not in the spec: amounts with more than two decimals, rounded to the cent. */
  rounded_amounts: number
  /** Not in the spec: the first problem cells, for the person fixing the file. */
  cell_problems: Array<{ linha: number, coluna: string, valor: string, problema: ProblemKind, mensagem: string }>
}

export function toAnalyzeResponse (file: FileFacts, a: LedgerAnalysis): AnalyzeResponse {
  const p = a.problemCounts
  return {
    success: true,
    file_name: file.fileName,
    sha256: file.sha256,
    total_rows: a.totalRows,
    total_batches: a.totalBatches,
    total_debit: centsToNumber(a.totalDebitCents),
    total_credit: centsToNumber(a.totalCreditCents),
    difference: centsToNumber(a.differenceCents),
    distinct_id_movim_finan: a.distinctGroups,
    min_date: a.minDate,
    max_date: a.maxDate,
    types: a.types,
    rows_with_both_debit_credit: a.rowsWithBothDebitCredit,
    rows_without_values: a.rowsWithoutValues,
    unbalanced_lots: a.unbalancedGroups,
    invalid_cells: countBlocking(p),
    negative_amounts: p.NEGATIVE_AMOUNT,
    rounded_amounts: p.ROUNDED_AMOUNT,
    cell_problems: a.problemSamples.map(toWireProblem)
  }
}

export interface ProcessResponse extends AnalyzeResponse {
  importacao_id: string
  empresa_id: string
  codigo_dominio: string
  modo_importacao: 'NORMAL' | 'REIMPORTAR'
  replaced_importacao_id: string | null
  /** Not in the spec: every import this REIMPORTAR replaced (the same file's, and those sharing movements). */
  importacoes_substituidas: WireOverlappedImport[]
  inserted_rows: number
  status: 'VALIDADO'
}

export function toProcessResponse (file: FileFacts, codigoDominio: string, mode: 'NORMAL' | 'REIMPORTAR', r: ProcessResult): ProcessResponse {
  return {
    ...toAnalyzeResponse(file, r.analysis),
    importacao_id: r.importacaoId,
    empresa_id: r.empresaId,
    codigo_dominio: codigoDominio,
    modo_importacao: mode,
    replaced_importacao_id: r.replacedImportacaoId,
    importacoes_substituidas: r.replaced.map(toWireOverlapped),
    inserted_rows: r.insertedRows,
    status: r.status
  }
}

function toWireProblem (p: CellProblem): AnalyzeResponse['cell_problems'][number] {
  return { linha: p.rowNumber, coluna: p.column, valor: p.value, problema: p.kind, mensagem: PROBLEM_MESSAGES[p.kind] }
}

export function toDiagnoseResponse (file: FileFacts, d: StoredDiagnosis) {
  const a = d.analysis
  return {
    success: true as const,
    diagnostico: d.groups.length > 0 ? 'ARQUIVO_DESBALANCEADO' as const : 'ARQUIVO_BALANCEADO' as const,
    nome_arquivo: file.fileName,
    sha256: file.sha256,
    resumo: {
      total_linhas: a.totalRows,
      total_movimentos_financeiros: a.distinctGroups,
      total_debito: centsToNumber(a.totalDebitCents),
      total_credito: centsToNumber(a.totalCreditCents),
      diferenca: centsToNumber(a.differenceCents),
      quantidade_grupos_desbalanceados: a.unbalancedGroups,
      total_batches: a.totalBatches
    },
    grupos_desbalanceados: d.groups.map(toWireGroup),
    /** Not in the spec: unbalanced groups past the listing cap (core/ledger/ledger.ts, MAX_DIAGNOSTIC_LINES). */
    grupos_omitidos: d.omittedGroups,
    /** Not in the spec: rows of unbalanced groups not listed. */
    linhas_omitidas: d.omittedLines
  }
}
export type DiagnoseResponse = ReturnType<typeof toDiagnoseResponse>

function toWireGroup (g: DiagnosticGroup) {
  return {
    id_movim_finan: g.groupId,
    data: g.date,
    total_debito: centsToNumber(g.debitCents),
    total_credito: centsToNumber(g.creditCents),
    diferenca: centsToNumber(g.differenceCents),
    quantidade_linhas: g.lineCount,
    descricao_origem: g.description,
    historico_origem: g.history,
    linhas: g.lines.map((l) => ({
      linha_origem: l.rowNumber,
      tipo_origem: l.type,
      id_conta: l.accountId,
      id_planejamento: l.planningId,
      descricao_origem: l.description,
      valor_debito: centsToNumber(l.debitCents),
      valor_credito: centsToNumber(l.creditCents),
      historico_origem: l.history
    }))
  }
}

export interface WireOverlappedImport {
  importacao_id: string
  nome_arquivo: string
  sha256: string
  criado_em: string
  total_linhas: number
  /** Its movements that the file carries too (same `id`). */
  movimentos_sobrepostos: number
  /** Its movements that the file does not carry: no longer active once it is replaced. */
  movimentos_fora_do_arquivo: number
}

function toWireOverlapped (i: OverlappedImport): WireOverlappedImport {
  return {
    importacao_id: i.importacaoId,
    nome_arquivo: i.fileName,
    sha256: i.sha256,
    criado_em: i.createdAt,
    total_linhas: i.totalRows,
    movimentos_sobrepostos: i.overlappingRows,
    movimentos_fora_do_arquivo: Math.max(0, i.totalRows - i.overlappingRows)
  }
}

export interface WireOverlap {
  codigo_dominio: string
  /** Movements of the file already active in the company's imports. */
  movimentos_sobrepostos: number
  importacoes: WireOverlappedImport[]
}

export function toWireOverlap (codigoDominio: string, overlap: OverlapReport): WireOverlap {
  return { codigo_dominio: codigoDominio, movimentos_sobrepostos: overlap.overlappingRows, importacoes: overlap.imports.map(toWireOverlapped) }
}

/** The import service's additions to an error body (server/http-errors.ts, ErrorFields). */
export function importErrorFields (code: Code, details: Record<string, unknown> | undefined): Record<string, unknown> | undefined {
  if (code === 'IMPORT_OVERLAP' && details?.overlap !== undefined && typeof details.codigoDominio === 'string') {
    return { code, sobreposicao: toWireOverlap(details.codigoDominio, details.overlap as OverlapReport) }
  }
  if (CODED.has(code)) return { code }
  return undefined
}

/** Refusals of the job routes (/v1/imports) whose body names the code, for clients to branch on. */
const CODED = new Set<Code>(['IMPORT_IDEMPOTENCY_MISMATCH', 'IMPORT_FINISHED', 'IMPORT_NOT_CANCELLABLE', 'IMPORT_NOT_FOUND', 'IMPORT_NO_PROBLEMS'])

/** `/v1/analyze` with `codigo_dominio`: the overlap, and a sentence saying what NORMAL and REIMPORTAR would do with it. */
export function toAnalyzeOverlap (codigoDominio: string, overlap: OverlapReport): WireOverlap & { aviso: string | null } {
  const n = overlap.overlappingRows
  const dropped = overlap.imports.reduce((sum, i) => sum + Math.max(0, i.totalRows - i.overlappingRows), 0)
  const aviso = n === 0
    ? null
    : `${n} movement${n === 1 ? ' of this file is' : 's of this file are'} already active for company "${codigoDominio}" in ${overlap.imports.length} import${overlap.imports.length === 1 ? '' : 's'}. ` +
      `/v1/process NORMAL would refuse it (409 IMPORT_OVERLAP); REIMPORTAR would replace ${overlap.imports.length === 1 ? 'that import' : 'those imports'} whole` +
      (dropped > 0 ? `, and ${dropped} of ${overlap.imports.length === 1 ? 'its' : 'their'} movements that this file does not carry would no longer count.` : '.')
  return { ...toWireOverlap(codigoDominio, overlap), aviso }
}
