/**
 * The managed feed in the gateway process (issue 35, item 1; docs/gateway.md "Managed feed"):
 * - the scheduler (core/gateway/feed.ts), started with the app when asked (`razao serve
 *   gateway` asks unless GATEWAY_FEED=off) and stopped with it;
 * - `POST /v1/documents/{chave}/buscar`: one NF-e fetched by its key (consChNFe) within the
 *   CNPJ's hourly allowance of point lookups, stored, and answered as GET /v1/documents/{chave}.
 * The scheduler and the route resolve certificates as the query routes do, and call through
 * their own QueryGuard on the same database: the CNPJ's turn and waits are shared with the
 * query routes of every instance.
 */
import type { Agent } from 'node:https'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { Pool } from 'pg'
import {
  FeedScheduler, GatewayError, NFE_DIST_URLS, ADN_BASE_URLS, QueryGuard, assertAnswered, getDocument, nfeCooldownReason, openNfe, queryNfeDistribution, storeDocuments, takePointLookup
} from '../../core/gateway/index.js'
import type { FeedChange, FeedCompany , TlsAgentCache} from '../../core/gateway/index.js'
import { withDatabase } from './admin-routes.js'
import { registerOperationalScope } from './operational-scope.js'
import { certificateOwner, createAgentCache, usableCertificate } from './usable-certificate.js'
import type { FeedConfig } from './config.js'
import { readFetchKeyBody } from './query-wire.js'
import { readChave } from './document-wire.js'
import type { QueryRouteConfig, ResolvedCertificate } from './query-types.js'
import { documentFetchSchema } from './schemas.js'

export interface FeedDeps {
  pool: Pool
  config: QueryRouteConfig & { feed: FeedConfig }
  resolveCertificate: (empresaCodigo: string) => Promise<ResolvedCertificate>
  checkApiKey: (request: FastifyRequest) => boolean | Promise<boolean>
  /** Run the scheduler in this instance (GATEWAY_FEED); the route is there either way. */
  runScheduler: boolean
  /** After each step of a feed (notifications). */
  onFeedChanged?: (change: FeedChange) => void
  /** After new summaries of a company with automatic Ciência on (app.ts passes autoCiencia). */
  onSummariesStored?: (pool: Pool, company: FeedCompany, keys: string[]) => Promise<void>
  /** Shared with the query routes when given. */
  agents?: TlsAgentCache
}

const BODY_LIMIT_BYTES = 16 * 1024

