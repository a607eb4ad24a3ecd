/**
 * The manifestação do destinatário (issue 35, item 3): Ciência da Operação (210210),
 * Confirmação (210200), Desconhecimento (210220) and Operação não Realizada (210240) for 1 to 20
 * NF-e at once, through NFeRecepcaoEvento4 at the Ambiente Nacional, each event signed with the
 * company's certificate (manifestacao-xml.ts), recorded in `manifestacoes` (migration 0008)
 * before it is sent and with the authority's answer after. Protocol facts: docs/gateway.md,
 * "Manifestação do destinatário".
 *
 * Sequence numbers: a Ciência is always 1. A conclusive event is 1 the first time; since
 * NT 2020.001 v1.50 each may be registered twice per NF-e and the last one registered is the
 * one that counts, so asking again for the conclusive event already in force changes nothing
 * (the recorded result is answered, nothing is sent), and asking for it after another
 * conclusive event took over sends it with the next number, up to 2.
 *
 * Idempotent: a repeat of an event already registered is answered from the record; an event
 * whose earlier attempt failed (or whose answer was lost) is sent again with the same Id, and
 * the authority's 573 (duplicate event) is taken as what it means for us: registered.
 */
import type { Agent } from 'node:https'
import type { Pool } from 'pg'
import { AnswerRefused } from './answer-encoding.js'
import { GatewayError, isGatewayError } from './errors.js'
import { callHttps } from './https-call.js'
import type { GatewayLog } from './https-call.js'
import { parseEventoAnswer, MAX_ANSWER_BYTES } from './manifestacao-answer.js'
import type { RetEvento } from './manifestacao-answer.js'
import {
  EVENTO_CONTENT_TYPE, MANIFESTACAO_EVENTS, MAX_EVENTS_PER_BATCH, buildEnvEventoEnvelope, buildEvento, buildProcEventoNFe,
  eventDateTime, isTpEvento, newIdLote, signEvento, xJustProblem
} from './manifestacao-xml.js'
import type { TpEvento } from './manifestacao-xml.js'
import { httpError } from './nfe-distribution.js'
import type { XmlSigner } from './tls-agents.js'

const SERVICE = 'NF-e event reception (NFeRecepcaoEvento4)'
/** Registered: 135 linked to the NF-e, 136 registered but not (yet) linked, 573 already registered (our own repeat). */
const REGISTERED = new Set(['135', '136', '573'])
const PAUSED = new Set(['108', '109'])

export interface ManifestRequest {
  chave: string
  tpEvento: TpEvento
  /** Required for 210240, optional for 210220, refused for the others. */
  xJust?: string | undefined
}

export type ManifestStatus = 'registrado' | 'rejeitado'

export interface ManifestOutcome {
  chave: string
  tpEvento: TpEvento
  nSeqEvento: number
  status: ManifestStatus
  cStat: string | null
  xMotivo: string | null
  nProt: string | null
  dhRegEvento: string | null
  /** True when nothing was sent: the event was already registered and is answered from the record. */
  repetido: boolean
}

/** What sending needs: resolved per call, so the certificate and its agent are the current ones. */
export interface ManifestSender {
  pool: Pool
  tpAmb: 1 | 2
  url: string
  timeoutMs: number
  /** The company's CNPJ (the event's author), its certificate's TLS agent and signing key; throws GatewayError 404/422. */
  prepare: (empresaCodigo: string) => Promise<{ cnpj: string, agent: Agent, signer: XmlSigner }>
  log?: GatewayLog
  now?: () => number
}

const invalid = (detail: string): GatewayError => new GatewayError(400, 'GATEWAY_INVALID_REQUEST', detail)

/** Checks a batch (1 to 20 events, one per key and event code, the xJust rules); returns it with xJust trimmed. */
export function checkManifestRequests (requests: ManifestRequest[]): ManifestRequest[] {
  if (requests.length < 1 || requests.length > MAX_EVENTS_PER_BATCH) throw invalid(`eventos must hold 1 to ${MAX_EVENTS_PER_BATCH} events (one envEvento batch), not ${requests.length}.`)
  const seen = new Set<string>()
  return requests.map((r, i) => {
    const where = requests.length === 1 ? '' : ` (event ${i + 1})`
    if (!/^[0-9]{44}$/.test(r.chave)) throw invalid(`chave must be an NF-e access key of 44 digits${where}.`)
    if (!isTpEvento(r.tpEvento)) throw invalid(`tp_evento must be 210200 (Confirmação), 210210 (Ciência), 210220 (Desconhecimento) or 210240 (Operação não Realizada)${where}.`)
    const key = `${r.chave}-${r.tpEvento}`
    if (seen.has(key)) throw invalid(`The same event for the same key is asked twice${where}.`)
    seen.add(key)
    const ev = MANIFESTACAO_EVENTS[r.tpEvento]
    const xJust = r.xJust?.trim()
    if (ev.xJust === 'absent' && r.xJust !== undefined) throw invalid(`justificativa is not part of a ${ev.nome} (${r.tpEvento}); leave it out${where}.`)
    if (ev.xJust === 'required' && (xJust === undefined || xJust === '')) throw invalid(`justificativa is required for ${ev.nome} (${r.tpEvento}): say, in 15 to 255 characters, why the operation did not happen${where}.`)
    if (xJust !== undefined) {
      const problem = xJustProblem(xJust)
      if (problem !== undefined) throw invalid(`justificativa: ${problem}${where}.`)
    }
    return { chave: r.chave, tpEvento: r.tpEvento, xJust }
  })
}

