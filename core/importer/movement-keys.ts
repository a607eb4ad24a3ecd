/**
 * A movement is active in at most one import per company (issue 31, migration 0004).
 *
 * A movement's identity is its source row's `id`. `movimentos_ativos` holds the ids of every
 * VALIDADO import, keyed by (company, id): its primary key is the guarantee, whatever the
 * application does and however many instances race. Everything here runs inside the load's
 * transaction, after its rows were copied into `movimentos` and checked:
 *
 * 1. `lockCompanyKeys` serializes the key step of one company's loads (a transaction lock,
 *    held to commit; the step takes a fraction of the load), so a load that lost a race sees
 *    the winner's keys and can name it, instead of only failing on the index;
 * 2. NORMAL: `claimKeys` inserts the load's keys, skipping taken ones; if any was skipped,
 *    `overlapOfLoad` names the active imports that hold them (refused), else the file repeats
 *    an id (`repeatedIds`, refused). The common case, no overlap, is one statement;
 * 3. REIMPORTAR: `overlapOfLoad` finds the imports to replace, `releaseKeys` frees their keys,
 *    then `claimKeys` (which can then fail only on an id the file repeats).
 */
import type { ClientBase, Pool } from 'pg'
import { EngineError } from '../errors.js'

type Db = ClientBase | Pool

/** One active import that holds some of the movements of a file. */
export interface OverlappedImport {
  importacaoId: string
  /** Internal: the compact key its movements and keys carry. */
  seq: string
  fileName: string
  sha256: string
  /** When the import was created, ISO 8601 UTC. */
  createdAt: string
  /** Its movement count. */
  totalRows: number
  /** How many of its movements the file carries too. */
  overlappingRows: number
}

export interface OverlapReport {
  /** Movements of the file already active in the company's other imports. */
  overlappingRows: number
  /** Those imports, oldest first. */
  imports: OverlappedImport[]
}

export const NO_OVERLAP: OverlapReport = { overlappingRows: 0, imports: [] }

/** Arbitrary, fixed: the lock space of the key step (the key is the company). */
const KEY_LOCK_SPACE = 73_018_463

export async function lockCompanyKeys (db: ClientBase, empresaId: string): Promise<void> {
  await db.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [KEY_LOCK_SPACE, empresaId])
}

const OVERLAP_COLUMNS = `i.id, i.seq::text AS seq, i.nome_arquivo, i.sha256, coalesce(i.total_linhas, 0) AS total_linhas,
  to_char(i.criado_em AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') AS criado_em, count(*)::integer AS n`

interface OverlapRow { id: string, seq: string, nome_arquivo: string, sha256: string, total_linhas: number, criado_em: string, n: number }

function toReport (rows: OverlapRow[]): OverlapReport {
  const imports = rows.map((r) => ({
    importacaoId: r.id, seq: r.seq, fileName: r.nome_arquivo, sha256: r.sha256, createdAt: r.criado_em, totalRows: r.total_linhas, overlappingRows: r.n
  }))
  return { overlappingRows: imports.reduce((sum, i) => sum + i.overlappingRows, 0), imports }
}

/** The company's active imports that hold movements of the load `importacaoSeq` (copied in this transaction). */
export async function overlapOfLoad (db: ClientBase, empresaId: string, importacaoSeq: string): Promise<OverlapReport> {
  const { rows } = await db.query<OverlapRow>(
    `SELECT ${OVERLAP_COLUMNS}
       FROM movimentos m
       JOIN movimentos_ativos a ON a.empresa_id = $1 AND a.id = m.id
       JOIN importacoes i ON i.seq = a.importacao_seq
      WHERE m.importacao_seq = $2
      GROUP BY i.id ORDER BY i.criado_em, i.id`,
    [empresaId, importacaoSeq])
  return toReport(rows)
}

/** The same report for a file only analyzed: its ids against the company's active movements. */
export async function overlapOfIds (db: Db, empresaId: string, ids: readonly number[]): Promise<OverlapReport> {
  if (ids.length === 0) return NO_OVERLAP
  const { rows } = await db.query<OverlapRow>(
    `SELECT ${OVERLAP_COLUMNS}
       FROM (SELECT DISTINCT f.id FROM unnest($2::bigint[]) AS f(id)) f
       JOIN movimentos_ativos a ON a.empresa_id = $1 AND a.id = f.id
       JOIN importacoes i ON i.seq = a.importacao_seq
      GROUP BY i.id ORDER BY i.criado_em, i.id`,
    [empresaId, ids])
  return toReport(rows)
}

/** Removes the keys of imports being replaced (their movements stay, under SUBSTITUIDO). */
export async function releaseKeys (db: ClientBase, empresaId: string, importacaoSeqs: readonly string[]): Promise<void> {
  if (importacaoSeqs.length === 0) return
  await db.query(
    `DELETE FROM movimentos_ativos a USING movimentos m
      WHERE m.importacao_seq = ANY($2::bigint[]) AND a.empresa_id = $1 AND a.id = m.id AND a.importacao_seq = m.importacao_seq`,
    [empresaId, importacaoSeqs])
}

/**
 * Makes the load's `rows` movements the company's active ones, if none of their ids is taken:
 * true when every key went in. False leaves nothing of this step behind (a savepoint): some id
 * is active in another import, or repeated in the file; the caller asks which.
 */
export async function claimKeys (db: ClientBase, empresaId: string, importacaoSeq: string, rows: number): Promise<boolean> {
  await db.query('SAVEPOINT razao_claim_keys')
  const { rowCount } = await db.query(
    `INSERT INTO movimentos_ativos (empresa_id, id, importacao_seq) SELECT $1, id, $2 FROM movimentos WHERE importacao_seq = $2
     ON CONFLICT DO NOTHING`,
    [empresaId, importacaoSeq])
  if (rowCount === rows) {
    await db.query('RELEASE SAVEPOINT razao_claim_keys')
    return true
  }
  await db.query('ROLLBACK TO SAVEPOINT razao_claim_keys')
  return false
}

const REPEATS_SHOWN = 5

/** The refusal of a file that repeats ids, naming the first ones and their rows. */
export async function repeatedIds (db: ClientBase, importacaoSeq: string): Promise<EngineError> {
  const { rows } = await db.query<{ id: string, linhas: number[], total: string }>(
    `SELECT id::text, (array_agg(linha_origem ORDER BY linha_origem))[1:4] AS linhas, count(*) OVER () AS total
       FROM movimentos WHERE importacao_seq = $1
      GROUP BY id HAVING count(*) > 1 ORDER BY min(linha_origem) LIMIT ${REPEATS_SHOWN}`,
    [importacaoSeq])
  const total = Number(rows[0]?.total ?? 0)
  const shown = rows.map((r) => `id ${r.id} on rows ${r.linhas.join(', ')}`).join('; ')
  return new EngineError('LEDGER_DUPLICATE_IDS',
    `${total} id${total === 1 ? ' appears' : 's appear'} on more than one row of the file (${shown}${total > rows.length ? '; …' : ''}). ` +
    'Each row of a ledger is one movement with its own id; nothing was written.',
    { repeated_ids: total })
}
