/**
 * Delivering the notifications (issue 35, item 4). Two steps, both safe on any number of
 * instances:
 * - dispatch: the outbox rows storeDocuments wrote (`eventos_documentos`) become one
 *   delivery-log row per matching endpoint and one pg-boss job each, in one transaction that
 *   also marks the rows dispatched; rows are claimed with SKIP LOCKED, and the log's unique
 *   (endpoint, event) makes a second dispatch of the same event a no-op;
 * - delivery: pg-boss hands each job to one worker (its fetch locks with SKIP LOCKED), keeps
 *   it across restarts (an instance that dies holding it loses it at the job's expiry, and
 *   another retries), and retries a failure with exponential backoff and jitter: attempt
 *   n+1 waits between d·2^(n-1) and d·2^n seconds (d = retryDelaySeconds).
 * A receiver may see an event twice (an instance dying between the receiver's answer and
 * the log's update): the event id (`X-Razao-Evento-Id`) is what it deduplicates on.
 */
import { request as httpRequest } from 'node:http'
import { request as httpsRequest } from 'node:https'
import PgBoss from 'pg-boss'
import type { ClientBase, Pool } from 'pg'
import { inTransaction } from '../db/transaction.js'
import type { MasterKey } from './master-key.js'
import { openWebhookSecret, signWebhookBody } from './webhooks.js'

export const WEBHOOK_QUEUE = 'razao-webhook'

/** How deliveries are paced and kept: the gateway's GATEWAY_WEBHOOK_* settings (server/gateway/config.ts). */
export interface WebhookDeliverySettings {
  /** Retries after the first attempt (GATEWAY_WEBHOOK_RETRIES). */
  retryLimit: number
  /** d of the backoff, seconds: retry n waits between d·2^(n-1) and d·2^n (GATEWAY_WEBHOOK_RETRY_DELAY_S). */
  retryDelaySeconds: number
  /** Bound of one attempt: connect, send, answer (GATEWAY_WEBHOOK_TIMEOUT_MS). */
  timeoutMs: number
  /** Attempts one instance runs at once (GATEWAY_WEBHOOK_CONCURRENCY). */
  concurrency: number
  /** How often the outbox and the queue are looked at, ms (GATEWAY_WEBHOOK_POLL_MS, at least 500: pg-boss's floor). */
  pollMs: number
  /** Dispatched events and finished deliveries older than this are removed (GATEWAY_WEBHOOK_KEEP_DAYS). */
  keepDays: number
}

export interface WebhookDeliveryOptions extends WebhookDeliverySettings {
  pool: Pool
  masterKey: MasterKey
  /** Where failures of the loop itself go (never a secret). */
  log: { warn: (obj: object, msg: string) => void }
  /** The User-Agent sent. */
  userAgent?: string
}

interface JobData { entrega: string }

interface AttemptRow {
  id: string
  endpoint_id: string
  evento_id: string
  tipo: string
  cnpj: string
  status: string
  tentativas: number
  url: string
  segredo_cifrado: Buffer
  ativo: boolean
  evento_criado_em: string | null
  empresa_codigo: string | null
  documento: Record<string, unknown> | null
}

const ISO = (c: string): string => `to_char(${c} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`

// The document without its XML (GET /v1/documents/{chave}/xml has it), as it stands now.
const ATTEMPT = `
SELECT d.id::text, d.endpoint_id, d.evento_id, d.tipo, d.cnpj, d.status, d.tentativas, w.url, w.segredo_cifrado, w.ativo,
  (SELECT ${ISO('o.criado_em')} FROM eventos_documentos o WHERE o.evento_id = d.evento_id) AS evento_criado_em,
  (SELECT e.empresa_codigo FROM empresas e WHERE e.cnpj = d.cnpj AND e.ativo LIMIT 1) AS empresa_codigo,
  (SELECT json_build_object('id', f.id::text, 'chave', f.chave, 'tipo', f.tipo, 'esquema', f.esquema, 'evento', f.evento, 'cnpjs', f.cnpjs, 'nsu', f.nsu,
     'emitente_cnpj', f.emitente_cnpj, 'emitente_nome', f.emitente_nome, 'destinatario_doc', f.destinatario_doc, 'destinatario_nome', f.destinatario_nome,
     'data_emissao', ${ISO('f.data_emissao')}, 'data_emissao_local', f.data_emissao_local::text, 'valor_total', f.valor_total::text,
     'situacao', f.situacao, 'cancela', f.cancela, 'recebido_em', ${ISO('f.recebido_em')})
   FROM documentos_fiscais f WHERE f.id = d.documento_id) AS documento
FROM webhook_entregas d JOIN webhook_endpoints w ON w.id = d.endpoint_id
WHERE d.id = $1`

/** The body of a delivery: the same event id on every attempt and endpoint. */
export function webhookBody (row: Pick<AttemptRow, 'evento_id' | 'tipo' | 'cnpj' | 'empresa_codigo' | 'evento_criado_em' | 'documento'>): string {
  return JSON.stringify({
    id: row.evento_id,
    tipo: row.tipo,
    criado_em: row.evento_criado_em,
    empresa: { cnpj: row.cnpj, empresa_codigo: row.empresa_codigo },
    documento: row.documento
  })
}

