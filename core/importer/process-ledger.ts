/**
 * `/v1/process` (spec 1, sections 3 and 4): analyze, check balance and duplication,
 * resolve the company, create the importation, write the movements with COPY,
 * validate what was stored, finalize. One read of the file on the way that
 * succeeds: rows stream into COPY as they are analyzed, inside a transaction that
 * only commits after the balance, the duplicate rule and the stored totals check
 * out, so nothing partial is ever visible as valid.
 *
 * Importation rows and their statuses (the statements are in load-state.ts):
 * - PROCESSANDO is committed before the movements, by the statement that also
 *   takes a session-level advisory lock named after the importation (created here,
 *   or taken from RECEBIDO for a job of POST /v1/imports); the writing session holds it
 *   until the load has settled. An import whose lock is free while it is still
 *   PROCESSANDO lost its writer (a killed process, a dropped connection) and is marked
 *   FALHOU by any live instance (see recoverInterruptedImports).
 * - VALIDADO (and the old one's SUBSTITUIDO) commit together with the movements and the
 *   load's result, and only while no cancel was requested.
 * - FALHOU keeps the error's code and text when the database or validation failed; its
 *   movements were rolled back. CANCELADO instead when its cancel was requested.
 * - A refusal of the request itself (unbalanced, invalid cells, duplicate) deletes
 *   the row again for /v1/process: the spec refuses those before any import exists. A
 *   job keeps it, FALHOU with the code, so that GET /v1/imports/{id} can say why.
 */
import type { ClientBase } from 'pg'
import { EngineError } from '../errors.js'
import { companyInactive, companyNotFound } from '../db/companies.js'
import { isUniqueViolation } from '../db/pg-errors.js'
import { LedgerAnalyzer, PROBLEM_MESSAGES, countBlocking, diagnoseLedger, isBlocking } from '../ledger/index.js'
import type { LedgerAnalysis, LedgerDiagnosis, ProblemSink } from '../ledger/index.js'
import { centsToDecimal, centsToNumber, decimalToCents } from '../money/index.js'
import type { ReadSummary, RowVisitor } from '../xlsx/index.js'
import { openBatchSink } from './copy-sink.js'
import type { CopyMode } from './copy-sink.js'
import { MovementEncoder } from './movement-rows.js'
import { RisingRuns, claimKeys, lockCompanyKeys, overlapOfLoad, releaseKeys, repeatedIds } from './movement-keys.js'
import type { OverlapReport, OverlappedImport } from './movement-keys.js'
import { ProblemList, adoptImportation, createImportation, releaseLoadLock, settleFailedImportation } from './load-state.js'
import type { Importation, LoadCounters, LoadOrigin, LoadPhase } from './load-state.js'

export { recoverInterruptedImports } from './load-state.js'

export type ImportMode = 'NORMAL' | 'REIMPORTAR'

export interface ProcessRequest {
  fileName: string
  sha256: string
  codigoDominio: string
  mode: ImportMode
  batchSize: number
  /** How batches reach COPY; `stream` unless a benchmark compares the two. */
  copyMode?: CopyMode | undefined
}

/** How a load is run beyond the request; all optional (/v1/process needs none). */
export interface LoadOptions {
  /** A job's RECEBIDO importation (POST /v1/imports): the load takes it instead of creating one. */
  adopt?: string | undefined
  /** Who runs it; recorded on a row this load creates (default `process`). */
  origin?: LoadOrigin | undefined
  /**
   * A job: a refused load keeps its row as FALHOU with the error's code and details, and,
   * refused for invalid cells, its rejected cells (problems.csv); /v1/process deletes it.
   */
  keepRefused?: boolean | undefined
  /** The importation is PROCESSANDO and its load lock held: its id. */
  onStart?: ((importacaoId: string) => void) | undefined
  /** The load entered a phase. */
  onPhase?: ((phase: LoadPhase) => void) | undefined
  /** Kept up to date as the load goes. */
  counters?: LoadCounters | undefined
}

