/**
 * Imports as jobs (issue 31, item 3): the statements behind POST, GET and DELETE
 * /v1/imports and `razao imports`. Everything a client may ask about an import lives in its
 * `importacoes` row (migration 0005), so any instance answers about any import; the
 * instance running a load writes its progress there and reads its cancel request in the
 * same statement (syncProgress).
 */
import type { ClientBase, Pool } from 'pg'
import { EngineError } from '../errors.js'
import type { Code } from '../errors.js'
import type { CellProblem, ProblemKind } from '../ledger/index.js'
import type { LoadOrigin, LoadPhase } from './load-state.js'
import { CANCELLED_TEXT, MAX_STORED_PROBLEMS } from './load-state.js'
import type { ProcessResult } from './process-ledger.js'

type Db = ClientBase | Pool

export const IMPORT_STATUSES = ['RECEBIDO', 'PROCESSANDO', 'VALIDADO', 'SUBSTITUIDO', 'FALHOU', 'CANCELADO'] as const
export type ImportStatus = typeof IMPORT_STATUSES[number]
/** Statuses of an import still under way. */
export const RUNNING_STATUSES: readonly ImportStatus[] = ['RECEBIDO', 'PROCESSANDO']

/** An import as its row tells it (English names; server/import/jobs-wire.ts gives the API's). */
export interface ImportationRecord {
  id: string
  empresaId: string
  codigoDominio: string | null
  fileName: string
  sha256: string
  mode: 'NORMAL' | 'REIMPORTAR'
  batchSize: number
  origin: LoadOrigin
  status: ImportStatus
  /** The phase while it runs; once ended, the phase it ended in (null for imports older than migration 0005). */
  phase: 'recebido' | LoadPhase | null
  rowsRead: number
  rowsLoaded: number
  bytesRead: number
  bytesTotal: number | null
  /** ISO 8601 UTC, milliseconds. */
  createdAt: string
  startedAt: string | null
  updatedAt: string
  finishedAt: string | null
  cancelRequestedAt: string | null
  /** Seconds from the load's start to its end, or to its last progress write while it runs, on the database's clock. */
  elapsedS: number | null
  replacedBy: string | null
  /** Once VALIDADO (then perhaps SUBSTITUIDO): the load's result; absent from lists. */
  result: ProcessResult | null
  errorCode: Code | null
  error: string | null
  errorDetails: Record<string, unknown> | null
  /** A refusal for invalid cells: how many rejected cells it found (problems.csv lists the first MAX_STORED_PROBLEMS). */
  problemsTotal: number | null
}

