/**
 * The automatic Ciência da Operação (issue 35, item 3): for a company that asked for it, the
 * feed hands over the keys of the NF-e summaries (`resNFe`) it has just stored, and this sends
 * a Ciência (210210) for those that still need one, so that the full NF-e becomes available to
 * the recipient in the distribution (the MOC's table of what a recipient receives).
 *
 * A key is left alone when the full NF-e is already kept, when the summary is not `autorizada`
 * (a Ciência for a cancelled or denied NF-e is refused, cStat 650), when it was issued longer ago
 * than the Ciência's deadline (`prazoDias`, 10 by default: a figure seen only in third-party
 * code, hence a setting), when it is not one of this company's documents, and when any event was
 * already sent for it (a manifestação already registered, refused or under way: a Ciência after
 * a conclusive event is refused, 655). Only an earlier attempt that failed is tried again, or one
 * still `enviando` ten minutes after it was sent (its process died before the answer: the call's
 * deadline is at most five minutes, GATEWAY_TIMEOUT_MS), which is safe: a repeat is answered 573.
 * At most 20 events go in one batch (envEvento's maxOccurs).
 */
import type { Pool } from 'pg'
import { isGatewayError } from './errors.js'
import type { GatewayError } from './errors.js'
import { sendManifestacoes } from './manifestacao.js'
import type { ManifestSender } from './manifestacao.js'
import { MAX_EVENTS_PER_BATCH } from './manifestacao-xml.js'

export const DEFAULT_CIENCIA_PRAZO_DIAS = 10

/**
 * What the feed knows of the company when it calls: its `feed_empresas` row (migration 0007),
 * whose `ciencia_automatica` is the per-company setting. The feed's own `FeedState`
 * (core/gateway/feed-state.ts) has this shape, so the feed passes its row as it read it.
 */
export interface CienciaCompany {
  empresaCodigo: string
  cnpj: string | null
  cienciaAutomatica: boolean
  /** The row's distribution: only the NF-e's ('nfe') has manifestações. */
  servico?: string
}

export interface AutoCienciaOutcome {
  /** Keys given that needed no Ciência (or not now). */
  ignoradas: number
  registradas: number
  rejeitadas: number
  /** The batch that could not be sent (the rest are left for the next call): what the authority or the transport said. */
  erro: { status: number, code: string, detail: string } | null
}

export async function autoCiencia (pool: Pool, company: CienciaCompany, chaves: readonly string[], sender: ManifestSender,
  options: { prazoDias?: number } = {}): Promise<AutoCienciaOutcome> {
  const outcome: AutoCienciaOutcome = { ignoradas: chaves.length, registradas: 0, rejeitadas: 0, erro: null }
  if (!company.cienciaAutomatica || company.cnpj === null || (company.servico ?? 'nfe') !== 'nfe' || chaves.length === 0) return outcome
  const wanted = [...new Set(chaves.filter((c) => /^[0-9]{44}$/.test(c)))]
  const due = (await pool.query<{ chave: string }>(
    `SELECT d.chave FROM documentos_fiscais d
      WHERE d.chave = ANY($1::text[]) AND d.tipo = 'resNFe' AND d.situacao = 'autorizada' AND $2 = ANY(d.cnpjs)
        AND (d.data_emissao IS NULL OR d.data_emissao > now() - make_interval(days => $3))
        AND NOT EXISTS (SELECT 1 FROM documentos_fiscais p WHERE p.chave = d.chave AND p.tipo = 'procNFe')
        AND NOT EXISTS (SELECT 1 FROM manifestacoes m WHERE m.chave = d.chave AND m.status <> 'falhou'
                          AND NOT (m.status = 'enviando' AND m.enviado_em < now() - interval '10 minutes'))
      ORDER BY d.chave`,
    [wanted, company.cnpj, options.prazoDias ?? DEFAULT_CIENCIA_PRAZO_DIAS])).rows.map((r) => r.chave)
  outcome.ignoradas = chaves.length - due.length
  for (let at = 0; at < due.length; at += MAX_EVENTS_PER_BATCH) {
    const batch = due.slice(at, at + MAX_EVENTS_PER_BATCH)
    try {
      const results = await sendManifestacoes(sender, company.empresaCodigo, batch.map((chave) => ({ chave, tpEvento: '210210' as const })), { automatica: true })
      for (const r of results) {
        if (r.status === 'registrado') outcome.registradas++
        else outcome.rejeitadas++
      }
    } catch (e) {
      if (!isGatewayError(e)) throw e
      const g = e as GatewayError
      outcome.erro = { status: g.status, code: g.code, detail: g.detail }
      // A refused batch is recorded rejeitado; an unreachable authority leaves the keys for the next call.
      if (g.status === 422) outcome.rejeitadas += batch.length
      break
    }
  }
  return outcome
}