export interface ProcessResult {
  analysis: LedgerAnalysis
  importacaoId: string
  empresaId: string
  /** The import of the same file replaced, else the replaced import with the most movements in common. */
  replacedImportacaoId: string | null
  /** Every import this REIMPORTAR replaced (same file or overlapping movements), oldest first. */
  replaced: OverlappedImport[]
  insertedRows: number
  status: 'VALIDADO'
}

/**
 * Reads the sheet once per call, handing rows to `onRow`; `afterChunk` is awaited
 * between chunks of the file (backpressure from the database) and may reject to
 * stop the read. `quiet`: a read that reports no progress (the diagnosis of a refused job).
 */
export type ProcessSource = (onRow: RowVisitor, afterChunk: () => Promise<void> | undefined, quiet?: boolean) => Promise<ReadSummary>

interface Precheck {
  company: { id: string, ativo: boolean } | undefined
  activeImportId: string | undefined
}

export async function processLedger (db: ClientBase, source: ProcessSource, request: ProcessRequest, given: LoadOptions = {}): Promise<ProcessResult> {
  // The phase it is in, for the row of a load that fails (its progress is written only now and then).
  let phase: LoadPhase = 'lendo'
  const options: LoadOptions = { ...given, onPhase: (p) => { phase = p; given.onPhase?.(p) } }
  const problems = options.keepRefused === true ? new ProblemList() : undefined
  const rejected: ProblemSink | undefined = problems === undefined ? undefined : (p) => { if (isBlocking(p.kind)) problems.add(p) }
  let importation: Importation
  let empresaId: string
  if (options.adopt === undefined) {
    const pre = await precheck(db, request)
    if (pre.company === undefined || !pre.company.ativo || (request.mode === 'NORMAL' && pre.activeImportId !== undefined)) {
      // Refused, but the spec's order reports an unbalanced or unreadable file first.
      throw await refusalInSpecOrder(source, request, pre)
    }
    empresaId = pre.company.id
    importation = await createImportation(db, { empresaId, fileName: request.fileName, sha256: request.sha256, mode: request.mode, batchSize: request.batchSize, origin: options.origin ?? 'process' })
  } else {
    importation = await adoptImportation(db, options.adopt)
    empresaId = ''
  }
  options.onStart?.(importation.id)
  try {
    if (options.adopt !== undefined) {
      // A job's company was checked when it was received; it may have changed while it waited.
      const pre = await precheck(db, request)
      if (pre.company === undefined || !pre.company.ativo || (request.mode === 'NORMAL' && pre.activeImportId !== undefined)) {
        throw await refusalInSpecOrder(source, request, pre, rejected)
      }
      empresaId = pre.company.id
    }
    return await writeAndFinalize(db, source, request, empresaId, importation, options, rejected)
  } catch (err) {
    await rollbackQuietly(db)
    const failure = asEngineError(err, request)
    const stored = options.keepRefused === true ? await withDiagnosis(failure, source, request) : failure
    await settleFailedImportation(db, importation.id, stored, { keepRefused: options.keepRefused === true, problems, phase, counters: options.counters })
    throw failure
  } finally {
    // The row is settled (or, when even that failed, left for recovery, which the free lock allows).
    await releaseLoadLock(db, importation).catch(() => undefined)
  }
}

/** Rows of unbalanced groups a refused job keeps for GET /v1/imports/{id} and the /imports page. */
export const STORED_DIAGNOSIS_LINES = 2000

/** The diagnosis a job keeps (LedgerDiagnosis without the analysis's samples and counts). */
export type StoredDiagnosis = Omit<LedgerDiagnosis, 'analysis'> & {
  analysis: Pick<LedgerAnalysis, 'totalRows' | 'distinctGroups' | 'totalDebitCents' | 'totalCreditCents' | 'differenceCents' | 'unbalancedGroups' | 'totalBatches'>
}

