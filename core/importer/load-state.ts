/**
 * The importation row of a load, from its start to its end (migrations 0001 and 0005):
 * created PROCESSANDO (/v1/process, `razao import`) or taken from RECEBIDO (a job of
 * POST /v1/imports), each by the statement that takes the load's session lock; settled
 * FALHOU or CANCELADO when the load fails, or deleted when /v1/process refuses the request;
 * and recovered by any live instance when its writer is gone.
 */
import type { ClientBase, Pool } from 'pg'
import { EngineError } from '../errors.js'
import type { Code } from '../errors.js'
import { isUniqueViolation } from '../db/pg-errors.js'
import type { CellProblem } from '../ledger/index.js'
import { INSTANCE_LOCK_SPACE } from './instance-lock.js'

/** Who started a load: /v1/process, a job of /v1/imports, or `razao import`. */
export type LoadOrigin = 'process' | 'imports' | 'cli'

/**
 * The phases of a running load, as the row and the API name them. A load reads and copies
 * in one pass, so `carregando` covers both; `lendo` is the time before the first rows go to
 * the database (opening the workbook and its shared strings).
 */
export type LoadPhase = 'lendo' | 'carregando' | 'validando' | 'finalizando'

/** Updated by the load as it goes; read by whoever reports its progress. */
export interface LoadCounters {
  /** Data rows read and analysed. */
  rowsRead: number
  /** Rows handed to the COPY stream (inside the load's open transaction). */
  rowsLoaded: number
}

export interface Importation { id: string, seq: string }

/**
 * The advisory lock a load holds on its session while its importation is PROCESSANDO:
 * the two-key form, a fixed space (arbitrary, only razao loads use it) and the
 * importation's sequence folded into 31 bits (two loads share a key only 2^31
 * importations apart, never while both run).
 */
export const LOAD_LOCK_SPACE = 73_018_462
export const loadLockKey = (seq: string): string => `${LOAD_LOCK_SPACE}, (${seq} % 2147483648)::integer`

export interface NewImportation {
  empresaId: string
  fileName: string
  sha256: string
  mode: 'NORMAL' | 'REIMPORTAR'
  batchSize: number
  origin: LoadOrigin
}

export async function createImportation (db: ClientBase, row: NewImportation): Promise<Importation> {
  // The lock is taken by the inserting statement itself: the row becomes visible (on
  // commit) only after its lock is held, so recovery can never see it unlocked while its
  // writer lives. pg_advisory_lock waits only if recovery is testing that key this instant.
  const { rows } = await db.query<Importation>(
    `WITH nova AS (
       INSERT INTO importacoes (empresa_id, nome_arquivo, sha256, modo, status, batch_size, backend_pid, origem, fase, iniciado_em)
       VALUES ($1, $2, $3, $4, 'PROCESSANDO', $5, pg_backend_pid(), $6, 'lendo', now()) RETURNING id, seq)
     SELECT id, seq::text AS seq, pg_advisory_lock(${loadLockKey('seq')}) FROM nova`,
    [row.empresaId, row.fileName, row.sha256, row.mode, row.batchSize, row.origin])
  return rows[0]!
}

/**
 * Takes a job's RECEBIDO importation for this session's load: PROCESSANDO and the load lock
 * in one statement, as createImportation does. Refused when the job was cancelled or failed
 * by recovery while it waited (its instance looked gone). Its commit does not wait for the
 * disk (one flush less per job than otherwise): lost in a database crash, the row is RECEBIDO
 * again with its load gone, and recovery marks it as any job whose instance lost its session.
 */
export async function adoptImportation (db: ClientBase, importacaoId: string): Promise<Importation> {
  const { rows } = await db.query<Importation>(
    `WITH tomada AS (
       UPDATE importacoes SET status = 'PROCESSANDO', fase = 'lendo', backend_pid = pg_backend_pid(), iniciado_em = now(), atualizado_em = now()
        WHERE id = $1 AND status = 'RECEBIDO' AND cancelamento_pedido_em IS NULL RETURNING id, seq)
     SELECT id, seq::text AS seq, pg_advisory_lock(${loadLockKey('seq')}),
            set_config('synchronous_commit', 'off', true) AS sem_espera_do_disco FROM tomada`,
    [importacaoId])
  if (rows[0] !== undefined) return rows[0]
  const { rows: found } = await db.query<{ status: string }>('SELECT status FROM importacoes WHERE id = $1', [importacaoId])
  const status = found[0]?.status
  if (status === 'CANCELADO') throw new EngineError('IMPORT_CANCELLED', 'The import was cancelled before it started; nothing of it was written.')
  throw new EngineError('IMPORT_INTERRUPTED', `The import could not start: it is ${status ?? 'gone'} (its instance looked stopped while it waited). Send the file again.`)
}

export async function releaseLoadLock (db: ClientBase, importation: Importation): Promise<void> {
  await db.query(`SELECT pg_advisory_unlock(${loadLockKey('$1::bigint')})`, [importation.seq])
}