const asDb = (client: ClientBase): PgBoss.Db => ({ executeSql: async (text, values) => await client.query(text, values) })

export class WebhookDelivery {
  private readonly boss: PgBoss
  private timer: NodeJS.Timeout | undefined
  private dispatching: Promise<void> | undefined
  private stopped = false
  private lastPrune = 0

  constructor (private readonly options: WebhookDeliveryOptions) {
    const { pool } = options
    this.boss = new PgBoss({
      db: { executeSql: async (text, values) => await pool.query(text, values) },
      // The job table's own upkeep (expired jobs back to retry) runs on every instance.
      supervise: true,
      maintenanceIntervalSeconds: 60,
      schedule: false
    })
    this.boss.on('error', (err) => { options.log.warn({ err }, 'webhook queue: pg-boss reported an error') })
  }

  async start (): Promise<void> {
    await this.boss.start()
    if (await this.boss.getQueue(WEBHOOK_QUEUE) === null) {
      // Two instances starting at once: the second's create fails on the unique name.
      await this.boss.createQueue(WEBHOOK_QUEUE).catch(async (err: unknown) => {
        if (await this.boss.getQueue(WEBHOOK_QUEUE) === null) throw err
      })
    }
    const pollingIntervalSeconds = Math.max(0.5, this.options.pollMs / 1000)
    const batchSize = this.options.concurrency
    // One worker takes up to `concurrency` jobs and attempts them at once. Each job's outcome
    // is its own: a failed attempt is failed by id (pg-boss then schedules its retry), and the
    // rest complete when the handler returns. A full batch reads the queue again at once.
    const workerId: string = await this.boss.work<JobData>(WEBHOOK_QUEUE, { batchSize, includeMetadata: true, pollingIntervalSeconds }, async (jobs) => {
      await Promise.all(jobs.map(async (job) => {
        let retry: string | undefined
        try {
          retry = await this.attempt(job.data.entrega, job.retryCount, job.retryLimit)
        } catch (err) {
          retry = `The attempt could not be recorded: ${(err as Error).message}`
          this.options.log.warn({ err, entrega: job.data.entrega }, 'webhook attempt failed outside the request')
        }
        if (retry !== undefined) await this.boss.fail(WEBHOOK_QUEUE, job.id, { message: retry })
      }))
      if (jobs.length === batchSize && !this.stopped) this.boss.notifyWorker(workerId)
    })
    this.timer = setInterval(() => { void this.dispatchNow() }, this.options.pollMs)
    void this.dispatchNow()
  }

  async stop (): Promise<void> {
    this.stopped = true
    clearInterval(this.timer)
    await this.dispatching
    await this.boss.stop({ graceful: true, timeout: this.options.timeoutMs + 1000, close: false })
  }

  /** One dispatch round now (tests call it to skip the wait); overlapping calls share one. */
  async dispatchNow (): Promise<void> {
    if (this.dispatching !== undefined || this.stopped) return await this.dispatching
    this.dispatching = this.dispatch().catch((err: unknown) => {
      this.options.log.warn({ err }, 'webhook dispatch failed; retried at the next round')
    }).finally(() => { this.dispatching = undefined })
    return await this.dispatching
  }

  private async dispatch (): Promise<void> {
    for (let more = true; more && !this.stopped;) {
      more = await this.dispatchBatch(200)
    }
    if (Date.now() - this.lastPrune > 3_600_000) {
      this.lastPrune = Date.now()
      await this.options.pool.query(
        `DELETE FROM eventos_documentos WHERE despachado_em IS NOT NULL AND criado_em < now() - $1 * interval '1 day'`, [this.options.keepDays])
      await this.options.pool.query(
        `DELETE FROM webhook_entregas WHERE status <> 'pendente' AND criado_em < now() - $1 * interval '1 day'`, [this.options.keepDays])
    }
  }

  /** Claims up to `limit` undispatched events; true when there may be more. */
  private async dispatchBatch (limit: number): Promise<boolean> {
    return await inTransaction(this.options.pool, async (client) => {
      const events = (await client.query<{ id: string }>(
        'SELECT id::text FROM eventos_documentos WHERE despachado_em IS NULL ORDER BY id LIMIT $1 FOR UPDATE SKIP LOCKED', [limit])).rows.map((r) => r.id)
      if (events.length === 0) {
        return false
      }
      // A company's endpoints get its events; global ones each document once (primeiro).
      const deliveries = (await client.query<{ id: string }>(
        `INSERT INTO webhook_entregas (endpoint_id, evento_id, tipo, documento_id, cnpj)
         SELECT w.id, o.evento_id, o.tipo, o.documento_id, o.cnpj
         FROM eventos_documentos o JOIN webhook_endpoints w ON w.ativo
           AND ((w.empresa_id IS NULL AND o.primeiro) OR w.empresa_id IN (SELECT e.id FROM empresas e WHERE e.cnpj = o.cnpj AND e.ativo))
         WHERE o.id = ANY ($1::bigint[])
         ORDER BY o.id, w.id
         ON CONFLICT (endpoint_id, evento_id) DO NOTHING
         RETURNING id::text`, [events])).rows
      if (deliveries.length > 0) {
        const { retryLimit, retryDelaySeconds, timeoutMs } = this.options
        // The job is made in this transaction: a delivery row never lacks its job.
        await this.boss.insert(deliveries.map((d) => ({
          name: WEBHOOK_QUEUE,
          data: { entrega: d.id },
          retryLimit,
          retryDelay: retryDelaySeconds,
          retryBackoff: true,
          // Past this an attempt counts as lost (its instance died) and is retried.
          expireInSeconds: Math.ceil(timeoutMs / 1000) + 60
        })), { db: asDb(client) })
      }
      await client.query('UPDATE eventos_documentos SET despachado_em = now() WHERE id = ANY ($1::bigint[])', [events])
      return events.length === limit
    })
  }