/**
 * A job refused as unbalanced keeps its unbalanced groups and their first rows (the error's
 * `diagnosis` detail), so that whoever looks at it later sees them without sending the
 * file again: the file is read twice more here, while the upload still exists. A
 * diagnosis that fails leaves the refusal as it was.
 */
async function withDiagnosis (failure: unknown, source: ProcessSource, request: ProcessRequest): Promise<unknown> {
  if (!(failure instanceof EngineError) || failure.code !== 'LEDGER_UNBALANCED') return failure
  try {
    const d = await diagnoseLedger((visit) => source(visit, () => undefined, true), { batchSize: request.batchSize, maxLines: STORED_DIAGNOSIS_LINES })
    const a = d.analysis
    const diagnosis: StoredDiagnosis = {
      analysis: { totalRows: a.totalRows, distinctGroups: a.distinctGroups, totalDebitCents: a.totalDebitCents, totalCreditCents: a.totalCreditCents, differenceCents: a.differenceCents, unbalancedGroups: a.unbalancedGroups, totalBatches: a.totalBatches },
      groups: d.groups,
      omittedGroups: d.omittedGroups,
      omittedLines: d.omittedLines
    }
    return new EngineError(failure.code, failure.message, { ...failure.details, diagnosis })
  } catch {
    return failure
  }
}

/** Company and active import in one round trip. */
async function precheck (db: ClientBase, request: ProcessRequest): Promise<Precheck> {
  const { rows } = await db.query<{ id: string, ativo: boolean, active_import: string | null }>(
    `SELECT e.id, e.ativo,
            (SELECT i.id FROM importacoes i WHERE i.empresa_id = e.id AND i.sha256 = $2 AND i.status = 'VALIDADO') AS active_import
       FROM empresas e WHERE e.codigo_dominio = $1`,
    [request.codigoDominio, request.sha256])
  const row = rows[0]
  return {
    company: row === undefined ? undefined : { id: row.id, ativo: row.ativo },
    activeImportId: row?.active_import ?? undefined
  }
}

async function refusalInSpecOrder (source: ProcessSource, request: ProcessRequest, pre: Precheck, onProblem?: ProblemSink): Promise<EngineError> {
  const analyzer = new LedgerAnalyzer(undefined, onProblem)
  await source(analyzer.visit, () => undefined)
  checkImportable(analyzer.finish(request.batchSize))
  if (request.mode === 'NORMAL' && pre.activeImportId !== undefined) return duplicate(request, pre.activeImportId)
  if (pre.company === undefined) return companyNotFound(request.codigoDominio)
  return companyInactive(request.codigoDominio)
}

