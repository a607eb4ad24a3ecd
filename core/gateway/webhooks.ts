/**
 * Webhook endpoints and their delivery log (issue 35, item 4; migration 0009). An endpoint
 * is one company's (its events only) or global (every document the gateway keeps, once).
 * Its secret signs each body; it is sealed with the master key, answered once when the
 * endpoint is made, and afterwards only its last four characters (`segredo_dica`) show.
 */
import { createHmac, randomBytes } from 'node:crypto'
import type { ClientBase, Pool } from 'pg'
import { EngineError } from '../errors.js'
import { companyNotFound } from './companies.js'
import type { MasterKey } from './master-key.js'
import { openSealed, sealValue } from './seal.js'

type Db = ClientBase | Pool

export const WEBHOOK_EVENTS = ['documento.novo', 'documento.cancelado'] as const

export interface WebhookEndpoint {
  id: string
  url: string
  /** null: global. */
  empresaCodigo: string | null
  segredoDica: string
  ativo: boolean
  criadoEm: string
}

export interface NewWebhookEndpoint {
  url: string
  empresaCodigo: string | null
  /** The receiver's own secret; undefined: one is made (32 random bytes, base64url). */
  segredo?: string | undefined
}

export interface WebhookDelivery {
  id: string
  endpointId: string
  eventoId: string
  tipo: string
  documentoId: string
  cnpj: string
  status: 'pendente' | 'entregue' | 'falhou'
  tentativas: number
  codigoResposta: number | null
  ultimoErro: string | null
  criadoEm: string
  ultimaTentativaEm: string | null
  entregueEm: string | null
}

const aad = (id: string): string => `webhook_endpoints/${id}/segredo`
const ISO = (c: string): string => `to_char(${c} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`

const ENDPOINT_SELECT = `SELECT w.id, w.url, e.empresa_codigo, w.segredo_dica, w.ativo, ${ISO('w.criado_em')} AS criado_em
FROM webhook_endpoints w LEFT JOIN empresas e ON e.id = w.empresa_id`

interface EndpointRow { id: string, url: string, empresa_codigo: string | null, segredo_dica: string, ativo: boolean, criado_em: string }
const toEndpoint = (r: EndpointRow): WebhookEndpoint =>
  ({ id: r.id, url: r.url, empresaCodigo: r.empresa_codigo, segredoDica: r.segredo_dica, ativo: r.ativo, criadoEm: r.criado_em })

/** Makes an endpoint; the answer carries the secret this once. */
export async function createWebhookEndpoint (pool: Pool, master: MasterKey, input: NewWebhookEndpoint): Promise<{ endpoint: WebhookEndpoint, segredo: string }> {
  let empresaId: string | null = null
  if (input.empresaCodigo !== null) {
    const company = (await pool.query<{ id: string, ativo: boolean }>('SELECT id, ativo FROM empresas WHERE empresa_codigo = $1', [input.empresaCodigo])).rows[0]
    if (company === undefined || !company.ativo) throw companyNotFound(input.empresaCodigo)
    empresaId = company.id
  }
  const segredo = input.segredo ?? randomBytes(32).toString('base64url')
  const id = (await pool.query<{ id: string }>('SELECT gen_random_uuid()::text AS id')).rows[0]!.id
  await pool.query(
    'INSERT INTO webhook_endpoints (id, url, empresa_id, segredo_cifrado, segredo_dica, chave_id) VALUES ($1, $2, $3, $4, $5, $6)',
    [id, input.url, empresaId, sealValue(master, Buffer.from(segredo, 'utf8'), aad(id)), `…${segredo.slice(-4)}`, master.id])
  return { endpoint: (await listWebhookEndpoints(pool, id))[0]!, segredo }
}

/** Every endpoint (newest first), or one. */
export async function listWebhookEndpoints (db: Db, id?: string): Promise<WebhookEndpoint[]> {
  const rows = (await db.query<EndpointRow>(`${ENDPOINT_SELECT} ${id === undefined ? '' : 'WHERE w.id = $1'} ORDER BY w.criado_em DESC, w.id`, id === undefined ? [] : [id])).rows
  return rows.map(toEndpoint)
}