  /** One attempt; answers why when it failed and retries remain (pg-boss retries it then). */
  private async attempt (entrega: string, retryCount: number, retryLimit: number): Promise<string | undefined> {
    const { pool, masterKey, timeoutMs } = this.options
    const row = (await pool.query<AttemptRow>(ATTEMPT, [entrega])).rows[0]
    // The endpoint was removed (its log with it), or an earlier run delivered it.
    if (row === undefined || row.status === 'entregue') return undefined
    if (!row.ativo) {
      await this.record(entrega, 'falhou', null, 'The endpoint was deactivated before this delivery.', false)
      return undefined
    }
    const body = webhookBody(row)
    const t = Math.floor(Date.now() / 1000)
    let status: number | null = null
    let error: string | null = null
    try {
      const secret = openWebhookSecret(masterKey, row.endpoint_id, row.segredo_cifrado)
      status = await post(row.url, body, {
        'content-type': 'application/json; charset=utf-8',
        'user-agent': this.options.userAgent ?? 'razao-gateway-webhook',
        'x-razao-evento': row.tipo,
        'x-razao-evento-id': row.evento_id,
        'x-razao-tentativa': String(row.tentativas + 1),
        'x-razao-assinatura': signWebhookBody(secret, body, t)
      }, timeoutMs)
      if (status < 200 || status > 299) error = `The receiver answered HTTP ${status}${status >= 300 && status < 400 ? ' (redirects are not followed)' : ''}.`
    } catch (err) {
      error = describeFailure(err, timeoutMs)
    }
    if (error === null) {
      await this.record(entrega, 'entregue', status, null, true)
      return undefined
    }
    const last = retryCount >= retryLimit
    await this.record(entrega, last ? 'falhou' : 'pendente', status,
      last ? `${error} Gave up after ${retryCount + 1} attempt(s).` : error, false)
    return last ? undefined : error
  }

  private async record (entrega: string, status: string, codigo: number | null, erro: string | null, delivered: boolean): Promise<void> {
    await this.options.pool.query(
      `UPDATE webhook_entregas SET status = $2, tentativas = tentativas + 1, codigo_resposta = $3, ultimo_erro = $4, ultima_tentativa_em = now(),
         entregue_em = CASE WHEN $5 THEN now() ELSE entregue_em END
       WHERE id = $1`, [entrega, status, codigo, erro, delivered])
  }
}

/**
 * POSTs with node:http(s) rather than fetch, whose "bad port" list would refuse receivers on
 * ports such as 6000 or 6667. Redirects are not followed; the answer's body is not read.
 */
async function post (url: string, body: string, headers: Record<string, string>, timeoutMs: number): Promise<number> {
  const target = new URL(url)
  const send = target.protocol === 'https:' ? httpsRequest : httpRequest
  return await new Promise<number>((resolve, reject) => {
    const req = send(target, { method: 'POST', headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) }, agent: false }, (res) => {
      res.resume()
      resolve(res.statusCode ?? 0)
    })
    // One bound for the whole attempt: connect, send and the answer's head.
    const deadline = setTimeout(() => { req.destroy(Object.assign(new Error('timeout'), { code: 'WEBHOOK_TIMEOUT' })) }, timeoutMs)
    req.on('close', () => { clearTimeout(deadline) })
    req.on('error', reject)
    req.end(body)
  })
}

function describeFailure (err: unknown, timeoutMs: number): string {
  const e = err as { code?: string, message?: string }
  if (e.code === 'WEBHOOK_TIMEOUT') return `No answer within ${timeoutMs} ms.`
  if (e.code === 'GATEWAY_STORE_KEY_MISMATCH') return 'The endpoint\'s secret does not open with the current master key (GATEWAY_MASTER_KEY changed?).'
  if (e.code === 'ECONNREFUSED') return 'Connection refused: nothing listens at that address.'
  if (e.code === 'ENOTFOUND' || e.code === 'EAI_AGAIN') return 'The host name does not resolve.'
  if (e.code === 'ECONNRESET') return 'The receiver closed the connection before answering.'
  if (e.code !== undefined) return `The connection failed (${e.code}).`
  return `The request failed: ${e.message ?? 'network error'}.`
}
