/**
 * The admin API's field names (issue 15, "admin API contract"), only here: request
 * bodies checked field by field (a 400 names the field), replies shaped from core types.
 * Secrets have no wire form: no reply mapper reads a certificate's bytes or password.
 */
import { EngineError } from '../../core/errors.js'
import { daysToExpiry } from '../../core/gateway/index.js'
import type {
  CertificateFacts, CertificateSummary, CompanyChanges, DocumentEvent, FeedOptions, FeedState, GatewayCompany, NewGatewayCompany, NewWebhookEndpoint, WebhookDeliveryRecord, WebhookEndpoint
} from '../../core/gateway/index.js'

/** A certificate this close to expiry shows as VENCE_EM_BREVE on the admin screen. */
export const EXPIRY_WARNING_DAYS = 30
/** Real A1 files are a few KiB; this bounds what a request may make us parse. */
export const MAX_PFX_BYTES = 256 * 1024

type Body = Record<string, unknown>

function invalid (message: string): EngineError {
  return new EngineError('REQUEST_INVALID', message)
}

function objectBody (body: unknown, allowed: readonly string[]): Body {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw invalid('The request body must be a JSON object.')
  const unknown = Object.keys(body).filter((k) => !allowed.includes(k))
  if (unknown.length > 0) throw invalid(`Unknown field${unknown.length > 1 ? 's' : ''} ${unknown.map((k) => `"${k.slice(0, 40)}"`).join(', ')}; accepted: ${allowed.join(', ')}.`)
  return body as Body
}

function requiredString (body: Body, field: string): string {
  const value = body[field]
  if (value === undefined || value === null) throw new EngineError('REQUEST_INCOMPLETE', `The field "${field}" is required.`)
  if (typeof value !== 'string') throw invalid(`The field "${field}" must be a string.`)
  if (value.includes('\u0000')) throw invalid(`The field "${field}" holds a NUL character.`)
  return value
}

function optionalString (body: Body, field: string): string | null | undefined {
  const value = body[field]
  if (value === undefined || value === null) return value
  return requiredString(body, field)
}

function optionalBoolean (body: Body, field: string): boolean | undefined {
  const value = body[field]
  if (value === undefined) return undefined
  if (typeof value !== 'boolean') throw invalid(`The field "${field}" must be true or false.`)
  return value
}

const COMPANY_FIELDS = ['razao_social', 'cnpj', 'codigo_dominio', 'matriz_empresa_codigo', 'herda_certificado_matriz'] as const

export function parseNewCompany (raw: unknown): NewGatewayCompany {
  const body = objectBody(raw, COMPANY_FIELDS)
  return {
    razaoSocial: requiredString(body, 'razao_social'),
    cnpj: requiredString(body, 'cnpj'),
    codigoDominio: optionalString(body, 'codigo_dominio') ?? undefined,
    matrizEmpresaCodigo: optionalString(body, 'matriz_empresa_codigo') ?? undefined,
    herdaCertificadoMatriz: optionalBoolean(body, 'herda_certificado_matriz')
  }
}

export function parseCompanyChanges (raw: unknown): CompanyChanges {
  const body = objectBody(raw, [...COMPANY_FIELDS, 'ativo'])
  if (Object.keys(body).length === 0) throw invalid(`Send at least one field to change: ${[...COMPANY_FIELDS, 'ativo'].join(', ')}.`)
  const changes: CompanyChanges = {}
  if (body.razao_social !== undefined) changes.razaoSocial = requiredString(body, 'razao_social')
  if (body.cnpj !== undefined) changes.cnpj = requiredString(body, 'cnpj')
  if (body.codigo_dominio !== undefined) changes.codigoDominio = optionalString(body, 'codigo_dominio') ?? null
  if (body.matriz_empresa_codigo !== undefined) changes.matrizEmpresaCodigo = optionalString(body, 'matriz_empresa_codigo') ?? null
  const herda = optionalBoolean(body, 'herda_certificado_matriz')
  if (herda !== undefined) changes.herdaCertificadoMatriz = herda
  const ativo = optionalBoolean(body, 'ativo')
  if (ativo !== undefined) changes.ativo = ativo
  return changes
}

