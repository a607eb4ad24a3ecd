/**
 * What `razao serve gateway` does before the app listens: the admin token (configured, or
 * generated into the data folder), the store's master key (configured, or the development
 * key file), and the operational key's hash in the database (a first key generated and
 * shown once). Each generated secret is printed once through `log`, never the logger.
 */
import type { FastifyInstance } from 'fastify'
import type { Pool } from 'pg'
import { ensureApiKey, loadMasterKey } from '../../core/gateway/index.js'
import type { SharedConfig } from '../config.js'
import { resolveApiKey } from '../secrets.js'
import { buildGatewayApp } from './app.js'
import type { GatewayConfig } from './config.js'

export async function startGatewayApp (shared: SharedConfig, gateway: GatewayConfig, database: { pool: Pool }, log: (line: string) => void): Promise<FastifyInstance> {
  const adminToken = await resolveApiKey(gateway.adminToken, shared.dataDir, 'gateway-admin')
  if (adminToken.generated) {
    log(`Generated a development admin token for the gateway (kept in ${adminToken.file}):\n  ${adminToken.key}\nSend it as Authorization: Bearer <token> to /admin/ (and paste it into the /admin screen). Set GATEWAY_ADMIN_TOKEN to use your own.`)
  }
  const master = await loadMasterKey(gateway.masterKey, shared.dataDir)
  if (master.generated) log(`Generated a development master key for the gateway's certificate store (kept in ${master.file}). Set GATEWAY_MASTER_KEY in production; keep a copy of it: without it the stored certificates cannot be opened.`)
  const apiKey = await ensureApiKey(database.pool, gateway.apiKey)
  if (apiKey.generatedKey !== undefined) {
    // Only its hash is stored: this is the one time it can be shown.
    log(`Generated the gateway's operational API key (only its SHA-256 is stored; this is the only time it is shown):\n  ${apiKey.generatedKey}\nSend it in the X-API-Key header. Rotate it with POST /admin/api-key/rotate.`)
  }
  if (apiKey.configuredIgnored) log('GATEWAY_API_KEY is set but another key is stored (it was rotated): the stored key is the valid one.')
  // The managed feed's scheduler runs in every serving instance unless GATEWAY_FEED=off (docs/gateway.md, "Managed feed").
  return await buildGatewayApp({ shared, config: gateway, adminToken: adminToken.key, masterKey: master.masterKey, database, feed: { run: gateway.feed.enabled }, deliverWebhooks: gateway.notifications.deliver })
}