/** Removes an endpoint, its log and its pending deliveries (a queued attempt finds no row and ends). */
export async function deleteWebhookEndpoint (pool: Pool, id: string): Promise<void> {
  const deleted = await pool.query('DELETE FROM webhook_endpoints WHERE id = $1', [id])
  if (deleted.rowCount === 0) throw new EngineError('WEBHOOK_NOT_FOUND', `No webhook endpoint has the id "${id.slice(0, 64)}".`)
}

/** Pauses (false) or resumes (true) an endpoint: a paused one is given no new events. */
export async function setWebhookActive (pool: Pool, id: string, ativo: boolean): Promise<WebhookEndpoint> {
  const updated = await pool.query('UPDATE webhook_endpoints SET ativo = $2 WHERE id = $1', [id, ativo])
  if (updated.rowCount === 0) throw new EngineError('WEBHOOK_NOT_FOUND', `No webhook endpoint has the id "${id.slice(0, 64)}".`)
  return (await listWebhookEndpoints(pool, id))[0]!
}

/** The endpoint's secret, for signing; a key mismatch is GATEWAY_STORE_KEY_MISMATCH. */
export function openWebhookSecret (master: MasterKey, id: string, sealed: Uint8Array): string {
  return openSealed(master, sealed, aad(id)).toString('utf8')
}

/** `razao gateway rekey`'s part for the webhook secrets, inside its transaction. */
export async function resealWebhookSecrets (client: ClientBase, oldKey: MasterKey, newKey: MasterKey): Promise<number> {
  const { rows } = await client.query<{ id: string, segredo_cifrado: Buffer }>('SELECT id, segredo_cifrado FROM webhook_endpoints FOR UPDATE')
  const resealed = rows.map((r) => ({ id: r.id, sealed: sealValue(newKey, openSealed(oldKey, r.segredo_cifrado, aad(r.id)), aad(r.id)) }))
  for (const r of resealed) await client.query('UPDATE webhook_endpoints SET segredo_cifrado = $2, chave_id = $3 WHERE id = $1', [r.id, r.sealed, newKey.id])
  return rows.length
}

const DELIVERY_COLUMNS = `d.id::text, d.endpoint_id, d.evento_id, d.tipo, d.documento_id::text, d.cnpj, d.status, d.tentativas, d.codigo_resposta, d.ultimo_erro,
  ${ISO('d.criado_em')} AS criado_em, ${ISO('d.ultima_tentativa_em')} AS ultima_tentativa_em, ${ISO('d.entregue_em')} AS entregue_em`

interface DeliveryRow {
  id: string, endpoint_id: string, evento_id: string, tipo: string, documento_id: string, cnpj: string, status: WebhookDelivery['status'],
  tentativas: number, codigo_resposta: number | null, ultimo_erro: string | null, criado_em: string, ultima_tentativa_em: string | null, entregue_em: string | null
}

/** The delivery log, newest first: every endpoint's or one's, optionally by status. */
export async function listWebhookDeliveries (db: Db, filter: { endpointId?: string | undefined, status?: string | undefined, limite: number }): Promise<WebhookDelivery[]> {
  const where: string[] = []
  const values: unknown[] = []
  if (filter.endpointId !== undefined) { values.push(filter.endpointId); where.push(`d.endpoint_id = $${values.length}`) }
  if (filter.status !== undefined) { values.push(filter.status); where.push(`d.status = $${values.length}`) }
  values.push(filter.limite)
  const rows = (await db.query<DeliveryRow>(
    `SELECT ${DELIVERY_COLUMNS} FROM webhook_entregas d ${where.length === 0 ? '' : `WHERE ${where.join(' AND ')}`} ORDER BY d.id DESC LIMIT $${values.length}`, values)).rows
  return rows.map((r) => ({
    id: r.id, endpointId: r.endpoint_id, eventoId: r.evento_id, tipo: r.tipo, documentoId: r.documento_id, cnpj: r.cnpj, status: r.status, tentativas: r.tentativas,
    codigoResposta: r.codigo_resposta, ultimoErro: r.ultimo_erro, criadoEm: r.criado_em, ultimaTentativaEm: r.ultima_tentativa_em, entregueEm: r.entregue_em
  }))
}

/**
 * The signature header's value: `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">`.
 * The time inside the signed text lets a receiver refuse a replayed request.
 */
export function signWebhookBody (secret: string, body: string, unixSeconds: number): string {
  return `t=${unixSeconds},v1=${createHmac('sha256', secret).update(`${unixSeconds}.${body}`).digest('hex')}`
}
