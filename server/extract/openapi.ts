/**
 * The OpenAPI description of the extraction service (spec 3 §4 B `/openapi.json`),
 * written from the schemas the routes were registered with (collected by an onRoute
 * hook), so it describes what the service validates and serializes. OpenAPI 3.1, whose
 * schema objects are JSON Schema: the route schemas go in as they are. @fastify/swagger
 * is not a dependency; this is the part of it we need.
 */
import type { RouteOptions } from 'fastify'

interface RouteSchema {
  summary?: string
  description?: string
  tags?: string[]
  security?: Array<Record<string, string[]>>
  multipart?: { field: string, maxFiles: number }
  querystring?: { properties?: Record<string, { description?: string } & Record<string, unknown>> }
  response?: Record<string | number, unknown>
}

export interface DescribedRoute { method: string, url: string, schema: RouteSchema }

/** Keeps the routes that carry a schema, for `openApiDocument`. */
export function collectRoute (routes: DescribedRoute[], options: RouteOptions): void {
  const methods = Array.isArray(options.method) ? options.method : [options.method]
  if (options.schema === undefined) return
  for (const method of methods) {
    if (method === 'HEAD') continue
    routes.push({ method: method.toLowerCase(), url: options.url, schema: options.schema as RouteSchema })
  }
}

const STATUS_TEXT: Record<string, string> = {
  200: 'OK',
  400: 'The request is malformed (no file, wrong field, too many files)',
  401: 'API key missing or invalid',
  413: 'The file is larger than EXTRACT_MAX_FILE_BYTES',
  415: 'The file is not a PDF by its bytes',
  422: 'The PDF cannot be read: encrypted, damaged, too many pages, too slow',
  500: 'Internal error: quote the requestId'
}

export function openApiDocument (routes: readonly DescribedRoute[], info: { version: string, engineVersion: string, maxFileBytes: number }): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {}
  for (const route of routes) {
    const s = route.schema
    const operation: Record<string, unknown> = {
      operationId: operationId(route.method, route.url),
      ...(s.summary === undefined ? {} : { summary: s.summary }),
      ...(s.description === undefined ? {} : { description: s.description }),
      ...(s.tags === undefined ? {} : { tags: s.tags }),
      security: s.security ?? []
    }
    const query = s.querystring?.properties
    if (query !== undefined) {
      operation.parameters = Object.entries(query).map(([name, schema]) => {
        const { description, ...rest } = schema
        return { name, in: 'query', required: false, schema: rest, ...(description === undefined ? {} : { description }) }
      })
    }
    if (s.multipart !== undefined) {
      const file = { type: 'string', contentMediaType: 'application/pdf', description: `A PDF of at most ${info.maxFileBytes} bytes.` }
      const { field, maxFiles } = s.multipart
      operation.requestBody = {
        required: true,
        content: {
          'multipart/form-data': {
            schema: {
              type: 'object',
              required: [field],
              properties: { [field]: maxFiles === 1 ? file : { type: 'array', items: file, maxItems: maxFiles, description: `Up to ${maxFiles} PDFs, one part each.` } }
            }
          }
        }
      }
    }
    operation.responses = Object.fromEntries(Object.entries(s.response ?? {}).map(([status, schema]) => [
      status,
      { description: STATUS_TEXT[status] ?? 'Answer', content: { 'application/json': { schema } } }
    ]))
    paths[route.url] = { ...paths[route.url], [route.method]: operation }
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'razao document-extraction service',
      version: info.version,
      description: `Identifies the type of a PDF, extracts its fields and reports the confidence (engine ${info.engineVersion}). Every answer carries requestId, also in the X-Request-Id header.`
    },
    components: { securitySchemes: { apiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' } } },
    paths
  }
}

function operationId (method: string, url: string): string {
  const words = url.split(/[^A-Za-z0-9]+/).filter((w) => w !== '' && w !== 'api' && w !== 'v1')
  return method + words.map((w) => w[0]!.toUpperCase() + w.slice(1)).join('')
}

const escape = (text: string): string => text.replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`)

/**
 * A plain page listing the operations with their parameters and answers, linking to
 * /openapi.json: /docs/plain, for a reader without JavaScript (/docs is Swagger UI).
 */
export function operationsPage (doc: Record<string, unknown>): string {
  const paths = doc.paths as Record<string, Record<string, Record<string, unknown>>>
  const items: string[] = []
  for (const [path, methods] of Object.entries(paths)) {
    for (const [method, op] of Object.entries(methods)) {
      const secured = (op.security as unknown[]).length > 0 ? ' <small>(X-API-Key)</small>' : ''
      const params = (op.parameters as Array<{ name: string, description?: string }> | undefined ?? []).map((p) => `<li>query <code>${escape(p.name)}</code>: ${escape(p.description ?? '')}</li>`)
      const form = (op.requestBody as { content: Record<string, { schema: { properties: object } } | undefined> } | undefined)?.content['multipart/form-data']
      const body = form === undefined ? [] : [`<li>multipart/form-data, field <code>${escape(Object.keys(form.schema.properties).join(', '))}</code></li>`]
      const answers = Object.entries(op.responses as Record<string, { description: string }>).map(([s, r]) => `<li>${s}: ${escape(r.description)}</li>`)
      items.push(`<section><h2><code>${method.toUpperCase()} ${escape(path)}</code>${secured}</h2><p>${escape(String(op.summary ?? ''))}</p>` +
        `${op.description === undefined ? '' : `<p>${escape(String(op.description))}</p>`}<ul>${[...params, ...body, ...answers].join('')}</ul></section>`)
    }
  }
  const info = doc.info as { title: string, version: string, description: string }
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escape(info.title)}</title>` +
    '<style>body{font-family:system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem}section{border-top:1px solid #ccc}code{background:#f4f4f4}</style></head>' +
    `<body><h1>${escape(info.title)} ${escape(info.version)}</h1><p>${escape(info.description)}</p><p>Machine-readable description: <a href="/openapi.json">/openapi.json</a> (OpenAPI 3.1).</p>${items.join('')}</body></html>`
}
