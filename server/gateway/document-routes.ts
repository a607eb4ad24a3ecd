/**
 * The documents kept (issue 35, item 2): `GET /v1/documents` (a page, newest received
 * first, keyset paging), `GET /v1/documents/{chave}` and `GET /v1/documents/{chave}/xml`.
 * The operational key, as the query routes: the app's hook checks it, and so does this
 * scope (the test app mounts the routes without that hook).
 */
import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { Pool } from 'pg'
import { GatewayError, getDocument, listDocuments } from '../../core/gateway/index.js'
import { withDatabase } from './admin-routes.js'
import { registerOperationalScope } from './operational-scope.js'
import { documentListSchema, documentSchema, documentXmlSchema } from './schemas.js'
import { readDocumentFilter, readChave } from './document-wire.js'

export interface DocumentRouteDeps {
  pool: Pool
  checkApiKey: (request: FastifyRequest) => boolean | Promise<boolean>
}

type ListQuery = { Querystring: Record<string, string | string[] | undefined> }
type KeyParams = { Params: { chave: string } }

export async function registerDocumentRoutes (app: FastifyInstance, deps: DocumentRouteDeps): Promise<void> {
  const { pool } = deps
  const one = async (chave: string) => {
    const found = await withDatabase(() => getDocument(pool, readChave(chave)))
    if (found === undefined) throw new GatewayError(404, 'GATEWAY_DOCUMENT_NOT_FOUND', `No document is kept under the access key ${chave}.`)
    return found
  }
  await registerOperationalScope(app, { checkApiKey: deps.checkApiKey }, async (scope) => {
    scope.get<ListQuery>('/v1/documents', { schema: documentListSchema }, async (request) =>
      await withDatabase(() => listDocuments(pool, readDocumentFilter(request.query))))
    scope.get<KeyParams>('/v1/documents/:chave', { schema: documentSchema }, async (request) => {
      const { documento, eventos } = await one(request.params.chave)
      return { ...documento, eventos }
    })
    scope.get<KeyParams>('/v1/documents/:chave/xml', { schema: documentXmlSchema }, async (request, reply) => {
      const { xml } = await one(request.params.chave)
      return await reply.type('application/xml; charset=utf-8').send(xml)
    })
  })
}