const ISO = (column: string): string => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`

const RECORD_COLUMNS = `i.id, i.empresa_id, e.codigo_dominio, i.nome_arquivo, i.sha256, i.modo, i.batch_size, i.origem, i.status, i.fase,
  i.linhas_lidas, i.linhas_carregadas, i.bytes_lidos::float8 AS bytes_lidos, i.bytes_total::float8 AS bytes_total,
  ${ISO('i.criado_em')} AS criado_em, ${ISO('i.iniciado_em')} AS iniciado_em, ${ISO('i.atualizado_em')} AS atualizado_em,
  ${ISO('i.finalizado_em')} AS finalizado_em, ${ISO('i.cancelamento_pedido_em')} AS cancelamento_pedido_em,
  extract(epoch FROM (coalesce(i.finalizado_em, i.atualizado_em) - i.iniciado_em))::float8 AS decorrido_s,
  i.substituida_por, i.erro_codigo, i.erro, i.erro_detalhes, i.problemas_total`

interface RecordRow {
  id: string
  empresa_id: string
  codigo_dominio: string | null
  nome_arquivo: string
  sha256: string
  modo: 'NORMAL' | 'REIMPORTAR'
  batch_size: number
  origem: LoadOrigin
  status: ImportStatus
  fase: ImportationRecord['phase']
  linhas_lidas: number
  linhas_carregadas: number
  bytes_lidos: number
  bytes_total: number | null
  criado_em: string
  iniciado_em: string | null
  atualizado_em: string
  finalizado_em: string | null
  cancelamento_pedido_em: string | null
  decorrido_s: number | null
  substituida_por: string | null
  erro_codigo: Code | null
  erro: string | null
  erro_detalhes: Record<string, unknown> | null
  problemas_total: number | null
  resultado?: ProcessResult | null
}

function toRecord (r: RecordRow): ImportationRecord {
  return {
    id: r.id,
    empresaId: r.empresa_id,
    codigoDominio: r.codigo_dominio,
    fileName: r.nome_arquivo,
    sha256: r.sha256,
    mode: r.modo,
    batchSize: r.batch_size,
    origin: r.origem,
    status: r.status,
    phase: r.fase,
    rowsRead: r.linhas_lidas,
    rowsLoaded: r.linhas_carregadas,
    bytesRead: r.bytes_lidos,
    bytesTotal: r.bytes_total,
    createdAt: r.criado_em,
    startedAt: r.iniciado_em,
    updatedAt: r.atualizado_em,
    finishedAt: r.finalizado_em,
    cancelRequestedAt: r.cancelamento_pedido_em,
    elapsedS: r.decorrido_s,
    replacedBy: r.substituida_por,
    result: r.resultado ?? null,
    errorCode: r.erro_codigo,
    error: r.erro,
    errorDetails: r.erro_detalhes,
    problemsTotal: r.problemas_total
  }
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** Whether `id` can name an import at all (anything else is simply not found). */
export function isImportId (id: string): boolean {
  return UUID.test(id)
}

function notFound (id: string): EngineError {
  return new EngineError('IMPORT_NOT_FOUND', `No import has the id "${id.slice(0, 80)}".`)
}

export async function getImportation (db: Db, id: string): Promise<ImportationRecord | undefined> {
  if (!isImportId(id)) return undefined
  const { rows } = await db.query<RecordRow>(
    `SELECT ${RECORD_COLUMNS}, i.resultado FROM importacoes i JOIN empresas e ON e.id = i.empresa_id WHERE i.id = $1`, [id])
  return rows[0] === undefined ? undefined : toRecord(rows[0])
}

/** getImportation, or IMPORT_NOT_FOUND. */
export async function requireImportation (db: Db, id: string): Promise<ImportationRecord> {
  const found = await getImportation(db, id)
  if (found === undefined) throw notFound(id)
  return found
}

export interface ImportFilter {
  empresaId?: string | undefined
  status?: ImportStatus | undefined
  limit: number
}

/** Newest first; without `result` (a list is read often, a result can be large). */
export async function listImportations (db: Db, filter: ImportFilter): Promise<ImportationRecord[]> {
  const { rows } = await db.query<RecordRow>(
    `SELECT ${RECORD_COLUMNS} FROM importacoes i JOIN empresas e ON e.id = i.empresa_id
      WHERE ($1::uuid IS NULL OR i.empresa_id = $1) AND ($2::text IS NULL OR i.status = $2)
      ORDER BY i.criado_em DESC, i.seq DESC LIMIT $3`,
    [filter.empresaId ?? null, filter.status ?? null, filter.limit])
  return rows.map(toRecord)
}

/**
 * How long an Idempotency-Key stands for its import: a day, far beyond any client's
 * retries. Past it, the same key starts a new import.
 */
export const IDEMPOTENCY_KEY_LIFETIME_HOURS = 24
/** Arbitrary, fixed: serializes the POSTs that carry the same Idempotency-Key. */
const IDEMPOTENCY_LOCK_SPACE = 73_018_465

export interface ReceivedImport {
  empresaId: string
  codigoDominio: string
  fileName: string
  sha256: string
  mode: 'NORMAL' | 'REIMPORTAR'
  batchSize: number
  /** The instance holding the upload (instance-lock.ts). */
  instancia: number
  idempotencyKey?: string | undefined
  /** The sheet asked for (name or 1-based position), if any. */
  sheet?: string | number | undefined
}

/**
 * Records a job whose upload this instance holds: RECEBIDO. With an Idempotency-Key
 * already standing for an import, answers that import instead (`replayed`) when the file
 * (SHA-256) and the fields are the same, and refuses otherwise (IMPORT_IDEMPOTENCY_MISMATCH).
 * The key stops standing for its import after IDEMPOTENCY_KEY_LIFETIME_HOURS, and when
 * that import was interrupted (its instance stopped: nothing of it ran to an end, so the
 * retry a client makes after such a failure starts it again).
 */
export async function createReceivedImport (pool: Pool, job: ReceivedImport): Promise<{ id: string, replayed: boolean }> {
  const db = await pool.connect()
  try {
    await db.query('BEGIN')
    if (job.idempotencyKey !== undefined) {
      await db.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [IDEMPOTENCY_LOCK_SPACE, job.idempotencyKey])
      const { rows } = await db.query<{ id: string, codigo_dominio: string | null, sha256: string, modo: string, batch_size: number, planilha: string | null, stale: boolean }>(
        `SELECT i.id, e.codigo_dominio, i.sha256, i.modo, i.batch_size, i.planilha,
                i.criado_em < now() - interval '${IDEMPOTENCY_KEY_LIFETIME_HOURS} hours' OR (i.status = 'FALHOU' AND i.erro_codigo = 'IMPORT_INTERRUPTED') AS stale
           FROM importacoes i JOIN empresas e ON e.id = i.empresa_id WHERE i.idempotency_key = $1 FOR UPDATE OF i`,
        [job.idempotencyKey])
      const earlier = rows[0]
      if (earlier !== undefined && earlier.stale) {
        await db.query('UPDATE importacoes SET idempotency_key = NULL WHERE id = $1', [earlier.id])
      } else if (earlier !== undefined) {
        const differences = [
          earlier.sha256 !== job.sha256 ? `the file (sha256 ${earlier.sha256} then, ${job.sha256} now)` : undefined,
          earlier.codigo_dominio !== job.codigoDominio ? `codigo_dominio ("${earlier.codigo_dominio ?? ''}" then)` : undefined,
          earlier.modo !== job.mode ? `modo_importacao (${earlier.modo} then)` : undefined,
          earlier.batch_size !== job.batchSize ? `batch_size (${earlier.batch_size} then)` : undefined,
          earlier.planilha !== sheetText(job.sheet) ? `sheet (${earlier.planilha === null ? 'none' : `"${earlier.planilha}"`} then)` : undefined
        ].filter((d) => d !== undefined)
        await db.query('COMMIT')
        if (differences.length === 0) return { id: earlier.id, replayed: true }
        throw new EngineError('IMPORT_IDEMPOTENCY_MISMATCH',
          `The Idempotency-Key "${job.idempotencyKey}" already stands for import ${earlier.id}, sent with another ${differences.join(', ')}. ` +
          'A key names one request: send a new key for a different file or fields (nothing was stored for this one).',
          { importacao_id: earlier.id })
      }
    }
    const { rows } = await db.query<{ id: string }>(
      `INSERT INTO importacoes (empresa_id, nome_arquivo, sha256, modo, status, batch_size, origem, fase, instancia, idempotency_key, planilha)
       VALUES ($1, $2, $3, $4, 'RECEBIDO', $5, 'imports', 'recebido', $6, $7, $8) RETURNING id`,
      [job.empresaId, job.fileName, job.sha256, job.mode, job.batchSize, job.instancia, job.idempotencyKey ?? null, sheetText(job.sheet)])
    await db.query('COMMIT')
    return { id: rows[0]!.id, replayed: false }
  } catch (err) {
    await db.query('ROLLBACK').catch(() => undefined)
    throw err
  } finally {
    db.release()
  }
}

/** A running load's figures, as the instance running it last heard them. */
export interface ProgressWrite {
  id: string
  phase: LoadPhase | null
  rowsRead: number
  rowsLoaded: number
  bytesRead: number
  bytesTotal: number | null
}

/** What the instance running a job must know of its row: whether to stop. */
export interface JobState { status: ImportStatus, cancelRequested: boolean }

/**
 * Progress figures commit without waiting for the disk: they are replaced a second later, a
 * database crash ends the load anyway, and a commit that waits would flush, each second, all
 * the WAL the load's COPY has written meanwhile (measured: /v1/imports fell behind /v1/process
 * on a busy disk). `set_config(..., true)` holds for the statement's own transaction.
 */
export const NO_FLUSH = "set_config('synchronous_commit', 'off', true) AS sem_espera_do_disco"

/**
 * One statement per tick of an instance's running jobs: writes the figures that changed
 * (only on PROCESSANDO rows: a settled row keeps its final ones) and reads every job's status
 * and cancel request. Jobs missing from the answer have no row any more.
 */
export async function syncProgress (db: Db, writes: readonly ProgressWrite[], ids: readonly string[]): Promise<Map<string, JobState>> {
  const { rows } = await db.query<{ id: string, status: ImportStatus, cancel: boolean }>(
    `WITH p AS (SELECT * FROM unnest($1::uuid[], $2::text[], $3::integer[], $4::integer[], $5::bigint[], $6::bigint[]) AS p(id, fase, lidas, carregadas, bytes, total)),
          escrita AS (
            UPDATE importacoes i SET fase = coalesce(p.fase, i.fase), linhas_lidas = p.lidas, linhas_carregadas = p.carregadas,
                   bytes_lidos = p.bytes, bytes_total = p.total, atualizado_em = now()
              FROM p WHERE i.id = p.id AND i.status = 'PROCESSANDO' RETURNING i.id)
     SELECT id, status, cancelamento_pedido_em IS NOT NULL AS cancel, ${NO_FLUSH} FROM importacoes WHERE id = ANY($7::uuid[])`,
    [writes.map((w) => w.id), writes.map((w) => w.phase), writes.map((w) => w.rowsRead), writes.map((w) => w.rowsLoaded),
      writes.map((w) => w.bytesRead), writes.map((w) => w.bytesTotal), ids])
  return new Map(rows.map((r) => [r.id, { status: r.status, cancelRequested: r.cancel }]))
}

export interface CancelAnswer {
  /** `cancelled`: it was waiting and is CANCELADO now; `requested`: the instance running it stops it shortly. */
  outcome: 'cancelled' | 'requested'
  record: ImportationRecord
}

/**
 * DELETE /v1/imports/{id}, `razao imports cancel`: asks the load to stop, wherever it runs.
 * A job still waiting (RECEBIDO) is CANCELADO at once; a running load keeps its status
 * until its instance sees the request (within a second) or, its instance gone, recovery
 * marks it. Once asked, the load can no longer turn VALIDADO (its final statement checks
 * the request). An import that has ended, or one of /v1/process, is refused.
 */
export async function requestCancel (pool: Pool, id: string): Promise<CancelAnswer> {
  if (!isImportId(id)) throw notFound(id)
  const db = await pool.connect()
  try {
    await db.query('BEGIN')
    // Waits for a load committing this instant: it then counts as ended.
    const { rows } = await db.query<{ status: ImportStatus, origem: LoadOrigin }>('SELECT status, origem FROM importacoes WHERE id = $1 FOR UPDATE', [id])
    const row = rows[0]
    if (row === undefined) throw notFound(id)
    if (!RUNNING_STATUSES.includes(row.status)) {
      throw new EngineError('IMPORT_FINISHED', `Import ${id} has already ended (${row.status}); there is nothing to cancel.`, { status: row.status })
    }
    if (row.origem === 'process') {
      throw new EngineError('IMPORT_NOT_CANCELLABLE', `Import ${id} was started by /v1/process, which ends with its request: close that request to stop it. Imports sent to /v1/imports (or run by razao import) can be cancelled.`)
    }
    await db.query(
      `UPDATE importacoes SET cancelamento_pedido_em = coalesce(cancelamento_pedido_em, now()), atualizado_em = now(),
              status = CASE WHEN status = 'RECEBIDO' THEN 'CANCELADO' ELSE status END,
              erro_codigo = CASE WHEN status = 'RECEBIDO' THEN 'IMPORT_CANCELLED' ELSE erro_codigo END,
              erro = CASE WHEN status = 'RECEBIDO' THEN '${CANCELLED_TEXT}' ELSE erro END,
              finalizado_em = CASE WHEN status = 'RECEBIDO' THEN now() ELSE finalizado_em END
        WHERE id = $1`, [id])
    await db.query('COMMIT')
    return { outcome: row.status === 'RECEBIDO' ? 'cancelled' : 'requested', record: await requireImportation(pool, id) }
  } catch (err) {
    await db.query('ROLLBACK').catch(() => undefined)
    throw err
  } finally {
    db.release()
  }
}

/** A job that failed before its load took the row (say, an unreadable file): RECEBIDO becomes FALHOU (or CANCELADO). */
export async function failReceived (db: Db, id: string, code: Code, reason: string): Promise<void> {
  await db.query(
    `UPDATE importacoes SET status = CASE WHEN cancelamento_pedido_em IS NULL THEN 'FALHOU' ELSE 'CANCELADO' END,
            erro_codigo = CASE WHEN cancelamento_pedido_em IS NULL THEN $2 ELSE 'IMPORT_CANCELLED' END,
            erro = CASE WHEN cancelamento_pedido_em IS NULL THEN $3 ELSE '${CANCELLED_TEXT}' END,
            atualizado_em = now(), finalizado_em = now()
      WHERE id = $1 AND status = 'RECEBIDO'`,
    [id, code, reason.slice(0, 2000)])
}

/** The rejected cells a refused load kept, in the order found; `total` counts all it found. */
export async function importationProblems (db: Db, id: string): Promise<{ total: number, problems: CellProblem[] } | undefined> {
  const record = await getImportation(db, id)
  if (record === undefined) throw notFound(id)
  if (record.problemsTotal === null || record.problemsTotal === 0) return undefined
  const { rows } = await db.query<{ linha: number, coluna: string, valor: string, problema: ProblemKind }>(
    'SELECT linha, coluna, valor, problema FROM importacao_problemas WHERE importacao_id = $1 ORDER BY ordem LIMIT $2', [id, MAX_STORED_PROBLEMS])
  return { total: record.problemsTotal, problems: rows.map((r) => ({ rowNumber: r.linha, column: r.coluna, value: r.valor, kind: r.problema })) }
}

/** The sheet as the row keeps it: a name, or a position as digits; null for the default. */
function sheetText (sheet: string | number | undefined): string | null {
  return sheet === undefined ? null : String(sheet)
}