async function writeAndFinalize (
  db: ClientBase, source: ProcessSource, request: ProcessRequest, empresaId: string, importation: Importation, options: LoadOptions, onProblem: ProblemSink | undefined
): Promise<ProcessResult> {
  const importacaoId = importation.id
  await db.query('BEGIN')
  // Imports of the same company and file take turns; the loser of a race then sees
  // the winner's VALIDADO below instead of copying for nothing.
  await db.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [`${empresaId}:${request.sha256}`])
  const { rows: active } = await db.query<{ id: string }>(
    `SELECT id FROM importacoes WHERE empresa_id = $1 AND sha256 = $2 AND status = 'VALIDADO' FOR UPDATE`,
    [empresaId, request.sha256])
  const previous = active[0]?.id
  if (request.mode === 'NORMAL' && previous !== undefined) {
    await db.query('ROLLBACK')
    throw await refusalInSpecOrder(source, request, { company: { id: empresaId, ativo: true }, activeImportId: previous }, onProblem)
  }

  const runs = new RisingRuns()
  const analysis = await copyMovements(db, source, request, importation.seq, options, onProblem, runs)
  options.onPhase?.('validando')
  checkImportable(analysis)
  await validateStored(db, importation.seq, analysis)

  const replaced = await settleMovementKeys(db, request, empresaId, importation, previous, runs)
  if (replaced.length > 0) {
    await db.query(
      `UPDATE importacoes SET status = 'SUBSTITUIDO', substituida_por = $2, atualizado_em = now() WHERE id = ANY($1::uuid[])`,
      [replaced.map((r) => r.importacaoId), importacaoId])
  }
  options.onPhase?.('finalizando')
  const result: ProcessResult = { analysis, importacaoId, empresaId, replacedImportacaoId: mainReplaced(replaced, previous), replaced, insertedRows: analysis.totalRows, status: 'VALIDADO' }
  const finalized = await db.query<{ cancelled: boolean }>(
    // clock_timestamp(): now() is the transaction's start, before the rows were copied.
    `UPDATE importacoes SET status = 'VALIDADO', total_linhas = $2, linhas_inseridas = $2, total_debito = $3,
            total_credito = $4, backend_pid = NULL, atualizado_em = clock_timestamp(), finalizado_em = clock_timestamp(),
            resultado = $5, fase = 'finalizando', linhas_lidas = $2, linhas_carregadas = $2, bytes_lidos = coalesce(bytes_total, bytes_lidos)
      WHERE id = $1 AND status = 'PROCESSANDO' AND cancelamento_pedido_em IS NULL`,
    [importacaoId, analysis.totalRows, centsToDecimal(analysis.totalDebitCents), centsToDecimal(analysis.totalCreditCents), JSON.stringify(stripForStorage(result))])
  if (finalized.rowCount !== 1) {
    const { rows } = await db.query<{ cancelled: boolean }>('SELECT cancelamento_pedido_em IS NOT NULL AS cancelled FROM importacoes WHERE id = $1', [importacaoId])
    if (rows[0]?.cancelled === true) throw new EngineError('IMPORT_CANCELLED', 'The import was cancelled on request before it was committed; nothing of it was kept.')
    // Recovery judged this load dead (its lock looked free, e.g. behind a transaction-pooling
    // proxy that moved the session); a FALHOU import never turns VALIDADO.
    throw new EngineError('IMPORT_VALIDATION_FAILED', 'The import was marked as failed while it was being written (its database session looked gone); it was rolled back. Try again.')
  }
  await db.query('COMMIT')
  return result
}

/** The result as the row keeps it: the internal sequence numbers stay out. */
function stripForStorage (result: ProcessResult): ProcessResult {
  return { ...result, replaced: result.replaced.map((r) => ({ ...r, seq: '' })) }
}

/**
 * The load's movements become the company's active ones (core/importer/movement-keys.ts).
 * NORMAL refuses a file whose movements another active import holds; REIMPORTAR replaces
 * every such import whole, with the import of the same file if there is one, and all of
 * them or none, since it all commits or rolls back with the load. Returns what it replaces.
 */
async function settleMovementKeys (db: ClientBase, request: ProcessRequest, empresaId: string, importation: Importation, previous: string | undefined, runs: RisingRuns): Promise<OverlappedImport[]> {
  await lockCompanyKeys(db, empresaId)
  if (request.mode === 'NORMAL') {
    if (await claimKeys(db, empresaId, importation.seq, runs.runs())) return []
    const overlap = await overlapOfLoad(db, empresaId, importation.seq)
    throw overlap.overlappingRows > 0 ? overlapRefusal(request, overlap) : await repeatedIds(db, importation.seq)
  }
  const overlap = await overlapOfLoad(db, empresaId, importation.seq)
  const replaced = [...overlap.imports]
  if (previous !== undefined && !replaced.some((r) => r.importacaoId === previous)) {
    replaced.push(await importationFacts(db, previous))
  }
  await releaseKeys(db, empresaId, replaced.map((r) => r.seq))
  if (!await claimKeys(db, empresaId, importation.seq, runs.runs())) throw await repeatedIds(db, importation.seq)
  return replaced
}

