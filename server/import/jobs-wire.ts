/**
 * Wire shapes of imports as jobs (/v1/imports, `razao imports`). The spec shows no status
 * but VALIDADO and SUBSTITUIDO; these routes are beyond it and follow its style: Portuguese
 * field names, statuses in capitals, phases in lower case (the row's own names, see
 * migration 0005). Percent, rate and time left are derived here from the row's figures.
 */
import type { ImportationRecord, ImportStatus } from '../../core/importer/import-jobs.js'
import { RUNNING_STATUSES } from '../../core/importer/import-jobs.js'
import { MAX_STORED_PROBLEMS } from '../../core/importer/load-state.js'
import type { LoadOrigin } from '../../core/importer/load-state.js'
import type { OverlapReport } from '../../core/importer/movement-keys.js'
import type { StoredDiagnosis } from '../../core/importer/process-ledger.js'
import { toDiagnoseResponse, toProcessResponse, toWireOverlap } from './wire.js'
import type { DiagnoseResponse, ProcessResponse, WireOverlap } from './wire.js'

/** A phase while the import runs; its status once it has ended (the "then VALIDADO, FALHOU or CANCELADO"). */
export type WirePhase = 'recebido' | 'lendo' | 'carregando' | 'validando' | 'finalizando' | Exclude<ImportStatus, 'RECEBIDO' | 'PROCESSANDO'>

export interface WireImportError {
  code: string
  detail: string
  /** The phase it was in when it ended (null for imports older than this API). */
  fase: string | null
  sobreposicao?: WireOverlap
  /** LEDGER_UNBALANCED of a job, in GET /v1/imports/{id} only: /v1/diagnose-unbalanced's answer, its first rows. */
  diagnostico?: DiagnoseResponse
}

export interface WireImport {
  importacao_id: string
  empresa_id: string
  codigo_dominio: string | null
  nome_arquivo: string
  sha256: string
  modo_importacao: 'NORMAL' | 'REIMPORTAR'
  batch_size: number
  origem: LoadOrigin
  status: ImportStatus
  fase: WirePhase
  linhas_lidas: number
  linhas_carregadas: number
  bytes_lidos: number
  bytes_total: number | null
  percentual: number
  taxa_linhas_s: number | null
  restante_estimado_s: number | null
  criado_em: string
  iniciado_em: string | null
  atualizado_em: string
  finalizado_em: string | null
  cancelamento_pedido_em: string | null
  substituida_por: string | null
  erro: WireImportError | null
  problemas: { total: number, listados: number, url: string } | null
  url: string
  eventos_url: string
}

export type WireImportWithResult = WireImport & { resultado: ProcessResponse | null }

export const importUrl = (id: string): string => `/v1/imports/${id}`
export const eventsUrl = (id: string): string => `/v1/imports/${id}/events`
export const problemsUrl = (id: string): string => `/v1/imports/${id}/problems.csv`

const INTERNAL_DETAIL = 'The load failed inside the service or the database; nothing of it was kept. The service\'s log has the cause (search it for this import\'s id).'

export function toWireImport (r: ImportationRecord): WireImport {
  const running = RUNNING_STATUSES.includes(r.status)
  const elapsed = r.elapsedS !== null && r.elapsedS > 0 ? r.elapsedS : null
  const bytesDone = r.bytesTotal !== null && r.bytesTotal > 0 ? Math.min(1, r.bytesRead / r.bytesTotal) : 0
  const ended = r.status === 'VALIDADO' || r.status === 'SUBSTITUIDO'
  const byteRate = elapsed !== null && r.bytesRead > 0 ? r.bytesRead / elapsed : null
  return {
    importacao_id: r.id,
    empresa_id: r.empresaId,
    codigo_dominio: r.codigoDominio,
    nome_arquivo: r.fileName,
    sha256: r.sha256,
    modo_importacao: r.mode,
    batch_size: r.batchSize,
    origem: r.origin,
    status: r.status,
    fase: running ? (r.phase ?? (r.status === 'RECEBIDO' ? 'recebido' : 'lendo')) : r.status as WirePhase,
    linhas_lidas: r.rowsRead,
    linhas_carregadas: r.rowsLoaded,
    bytes_lidos: r.bytesRead,
    bytes_total: r.bytesTotal,
    percentual: ended ? 100 : Math.floor(bytesDone * 1000) / 10,
    taxa_linhas_s: elapsed === null || r.status === 'RECEBIDO' ? null : Math.round(r.rowsRead / elapsed),
    restante_estimado_s: r.status === 'PROCESSANDO' && byteRate !== null && r.bytesTotal !== null
      ? Math.round(Math.max(0, r.bytesTotal - r.bytesRead) / byteRate * 10) / 10
      : null,
    criado_em: r.createdAt,
    iniciado_em: r.startedAt,
    atualizado_em: r.updatedAt,
    finalizado_em: r.finishedAt,
    cancelamento_pedido_em: r.cancelRequestedAt,
    substituida_por: r.replacedBy,
    erro: toWireError(r),
    problemas: r.problemsTotal === null || r.problemsTotal === 0
      ? null
      : { total: r.problemsTotal, listados: Math.min(r.problemsTotal, MAX_STORED_PROBLEMS), url: problemsUrl(r.id) },
    url: importUrl(r.id),
    eventos_url: eventsUrl(r.id)
  }
}

/** GET /v1/imports/{id}: the whole of it, with `/v1/process`'s answer once VALIDADO. */
export function toWireImportWithResult (r: ImportationRecord): WireImportWithResult {
  const resultado = r.result === null || r.codigoDominio === null
    ? null
    : toProcessResponse({ fileName: r.fileName, sha256: r.sha256 }, r.codigoDominio, r.mode, r.result)
  const wire = toWireImport(r)
  const diagnosis = r.errorDetails?.diagnosis as StoredDiagnosis | undefined
  if (wire.erro?.code === 'LEDGER_UNBALANCED' && diagnosis !== undefined) {
    wire.erro.diagnostico = toDiagnoseResponse({ fileName: r.fileName, sha256: r.sha256 }, diagnosis)
  }
  return { ...wire, resultado }
}

function toWireError (r: ImportationRecord): WireImportError | null {
  if (r.status !== 'FALHOU' && r.status !== 'CANCELADO') return null
  // Rows older than migration 0005 carry only the sentence.
  const code = r.errorCode ?? (r.error?.startsWith('interrupted') === true ? 'IMPORT_INTERRUPTED' : 'INTERNAL')
  const error: WireImportError = { code, detail: code === 'INTERNAL' ? INTERNAL_DETAIL : r.error ?? '', fase: r.phase }
  const overlap = r.errorDetails?.overlap as OverlapReport | undefined
  if (code === 'IMPORT_OVERLAP' && overlap !== undefined && r.codigoDominio !== null) error.sobreposicao = toWireOverlap(r.codigoDominio, overlap)
  return error
}

/** The 202 of POST /v1/imports (and of a request repeated with its Idempotency-Key). */
export function toAcceptedImport (r: ImportationRecord): Pick<WireImport, 'importacao_id' | 'status' | 'fase' | 'url' | 'eventos_url'> {
  const w = toWireImport(r)
  return { importacao_id: w.importacao_id, status: w.status, fase: w.fase, url: w.url, eventos_url: w.eventos_url }
}
