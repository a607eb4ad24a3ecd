/**
 * What the admin screen's event stream shows (issue 35, item 4): documents kept or cancelled
 * (the outbox rows of migration 0009) and feed states that changed (a hash of each
 * `feed_empresas` row). One poller per instance, shared by every open stream, running only
 * while a stream is open; plain queries, so it works behind PgBouncer's transaction pooling,
 * where LISTEN does not, and sees the writes of every instance.
 *
 * Outbox ids are taken before their transaction commits, so a row may appear after a higher
 * id was read. Ids are read from a floor that trails by LATE_COMMIT_MS, and those already
 * sent are skipped: a transaction committing later than that after a newer one is missed
 * by the screen (the webhooks, which read the outbox by its dispatch mark, miss nothing).
 */
import type { Pool } from 'pg'
import { listFeedStates } from './feed-state.js'
import type { FeedState } from './feed-state.js'

export const LATE_COMMIT_MS = 5_000
const MAX_ROWS = 2_000

export interface DocumentEvent {
  eventoId: string
  tipo: 'documento.novo' | 'documento.cancelado'
  cnpj: string
  empresaCodigo: string | null
  criadoEm: string
  documento: { id: string, chave: string, tipo: string, situacao: string, emitenteNome: string | null, valorTotal: string | null }
}

export type AdminEvent = { kind: 'documento', event: DocumentEvent } | { kind: 'feed', state: FeedState }
type Listener = (event: AdminEvent) => void

interface OutboxRow {
  id: string, evento_id: string, tipo: DocumentEvent['tipo'], cnpj: string, empresa_codigo: string | null, criado_em: string,
  documento_id: string, chave: string, doc_tipo: string, situacao: string, emitente_nome: string | null, valor_total: string | null
}

export class AdminEventHub {
  private readonly listeners = new Set<Listener>()
  private timer: NodeJS.Timeout | undefined
  /** Settles when the first round has set the starting point (a stream says "pronto" then). */
  private started: Promise<void> = Promise.resolve()
  private polling = false
  /** Outbox ids below this were read long enough ago; undefined: not started. */
  private floor: bigint | undefined
  private readonly sent = new Map<string, number>()
  private hashes: Map<string, string> | undefined

  constructor (private readonly pool: Pool, private readonly pollMs: number, private readonly onError: (err: unknown) => void) {}

  /**
   * Listens; the poller runs while anyone listens. `onReady` is called once what is written
   * from then on will be shown. Returns how to stop.
   */
  subscribe (listener: Listener, onReady?: () => void): () => void {
    this.listeners.add(listener)
    if (this.timer === undefined) {
      this.timer = setInterval(() => { void this.poll() }, this.pollMs)
      this.started = this.poll()
    }
    if (onReady !== undefined) void this.started.then(() => { if (this.listeners.has(listener)) onReady() })
    return () => {
      this.listeners.delete(listener)
      if (this.listeners.size === 0) this.stop()
    }
  }

  stop (): void {
    clearInterval(this.timer)
    this.timer = undefined
    this.floor = undefined
    this.hashes = undefined
    this.sent.clear()
  }

  private emit (event: AdminEvent): void {
    for (const l of this.listeners) l(event)
  }

  /** One round (exported for tests through `pollNow`). */
  async pollNow (): Promise<void> { await this.poll() }

  private async poll (): Promise<void> {
    if (this.polling) return
    this.polling = true
    try {
      await this.pollDocuments()
      await this.pollFeeds()
    } catch (err) {
      this.onError(err)
    } finally {
      this.polling = false
    }
  }

  private async pollDocuments (): Promise<void> {
    if (this.floor === undefined) {
      // Start from now: the screen loaded the state with GET /admin/feed.
      this.floor = BigInt((await this.pool.query<{ m: string }>('SELECT coalesce(max(id), 0)::text AS m FROM eventos_documentos')).rows[0]!.m)
      return
    }
    const rows = (await this.pool.query<OutboxRow>(
      `SELECT o.id::text, o.evento_id, o.tipo, o.cnpj, (SELECT e.empresa_codigo FROM empresas e WHERE e.cnpj = o.cnpj AND e.ativo LIMIT 1) AS empresa_codigo,
         to_char(o.criado_em AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS criado_em,
         d.id::text AS documento_id, d.chave, d.tipo AS doc_tipo, d.situacao, d.emitente_nome, d.valor_total::text
       FROM eventos_documentos o JOIN documentos_fiscais d ON d.id = o.documento_id
       WHERE o.id > $1 ORDER BY o.id LIMIT $2`, [this.floor.toString(), MAX_ROWS])).rows
    const now = Date.now()
    for (const r of rows) {
      if (this.sent.has(r.id)) continue
      this.sent.set(r.id, now)
      this.emit({
        kind: 'documento',
        event: {
          eventoId: r.evento_id, tipo: r.tipo, cnpj: r.cnpj, empresaCodigo: r.empresa_codigo, criadoEm: r.criado_em,
          documento: { id: r.documento_id, chave: r.chave, tipo: r.doc_tipo, situacao: r.situacao, emitenteNome: r.emitente_nome, valorTotal: r.valor_total }
        }
      })
    }
    // A full page is a burst: move past it, or the same page would come back.
    if (rows.length === MAX_ROWS) this.floor = BigInt(rows[rows.length - 1]!.id)
    for (const [id, at] of this.sent) {
      if (now - at < LATE_COMMIT_MS && rows.length < MAX_ROWS) continue
      if (BigInt(id) > this.floor) this.floor = BigInt(id)
    }
    for (const id of [...this.sent.keys()]) if (BigInt(id) <= this.floor) this.sent.delete(id)
  }

  private async pollFeeds (): Promise<void> {
    const rows = (await this.pool.query<{ codigo: string, servico: string, h: string }>(
      `SELECT e.empresa_codigo AS codigo, f.servico,
         md5(f::text || coalesce(w.espera_ate::text, '') || (SELECT count(*) FROM feed_lacunas l WHERE l.empresa_id = f.empresa_id AND l.servico = f.servico)) AS h
       FROM feed_empresas f JOIN empresas e ON e.id = f.empresa_id LEFT JOIN esperas_consulta w ON w.servico = f.servico AND w.cnpj = e.cnpj`)).rows
    const next = new Map(rows.map((r) => [`${r.codigo}/${r.servico}`, r.h]))
    const previous = this.hashes
    this.hashes = next
    if (previous === undefined) return
    const changed = new Set([...next].filter(([k, h]) => previous.get(k) !== h).map(([k]) => k))
    if (changed.size === 0) return
    const codes = [...new Set([...changed].map((k) => k.split('/')[0]!))]
    // A scheduler round moves many feeds at once: one query for all of them past a few.
    const states = codes.length > 20 ? await listFeedStates(this.pool) : (await Promise.all(codes.map(async (c) => await listFeedStates(this.pool, c)))).flat()
    for (const state of states) {
      if (changed.has(`${state.empresaCodigo}/${state.servico}`)) this.emit({ kind: 'feed', state })
    }
  }
}