/** The spec's single `replaced_importacao_id`: the same file's import, else the one sharing most movements. */
function mainReplaced (replaced: OverlappedImport[], previous: string | undefined): string | null {
  if (previous !== undefined) return previous
  let best: OverlappedImport | undefined
  for (const r of replaced) if (best === undefined || r.overlappingRows > best.overlappingRows) best = r
  return best?.importacaoId ?? null
}

/** An import of the same file that holds no movement key (an empty one, or one from before migration 0004). */
async function importationFacts (db: ClientBase, importacaoId: string): Promise<OverlappedImport> {
  const { rows } = await db.query<{ seq: string, nome_arquivo: string, sha256: string, total_linhas: number | null, criado_em: string }>(
    `SELECT seq::text, nome_arquivo, sha256, total_linhas, to_char(criado_em AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') AS criado_em
       FROM importacoes WHERE id = $1`, [importacaoId])
  const r = rows[0]!
  return { importacaoId, seq: r.seq, fileName: r.nome_arquivo, sha256: r.sha256, createdAt: r.criado_em, totalRows: r.total_linhas ?? 0, overlappingRows: 0 }
}

const OVERLAPS_NAMED = 5

/** NORMAL with movements already active elsewhere: 409, naming the imports that hold them. */
export function overlapRefusal (request: Pick<ProcessRequest, 'codigoDominio'>, overlap: OverlapReport): EngineError {
  const named = overlap.imports.slice(0, OVERLAPS_NAMED)
    .map((i) => `${i.importacaoId} ("${i.fileName}", ${i.createdAt.slice(0, 10)}: ${i.overlappingRows} of its ${i.totalRows})`)
    .join('; ')
  const more = overlap.imports.length > OVERLAPS_NAMED ? ` and ${overlap.imports.length - OVERLAPS_NAMED} more` : ''
  const n = overlap.overlappingRows
  return new EngineError('IMPORT_OVERLAP',
    `${n} movement${n === 1 ? ' of this file is' : 's of this file are'} already imported for company "${request.codigoDominio}" (same id), in ${overlap.imports.length === 1 ? 'import' : 'imports'} ${named}${more}. ` +
    'Nothing was written. To replace those imports whole with this file, send it again with modo_importacao=REIMPORTAR (razao import --reimportar); /v1/analyze with codigo_dominio shows the overlap first.',
    { overlap, codigoDominio: request.codigoDominio })
}

/**
 * Streams the movements into COPY while analyzing, in batches of `batchSize` rows
 * (see copy-sink.ts). Once a blocking cell problem appears the rest is analyzed but
 * not sent: the load will be refused and rolled back anyway, and a malformed value
 * would fail COPY itself.
 */
async function copyMovements (
  db: ClientBase, source: ProcessSource, request: ProcessRequest, importacaoSeq: string, options: LoadOptions, onProblem: ProblemSink | undefined, runs: RisingRuns
): Promise<LedgerAnalysis> {
  const sink = openBatchSink(db, request.copyMode ?? 'stream')
  const encoder = new MovementEncoder(importacaoSeq)
  const counters = options.counters ?? { rowsRead: 0, rowsLoaded: 0 }
  let copying = false
  const flush = (): void => {
    if (encoder.pending === 0) return
    if (!copying) {
      copying = true
      options.onPhase?.('carregando')
    }
    counters.rowsLoaded += encoder.pending
    sink.write(encoder.take())
  }
  const analyzer = new LedgerAnalyzer((row, cells, columns) => {
    counters.rowsRead++
    if (analyzer.blockingProblems() > 0 || sink.failure !== undefined) return
    if (row.rowId !== null) runs.add(row.rowId)
    encoder.add(row, cells, columns)
    if (encoder.pending >= request.batchSize) flush()
  }, onProblem)
  try {
    await source(analyzer.visit, () => sink.backpressure())
    flush()
  } catch (err) {
    await sink.abort(err as Error)
    // The server's failure is the cause (our writes after it fail for that reason),
    // unless it only echoes our own abort ("COPY from stdin failed: <our message>").
    const failure = sink.failure
    const echo = failure !== undefined && err instanceof Error && failure.message.includes(err.message)
    throw failure !== undefined && !echo ? failure : err
  }
  await sink.finish()
  return analyzer.finish(request.batchSize)
}

