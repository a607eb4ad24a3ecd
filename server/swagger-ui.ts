/**
 * The Swagger UI page of every service (server/openapi.ts), served from swagger-ui-dist's
 * own files (the machines that run us reach no CDN). `/docs` is the page; `/docs/<asset>` serves a
 * fixed list of the package's files and our initializer, looked up by name in a table, so
 * no path from the request ever reaches the file system (no traversal, no listing).
 *
 * The page carries a Content-Security-Policy that allows scripts from this origin only:
 * the initializer is a file, not an inline script. Swagger UI's online validator badge is
 * switched off (`validatorUrl: null`), or every visit would call validator.swagger.io.
 * Only `absolute-path.js` of the package is loaded here: its index.js would load the
 * 1.7 MB browser bundle into the server's memory. Why this page and not @fastify/swagger-ui
 * (which serves its whole static folder and sets a looser policy): docs/openapi.md.
 */
import { createRequire } from 'node:module'
import { createReadStream } from 'node:fs'
import { stat } from 'node:fs/promises'
import { join } from 'node:path'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'

interface Asset { file?: string, body?: string, type: string }

/** The initializer: Swagger UI pointed at our description, no outside calls. */
function initializer (specUrl: string): string {
  return `window.addEventListener('load', function () {
  window.ui = SwaggerUIBundle({
    url: ${JSON.stringify(specUrl)},
    dom_id: '#swagger-ui',
    deepLinking: true,
    validatorUrl: null,
    presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],
    layout: 'StandaloneLayout'
  })
})
`
}

function page (title: string, plainPath: string): string {
  return '<!doctype html><html lang="en"><head><meta charset="utf-8">' +
    `<title>${title.replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`)}</title>` +
    '<link rel="stylesheet" href="/docs/swagger-ui.css">' +
    '<link rel="icon" type="image/png" href="/docs/favicon-32x32.png" sizes="32x32">' +
    '<link rel="icon" type="image/png" href="/docs/favicon-16x16.png" sizes="16x16">' +
    '</head><body>' +
    `<noscript><p>This page needs JavaScript. Without it: <a href="${plainPath}">the operations as plain HTML</a>, <a href="/openapi.json">/openapi.json</a>.</p></noscript>` +
    '<div id="swagger-ui"></div>' +
    '<script src="/docs/swagger-ui-bundle.js" charset="utf-8"></script>' +
    '<script src="/docs/swagger-ui-standalone-preset.js" charset="utf-8"></script>' +
    '<script src="/docs/swagger-initializer.js" charset="utf-8"></script>' +
    '</body></html>'
}

/**
 * Scripts and styles from this origin only; Swagger UI sets inline style attributes and
 * shows its logo and icons as data: URLs; the description and "Try it out" go to this origin.
 */
const CSP = "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"

/** A day: the files change only with the package, and their ETag carries its version. */
const ASSET_MAX_AGE_S = 86_400

function packageInfo (): { dir: string, version: string } {
  const require = createRequire(import.meta.url)
  const getAbsoluteFSPath = require('swagger-ui-dist/absolute-path.js') as () => string
  const dir = getAbsoluteFSPath()
  const { version } = require(join(dir, 'package.json')) as { version: string }
  return { dir, version }
}

/**
 * Registers `/docs` (Swagger UI) and its assets. `specUrl` is the description the page
 * loads; `plainPath` the no-JavaScript page it links to.
 */
export function registerSwaggerUi (app: FastifyInstance, options: { title: string, specUrl: string, plainPath: string }): void {
  const { dir, version } = packageInfo()
  const assets = new Map<string, Asset>([
    ['swagger-ui.css', { file: join(dir, 'swagger-ui.css'), type: 'text/css; charset=utf-8' }],
    ['swagger-ui-bundle.js', { file: join(dir, 'swagger-ui-bundle.js'), type: 'text/javascript; charset=utf-8' }],
    ['swagger-ui-standalone-preset.js', { file: join(dir, 'swagger-ui-standalone-preset.js'), type: 'text/javascript; charset=utf-8' }],
    ['favicon-16x16.png', { file: join(dir, 'favicon-16x16.png'), type: 'image/png' }],
    ['favicon-32x32.png', { file: join(dir, 'favicon-32x32.png'), type: 'image/png' }],
    ['swagger-initializer.js', { body: initializer(options.specUrl), type: 'text/javascript; charset=utf-8' }]
  ])
  const html = page(options.title, options.plainPath)

  // Pages, not API: left out of the description.
  app.get('/docs', { schema: { hide: true } }, async (_request, reply) => reply
    .type('text/html; charset=utf-8')
    .header('content-security-policy', CSP)
    .header('x-content-type-options', 'nosniff')
    .header('cache-control', 'no-cache')
    .send(html))

  app.get('/docs/:asset', { schema: { hide: true } }, async (request: FastifyRequest<{ Params: { asset: string } }>, reply: FastifyReply) => {
    const asset = assets.get(request.params.asset)
    // Not one of ours: let the app's not-found handler answer, in the service's shape.
    if (asset === undefined) return reply.callNotFound()
    const etag = `"swagger-ui-dist-${version}-${request.params.asset}"`
    void reply
      .type(asset.type)
      .header('etag', etag)
      .header('cache-control', `public, max-age=${ASSET_MAX_AGE_S}`)
      .header('x-content-type-options', 'nosniff')
    if (request.headers['if-none-match'] === etag) return reply.code(304).send()
    if (asset.body !== undefined) return reply.send(asset.body)
    const file = asset.file as string
    void reply.header('content-length', (await stat(file)).size)
    return reply.send(createReadStream(file))
  })
}
