/**
 * The manifestação do destinatário (issue 35, item 3): `POST /v1/manifestacao` sends 1 to 20
 * events of one company in one batch to NFeRecepcaoEvento4 and answers each event's result;
 * `GET /v1/documents/{chave}/manifestacoes` lists what was sent for a key. Same operational key
 * as the query routes. `manifestSenderFor` is also what the feed's automatic Ciência and
 * `razao manifest` send with.
 */
import type { FastifyInstance, FastifyReply } from 'fastify'
import {
  EVENTO_URLS, GatewayError, listManifestacoes, sendManifestacoes
} from '../../core/gateway/index.js'
import type { GatewayLog, ManifestSender , TlsAgentCache} from '../../core/gateway/index.js'
import { withDatabase } from './admin-routes.js'
import { registerOperationalScope } from './operational-scope.js'
import { certificateOwner, createAgentCache, usableCertificate } from './usable-certificate.js'
import type { QueryRouteDeps } from './query-types.js'
import { manifestacaoListSchema, manifestacaoSchema } from './schemas.js'
import { readChave } from './document-wire.js'
import { readManifestBody, toWireOutcome } from './manifestacao-wire.js'

/** Twenty events with their justifications fit in a few KiB. */
const BODY_LIMIT_BYTES = 64 * 1024

/** What sending events needs from the gateway: the routes' dependencies and a TLS agent cache. */
export function manifestSenderFor (deps: Pick<QueryRouteDeps, 'config' | 'pool' | 'resolveCertificate'>, agents: TlsAgentCache, log?: GatewayLog): ManifestSender {
  const { config } = deps
  return {
    pool: deps.pool,
    tpAmb: config.tpAmb,
    url: config.eventoUrl ?? EVENTO_URLS[config.tpAmb],
    timeoutMs: config.timeoutMs,
    ...(log === undefined ? {} : { log }),
    prepare: async (empresaCodigo) => {
      const company = await deps.resolveCertificate(empresaCodigo)
      const cnpj = company.empresa.cnpj
      if (cnpj === null) throw new GatewayError(422, 'GATEWAY_CERTIFICATE_INCOMPATIBLE', `The company "${empresaCodigo}" has no CNPJ in the registry; a manifestação is sent in the recipient's CNPJ.`)
      // The authority takes the event from a certificate of the recipient's CNPJ root (else 631).
      const cert = await usableCertificate(deps.resolveCertificate, empresaCodigo, cnpj, `The recipient's CNPJ ${cnpj}`)
      const { agent, signer } = await agents.agentAndSignerFor(cert, certificateOwner(cert))
      return { cnpj, agent, signer }
    }
  }
}

type KeyParams = { Params: { chave: string } }

export async function registerManifestacaoRoutes (app: FastifyInstance, deps: QueryRouteDeps): Promise<void> {
  const ownAgents = deps.agents === undefined
  const agents = deps.agents ?? await createAgentCache(deps.config)
  app.addHook('onClose', async () => { if (ownAgents) agents.close() })
  await registerOperationalScope(app, { checkApiKey: deps.checkApiKey, tooLarge: 'larger than 20 events need' }, async (scope) => {

    scope.post('/v1/manifestacao', { bodyLimit: BODY_LIMIT_BYTES, schema: manifestacaoSchema }, async (request, reply) => {
      const { empresaCodigo, requests } = readManifestBody(request.body)
      const outcomes = await sendManifestacoes(manifestSenderFor(deps, agents, request.log), empresaCodigo, requests)
      const eventos = outcomes.map(toWireOutcome)
      request.log.info({ empresa_codigo: empresaCodigo, eventos: eventos.map((e) => `${e.tp_evento}:${e.cStat ?? '-'}${e.repetido ? ':repetido' : ''}`) }, 'manifestação answered')
      // Every event refused: the request failed, with the first refusal's cStat and xMotivo (a
      // single event's case); otherwise each event says how it went.
      const refused = eventos.filter((e) => e.situacao === 'rejeitado')
      if (refused.length === eventos.length) {
        const first = refused[0]!
        return await (reply as FastifyReply).code(422).send({
          detail: `The authority refused ${eventos.length === 1 ? 'the event' : `all ${eventos.length} events`}: cStat ${first.cStat ?? 'none'} (${first.xMotivo ?? 'no reason given'}).`,
          code: 'GATEWAY_EVENT_REFUSED', cStat: first.cStat, xMotivo: first.xMotivo, eventos
        })
      }
      return { empresa_codigo: empresaCodigo, eventos }
    })

    scope.get<KeyParams>('/v1/documents/:chave/manifestacoes', { schema: manifestacaoListSchema }, async (request) => {
      const chave = readChave(request.params.chave)
      const rows = await withDatabase(() => listManifestacoes(deps.pool, chave))
      return {
        manifestacoes: rows.map((r) => ({
          chave: r.chave, empresa_codigo: r.empresaCodigo, tp_evento: r.tpEvento, n_seq_evento: r.nSeqEvento, situacao: r.status, automatica: r.automatica,
          cStat: r.cStat, xMotivo: r.xMotivo, nProt: r.nProt, dhRegEvento: r.dhRegEvento, erro: r.erro,
          criado_em: r.criadoEm.toISOString(), enviado_em: r.enviadoEm.toISOString(),
          respondido_em: r.respondidoEm?.toISOString() ?? null, registrado_em: r.registradoEm?.toISOString() ?? null
        }))
      }
    })
  })
}