export interface CertificateUpload { empresaCodigo: string, pfx: Buffer, password: string }

export function parseCertificateUpload (raw: unknown): CertificateUpload {
  const body = objectBody(raw, ['empresa_codigo', 'pfx_base64', 'senha'])
  const empresaCodigo = requiredString(body, 'empresa_codigo').trim()
  const text = requiredString(body, 'pfx_base64').replace(/\s+/g, '')
  const password = requiredString(body, 'senha')
  if (text === '' || !/^[A-Za-z0-9+/]*={0,2}$/.test(text) || text.length % 4 === 1) throw invalid('The field "pfx_base64" must be the PKCS#12 file in base64.')
  if (text.length > Math.ceil(MAX_PFX_BYTES / 3) * 4) throw invalid(`The field "pfx_base64" is larger than an A1 certificate file can be (${MAX_PFX_BYTES} bytes).`)
  return { empresaCodigo, pfx: Buffer.from(text, 'base64'), password }
}

function iso (d: Date): string {
  return d.toISOString()
}

export type CertificateStatus = 'VALIDO' | 'VENCE_EM_BREVE' | 'VENCIDO' | 'AUSENTE'

function statusOf (validUntil: Date, now: Date): CertificateStatus {
  const days = daysToExpiry(validUntil, now)
  if (validUntil.getTime() < now.getTime()) return 'VENCIDO'
  return days <= EXPIRY_WARNING_DAYS ? 'VENCE_EM_BREVE' : 'VALIDO'
}

export function toWireCertificate (c: CertificateSummary | CertificateFacts, now: Date) {
  return {
    subject: c.subject,
    cnpj: c.cnpj,
    valid_from: iso(c.validFrom),
    valid_until: iso(c.validUntil),
    days_to_expiry: daysToExpiry(c.validUntil, now),
    fingerprint: c.fingerprint,
    status: statusOf(c.validUntil, now)
  }
}

/**
 * A company as the admin API returns it. `certificado` is the certificate its queries
 * use: its own, or its head office's when it inherits (`origem: MATRIZ`).
 */
export function toWireCompany (c: GatewayCompany, headOffice: GatewayCompany | undefined, now: Date) {
  const inherits = c.herdaCertificadoMatriz && headOffice !== undefined
  const effective = inherits ? headOffice.certificate : c.certificate
  return {
    empresa_codigo: c.empresaCodigo,
    razao_social: c.razaoSocial,
    cnpj: c.cnpj,
    codigo_dominio: c.codigoDominio,
    matriz_empresa_codigo: c.matrizEmpresaCodigo,
    herda_certificado_matriz: c.herdaCertificadoMatriz,
    ativo: c.ativo,
    criado_em: iso(c.criadoEm),
    atualizado_em: iso(c.atualizadoEm),
    certificado_status: effective === null ? 'AUSENTE' as const : statusOf(effective.validUntil, now),
    certificado: effective === null ? null : { origem: inherits ? 'MATRIZ' as const : 'PROPRIO' as const, ...toWireCertificate(effective, now) }
  }
}

/** PUT /admin/empresas/{codigo}/feed/{servico}: `ativo` and, for the NF-e feed, `ciencia_automatica`. */
export function parseFeedOptions (raw: unknown): FeedOptions {
  const body = objectBody(raw, ['ativo', 'ciencia_automatica'])
  if (Object.keys(body).length === 0) throw invalid('Send at least one field to change: ativo, ciencia_automatica.')
  const options: FeedOptions = {}
  const ativo = optionalBoolean(body, 'ativo')
  if (ativo !== undefined) options.ativo = ativo
  const ciencia = optionalBoolean(body, 'ciencia_automatica')
  if (ciencia !== undefined) options.cienciaAutomatica = ciencia
  return options
}

