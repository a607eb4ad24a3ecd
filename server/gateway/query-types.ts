/**
 * What the query routes need from the gateway app. The gateway app's branch (gw-store)
 * owns the real configuration and resolver (its QueryRouteDeps in server/gateway/config.ts
 * is structurally compatible with this one); the optional fields here (cooldownMs,
 * cUFAutor, agents) are the query side's additions.
 */
import type { FastifyRequest } from 'fastify'
import type { Pool } from 'pg'
import type { TlsAgentCache } from '../../core/gateway/index.js'

export interface QueryRouteConfig {
  /** 1 production, 2 homologation (GATEWAY_TP_AMB). */
  tpAmb: 1 | 2
  /** GATEWAY_NFE_URL; unset: the official NFeDistribuicaoDFe endpoint of tpAmb. */
  nfeUrl?: string | undefined
  /** GATEWAY_ADN_URL, up to `/contribuintes`; unset: the official ADN of tpAmb. */
  adnUrl?: string | undefined
  /** GATEWAY_EVENTO_URL; unset: the official NFeRecepcaoEvento4 (Ambiente Nacional) of tpAmb. */
  eventoUrl?: string | undefined
  /** GATEWAY_CA_FILE: PEM with extra trusted roots (the ICP-Brasil chain). */
  caFile?: string | undefined
  /** GATEWAY_TIMEOUT_MS: one deadline for each upstream call. */
  timeoutMs: number
  /** Waiting period after cStat 137/656 for a CNPJ; default one hour. */
  cooldownMs?: number | undefined
  /** IBGE state code sent as cUFAutor; unset: omitted (optional in distDFeInt_v1.01.xsd). */
  cUFAutor?: number | undefined
}

/** The part of a registry company the routes read (the store's GatewayCompany has more). */
export interface QueryCompany {
  empresaCodigo: string
  cnpj: string | null
  ativo: boolean
}

export interface ResolvedCertificate {
  /** The company queried for: a branch that inherits is itself here, with the head office's certificate below. */
  empresa: QueryCompany
  /** Whose certificate it is (the company itself, or the head office a branch inherits from). */
  certificateCompany?: Pick<QueryCompany, 'empresaCodigo' | 'cnpj'>
  pfx: Buffer
  password: string
  /** SHA-256 of the certificate: TLS agents are cached by it. */
  fingerprint: string
  validUntil: Date
}

export interface QueryRouteDeps {
  config: QueryRouteConfig
  /**
   * Throws for an unknown or inactive company (404) or an unusable certificate (422): a
   * GatewayError is answered by the routes; any other error (the store's EngineErrors) goes
   * to the app's error handler, which maps its code.
   */
  resolveCertificate: (empresaCodigo: string) => Promise<ResolvedCertificate>
  checkApiKey: (request: FastifyRequest) => boolean | Promise<boolean>
  /** The database the waiting periods and per-CNPJ turns live in (shared by every instance). */
  pool: Pool
  /** Shared with the certificate store, which evicts a replaced certificate's agent; made here when absent. */
  agents?: TlsAgentCache
}