export async function registerFeed (app: FastifyInstance, deps: FeedDeps): Promise<FeedScheduler | undefined> {
  const { config, pool } = deps
  const ownAgents = deps.agents === undefined
  const agents = deps.agents ?? await createAgentCache(config)
  const guard = new QueryGuard({ pool, callTimeoutMs: config.timeoutMs, ...(config.cooldownMs === undefined ? {} : { cooldownMs: config.cooldownMs }) })
  const nfeUrl = config.nfeUrl ?? NFE_DIST_URLS[config.tpAmb]
  const adnUrl = config.adnUrl ?? ADN_BASE_URLS[config.tpAmb]

  /** The company's certificate as the query routes check it: active, not expired, of the CNPJ's root. */
  async function agentFor (empresaCodigo: string, cnpj: string): Promise<Agent> {
    const cert = await usableCertificate(deps.resolveCertificate, empresaCodigo, cnpj)
    return await agents.agentFor(cert, certificateOwner(cert))
  }

  const scheduler = deps.runScheduler
    ? new FeedScheduler({
      pool,
      guard,
      agentFor: async (company) => await agentFor(company.empresaCodigo, company.cnpj),
      tpAmb: config.tpAmb,
      nfeUrl,
      adnUrl,
      cUFAutor: config.cUFAutor,
      timeoutMs: config.timeoutMs,
      cooldownMs: config.cooldownMs,
      concurrency: config.feed.concurrency,
      callsPerTurn: config.feed.callsPerTurn,
      idleMs: config.feed.idleMs,
      retryMs: config.feed.retryMs,
      lookupsPerHour: config.feed.lookupsPerHour,
      ...(deps.onFeedChanged === undefined ? {} : { onFeedChanged: deps.onFeedChanged }),
      ...(deps.onSummariesStored === undefined ? {} : { onSummariesStored: deps.onSummariesStored }),
      log: { info: (o, msg) => app.log.info(o, msg), warn: (o, msg) => app.log.warn(o, msg) }
    })
    : undefined
  if (scheduler !== undefined) app.addHook('onReady', async () => { scheduler.start() })
  app.addHook('onClose', async () => {
    await scheduler?.stop()
    await guard.close()
    if (ownAgents) agents.close()
  })

  await registerOperationalScope(app, { checkApiKey: deps.checkApiKey, tooLarge: 'larger than {"empresa_codigo": "..."} needs' }, async (scope) => {
    scope.post<{ Params: { chave: string } }>('/v1/documents/:chave/buscar', { bodyLimit: BODY_LIMIT_BYTES, schema: documentFetchSchema }, async (request) => {
      const chave = readChave(request.params.chave)
      if (chave.length !== 44) throw new GatewayError(400, 'GATEWAY_INVALID_REQUEST', 'Only an NF-e (a 44-digit key) can be fetched by key: the NFS-e arrives through the ADN feed.')
      const { empresaCodigo } = readFetchKeyBody(request.body)
      const kept = await withDatabase(() => getDocument(pool, chave))
      if (kept !== undefined && kept.documento.tipo === 'procNFe') return { ...kept.documento, eventos: kept.eventos }
      const cert = await deps.resolveCertificate(empresaCodigo)
      const cnpj = cert.empresa.cnpj
      if (cnpj === null) throw new GatewayError(422, 'GATEWAY_INVALID_REQUEST', `The company "${empresaCodigo}" has no CNPJ, and the authority is asked by CNPJ.`)
      const agent = await agentFor(empresaCodigo, cnpj)
      const taken = await withDatabase(() => takePointLookup(pool, 'nfe', cnpj, 'chave', config.feed.lookupsPerHour))
      if (!taken.ok) {
        throw new GatewayError(429, 'GATEWAY_LOOKUP_LIMIT',
          `The CNPJ ${cnpj} has used its ${config.feed.lookupsPerHour} lookups of the last hour (consChNFe and the feed's gap refills); the authority blocks it for an hour past that. Try again in ${taken.retryAfterS} s.`,
          { retryAfterS: taken.retryAfterS })
      }
      const ret = await guard.run('nfe', cnpj, `consChNFe:${chave}`, `CNPJ ${cnpj}`, async () => {
        const answer = await queryNfeDistribution({
          url: nfeUrl, agent, timeoutMs: config.timeoutMs, tpAmb: config.tpAmb, ...(config.cUFAutor === undefined ? {} : { cUFAutor: config.cUFAutor }), cnpj, consChNFe: chave, log: request.log
        })
        return { value: answer, cooldown: answer.cStat === '656' ? { reason: nfeCooldownReason(answer)!, cStat: '656' } : undefined }
      }, { pointLookup: true })
      request.log.info({ empresa_codigo: empresaCodigo, cStat: ret.cStat, documents: ret.documentos.length }, 'nfe consChNFe answered')
      if (ret.cStat === '137') throw new GatewayError(422, 'GATEWAY_QUERY_REFUSED', `The authority has no document for the key ${chave} for CNPJ ${cnpj} (cStat 137: ${ret.xMotivo}).`, { body: { cStat: ret.cStat, xMotivo: ret.xMotivo } })
      assertAnswered(ret)
      const received = openNfe(ret.documentos)
      await withDatabase(() => storeDocuments(pool, cnpj, received))
      const found = await withDatabase(() => getDocument(pool, chave))
      if (found === undefined) throw new GatewayError(422, 'GATEWAY_QUERY_REFUSED', `The authority answered cStat ${ret.cStat} for the key ${chave} without a document of that key.`)
      return { ...found.documento, eventos: found.eventos }
    })
  })
  return scheduler
}


