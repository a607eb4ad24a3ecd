/**
 * A movement is active in at most one import per company (issue 31, migration 0004).
 *
 * A movement's identity is its source row's `id`. `movimentos_ativos` holds the ids of every
 * VALIDADO import as runs of consecutive ids per company; its exclusion constraint (no two
 * runs of one company share an id) is the guarantee, whatever the application does and
 * however many instances race. A load's runs come from its own rows in `movimentos`: sorted,
 * a run breaks wherever the next id is not the previous one plus one. Everything here runs
 * inside the load's transaction, after its rows were copied into `movimentos` and checked:
 *
 * 1. `lockCompanyKeys` serializes the key step of one company's loads (a transaction lock,
 *    held to commit; the step takes a fraction of the load), so a load that lost a race sees
 *    the winner's keys and can name it, instead of only failing on the index;
 * 2. NORMAL: `claimKeys` inserts the load's runs; if the constraint refuses them,
 *    `overlapOfLoad` names the active imports that hold some of its ids (refused), else the
 *    file repeats an id (its runs overlap each other: `repeatedIds`, refused). The common
 *    case, no overlap, is one statement;
 * 3. REIMPORTAR: `overlapOfLoad` finds the imports to replace, `releaseKeys` frees their keys,
 *    then `claimKeys` (which can then fail only on an id the file repeats).
 */
import type { ClientBase, Pool } from 'pg'
import { EngineError } from '../errors.js'
import { sqlState } from '../db/pg-errors.js'

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

/**
 * The runs of a set of ids given as `source` (a query of one `id` column). With `distinct`,
 * repeated ids count once, so the runs are disjoint; without, an id the file repeats yields
 * two runs that share it, which the constraint then refuses.
 */
const runsOf = (source: string, distinct: boolean): string =>
  `SELECT int8range(min(id), max(id) + 1) AS ids
     FROM (SELECT id, id - row_number() OVER (ORDER BY id) AS run FROM (${distinct ? `SELECT DISTINCT id FROM (${source}) d` : source}) s) numbered
    GROUP BY run`

const OVERLAP_SELECT = `SELECT i.id, i.seq::text AS seq, i.nome_arquivo, i.sha256, coalesce(i.total_linhas, 0) AS total_linhas,
    to_char(i.criado_em AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') AS criado_em,
    sum(upper(r.ids * a.ids) - lower(r.ids * a.ids))::integer AS n
  FROM runs r
  JOIN movimentos_ativos a ON a.empresa_id = $1 AND a.ids && r.ids
  JOIN importacoes i ON i.seq = a.importacao_seq
 GROUP BY i.id ORDER BY i.criado_em, i.id`

interface OverlapRow { id: string, seq: string, nome_arquivo: string, sha256: string, total_linhas: number, criado_em: string, n: number }

function toReport (rows: OverlapRow[]): OverlapReport {
  const imports = rows.map((r) => ({
    importacaoId: r.id, seq: r.seq, fileName: r.nome_arquivo, sha256: r.sha256, createdAt: r.criado_em, totalRows: r.total_linhas, overlappingRows: r.n
  }))
  return { overlappingRows: imports.reduce((sum, i) => sum + i.overlappingRows, 0), imports }
}

const LOAD_IDS = 'SELECT id FROM movimentos WHERE importacao_seq = $2'

/** The company's active imports that hold movements of the load `importacaoSeq` (copied in this transaction). */
export async function overlapOfLoad (db: ClientBase, empresaId: string, importacaoSeq: string): Promise<OverlapReport> {
  const { rows } = await db.query<OverlapRow>(`WITH runs AS (${runsOf(LOAD_IDS, true)}) ${OVERLAP_SELECT}`, [empresaId, importacaoSeq])
  return toReport(rows)
}

/** The same report for a file only analyzed: its ids against the company's active movements. */
export async function overlapOfIds (db: Db, empresaId: string, ids: readonly number[]): Promise<OverlapReport> {
  if (ids.length === 0) return NO_OVERLAP
  const { rows } = await db.query<OverlapRow>(
    `WITH runs AS (${runsOf('SELECT unnest($2::bigint[]) AS id', true)}) ${OVERLAP_SELECT}`, [empresaId, ids])
  return toReport(rows)
}

/** Frees the ids of imports being replaced (their movements stay, under SUBSTITUIDO). */
export async function releaseKeys (db: ClientBase, empresaId: string, importacaoSeqs: readonly string[]): Promise<void> {
  if (importacaoSeqs.length === 0) return
  await db.query('DELETE FROM movimentos_ativos WHERE empresa_id = $1 AND importacao_seq = ANY($2::bigint[])', [empresaId, importacaoSeqs])
}

/**
 * The runs of a file's ids as the rows stream by, when its ids only ever rise (a ledger
 * exported in id order, the usual case): then the runs need no sort, and the key step sends
 * them instead of reading the load's ids back. An id that does not rise, or more runs than
 * is worth holding, gives up (`runs()` is then undefined) and the runs come from SQL.
 */
export class RisingRuns {
  private lows: number[] = []
  private highs: number[] = []
  private last = -Infinity
  private rising = true

  constructor (private readonly maxRuns = 100_000) {}

  add (id: number): void {
    if (!this.rising) return
    if (id <= this.last) return this.giveUp()
    const n = this.highs.length
    if (n > 0 && id === this.last + 1) {
      this.highs[n - 1] = id + 1
    } else {
      if (n === this.maxRuns) return this.giveUp()
      this.lows.push(id)
      this.highs.push(id + 1)
    }
    this.last = id
  }

  /** [first ids, ends (exclusive)], or undefined when the ids did not only rise. */
  runs (): { lows: number[], highs: number[] } | undefined {
    return this.rising ? { lows: this.lows, highs: this.highs } : undefined
  }

  private giveUp (): void {
    this.rising = false
    this.lows = []
    this.highs = []
  }
}

/**
 * Makes the load's movements the company's active ones, if none of their ids is taken: true
 * when its runs went in. False leaves nothing of this step behind (a savepoint): some id is
 * active in another import, or repeated in the file; the caller asks which. `known` are the
 * runs RisingRuns saw, when it could; otherwise they are computed from the load's rows.
 */
export async function claimKeys (db: ClientBase, empresaId: string, importacaoSeq: string, known?: { lows: number[], highs: number[] }): Promise<boolean> {
  await db.query('SAVEPOINT razao_claim_keys')
  try {
    if (known === undefined) {
      await db.query(
        `INSERT INTO movimentos_ativos (empresa_id, ids, importacao_seq) SELECT $1, ids, $2 FROM (${runsOf(LOAD_IDS, false)}) runs`,
        [empresaId, importacaoSeq])
    } else if (known.lows.length > 0) {
      await db.query(
        `INSERT INTO movimentos_ativos (empresa_id, ids, importacao_seq)
         SELECT $1, int8range(r.low, r.high), $2 FROM unnest($3::bigint[], $4::bigint[]) AS r(low, high)`,
        [empresaId, importacaoSeq, known.lows, known.highs])
    }
  } catch (err) {
    if (sqlState(err) !== EXCLUSION_VIOLATION) throw err
    await db.query('ROLLBACK TO SAVEPOINT razao_claim_keys')
    return false
  }
  await db.query('RELEASE SAVEPOINT razao_claim_keys')
  return true
}

/** SQLSTATE of a refused exclusion constraint. */
const EXCLUSION_VIOLATION = '23P01'

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
