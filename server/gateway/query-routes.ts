/**
 * The gateway's two query routes (spec 3 §4 A): `POST /nfe/distribuicao-dfe` and
 * `POST /adn/consultar-dfe`. Thin: check the key, read the fields, resolve the
 * certificate, run one upstream call under the per-CNPJ guard, shape the reply.
 *
 * The routes live in their own encapsulated scope with their own error handler and a
 * JSON-only body parser, so they answer `{ "detail": ... }` with the spec's statuses
 * whatever the app around them registers.
 */
import type { Agent } from 'node:https'
import { Readable } from 'node:stream'
import { setImmediate as nextTurn } from 'node:timers/promises'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import {
  ADN_BASE_URLS, GatewayError, NFE_DIST_URLS, QueryGuard,
  assertAnswered, feedActiveFor, nfeCooldownReason, queryAdnDistribution, queryNfeDistribution,
  DocumentRefused, openNfeDocument, openNfseDocument, storeDocuments
} from '../../core/gateway/index.js'
import type { OpenedDocument, ReceivedDocument } from '../../core/gateway/index.js'
import { withDatabase } from './admin-routes.js'
import type { ResolvedCertificate, QueryRouteDeps } from './query-types.js'
import { readAdnQuery, readNfeQuery } from './query-wire.js'
import { adnSchema, nfeSchema } from './schemas.js'
import { registerOperationalScope } from './operational-scope.js'
import { certificateOwner, createAgentCache, usableCertificate } from './usable-certificate.js'

/** A query body is a few fields; anything bigger is not a query. */
const BODY_LIMIT_BYTES = 16 * 1024
/**
 * Above this much docZip text an NF-e reply is sent a document at a time, with a turn of the
 * event loop between documents: serializing and writing 28 MB of JSON in one piece held the
 * process for a few hundred milliseconds (issue 32). Smaller replies go through the schema's serializer.
 */
const STREAMED_REPLY_CHARS = 1024 * 1024

export async function registerQueryRoutes (app: FastifyInstance, deps: QueryRouteDeps): Promise<void> {
  const { config } = deps
  const ownAgents = deps.agents === undefined
  const agents = deps.agents ?? await createAgentCache(config)
  const guard = new QueryGuard({ pool: deps.pool, callTimeoutMs: config.timeoutMs, ...(config.cooldownMs === undefined ? {} : { cooldownMs: config.cooldownMs }) })
  const nfeUrl = config.nfeUrl ?? NFE_DIST_URLS[config.tpAmb]
  const adnUrl = config.adnUrl ?? ADN_BASE_URLS[config.tpAmb]
  // Turns kept for the next call are given back, so other instances need not wait for their lapse.
  app.addHook('onClose', async () => {
    await guard.close()
    if (ownAgents) agents.close()
  })

  async function certificateFor (request: FastifyRequest, empresaCodigo: string, cnpj: string): Promise<ResolvedCertificate> {
    const cert = await usableCertificate(deps.resolveCertificate, empresaCodigo, cnpj, 'cnpj_consulta')
    request.log.debug({ empresa_codigo: empresaCodigo, fingerprint: cert.fingerprint.slice(0, 16) }, 'certificate resolved')
    return cert
  }

  /**
   * Opened before the CNPJ's turn is taken: opening a certificate the first time runs in a
   * thread of its own for up to 30 s, which the turn's lapse (the call's deadline plus a
   * margin) does not cover.
   */
  async function agentFor (cert: ResolvedCertificate): Promise<Agent> {
    return await agents.agentFor(cert, certificateOwner(cert))
  }

  await registerOperationalScope(app, { checkApiKey: deps.checkApiKey, tooLarge: 'larger than a query needs' }, async (scope) => {

    scope.post('/nfe/distribuicao-dfe', { bodyLimit: BODY_LIMIT_BYTES, schema: nfeSchema }, async (request, reply) => {
      const q = readNfeQuery(request.body)
      const cert = await certificateFor(request, q.empresaCodigo, q.cnpj)
      if (await withDatabase(() => feedActiveFor(deps.pool, 'nfe', q.cnpj))) {
        throw new GatewayError(422, 'GATEWAY_FEED_ACTIVE',
          `The managed feed reads the NSUs of CNPJ ${q.cnpj}: a second reader would break the authority's sequence (656, the CNPJ blocked for an hour). Read its documents with GET /v1/documents?cnpj=${q.cnpj}, or turn its feed off (PUT /admin/empresas/{codigo}/feed/nfe).`)
      }
      const agent = await agentFor(cert)
      const ret = await guard.run('nfe', q.cnpj, q.ultNSU, `CNPJ ${q.cnpj}`, async () => {
        const answer = await queryNfeDistribution({
          url: nfeUrl,
          agent,
          timeoutMs: config.timeoutMs,
          tpAmb: config.tpAmb,
          ...(config.cUFAutor === undefined ? {} : { cUFAutor: config.cUFAutor }),
          cnpj: q.cnpj,
          ultNSU: q.ultNSU,
          log: request.log
        })
        const reason = nfeCooldownReason(answer)
        return { value: answer, cooldown: reason === undefined ? undefined : { reason, cStat: answer.cStat } }
      })
      request.log.info({ empresa_codigo: q.empresaCodigo, cStat: ret.cStat, documents: ret.documentos.length }, 'nfe distribution answered')
      assertAnswered(ret)
      const received = await openAll(request, ret.documentos.map((d) => ({
        nsu: d.nsu, esquema: d.schema.split('_v')[0]!, open: () => openNfeDocument(d.docZip, d.schema)
      })))
      const stored = await withDatabase(() => storeDocuments(deps.pool, q.cnpj, received))
      request.log.info({ empresa_codigo: q.empresaCodigo, ...stored, skipped: ret.documentos.length - received.length }, 'nfe documents kept')
      const answer: NfeReply = {
        success: true,
        cStat: ret.cStat,
        xMotivo: ret.xMotivo,
        ultNSU: ret.ultNSU,
        maxNSU: ret.maxNSU,
        documentos: ret.documentos.map((d) => ({ docZip: d.docZip, nsu: d.nsu, schema: d.schema }))
      }
      if (ret.documentos.reduce((chars, d) => chars + d.docZip.length, 0) <= STREAMED_REPLY_CHARS) return answer
      return await reply.type('application/json; charset=utf-8').send(Readable.from(nfeReplyPieces(answer), { objectMode: false }))
    })

    scope.post('/adn/consultar-dfe', { bodyLimit: BODY_LIMIT_BYTES, schema: adnSchema }, async (request) => {
      const q = readAdnQuery(request.body)
      const cert = await certificateFor(request, q.empresaCodigo, q.cnpj)
      const agent = await agentFor(cert)
      const answer = await guard.run('adn', q.cnpj, String(q.nsu), `CNPJ ${q.cnpj}`, async () => ({ value: await queryAdnDistribution({
        baseUrl: adnUrl,
        tpAmb: config.tpAmb,
        cnpj: q.cnpj,
        nsu: q.nsu,
        agent,
        timeoutMs: config.timeoutMs,
        log: request.log
      }) }))
      request.log.info({ empresa_codigo: q.empresaCodigo, status: answer.statusProcessamento, documents: answer.documentos.length }, 'adn distribution answered')
      const received = await openAll(request, answer.documentos.map((d) => ({
        nsu: typeof d.NSU === 'number' || typeof d.NSU === 'string' ? String(d.NSU) : null,
        esquema: typeof d.TipoDocumento === 'string' ? d.TipoDocumento.slice(0, 40) : '?',
        open: () => openNfseDocument(d)
      })))
      const stored = await withDatabase(() => storeDocuments(deps.pool, q.cnpj, received))
      request.log.info({ empresa_codigo: q.empresaCodigo, ...stored, skipped: answer.documentos.length - received.length }, 'adn documents kept')
      return { sucesso: true, empresa_codigo: cert.empresa.empresaCodigo, nsu: q.nsu, data: { documentos: answer.documentos } }
    })
  })
}