interface RecordedRow { tp_evento: TpEvento, n_seq_evento: number, status: string, c_stat: string | null, x_motivo: string | null, n_prot: string | null, dh_reg_evento: string | null, registrado_em: Date | null, proc_evento_xml: string | null }

/** What to do for one request: answer from the record, or send it with this sequence number. */
async function planOne (pool: Pool, r: ManifestRequest): Promise<{ repeat: ManifestOutcome } | { nSeqEvento: number }> {
  const rows = (await pool.query<RecordedRow>(
    `SELECT tp_evento, n_seq_evento, status, c_stat, x_motivo, n_prot, dh_reg_evento, registrado_em, proc_evento_xml
       FROM manifestacoes WHERE chave = $1 AND status = 'registrado' ORDER BY registrado_em, id`, [r.chave])).rows
  const repeat = (row: RecordedRow): { repeat: ManifestOutcome } => ({
    repeat: { chave: r.chave, tpEvento: r.tpEvento, nSeqEvento: row.n_seq_evento, status: 'registrado', cStat: row.c_stat, xMotivo: row.x_motivo, nProt: row.n_prot, dhRegEvento: row.dh_reg_evento, repetido: true }
  })
  const same = rows.filter((row) => row.tp_evento === r.tpEvento)
  if (!MANIFESTACAO_EVENTS[r.tpEvento].conclusive) return same[0] === undefined ? { nSeqEvento: 1 } : repeat(same[0])
  const lastConclusive = rows.filter((row) => MANIFESTACAO_EVENTS[row.tp_evento].conclusive).at(-1)
  if (lastConclusive !== undefined && lastConclusive.tp_evento === r.tpEvento) return repeat(lastConclusive)
  const next = same.length + 1
  if (next > 2) {
    throw new GatewayError(422, 'GATEWAY_EVENT_REFUSED', `${MANIFESTACAO_EVENTS[r.tpEvento].nome} is already registered twice for the NF-e ${r.chave}: the authority accepts each conclusive event at most twice per NF-e (NT 2020.001 v1.50), so nothing was sent.`)
  }
  return { nSeqEvento: next }
}

/**
 * Sends the events (1 to 20, already checked) of one company in one envEvento and records
 * them. Returns one outcome per request, in order. Throws GatewayError: 404/422 from
 * `prepare`, 422 when the authority refused the whole batch (its cStat/xMotivo in the body),
 * 503 when it could not be reached, paused (108/109) or answered outside its schema; the
 * events are then recorded `falhou` (or `rejeitado`), and sending them again is safe.
 */
