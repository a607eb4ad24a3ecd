/**
 * The managed feed's state (issue 35, items 1 and 5): one `feed_empresas` row per company
 * and distribution (migration 0007), read by the admin API and screen and written by the
 * scheduler. Turning a feed on or off is an upsert here; the cursor and the answers'
 * outcome are written by the scheduler only.
 */
import type { ClientBase, Pool } from 'pg'
import { EngineError } from '../errors.js'
import { companyNotFound } from './companies.js'

type Db = ClientBase | Pool

export const FEED_SERVICES = ['nfe', 'adn'] as const
export type FeedService = typeof FEED_SERVICES[number]

export interface FeedState {
  empresaCodigo: string
  cnpj: string | null
  razaoSocial: string
  servico: FeedService
  ativo: boolean
  cienciaAutomatica: boolean
  /** NSUs as text: they are 15 digits, past what a JSON number holds exactly. */
  ultNsu: string
  maxNsu: string | null
  /** ISO 8601 UTC. The later of the feed's own pace and the authority's wait (esperas_consulta). */
  proximaConsulta: string | null
  ultimaConsulta: string | null
  ultimoCstat: string | null
  ultimoErro: { codigo: string | null, mensagem: string, em: string } | null
  lacunas: number
  /** Documents kept for the company's CNPJ, by kind and by status (of every distribution). */
  documentos: { porTipo: Record<string, number>, porSituacao: Record<string, number> }
  atualizadoEm: string
}

export interface FeedOptions { ativo?: boolean, cienciaAutomatica?: boolean }

const ISO = (c: string): string => `to_char(${c} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`

interface Row {
  empresa_codigo: string
  cnpj: string | null
  nome: string
  servico: FeedService
  ativo: boolean
  ciencia_automatica: boolean
  ult_nsu: string
  max_nsu: string | null
  proxima_consulta: string | null
  ultima_consulta: string | null
  ultimo_cstat: string | null
  ultimo_erro_codigo: string | null
  ultimo_erro: string | null
  ultimo_erro_em: string | null
  lacunas: number
  atualizado_em: string
}

// The authority's wait (esperas_consulta, by CNPJ and service) counts as much as the pace.
const SELECT = `
SELECT e.empresa_codigo, e.cnpj, e.nome, f.servico, f.ativo, f.ciencia_automatica, f.ult_nsu::text, f.max_nsu::text,
  ${ISO('GREATEST(f.proxima_consulta, w.espera_ate)')} AS proxima_consulta, ${ISO('f.ultima_consulta')} AS ultima_consulta, f.ultimo_cstat,
  f.ultimo_erro_codigo, f.ultimo_erro, ${ISO('f.ultimo_erro_em')} AS ultimo_erro_em,
  (SELECT count(*)::int FROM feed_lacunas l WHERE l.empresa_id = f.empresa_id AND l.servico = f.servico AND l.desistida_em IS NULL) AS lacunas,
  ${ISO('f.atualizado_em')} AS atualizado_em
FROM feed_empresas f JOIN empresas e ON e.id = f.empresa_id
LEFT JOIN esperas_consulta w ON w.servico = f.servico AND w.cnpj = e.cnpj`

async function documentCounts (db: Db, cnpjs: string[]): Promise<Map<string, FeedState['documentos']>> {
  const out = new Map<string, FeedState['documentos']>()
  if (cnpjs.length === 0) return out
  const rows = (await db.query<{ cnpj: string, tipo: string, situacao: string, n: number }>(
    `SELECT c.cnpj, d.tipo, d.situacao, count(*)::int AS n
     FROM unnest($1::text[]) AS c(cnpj) JOIN documentos_fiscais d ON d.cnpjs @> ARRAY[c.cnpj]
     GROUP BY 1, 2, 3`, [cnpjs])).rows
  for (const r of rows) {
    const counts = out.get(r.cnpj) ?? { porTipo: {}, porSituacao: {} }
    counts.porTipo[r.tipo] = (counts.porTipo[r.tipo] ?? 0) + r.n
    counts.porSituacao[r.situacao] = (counts.porSituacao[r.situacao] ?? 0) + r.n
    out.set(r.cnpj, counts)
  }
  return out
}

