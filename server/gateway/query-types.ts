/**
 * What the query routes need from the gateway app. Placeholder until the gateway app's
 * branch (gw-store) merges: it owns the real configuration and certificate resolver and
 * hands them over in this shape.
 */
import type { FastifyRequest } from 'fastify'
import type { TlsAgentCache } from '../../core/gateway/index.js'

export interface QueryRouteConfig {
  /** 1 production, 2 homologation (GATEWAY_TP_AMB). */
  tpAmb: 1 | 2
  /** GATEWAY_NFE_URL; unset: the official NFeDistribuicaoDFe endpoint of tpAmb. */
  nfeUrl?: string | undefined
  /** GATEWAY_ADN_URL, up to `/contribuintes`; unset: the official ADN of tpAmb. */
  adnUrl?: string | undefined
  /** GATEWAY_CA_FILE: PEM with extra trusted roots (the ICP-Brasil chain). */
  caFile?: string | undefined
  /** GATEWAY_TIMEOUT_MS: one deadline for each upstream call. */
  timeoutMs: number
  /** Waiting period after cStat 137/656 for a CNPJ; default one hour. */
  cooldownMs?: number | undefined
  /** IBGE state code sent as cUFAutor; unset: omitted (optional in distDFeInt_v1.01.xsd). */
  cUFAutor?: number | undefined
}

export interface ResolvedCertificate {
  /** The company queried (a branch that inherits: the branch, with the head office's certificate below). */
  empresa: { empresa_codigo: string, cnpj: string, ativo: boolean }
  pfx: Buffer
  password: string
  /** SHA-256 of the certificate: TLS agents are cached by it. */
  fingerprint: string
  validUntil: Date
}

export interface QueryRouteDeps {
  config: QueryRouteConfig
  /** Throws GatewayError 404 (unknown or inactive company) or 422 (incompatible certificate). */
  resolveCertificate: (empresaCodigo: string) => Promise<ResolvedCertificate>
  checkApiKey: (request: FastifyRequest) => boolean | Promise<boolean>
  /** Shared with the certificate store, which evicts a replaced certificate's agent; made here when absent. */
  agents?: TlsAgentCache
}
