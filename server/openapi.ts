/**
 * The OpenAPI 3.1 description every service serves at `/openapi.json`, with Swagger UI at
 * `/docs` and a plain HTML list of the operations at `/docs/plain` (for readers without
 * JavaScript). The document is written by @fastify/swagger from the schemas the routes
 * were registered with: the same `querystring`/`params` schemas Fastify validates with
 * and the same `response` schemas it serializes with, so it cannot describe a field the
 * service does not send. Call `registerOpenApi` before any route is added (it collects
 * routes as they are registered).
 *
 * Two keys of a route schema are ours, read only when the document is written: the
 * routes read their bodies with their own parsers (a multipart upload streamed to disk,
 * a JSON body checked field by field with the spec's messages), so their body schemas
 * describe and do not validate:
 * - `multipart`: the JSON schema of a multipart/form-data body;
 * - `jsonBody`: the JSON schema of an application/json body.
 * The docs routes themselves are `hide: true`: pages, not API.
 */
import swagger from '@fastify/swagger'
import type { FastifyInstance, FastifySchema } from 'fastify'
import { registerSwaggerUi } from './swagger-ui.js'

export interface ServiceDescription {
  title: string
  version: string
  description: string
  /** OpenAPI security schemes by name, e.g. `{ apiKey: apiKeyScheme('X-API-Key') }`. */
  securitySchemes: Record<string, Record<string, unknown>>
  /**
   * Named schemas for `components.schemas`, asked for when the document is first written
   * (the extraction's `data` of each document type, which routes refer to by `$ref`).
   */
  schemas?: () => Record<string, JsonSchema>
}

/** A security scheme: an API key in a request header. */
export const apiKeyScheme = (header: string, description?: string): Record<string, unknown> =>
  ({ type: 'apiKey', in: 'header', name: header, ...(description === undefined ? {} : { description }) })

/**
 * Where a generated key lives, for the Authorize dialog of /docs (it shows a scheme's
 * description): the data folder's file `<service>-api-key` (server/secrets.ts), or the
 * variable that replaces it. The folder is named as its default, `.data/`, beside the
 * variable that moves it: the page is public and does not show this machine's paths.
 */
export function keyWhereabouts (header: string, file: string, variable: string): string {
  return `Send the key in the \`${header}\` header. Its value: the content of the file \`.data/${file}\`, ` +
    `generated on the first start (\`cat .data/${file}\` in the repository folder; \`RAZAO_DATA_DIR\` moves \`.data/\`), ` +
    `or, when the variable \`${variable}\` is set, that value.`
}

/** Route schemas of the pages that are not API (docs, the gateway's admin screen). */
export const HIDDEN = { hide: true } as const

/**
 * Schema helpers for the services' schema modules. `record` lists properties that every
 * answer carries (all required): the tests validate each answer against its schema, so a
 * field dropped from the code or from the schema fails them.
 */
export type JsonSchema = Record<string, unknown>
export const str = (description?: string): JsonSchema => ({ type: 'string', ...(description === undefined ? {} : { description }) })
export const int = (description?: string): JsonSchema => ({ type: 'integer', ...(description === undefined ? {} : { description }) })
export const num = (description?: string): JsonSchema => ({ type: 'number', ...(description === undefined ? {} : { description }) })
export const bool = (description?: string): JsonSchema => ({ type: 'boolean', ...(description === undefined ? {} : { description }) })
/** `schema` or null (a JSON Schema type list: OpenAPI 3.1 has no `nullable`). */
export function orNull (schema: JsonSchema): JsonSchema {
  const type = schema.type as string | string[]
  return { ...schema, type: [...[type].flat(), 'null'] }
}
export const record = (properties: Record<string, JsonSchema>, description?: string): JsonSchema =>
  ({ type: 'object', required: Object.keys(properties), properties, ...(description === undefined ? {} : { description }) })
export const list = (items: JsonSchema, description?: string): JsonSchema => ({ type: 'array', items, ...(description === undefined ? {} : { description }) })
/** An object whose keys are data (counts by type, an echoed input). */
export const openObject = (description?: string): JsonSchema => ({ type: 'object', additionalProperties: true, ...(description === undefined ? {} : { description }) })

/** The same body schema under several statuses, each with the sentence saying when it is answered. */
export function answers (schema: JsonSchema, when: Record<number, string>): Record<number, JsonSchema> {
  return Object.fromEntries(Object.entries(when).map(([status, description]) => [status, { ...schema, description }]))
}

/**
 * A service's failure statuses with their sentences, and its error body: returns a picker
 * that gives a route the ones it answers, e.g. `failures(401, 404)`.
 */
export function failuresOf<S extends number> (schema: JsonSchema, when: Record<S, string>): (...statuses: S[]) => Record<number, JsonSchema> {
  return (...statuses) => answers(schema, Object.fromEntries(statuses.map((s) => [s, when[s]])))
}

type RouteSchema = FastifySchema & { multipart?: unknown, jsonBody?: unknown, hide?: boolean, documentedResponse?: () => Record<number, unknown> | undefined }

