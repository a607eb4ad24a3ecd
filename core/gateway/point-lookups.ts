/**
 * The hourly allowance of point lookups per CNPJ (issue 35): the NF-e distribution answers at
 * most 20 `consNSU` + `consChNFe` queries an hour for one CNPJ, and blocks it for an hour
 * (cStat 656) past that (NT 2014.002 v1.12; docs/gateway.md, "Managed feed"). Every lookup
 * takes a row of `consultas_pontuais` (migration 0010) before it goes out, under a
 * transaction-scoped advisory lock on the CNPJ, so instances sharing the database share the
 * allowance. The ADN documents no such limit; its single-document lookups (gap refill) are
 * counted the same way, so that they stay as rare.
 */
import type { Pool } from 'pg'
import { inTransaction } from '../db/transaction.js'
import type { GuardedRoute } from './query-guard.js'

/** The authority's allowance: 20 point lookups an hour per CNPJ. */
export const POINT_LOOKUPS_PER_HOUR = 20
const HOUR_MS = 3_600_000
/** Arbitrary, fixed: the namespace of the per-CNPJ advisory locks of this table. */
const LOOKUP_LOCK_SEED = 36

export type LookupReason = 'lacuna' | 'chave'

/** A lookup taken, or the seconds until the oldest of the hour's lookups leaves the window. */
export type LookupTaken = { ok: true } | { ok: false, retryAfterS: number }

export async function takePointLookup (pool: Pool, servico: GuardedRoute, cnpj: string, reason: LookupReason, perHour = POINT_LOOKUPS_PER_HOUR): Promise<LookupTaken> {
  return await inTransaction(pool, async (client): Promise<LookupTaken> => {
      await client.query('SELECT pg_advisory_xact_lock(hashtextextended($1, $2))', [`${servico}:${cnpj}`, LOOKUP_LOCK_SEED])
      await client.query(`DELETE FROM consultas_pontuais WHERE servico = $1 AND cnpj = $2 AND feita_em <= now() - $3 * interval '1 millisecond'`, [servico, cnpj, HOUR_MS])
      const { rows } = await client.query<{ n: number, espera_ms: string | null }>(
        `SELECT count(*)::int AS n, ceil(extract(epoch FROM min(feita_em) + $3 * interval '1 millisecond' - now()) * 1000)::text AS espera_ms
         FROM consultas_pontuais WHERE servico = $1 AND cnpj = $2`, [servico, cnpj, HOUR_MS])
      const row = rows[0]!
      if (row.n >= perHour) {
        return { ok: false, retryAfterS: Math.max(1, Math.ceil(Number(row.espera_ms ?? '1000') / 1000)) }
      }
      await client.query('INSERT INTO consultas_pontuais (servico, cnpj, motivo) VALUES ($1, $2, $3)', [servico, cnpj, reason])
      return { ok: true }
  })
}