function toState (r: Row, counts: Map<string, FeedState['documentos']>): FeedState {
  return {
    empresaCodigo: r.empresa_codigo,
    cnpj: r.cnpj,
    razaoSocial: r.nome,
    servico: r.servico,
    ativo: r.ativo,
    cienciaAutomatica: r.ciencia_automatica,
    ultNsu: r.ult_nsu,
    maxNsu: r.max_nsu,
    proximaConsulta: r.proxima_consulta,
    ultimaConsulta: r.ultima_consulta,
    ultimoCstat: r.ultimo_cstat,
    ultimoErro: r.ultimo_erro === null ? null : { codigo: r.ultimo_erro_codigo, mensagem: r.ultimo_erro, em: r.ultimo_erro_em! },
    lacunas: r.lacunas,
    documentos: (r.cnpj === null ? undefined : counts.get(r.cnpj)) ?? { porTipo: {}, porSituacao: {} },
    atualizadoEm: r.atualizado_em
  }
}

/** Every configured feed (on or off), by company code then service; or one company's. */
export async function listFeedStates (db: Db, empresaCodigo?: string): Promise<FeedState[]> {
  const rows = (await db.query<Row>(
    `${SELECT} ${empresaCodigo === undefined ? '' : 'WHERE e.empresa_codigo = $1'} ORDER BY e.empresa_codigo, f.servico`,
    empresaCodigo === undefined ? [] : [empresaCodigo])).rows
  const counts = await documentCounts(db, [...new Set(rows.flatMap((r) => r.cnpj === null ? [] : [r.cnpj]))])
  return rows.map((r) => toState(r, counts))
}

/**
 * Turns a company's feed on or off (and its automatic Ciência). The company must be active
 * and have a CNPJ: the distribution asks by CNPJ. Turning a feed on makes it due at once.
 */
export async function setFeedOptions (pool: Pool, empresaCodigo: string, servico: FeedService, options: FeedOptions): Promise<FeedState> {
  if (options.cienciaAutomatica === true && servico !== 'nfe') {
    throw new EngineError('REQUEST_INVALID', 'ciencia_automatica applies to the NF-e feed only: the NFS-e has no manifestação.')
  }
  const company = (await pool.query<{ id: string, cnpj: string | null, ativo: boolean }>(
    'SELECT id, cnpj, ativo FROM empresas WHERE empresa_codigo = $1', [empresaCodigo])).rows[0]
  if (company === undefined || !company.ativo) throw companyNotFound(empresaCodigo)
  if (company.cnpj === null && options.ativo === true) {
    throw new EngineError('REQUEST_INVALID', `The company ${empresaCodigo} has no CNPJ, and the distribution asks by CNPJ: register its CNPJ first.`)
  }
  await pool.query(
    `INSERT INTO feed_empresas AS f (empresa_id, servico, ativo, ciencia_automatica, proxima_consulta)
     VALUES ($1, $2, coalesce($3, false), coalesce($4, false), CASE WHEN $3 THEN now() END)
     ON CONFLICT (empresa_id, servico) DO UPDATE SET
       ativo = coalesce($3, f.ativo),
       ciencia_automatica = coalesce($4, f.ciencia_automatica),
       proxima_consulta = CASE WHEN $3 AND NOT f.ativo THEN now() ELSE f.proxima_consulta END,
       atualizado_em = now()`,
    [company.id, servico, options.ativo ?? null, options.cienciaAutomatica ?? null])
  return (await listFeedStates(pool, empresaCodigo)).find((s) => s.servico === servico)!
}

/** Whether a managed feed of `servico` is on for a company with this CNPJ (the one-off query routes then step aside). */
export async function feedActiveFor (db: Db, servico: FeedService, cnpj: string): Promise<boolean> {
  const { rows } = await db.query(
    'SELECT 1 FROM feed_empresas f JOIN empresas e ON e.id = f.empresa_id WHERE e.cnpj = $1 AND f.servico = $2 AND f.ativo AND e.ativo LIMIT 1', [cnpj, servico])
  return rows.length > 0
}