/** Refusals of a request for its content or its company: /v1/process leaves no row for them. */
const REFUSALS = new Set<Code>(['LEDGER_INVALID_CELLS', 'LEDGER_UNBALANCED', 'LEDGER_DUPLICATE_IDS', 'IMPORT_DUPLICATE', 'IMPORT_OVERLAP', 'COMPANY_NOT_FOUND', 'COMPANY_INACTIVE'])

/** The most rejected cells a refused job keeps for problems.csv (the count covers them all). */
export const MAX_STORED_PROBLEMS = 100_000

/** Rejected cells collected during a job's load, up to `cap`. */
export class ProblemList {
  readonly items: CellProblem[] = []
  total = 0
  constructor (readonly cap = MAX_STORED_PROBLEMS) {}
  readonly add = (problem: CellProblem): void => {
    this.total++
    if (this.items.length < this.cap) this.items.push(problem)
  }
}

export interface SettleOptions {
  /** A job: a refused load keeps its row, FALHOU with the code (and its rejected cells). */
  keepRefused: boolean
  problems?: ProblemList | undefined
  /** The phase the load was in, and its figures, recorded on the row. */
  phase?: LoadPhase | undefined
  counters?: LoadCounters | undefined
}

const STORE_PROBLEMS_CHUNK = 20_000

/**
 * After a rollback: a refused /v1/process request leaves no trace; a job keeps its row as
 * FALHOU with the error's code, sentence and details (and, refused for invalid cells, the
 * rejected cells); any other failure leaves FALHOU with its reason. A row whose cancel was
 * requested ends CANCELADO instead. If even that fails (the database is gone), the row
 * stays PROCESSANDO and recovery marks it.
 */
export async function settleFailedImportation (db: ClientBase, importacaoId: string, err: unknown, options: SettleOptions): Promise<void> {
  const code: Code = err instanceof EngineError ? err.code : isUniqueViolation(err) ? 'IMPORT_DUPLICATE' : 'INTERNAL'
  try {
    if (REFUSALS.has(code) && !options.keepRefused) {
      await db.query('DELETE FROM importacoes WHERE id = $1', [importacaoId])
      return
    }
    const reason = err instanceof EngineError ? err.message : `database error: ${(err as Error).message ?? String(err)}`
    const details = err instanceof EngineError && err.details !== undefined ? JSON.stringify(err.details) : null
    const problems = code === 'LEDGER_INVALID_CELLS' && options.keepRefused ? options.problems : undefined
    await db.query('BEGIN')
    await db.query(
      `UPDATE importacoes SET status = CASE WHEN cancelamento_pedido_em IS NULL THEN 'FALHOU' ELSE 'CANCELADO' END,
              erro_codigo = CASE WHEN cancelamento_pedido_em IS NULL THEN $3 ELSE 'IMPORT_CANCELLED' END,
              erro = CASE WHEN cancelamento_pedido_em IS NULL THEN $2 ELSE '${CANCELLED_TEXT}' END,
              erro_detalhes = CASE WHEN cancelamento_pedido_em IS NULL THEN $4::jsonb END,
              problemas_total = $5, backend_pid = NULL, atualizado_em = now(), finalizado_em = now(),
              fase = coalesce($6, fase), linhas_lidas = greatest(linhas_lidas, $7), linhas_carregadas = greatest(linhas_carregadas, $8)
        WHERE id = $1`,
      [importacaoId, reason.slice(0, 2000), code, details, problems?.total ?? null, options.phase ?? null, options.counters?.rowsRead ?? 0, options.counters?.rowsLoaded ?? 0])
    if (problems !== undefined) await storeProblems(db, importacaoId, problems.items)
    await db.query('COMMIT')
  } catch {
    await db.query('ROLLBACK').catch(() => undefined)
  }
}

async function storeProblems (db: ClientBase, importacaoId: string, problems: readonly CellProblem[]): Promise<void> {
  for (let start = 0; start < problems.length; start += STORE_PROBLEMS_CHUNK) {
    const chunk = problems.slice(start, start + STORE_PROBLEMS_CHUNK)
    // U+0000 cannot be stored in text; a cell carrying one is shown with the replacement character.
    const clean = (text: string): string => text.replaceAll('\u0000', '\uFFFD')
    await db.query(
      `INSERT INTO importacao_problemas (importacao_id, ordem, linha, coluna, valor, problema)
       SELECT $1, $2 + n, linha, coluna, valor, problema
         FROM unnest($3::integer[], $4::text[], $5::text[], $6::text[]) WITH ORDINALITY AS p(linha, coluna, valor, problema, n)`,
      [importacaoId, start, chunk.map((p) => p.rowNumber), chunk.map((p) => clean(p.column)), chunk.map((p) => clean(p.value)), chunk.map((p) => p.kind)])
  }
}

