/**
 * The documents kept (issue 35, item 2): each distributed document once in
 * `documentos_fiscais` (migration 0006), by access key, schema and, for events, event code
 * and sequence. A cancellation event makes the note `cancelada` whichever of the two
 * arrives first: both writes take a transaction-scoped advisory lock on the key, so a note
 * and its cancellation stored at once by two instances still meet.
 */
import type { Pool, PoolClient } from 'pg'
import { inTransaction } from '../db/transaction.js'
import type { OpenedDocument } from './doc-zip.js'

export interface ReceivedDocument {
  /** The NF-e docZip's `NSU` attribute (15 digits) or the ADN item's NSU, as text. */
  nsu: string | null
  /** The NF-e docZip's schema without its version (`resNFe`), or the ADN `TipoDocumento` (`NFSE`, `EVENTO`). */
  esquema: string
  opened: OpenedDocument
}

/** Arbitrary, fixed: the namespace of the per-key advisory locks. */
const KEY_LOCK_SEED = 35

// `anterior` reads the row as it was before this statement (the key's lock is held): whether
// the company had it already decides the notification (migration 0009).
const INSERT = `
WITH anterior AS (SELECT cnpjs FROM documentos_fiscais WHERE chave = $1 AND esquema = $2 AND evento = $3)
INSERT INTO documentos_fiscais AS d (chave, esquema, evento, tipo, cnpjs, nsu, emitente_cnpj, emitente_nome, destinatario_doc, destinatario_nome,
  data_emissao, data_emissao_local, valor_total, situacao, cancela, xml)
VALUES ($1, $2, $3, $4, ARRAY[$5::text], $6, $7, $8, $9, $10, $11::timestamptz, $12::date, $13::numeric,
  CASE WHEN $3 = '' AND EXISTS (SELECT 1 FROM documentos_fiscais c WHERE c.chave = $1 AND c.cancela) THEN 'cancelada' ELSE $14 END, $15, $16)
ON CONFLICT (chave, esquema, evento) DO UPDATE SET
  cnpjs = CASE WHEN $5 = ANY (d.cnpjs) THEN d.cnpjs ELSE d.cnpjs || $5::text END,
  situacao = CASE WHEN EXCLUDED.situacao = 'cancelada' THEN 'cancelada' ELSE d.situacao END
RETURNING d.id::text, (xmax = 0) AS inserted, NOT EXISTS (SELECT 1 FROM anterior a WHERE $5 = ANY (a.cnpjs)) AS new_for_company`

const CANCEL = `UPDATE documentos_fiscais SET situacao = 'cancelada' WHERE chave = $1 AND evento = '' AND situacao <> 'cancelada' RETURNING id::text, cnpjs`

// The outbox (migration 0009): one statement per answer, whatever its number of documents.
const EVENTS = `INSERT INTO eventos_documentos (tipo, documento_id, cnpj, primeiro)
SELECT * FROM unnest($1::text[], $2::bigint[], $3::text[], $4::boolean[])`

/** The notifications an answer raises, written in its transaction (core/gateway/webhooks.ts reads them). */
interface PendingEvents { tipo: string[], documentoId: string[], cnpj: string[], primeiro: boolean[] }

export interface StoreOutcome { inserted: number, repeated: number }

/**
 * Stores one answer's documents for the company `cnpj`, all or nothing, in one transaction.
 * Keys are locked in sorted order, so two instances never deadlock on overlapping batches.
 */
export async function storeDocuments (pool: Pool, cnpj: string, documents: ReceivedDocument[]): Promise<StoreOutcome> {
  if (documents.length === 0) return { inserted: 0, repeated: 0 }
  return await inTransaction(pool, async (client) => await storeDocumentsIn(client, cnpj, documents))
}

/**
 * The same, inside the caller's open transaction (the managed feed moves its cursor in the
 * transaction that stores what the cursor moves past).
 */
export async function storeDocumentsIn (client: PoolClient, cnpj: string, documents: ReceivedDocument[],
  onStored?: (document: ReceivedDocument, inserted: boolean) => void): Promise<StoreOutcome> {
  const outcome: StoreOutcome = { inserted: 0, repeated: 0 }
  if (documents.length === 0) return outcome
  const ordered = [...documents].sort((a, b) => a.opened.facts.chave < b.opened.facts.chave ? -1 : a.opened.facts.chave > b.opened.facts.chave ? 1 : 0)
  const keys = [...new Set(ordered.map((d) => d.opened.facts.chave))]
  await client.query('SELECT pg_advisory_xact_lock(hashtextextended(k, $2)) FROM unnest($1::text[]) AS k ORDER BY k', [keys, KEY_LOCK_SEED])
  const events: PendingEvents = { tipo: [], documentoId: [], cnpj: [], primeiro: [] }
  for (const d of ordered) {
    const inserted = await storeOne(client, cnpj, d, events)
    if (inserted) outcome.inserted++
    else outcome.repeated++
    onStored?.(d, inserted)
  }
  // The notifications they raise, in the same transaction: nothing stored goes unannounced.
  if (events.tipo.length > 0) await client.query({ name: 'eventos_documentos_insert', text: EVENTS, values: [events.tipo, events.documentoId, events.cnpj, events.primeiro] })
  return outcome
}