/**
 * Opens every document of an answer before any is stored. One that breaks a bound
 * (Base64, size, ratio, gzip, DTD, XML) refuses the whole answer as the authority's fault
 * (503, `code` the refusal's DOCZIP_… and `nsu` the document's): nothing of it is kept, so the
 * caller, who resends the same NSU, never finds half an answer stored. A well-formed
 * document of a kind the gateway does not keep (another schema) is passed on, not kept.
 * The raw docZip / ArquivoXml is still handed back as before: keeping is in addition.
 */
async function openAll (request: FastifyRequest, items: Array<{ nsu: string | null, esquema: string, open: () => OpenedDocument }>): Promise<ReceivedDocument[]> {
  const out: ReceivedDocument[] = []
  for (const item of items) {
    // A turn of the event loop between documents: 50 large ones are a few hundred ms of XML reading.
    if (out.length > 0) await nextTurn()
    try {
      out.push({ nsu: item.nsu, esquema: item.esquema, opened: item.open() })
    } catch (e) {
      if (!(e instanceof DocumentRefused)) throw e
      if (e.code === 'DOCZIP_UNKNOWN') {
        request.log.warn({ nsu: item.nsu, esquema: item.esquema, why: e.message }, 'document passed on, not kept')
        continue
      }
      throw new GatewayError(503, e.code,
        `The tax authority sent a document (NSU ${item.nsu ?? 'none'}) that ${e.message}; nothing of this answer was kept. Ask again later; if it persists, the authority's answer is damaged.`,
        { body: { nsu: item.nsu } })
    }
  }
  return out
}

interface NfeReply {
  success: true
  cStat: string
  xMotivo: string
  ultNSU: string
  maxNSU: string
  documentos: Array<{ docZip: string, nsu: string | null, schema: string }>
}

/** The same JSON the schema's serializer writes (same keys, same order), a document at a time. */
async function * nfeReplyPieces ({ documentos, ...head }: NfeReply): AsyncGenerator<string> {
  yield `${JSON.stringify(head).slice(0, -1)},"documentos":[`
  for (let i = 0; i < documentos.length; i++) {
    await nextTurn()
    yield (i === 0 ? '' : ',') + JSON.stringify(documentos[i])
  }
  yield ']}'
}