/** `post /api/v1/pdf/extract-batch` → `postPdfExtractBatch`: a stable id for clients that generate code. */
function operationId (method: string, url: string): string {
  const words = url.split(/[^A-Za-z0-9]+/).filter((w) => w !== '' && w !== 'api' && w !== 'v1')
  return method.toLowerCase() + words.map((w) => w[0]!.toUpperCase() + w.slice(1)).join('')
}

/**
 * Our body keys into the ones @fastify/swagger writes as `requestBody`, an operation id,
 * and `security: []` (public, said explicitly) for a route that declares no scheme.
 */
function toSwaggerSchema (schema: RouteSchema | undefined, method: string, url: string): RouteSchema {
  const { multipart, jsonBody, documentedResponse, ...rest } = { operationId: operationId(method, url), security: [], ...schema }
  // The answers as the document shows them, where they say more than the schemas they are
  // serialized with (the extraction's typed `data`: one schema per document type).
  const documented = documentedResponse?.()
  if (documented !== undefined) rest.response = documented
  if (multipart !== undefined) return { ...rest, body: multipart, consumes: ['multipart/form-data'] } as RouteSchema
  if (jsonBody !== undefined) return { ...rest, body: jsonBody, consumes: ['application/json'] } as RouteSchema
  return rest
}

export async function registerOpenApi (app: FastifyInstance, service: ServiceDescription): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: { title: service.title, version: service.version, description: service.description },
      components: { securitySchemes: service.securitySchemes as never }
    },
    transform: ({ schema, url, route }) => ({ schema: toSwaggerSchema(schema as RouteSchema | undefined, [route.method].flat()[0]!, url) as never, url }),
    transformObject: (({ openapiObject }: { openapiObject: { components?: { schemas?: Record<string, unknown> } } }) => {
      const schemas = service.schemas?.()
      if (schemas === undefined) return openapiObject
      return { ...openapiObject, components: { ...openapiObject.components, schemas: { ...openapiObject.components?.schemas, ...schemas } } }
    }) as never
  })
  let page: string | undefined
  // After the app is ready, every route is known; written once, on the first visit.
  const document = (): Record<string, unknown> => app.swagger() as unknown as Record<string, unknown>
  app.get('/openapi.json', {
    schema: {
      summary: 'This description (OpenAPI 3.1)',
      tags: ['service'],
      response: { 200: { description: 'The OpenAPI 3.1 document of this service.', type: 'object', additionalProperties: true } }
    }
  }, async () => document())
  registerSwaggerUi(app, { title: service.title, specUrl: '/openapi.json', plainPath: '/docs/plain' })
  app.get('/docs/plain', { schema: HIDDEN }, async (_request, reply) => {
    page ??= operationsPage(document())
    return reply.type('text/html; charset=utf-8').header('x-content-type-options', 'nosniff').send(page)
  })
}

const escape = (text: string): string => text.replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`)

interface Operation {
  summary?: string
  description?: string
  security?: Array<Record<string, string[]>>
  parameters?: Array<{ name: string, in: string, description?: string }>
  requestBody?: { content: Record<string, { schema?: { properties?: Record<string, unknown> } }> }
  responses: Record<string, { description: string }>
}

/** The operations as plain HTML, linking to /openapi.json: /docs/plain. */
export function operationsPage (doc: Record<string, unknown>): string {
  const paths = doc.paths as Record<string, Record<string, Operation>>
  const items: string[] = []
  for (const [path, methods] of Object.entries(paths)) {
    for (const [method, op] of Object.entries(methods)) {
      const schemes = (op.security ?? []).flatMap((requirement) => Object.keys(requirement))
      const secured = schemes.length > 0 ? ` <small>(${escape(schemes.join(' or '))})</small>` : ''
      const params = (op.parameters ?? []).map((p) => `<li>${escape(p.in)} <code>${escape(p.name)}</code>${p.description === undefined ? '' : `: ${escape(p.description)}`}</li>`)
      const body = Object.entries(op.requestBody?.content ?? {}).map(([type, media]) =>
        `<li>${escape(type)}${media.schema?.properties === undefined ? '' : `, fields <code>${escape(Object.keys(media.schema.properties).join(', '))}</code>`}</li>`)
      const answers = Object.entries(op.responses).map(([s, r]) => `<li>${s}: ${escape(r.description)}</li>`)
      items.push(`<section><h2><code>${method.toUpperCase()} ${escape(path)}</code>${secured}</h2><p>${escape(op.summary ?? '')}</p>` +
        `${op.description === undefined ? '' : `<p>${escape(op.description)}</p>`}<ul>${[...params, ...body, ...answers].join('')}</ul></section>`)
    }
  }
  const info = doc.info as { title: string, version: string, description: string }
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escape(info.title)}</title>` +
    '<style>body{font-family:system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem}section{border-top:1px solid #ccc}code{background:#f4f4f4}</style></head>' +
    `<body><h1>${escape(info.title)} ${escape(info.version)}</h1><p>${escape(info.description)}</p><p>Machine-readable description: <a href="/openapi.json">/openapi.json</a> (OpenAPI 3.1).</p>${items.join('')}</body></html>`
}