async function storeOne (client: PoolClient, cnpj: string, d: ReceivedDocument, events: PendingEvents): Promise<boolean> {
  const f = d.opened.facts
  const evento = f.evento === null ? '' : `${f.evento.tipo}-${f.evento.seq}`
  const result = await client.query<{ id: string, inserted: boolean, new_for_company: boolean }>({
    name: 'documentos_fiscais_insert',
    text: INSERT,
    values: [
      f.chave, d.esquema, evento, f.kind, cnpj, d.nsu, f.emitenteCnpj, f.emitenteNome, f.destinatarioDoc, f.destinatarioNome,
      // A bare date has no instant (it would be read in the session's zone): only its date is kept.
      f.dataEmissao !== null && f.dataEmissao.length > 10 ? f.dataEmissao : null, f.dataEmissao?.slice(0, 10) ?? null, f.valorTotal, f.situacao, f.evento?.cancela ?? false, d.opened.xml
    ]
  })
  const row = result.rows[0]!
  // New to the gateway, or only to this company: announced to this company's endpoints
  // (and, when new to the gateway, to the global ones).
  if (row.new_for_company) addEvent(events, 'documento.novo', row.id, cnpj, row.inserted)
  if (f.evento?.cancela === true) {
    const cancelled = await client.query<{ id: string, cnpjs: string[] }>({ name: 'documentos_fiscais_cancel', text: CANCEL, values: [f.chave] })
    // A note that turns cancelled: once for each company it concerns, the first one global
    // (its summary and its full document are one note: the first row speaks for both).
    const told = new Set<string>()
    for (const note of cancelled.rows) {
      for (const c of note.cnpjs) {
        if (!told.has(c)) addEvent(events, 'documento.cancelado', note.id, c, told.size === 0)
        told.add(c)
      }
    }
  }
  return row.inserted
}

function addEvent (events: PendingEvents, tipo: string, documentoId: string, cnpj: string, primeiro: boolean): void {
  events.tipo.push(tipo)
  events.documentoId.push(documentoId)
  events.cnpj.push(cnpj)
  events.primeiro.push(primeiro)
}

export const DOCUMENT_KINDS = ['resNFe', 'procNFe', 'resEvento', 'procEventoNFe', 'NFS-e', 'eventoNFS-e'] as const
export const DOCUMENT_STATUSES = ['autorizada', 'denegada', 'cancelada', 'registrado'] as const

export interface DocumentFilter {
  cnpj?: string | undefined
  /** Inclusive, YYYY-MM-DD, on the issue date as written in the document. */
  desde?: string | undefined
  ate?: string | undefined
  tipo?: string | undefined
  situacao?: string | undefined
  /** Keyset: only rows received before this id (the previous page's `proximo`). */
  antesDe?: string | undefined
  limite: number
}

export interface StoredDocument {
  id: string
  chave: string
  tipo: string
  esquema: string
  evento: string
  cnpjs: string[]
  nsu: string | null
  emitente_cnpj: string | null
  emitente_nome: string | null
  destinatario_doc: string | null
  destinatario_nome: string | null
  data_emissao: string | null
  data_emissao_local: string | null
  valor_total: string | null
  situacao: string
  cancela: boolean
  recebido_em: string
}

const COLUMNS = `id::text, chave, tipo, esquema, evento, cnpjs, nsu, emitente_cnpj, emitente_nome, destinatario_doc, destinatario_nome,
  to_char(data_emissao AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') AS data_emissao, data_emissao_local::text, valor_total::text, situacao, cancela,
  to_char(recebido_em AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS recebido_em`

/**
 * A page, newest received first; `proximo` is the cursor of the next page, null on the last.
 * The output column `id` is text (a bigint as JSON would lose digits past 2^53): ordering names
 * the table's column, or it would sort as text ('9' after '10').
 */
export async function listDocuments (pool: Pool, f: DocumentFilter): Promise<{ documentos: StoredDocument[], proximo: string | null }> {
  const where: string[] = []
  const values: unknown[] = []
  const add = (sql: string, value: unknown): void => { values.push(value); where.push(sql.replace('?', `$${values.length}`)) }
  if (f.cnpj !== undefined) add('cnpjs @> ARRAY[?::text]', f.cnpj)
  if (f.desde !== undefined) add('data_emissao_local >= ?::date', f.desde)
  if (f.ate !== undefined) add('data_emissao_local <= ?::date', f.ate)
  if (f.tipo !== undefined) add('tipo = ?', f.tipo)
  if (f.situacao !== undefined) add('situacao = ?', f.situacao)
  if (f.antesDe !== undefined) add('id < ?::bigint', f.antesDe)
  values.push(f.limite + 1)
  const rows = (await pool.query<StoredDocument>(
    `SELECT ${COLUMNS} FROM documentos_fiscais d ${where.length === 0 ? '' : `WHERE ${where.join(' AND ')}`} ORDER BY d.id DESC LIMIT $${values.length}`, values)).rows
  const more = rows.length > f.limite
  const page = more ? rows.slice(0, f.limite) : rows
  return { documentos: page, proximo: more ? page[page.length - 1]!.id : null }
}

/**
 * The document of a key: the full one before its summary (procNFe, then resNFe, NFS-e), and
 * when only events are kept, the latest of them; with the key's events (without their XML).
 */
export async function getDocument (pool: Pool, chave: string): Promise<{ documento: StoredDocument, xml: string, eventos: StoredDocument[] } | undefined> {
  const rows = (await pool.query<StoredDocument & { xml: string }>(
    `SELECT ${COLUMNS}, xml FROM documentos_fiscais d WHERE chave = $1
     ORDER BY (d.evento = '') DESC, CASE d.tipo WHEN 'procNFe' THEN 0 WHEN 'NFS-e' THEN 0 WHEN 'resNFe' THEN 1 ELSE 2 END, d.id DESC`, [chave])).rows
  const first = rows[0]
  if (first === undefined) return undefined
  const { xml, ...documento } = first
  return { documento, xml, eventos: rows.filter((r) => r.evento !== '').map(({ xml: _xml, ...r }) => r) }
}