/** A feed's state as the admin API answers it (snake_case, like the rest of the admin API). */
export function toWireFeed (s: FeedState): Record<string, unknown> {
  return {
    empresa_codigo: s.empresaCodigo,
    cnpj: s.cnpj,
    razao_social: s.razaoSocial,
    servico: s.servico,
    ativo: s.ativo,
    ciencia_automatica: s.cienciaAutomatica,
    ult_nsu: s.ultNsu,
    max_nsu: s.maxNsu,
    proxima_consulta: s.proximaConsulta,
    ultima_consulta: s.ultimaConsulta,
    ultimo_cstat: s.ultimoCstat,
    ultimo_erro: s.ultimoErro,
    lacunas: s.lacunas,
    documentos: { por_tipo: s.documentos.porTipo, por_situacao: s.documentos.porSituacao },
    atualizado_em: s.atualizadoEm
  }
}

/**
 * POST /admin/webhooks: `url` (http or https, no credentials in it: it is answered and
 * logged), `empresa_codigo` (absent or null: global) and optionally the receiver's own
 * `segredo` (24 to 200 characters; otherwise one is made).
 */
export function parseNewWebhook (raw: unknown): NewWebhookEndpoint {
  const body = objectBody(raw, ['url', 'empresa_codigo', 'segredo'])
  const text = requiredString(body, 'url').trim()
  let url: URL
  try {
    url = new URL(text)
  } catch {
    throw invalid('The field "url" must be an absolute http or https URL.')
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw invalid('The field "url" must be an absolute http or https URL.')
  if (url.username !== '' || url.password !== '') throw invalid('The field "url" must not carry a user or password: the secret signs the requests instead.')
  if (text.length > 2000) throw invalid('The field "url" is longer than 2000 characters.')
  const empresaCodigo = optionalString(body, 'empresa_codigo') ?? null
  const segredo = optionalString(body, 'segredo') ?? undefined
  if (segredo !== undefined && (segredo.length < 24 || segredo.length > 200)) throw invalid('The field "segredo" must have 24 to 200 characters (or be left out: the gateway makes one).')
  return { url: url.toString(), empresaCodigo, segredo }
}

/** PATCH /admin/webhooks/{id}: `ativo` only. */
export function parseWebhookChanges (raw: unknown): { ativo: boolean } {
  const body = objectBody(raw, ['ativo'])
  const ativo = optionalBoolean(body, 'ativo')
  if (ativo === undefined) throw new EngineError('REQUEST_INCOMPLETE', 'The field "ativo" is required.')
  return { ativo }
}

/** An endpoint as the admin API answers it: the secret only as its hint. */
export function toWireWebhook (w: WebhookEndpoint): Record<string, unknown> {
  return { id: w.id, url: w.url, empresa_codigo: w.empresaCodigo, segredo_dica: w.segredoDica, ativo: w.ativo, criado_em: w.criadoEm }
}

export function toWireDelivery (d: WebhookDeliveryRecord): Record<string, unknown> {
  return {
    id: d.id, endpoint_id: d.endpointId, evento_id: d.eventoId, tipo: d.tipo, documento_id: d.documentoId, cnpj: d.cnpj, status: d.status,
    tentativas: d.tentativas, codigo_resposta: d.codigoResposta, ultimo_erro: d.ultimoErro, criado_em: d.criadoEm, ultima_tentativa_em: d.ultimaTentativaEm, entregue_em: d.entregueEm
  }
}

/** A document event of the admin screen's stream. */
export function toWireDocumentEvent (e: DocumentEvent): Record<string, unknown> {
  const d = e.documento
  return {
    evento_id: e.eventoId, tipo: e.tipo, cnpj: e.cnpj, empresa_codigo: e.empresaCodigo, criado_em: e.criadoEm,
    documento: { id: d.id, chave: d.chave, tipo: d.tipo, situacao: d.situacao, emitente_nome: d.emitenteNome, valor_total: d.valorTotal }
  }
}