export async function sendManifestacoes (sender: ManifestSender, empresaCodigo: string, requests: ManifestRequest[], options: { automatica?: boolean } = {}): Promise<ManifestOutcome[]> {
  const checked = checkManifestRequests(requests)
  const now = sender.now ?? Date.now
  const { cnpj, agent, signer } = await sender.prepare(empresaCodigo)
  const outcomes: Array<ManifestOutcome | undefined> = []
  const toSend: Array<{ index: number, r: ManifestRequest, nSeqEvento: number, signed: string, id: string }> = []
  const dhEvento = eventDateTime(now())
  // Every event is planned before any is recorded: a refusal (a third conclusive event) leaves nothing behind.
  const plans = []
  for (const r of checked) plans.push(await planOne(sender.pool, r))
  for (const [index, r] of checked.entries()) {
    const plan = plans[index]!
    if ('repeat' in plan) {
      outcomes[index] = plan.repeat
      continue
    }
    const signed = signEvento(buildEvento({ tpAmb: sender.tpAmb, cnpj, chNFe: r.chave, tpEvento: r.tpEvento, nSeqEvento: plan.nSeqEvento, dhEvento, xJust: r.xJust }), signer)
    // A row already registered is never overwritten (a concurrent request got there first).
    const row = await sender.pool.query<{ id: string }>(
      `INSERT INTO manifestacoes (chave, empresa_id, cnpj, tp_evento, n_seq_evento, status, automatica, justificativa, evento_xml)
       SELECT $1, id, $3, $4, $5, 'enviando', $6, $7, $8 FROM empresas WHERE empresa_codigo = $2
       ON CONFLICT (chave, tp_evento, n_seq_evento) DO UPDATE
         SET empresa_id = EXCLUDED.empresa_id, cnpj = EXCLUDED.cnpj, status = 'enviando', automatica = EXCLUDED.automatica,
             justificativa = EXCLUDED.justificativa, evento_xml = EXCLUDED.evento_xml, erro = NULL, enviado_em = now(), respondido_em = NULL
         WHERE manifestacoes.status <> 'registrado'
       RETURNING id`,
      [r.chave, empresaCodigo, cnpj, r.tpEvento, plan.nSeqEvento, options.automatica === true, r.xJust ?? null, signed])
    if (row.rows.length === 0) {
      const again = await planOne(sender.pool, r)
      if ('repeat' in again) {
        outcomes[index] = again.repeat
        continue
      }
      throw companyMissing(empresaCodigo)
    }
    toSend.push({ index, r, nSeqEvento: plan.nSeqEvento, signed, id: row.rows[0]!.id })
  }
  if (toSend.length === 0) return outcomes as ManifestOutcome[]

  const ids = toSend.map((s) => s.id)
  const fail = async (e: unknown): Promise<never> => {
    const why = isGatewayError(e) ? e.detail : 'the call failed unexpectedly'
    await sender.pool.query("UPDATE manifestacoes SET status = 'falhou', erro = $2, respondido_em = now() WHERE id = ANY($1::bigint[])", [ids, why.slice(0, 500)])
    throw e
  }
  let answer
  try {
    answer = await callHttps({
      url: sender.url,
      method: 'POST',
      headers: { 'content-type': EVENTO_CONTENT_TYPE, accept: 'application/soap+xml, text/xml' },
      body: buildEnvEventoEnvelope(newIdLote(now()), toSend.map((s) => s.signed)),
      agent,
      timeoutMs: sender.timeoutMs,
      maxBytes: MAX_ANSWER_BYTES,
      service: SERVICE,
      ...(sender.log === undefined ? {} : { log: { to: sender.log, upstream: 'nfe-recepcao-evento' } })
    })
  } catch (e) {
    return await fail(e)
  }
  let parsed
  try {
    parsed = parseEventoAnswer(answer.body)
  } catch (e) {
    if (!(e instanceof AnswerRefused)) throw e
    return await fail(answer.status === 200
      ? new GatewayError(503, 'GATEWAY_UPSTREAM_UNAVAILABLE', `${SERVICE} answered HTTP 200 with something its schema (retEnvEvento, SOAP) does not allow: ${e.message}. Sending the same events again is safe.`)
      : httpError(SERVICE, answer.status))
  }
  if ('fault' in parsed) {
    const status = /receiver|server/i.test(parsed.fault.code) ? 503 : 422
    return await fail(new GatewayError(status, status === 422 ? 'GATEWAY_EVENT_REFUSED' : 'GATEWAY_UPSTREAM_UNAVAILABLE',
      `${SERVICE} answered with a SOAP Fault (HTTP ${answer.status}, ${parsed.fault.code || 'no code'}): ${parsed.fault.reason || 'no reason given'}.`))
  }
  if (answer.status !== 200) return await fail(httpError(SERVICE, answer.status))
  const ret = parsed.ret
  if (ret.tpAmb !== String(sender.tpAmb)) {
    return await fail(new GatewayError(503, 'GATEWAY_UPSTREAM_UNAVAILABLE', `${SERVICE} answered from environment tpAmb ${ret.tpAmb}, but this gateway is configured for tpAmb ${sender.tpAmb}; check GATEWAY_EVENTO_URL and GATEWAY_TP_AMB.`))
  }
  const body = { cStat: ret.cStat, xMotivo: ret.xMotivo }
  if (ret.cStat !== '128') {
    if (PAUSED.has(ret.cStat)) return await fail(new GatewayError(503, 'GATEWAY_UPSTREAM_UNAVAILABLE', `${SERVICE} is paused (cStat ${ret.cStat}: ${ret.xMotivo}); try again later.`, { body }))
    await sender.pool.query("UPDATE manifestacoes SET status = 'rejeitado', c_stat = $2, x_motivo = $3, respondido_em = now() WHERE id = ANY($1::bigint[])", [ids, ret.cStat, ret.xMotivo.slice(0, 255)])
    throw new GatewayError(422, 'GATEWAY_EVENT_REFUSED', `${SERVICE} refused the batch: cStat ${ret.cStat} (${ret.xMotivo}).`, { body })
  }
  for (const [k, s] of toSend.entries()) {
    const result = matchResult(ret.eventos, s.r, s.nSeqEvento, k, toSend.length)
    if (result === undefined) {
      await sender.pool.query("UPDATE manifestacoes SET status = 'falhou', erro = $2, respondido_em = now() WHERE id = $1", [s.id, 'The authority processed the batch but gave no result for this event; sending it again is safe.'])
      outcomes[s.index] = { chave: s.r.chave, tpEvento: s.r.tpEvento, nSeqEvento: s.nSeqEvento, status: 'rejeitado', cStat: null, xMotivo: 'No result for this event in the authority\'s answer; send it again.', nProt: null, dhRegEvento: null, repetido: false }
      continue
    }
    const registered = REGISTERED.has(result.cStat)
    // procEventoNFe only with a retEvento that registered it (135/136); a 573 keeps the one recorded earlier, if any.
    const proc = result.cStat === '135' || result.cStat === '136' ? buildProcEventoNFe(s.signed, result.xml) : null
    await sender.pool.query(
      `UPDATE manifestacoes SET status = $2, c_stat = $3, x_motivo = $4, n_prot = COALESCE($5, n_prot), dh_reg_evento = COALESCE($6, dh_reg_evento),
              proc_evento_xml = COALESCE($7, proc_evento_xml), respondido_em = now(), registrado_em = CASE WHEN $2 = 'registrado' THEN now() END
        WHERE id = $1`,
      [s.id, registered ? 'registrado' : 'rejeitado', result.cStat, result.xMotivo.slice(0, 255), result.nProt ?? null, result.dhRegEvento ?? null, proc])
    outcomes[s.index] = {
      chave: s.r.chave, tpEvento: s.r.tpEvento, nSeqEvento: s.nSeqEvento, status: registered ? 'registrado' : 'rejeitado',
      cStat: result.cStat, xMotivo: result.xMotivo, nProt: result.nProt ?? null, dhRegEvento: result.dhRegEvento ?? null, repetido: false
    }
  }
  return outcomes as ManifestOutcome[]
}

