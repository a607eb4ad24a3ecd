/**
 * The admin API (issue 15, "admin API contract"): companies and certificates under
 * `/admin/empresas` and `/admin/certificados`, and the operational key's rotation. The
 * app's onRequest hook has checked the Bearer token before any of these run. Routes
 * stay thin: parse the body (wire.ts), call core/gateway, shape the reply.
 */
import type { FastifyInstance } from 'fastify'
import type { Pool } from 'pg'
import { EngineError } from '../../core/errors.js'
import { isConnectionError } from '../../core/db/pg-errors.js'
import {
  FEED_SERVICES, createGatewayCompany, deactivateGatewayCompany, findGatewayCompany, getGatewayCompany, listFeedStates, listGatewayCompanies, rotateApiKey, setFeedOptions,
  updateGatewayCompany
} from '../../core/gateway/index.js'
import type { CertificateStore, FeedService, GatewayCompany } from '../../core/gateway/index.js'
import {
  createCompanySchema, deactivateCompanySchema, getCompanySchema, listCertificatesSchema, listCompaniesSchema,
  listFeedsSchema, removeCertificateSchema, rotateKeySchema, setFeedSchema, storeCertificateSchema, updateCompanySchema
} from './schemas.js'
import { parseCertificateUpload, parseCompanyChanges, parseFeedOptions, parseNewCompany, toWireCertificate, toWireCompany, toWireFeed } from './wire.js'

export interface AdminRouteDeps {
  pool: Pool
  store: CertificateStore
  now: () => Date
  /** Called with the new key's hash after a rotation, so this process refuses the old key at once. */
  onRotated: (hash: string) => void
}

/** A database that cannot be reached is the spec's 503, not an internal error. */
export async function withDatabase<T> (work: () => Promise<T>): Promise<T> {
  try {
    return await work()
  } catch (err) {
    if (isConnectionError(err)) throw new EngineError('DATABASE_UNAVAILABLE', 'The gateway database is unavailable; try again shortly', undefined, { cause: err })
    throw err
  }
}

type CodeParams = { Params: { empresa_codigo: string } }
type FeedParams = { Params: { empresa_codigo: string, servico: FeedService } }

export async function registerAdminRoutes (app: FastifyInstance, deps: AdminRouteDeps): Promise<void> {
  const { pool, store, now } = deps

  const wireOne = async (company: GatewayCompany) => {
    const headOffice = company.herdaCertificadoMatriz && company.matrizEmpresaCodigo !== null
      ? await findGatewayCompany(pool, company.matrizEmpresaCodigo)
      : undefined
    return toWireCompany(company, headOffice, now())
  }

  app.get('/admin/empresas', { schema: listCompaniesSchema }, async () => withDatabase(async () => {
    const companies = await listGatewayCompanies(pool)
    const byCode = new Map(companies.map((c) => [c.empresaCodigo, c]))
    const at = now()
    return companies.map((c) => toWireCompany(c, c.matrizEmpresaCodigo === null ? undefined : byCode.get(c.matrizEmpresaCodigo), at))
  }))

  app.post('/admin/empresas', { schema: createCompanySchema }, async (request, reply) => {
    const input = parseNewCompany(request.body)
    const company = await withDatabase(() => createGatewayCompany(pool, input))
    request.log.info({ empresaCodigo: company.empresaCodigo }, 'company registered')
    return reply.code(201).send(await wireOne(company))
  })

  app.get<CodeParams>('/admin/empresas/:empresa_codigo', { schema: getCompanySchema }, async (request) => withDatabase(async () =>
    wireOne(await getGatewayCompany(pool, request.params.empresa_codigo))))

  app.patch<CodeParams>('/admin/empresas/:empresa_codigo', { schema: updateCompanySchema }, async (request) => {
    const changes = parseCompanyChanges(request.body)
    const company = await withDatabase(() => updateGatewayCompany(pool, request.params.empresa_codigo, changes))
    request.log.info({ empresaCodigo: company.empresaCodigo, fields: Object.keys(changes) }, 'company updated')
    return await wireOne(company)
  })

  app.delete<CodeParams>('/admin/empresas/:empresa_codigo', { schema: deactivateCompanySchema }, async (request) => {
    const company = await withDatabase(() => deactivateGatewayCompany(pool, request.params.empresa_codigo))
    request.log.info({ empresaCodigo: company.empresaCodigo }, 'company deactivated')
    return await wireOne(company)
  })

  app.get('/admin/certificados', { schema: listCertificatesSchema }, async () => withDatabase(async () => {
    const at = now()
    return (await listGatewayCompanies(pool))
      .filter((c) => c.certificate !== null)
      .map((c) => ({ empresa_codigo: c.empresaCodigo, razao_social: c.razaoSocial, ...toWireCertificate(c.certificate!, at) }))
  }))

  app.post('/admin/certificados', { schema: storeCertificateSchema }, async (request, reply) => {
    const upload = parseCertificateUpload(request.body)
    const facts = await withDatabase(() => store.putCertificate(upload.empresaCodigo, upload.pfx, upload.password))
    request.log.info({ empresaCodigo: upload.empresaCodigo, fingerprint: facts.fingerprint, validUntil: facts.validUntil }, 'certificate stored')
    return reply.code(201).send({ empresa_codigo: upload.empresaCodigo, ...toWireCertificate(facts, now()) })
  })

  app.delete<CodeParams>('/admin/certificados/:empresa_codigo', { schema: removeCertificateSchema }, async (request, reply) => {
    await withDatabase(() => store.removeCertificate(request.params.empresa_codigo))
    request.log.info({ empresaCodigo: request.params.empresa_codigo }, 'certificate removed')
    return reply.code(204).send()
  })

  app.get('/admin/feed', { schema: listFeedsSchema }, async () => withDatabase(async () => (await listFeedStates(pool)).map(toWireFeed)))

  app.put<FeedParams>('/admin/empresas/:empresa_codigo/feed/:servico', { schema: setFeedSchema }, async (request) => {
    const options = parseFeedOptions(request.body)
    if (!(FEED_SERVICES as readonly string[]).includes(request.params.servico)) {
      throw new EngineError('REQUEST_INVALID', `There is no feed "${request.params.servico.slice(0, 32)}": the feeds are ${FEED_SERVICES.join(' and ')}.`)
    }
    const state = await withDatabase(() => setFeedOptions(pool, request.params.empresa_codigo, request.params.servico, options))
    request.log.info({ empresaCodigo: state.empresaCodigo, servico: state.servico, ativo: state.ativo, cienciaAutomatica: state.cienciaAutomatica }, 'feed configured')
    return toWireFeed(state)
  })

  app.post('/admin/api-key/rotate', { schema: rotateKeySchema }, async (request, reply) => {
    const { key, hash } = await withDatabase(() => rotateApiKey(pool))
    deps.onRotated(hash)
    request.log.info('operational API key rotated')
    // Shown this once; only its hash is kept. Never cached by a proxy or the browser.
    return reply.code(201).header('cache-control', 'no-store').send({ api_key: key })
  })
}