export const CANCELLED_TEXT = 'cancelled on request; nothing of it was kept'
const INTERRUPTED_TEXT = 'interrupted: the process writing this import stopped before it finished; nothing of it was kept'
const INTERRUPTED_QUEUED_TEXT = 'interrupted: the instance holding this import stopped before the load began; nothing of it was kept. Send the file again'

/**
 * Marks importations whose writer is gone (a killed process, a lost connection) as
 * FALHOU, or CANCELADO when their cancel was requested; their movements were never
 * committed. A PROCESSANDO importation whose load lock can be taken has no live writer:
 * the writing session holds it from the insert until the load has settled, and PostgreSQL
 * frees it when that session ends. A RECEBIDO job whose instance lock can be taken has no
 * live instance to run it (instance-lock.ts). Safe to run from any instance at any time;
 * every live import instance runs it periodically. The test locks are transaction-level,
 * so they are gone when this statement commits; the CASE keeps them to running rows, also
 * when a load settles meanwhile (the row is then checked again in its new version).
 */
export async function recoverInterruptedImports (db: ClientBase | Pool): Promise<number> {
  const { rowCount } = await db.query(
    `UPDATE importacoes SET status = CASE WHEN cancelamento_pedido_em IS NULL THEN 'FALHOU' ELSE 'CANCELADO' END,
            erro_codigo = CASE WHEN cancelamento_pedido_em IS NULL THEN 'IMPORT_INTERRUPTED' ELSE 'IMPORT_CANCELLED' END,
            erro = CASE WHEN cancelamento_pedido_em IS NOT NULL THEN '${CANCELLED_TEXT}'
                        WHEN status = 'RECEBIDO' THEN '${INTERRUPTED_QUEUED_TEXT}'
                        ELSE '${INTERRUPTED_TEXT}' END,
            backend_pid = NULL, atualizado_em = now(), finalizado_em = now()
      WHERE status IN ('PROCESSANDO', 'RECEBIDO')
        AND CASE WHEN status = 'PROCESSANDO' THEN pg_try_advisory_xact_lock(${loadLockKey('seq')})
                 WHEN status = 'RECEBIDO' THEN instancia IS NULL OR pg_try_advisory_xact_lock(${INSTANCE_LOCK_SPACE}, instancia)
                 ELSE false END`)
  return rowCount ?? 0
}

/**
 * Ends the database session that holds this importation's load lock, if any: the load's
 * writer, found by the lock itself (never by a stored pid another session may have taken
 * since). A cancelled load's thread is ended by its pool, but a backend busy inside a
 * statement (waiting on a lock, say) would notice its client is gone only after it; ended
 * here, its transaction rolls back at once.
 */
export async function endLoadSession (db: ClientBase | Pool, importacaoId: string): Promise<number> {
  const { rows } = await db.query<{ ended: boolean }>(
    `SELECT pg_terminate_backend(l.pid) AS ended
       FROM importacoes i
       JOIN pg_locks l ON l.locktype = 'advisory' AND l.granted AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
                      AND l.classid = ${LOAD_LOCK_SPACE} AND l.objid = (i.seq % 2147483648) AND l.objsubid = 2
      WHERE i.id = $1 AND l.pid <> pg_backend_pid()`,
    [importacaoId])
  return rows.filter((r) => r.ended).length
}

/**
 * Settles a load its caller stopped (a cancel, a shutdown, Ctrl-C): CANCELADO when its cancel
 * was requested or `cancelled`, else FALHOU (IMPORT_INTERRUPTED). Only a running row changes:
 * a load that committed first stays VALIDADO. Returns the row's status afterwards.
 */
export async function settleStoppedImportation (db: ClientBase | Pool, importacaoId: string, cancelled: boolean, why: string): Promise<string | undefined> {
  const { rows } = await db.query<{ status: string }>(
    `UPDATE importacoes SET status = CASE WHEN cancelamento_pedido_em IS NOT NULL OR $2 THEN 'CANCELADO' ELSE 'FALHOU' END,
            erro_codigo = CASE WHEN cancelamento_pedido_em IS NOT NULL OR $2 THEN 'IMPORT_CANCELLED' ELSE 'IMPORT_INTERRUPTED' END,
            erro = CASE WHEN cancelamento_pedido_em IS NOT NULL OR $2 THEN '${CANCELLED_TEXT}' ELSE $3 END,
            cancelamento_pedido_em = CASE WHEN $2 THEN coalesce(cancelamento_pedido_em, now()) ELSE cancelamento_pedido_em END,
            backend_pid = NULL, atualizado_em = now(), finalizado_em = now()
      WHERE id = $1 AND status IN ('RECEBIDO', 'PROCESSANDO') RETURNING status`,
    [importacaoId, cancelled, why])
  if (rows[0] !== undefined) return rows[0].status
  // Not running any more (a load that committed first, or settled already): a fresh read.
  const { rows: now } = await db.query<{ status: string }>('SELECT status FROM importacoes WHERE id = $1', [importacaoId])
  return now[0]?.status
}