/** retEvento ↔ evento by chNFe + tpEvento + nSeqEvento; by position only when the authority left those out and the counts agree. */
function matchResult (results: RetEvento[], r: ManifestRequest, nSeq: number, position: number, sent: number): RetEvento | undefined {
  const exact = results.find((x) => x.chNFe === r.chave && x.tpEvento === r.tpEvento && (x.nSeqEvento === undefined || Number(x.nSeqEvento) === nSeq))
  if (exact !== undefined) return exact
  const bare = results[position]
  return results.length === sent && bare !== undefined && bare.chNFe === undefined && bare.tpEvento === undefined ? bare : undefined
}

function companyMissing (empresaCodigo: string): GatewayError {
  return new GatewayError(404, 'GATEWAY_COMPANY_NOT_FOUND', `No company is registered under empresa_codigo "${empresaCodigo}".`)
}

export interface ManifestRecord {
  chave: string
  empresaCodigo: string
  tpEvento: TpEvento
  nSeqEvento: number
  status: string
  automatica: boolean
  cStat: string | null
  xMotivo: string | null
  nProt: string | null
  dhRegEvento: string | null
  erro: string | null
  criadoEm: Date
  enviadoEm: Date
  respondidoEm: Date | null
  registradoEm: Date | null
}

/** The events recorded for a key, oldest first (no XML). */
export async function listManifestacoes (pool: Pool, chave: string): Promise<ManifestRecord[]> {
  const rows = await pool.query(
    `SELECT m.chave, e.empresa_codigo, m.tp_evento, m.n_seq_evento, m.status, m.automatica, m.c_stat, m.x_motivo, m.n_prot, m.dh_reg_evento, m.erro,
            m.criado_em, m.enviado_em, m.respondido_em, m.registrado_em
       FROM manifestacoes m JOIN empresas e ON e.id = m.empresa_id WHERE m.chave = $1 ORDER BY m.criado_em, m.id`, [chave])
  return rows.rows.map((x) => ({
    chave: x.chave, empresaCodigo: x.empresa_codigo, tpEvento: x.tp_evento, nSeqEvento: x.n_seq_evento, status: x.status, automatica: x.automatica,
    cStat: x.c_stat, xMotivo: x.x_motivo, nProt: x.n_prot, dhRegEvento: x.dh_reg_evento, erro: x.erro,
    criadoEm: x.criado_em, enviadoEm: x.enviado_em, respondidoEm: x.respondido_em, registradoEm: x.registrado_em
  }))
}
