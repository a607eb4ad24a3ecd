/**
 * The fields of POST /v1/manifestacao and `razao manifest` (issue 35, item 3), checked one by
 * one so that a 400 names the field: `empresa_codigo`, and `eventos`, 1 to 20 items of
 * `{ chave, tp_evento, justificativa? }`. The rules of each event (xJust per event code,
 * one event per key and code in a batch) are core's (checkManifestRequests).
 */
import { GatewayError, checkManifestRequests, isTpEvento, MAX_EVENTS_PER_BATCH } from '../../core/gateway/index.js'
import type { ManifestOutcome, ManifestRequest } from '../../core/gateway/index.js'

const invalid = (detail: string): GatewayError => new GatewayError(400, 'GATEWAY_INVALID_REQUEST', detail)

export interface ManifestBody { empresaCodigo: string, requests: ManifestRequest[] }

export function readManifestBody (raw: unknown): ManifestBody {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw invalid('The request body must be a JSON object (Content-Type: application/json).')
  const body = raw as Record<string, unknown>
  for (const name of Object.keys(body)) if (name !== 'empresa_codigo' && name !== 'eventos') throw invalid(`Unknown field "${name.slice(0, 40)}": the fields are empresa_codigo and eventos.`)
  const code = body.empresa_codigo
  if (code === undefined || code === null) throw invalid('empresa_codigo is required.')
  if (typeof code !== 'string' || code.trim() === '' || code.length > 100) throw invalid('empresa_codigo must be a non-empty text of at most 100 characters.')
  const eventos = body.eventos
  if (!Array.isArray(eventos) || eventos.length < 1 || eventos.length > MAX_EVENTS_PER_BATCH) {
    throw invalid(`eventos must be a list of 1 to ${MAX_EVENTS_PER_BATCH} events (one envEvento batch), each { chave, tp_evento, justificativa? }.`)
  }
  const requests = eventos.map((e: unknown, i): ManifestRequest => {
    const where = `eventos[${i}]`
    if (typeof e !== 'object' || e === null || Array.isArray(e)) throw invalid(`${where} must be an object { chave, tp_evento, justificativa? }.`)
    const item = e as Record<string, unknown>
    for (const name of Object.keys(item)) if (!['chave', 'tp_evento', 'justificativa'].includes(name)) throw invalid(`${where}: unknown field "${name.slice(0, 40)}" (chave, tp_evento, justificativa).`)
    if (typeof item.chave !== 'string' || !/^[0-9]{44}$/.test(item.chave)) throw invalid(`${where}.chave must be an NF-e access key: a text of 44 digits.`)
    if (!isTpEvento(item.tp_evento)) throw invalid(`${where}.tp_evento must be "210200" (Confirmação da Operação), "210210" (Ciência da Operação), "210220" (Desconhecimento da Operação) or "210240" (Operação não Realizada).`)
    if (item.justificativa !== undefined && item.justificativa !== null && typeof item.justificativa !== 'string') throw invalid(`${where}.justificativa must be a text.`)
    return { chave: item.chave, tpEvento: item.tp_evento, xJust: typeof item.justificativa === 'string' ? item.justificativa : undefined }
  })
  return { empresaCodigo: code.trim(), requests: checkManifestRequests(requests) }
}

export interface WireManifestOutcome {
  chave: string
  tp_evento: string
  n_seq_evento: number
  situacao: 'registrado' | 'rejeitado'
  cStat: string | null
  xMotivo: string | null
  nProt: string | null
  dhRegEvento: string | null
  repetido: boolean
}

export function toWireOutcome (o: ManifestOutcome): WireManifestOutcome {
  return { chave: o.chave, tp_evento: o.tpEvento, n_seq_evento: o.nSeqEvento, situacao: o.status, cStat: o.cStat, xMotivo: o.xMotivo, nProt: o.nProt, dhRegEvento: o.dhRegEvento, repetido: o.repetido }
}