/** Refusals that depend only on the file: unreadable cells, then global balance (422 both). */
function checkImportable (analysis: LedgerAnalysis): void {
  const invalid = countBlocking(analysis.problemCounts)
  if (invalid > 0) {
    const first = analysis.problemSamples.find((p) => isBlocking(p.kind))
    const where = first === undefined ? '' : ` The first is row ${first.rowNumber}, column ${first.column} ("${first.value}"): ${first.kind}. ${PROBLEM_MESSAGES[first.kind]}`
    throw new EngineError('LEDGER_INVALID_CELLS', `The file has ${invalid} cell${invalid > 1 ? 's' : ''} that cannot be imported as typed values; nothing was written. /v1/analyze lists them.${where}`, { invalid_cells: invalid })
  }
  if (analysis.differenceCents !== 0) {
    throw new EngineError('LEDGER_UNBALANCED',
      `The file is not balanced: total debit ${centsToDecimal(analysis.totalDebitCents)} minus total credit ${centsToDecimal(analysis.totalCreditCents)} = difference ${centsToDecimal(analysis.differenceCents)}. Nothing was written. To see the unbalanced groups, run "razao diagnose FILE" (or POST the file to /v1/diagnose-unbalanced).`,
      { difference: centsToNumber(analysis.differenceCents) })
  }
}

/** Counts and sums what this transaction stored and compares it with the file, to the cent. */
async function validateStored (db: ClientBase, importacaoSeq: string, analysis: LedgerAnalysis): Promise<void> {
  const { rows } = await db.query<{ n: string, debito: string | null, credito: string | null }>(
    'SELECT count(*) AS n, sum(debito)::text AS debito, sum(credito)::text AS credito FROM movimentos WHERE importacao_seq = $1',
    [importacaoSeq])
  const stored = rows[0]!
  const count = Number(stored.n)
  const debit = decimalToCents(stored.debito)
  const credit = decimalToCents(stored.credito)
  if (count !== analysis.totalRows || debit !== analysis.totalDebitCents || credit !== analysis.totalCreditCents) {
    throw new EngineError('IMPORT_VALIDATION_FAILED',
      `The stored movements do not match the file (rows ${count} of ${analysis.totalRows}, debit ${centsToDecimal(debit)} of ${centsToDecimal(analysis.totalDebitCents)}, credit ${centsToDecimal(credit)} of ${centsToDecimal(analysis.totalCreditCents)}); the import was rolled back.`)
  }
}

async function rollbackQuietly (db: ClientBase): Promise<void> {
  try { await db.query('ROLLBACK') } catch { /* no transaction open, or the connection is gone */ }
}

function duplicate (request: ProcessRequest, activeId: string): EngineError {
  return new EngineError('IMPORT_DUPLICATE',
    `This file (sha256 ${request.sha256}) already has an active import (${activeId}) for company "${request.codigoDominio}"; replace it with modo_importacao=REIMPORTAR (razao import --reimportar).`,
    { importacao_id: activeId })
}

function asEngineError (err: unknown, request: ProcessRequest): unknown {
  if (err instanceof EngineError) return err
  // The unique index on active imports caught a race the advisory lock did not (another writer).
  if (isUniqueViolation(err)) return new EngineError('IMPORT_DUPLICATE', `This file (sha256 ${request.sha256}) was imported for company "${request.codigoDominio}" by a concurrent request; replace it with modo_importacao=REIMPORTAR (razao import --reimportar).`)
  return err
}
