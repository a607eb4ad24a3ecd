/**
 * The tax-document gateway's configuration (spec 3 part A, issue 15), read once at
 * start-up with the shared EnvReader: a bad value stops the process naming the
 * variable; secrets (admin token, API key, master key) are never echoed.
 * What the query routes receive from the app is `QueryRouteDeps` in query-types.ts.
 */
import { existsSync } from 'node:fs'
import { resolve } from 'node:path'
import { ConfigError, EnvReader } from '../config.js'
import type { SharedConfig } from '../config.js'
import { parseMasterKey } from '../../core/gateway/index.js'
import type { MasterKey, WebhookDeliverySettings } from '../../core/gateway/index.js'

/** Official endpoints by environment (docs/gateway-queries.md); GATEWAY_NFE_URL / GATEWAY_ADN_URL override them. */
export const OFFICIAL_ENDPOINTS = {
  1: { nfe: 'https://www1.nfe.fazenda.gov.br/NFeDistribuicaoDFe/NFeDistribuicaoDFe.asmx', adn: 'https://adn.nfse.gov.br/contribuintes', evento: 'https://www.nfe.fazenda.gov.br/NFeRecepcaoEvento4/NFeRecepcaoEvento4.asmx' },
  2: { nfe: 'https://hom1.nfe.fazenda.gov.br/NFeDistribuicaoDFe/NFeDistribuicaoDFe.asmx', adn: 'https://adn.producaorestrita.nfse.gov.br/contribuintes', evento: 'https://hom1.nfe.fazenda.gov.br/NFeRecepcaoEvento4/NFeRecepcaoEvento4.asmx' }
} as const

export interface GatewayConfig {
  host: string
  port: number
  /** GATEWAY_ADMIN_TOKEN; undefined: generated once into the data folder (`gateway-admin-api-key`). */
  adminToken: string | undefined
  /** GATEWAY_API_KEY: the first operational key when none is stored yet; afterwards the stored hash rules (rotation). */
  apiKey: string | undefined
  /** GATEWAY_MASTER_KEY; undefined: the development key file in the data folder (refused in production). */
  masterKey: MasterKey | undefined
  /** GATEWAY_TP_AMB: 1 production, 2 homologation (default). */
  tpAmb: 1 | 2
  /** NF-e distribution endpoint: GATEWAY_NFE_URL or the official one for tpAmb. */
  nfeUrl: string
  /** NFS-e ADN contributor API base: GATEWAY_ADN_URL or the official one for tpAmb. */
  adnUrl: string
  /** NF-e event reception at the Ambiente Nacional (the manifestação): GATEWAY_EVENTO_URL or the official NFeRecepcaoEvento4 for tpAmb. */
  eventoUrl: string
  /** GATEWAY_CA_FILE: extra trusted roots (PEM), absolute path; undefined: Node's bundled roots only. */
  caFile: string | undefined
  /** GATEWAY_TIMEOUT_MS: bound of one upstream call (connect, TLS, answer). */
  timeoutMs: number
  /** GATEWAY_COOLDOWN_MS: after cStat 137 or 656 for a CNPJ, its NF-e queries are answered 429 for this long (default one hour, the authority's rule). */
  cooldownMs: number
  /** GATEWAY_CUF_AUTOR: IBGE code of the state sent as cUFAutor; unset: omitted (optional in the schema). */
  cUFAutor: number | undefined
  /** The managed feed's scheduler (issue 35, docs/gateway.md "Managed feed"). */
  feed: FeedConfig
  /** Issue 35, item 4: the webhooks' delivery and the admin screen's event stream. */
  notifications: NotificationConfig
}

/** The webhooks' delivery (defaults: 8 retries from 30 s, 10 s an attempt, 8 at once, polled each second, kept 7 days) and the admin stream. */
export interface NotificationConfig extends WebhookDeliverySettings {
  /** GATEWAY_WEBHOOKS: this instance dispatches and delivers (on, the default) or not (off). */
  deliver: boolean
  /** GATEWAY_EVENTS_POLL_MS: how often the admin screen's stream reads the database (default 1000). */
  eventsPollMs: number
}

export interface FeedConfig {
  /** GATEWAY_FEED: `on` (default) runs the scheduler in this instance; `off` leaves polling to the other instances. */
  enabled: boolean
  /** GATEWAY_FEED_CONCURRENCY: companies this instance polls at once. */
  concurrency: number
  /** GATEWAY_FEED_CALLS_PER_TURN: distribution calls per company before the next company's turn. */
  callsPerTurn: number
  /** GATEWAY_FEED_IDLE_MS: the longest the scheduler sleeps when nothing is due (a feed turned on waits at most this long). */
  idleMs: number
  /** GATEWAY_FEED_RETRY_MS: a feed whose call failed is due again after this long. */
  retryMs: number
  /** GATEWAY_FEED_LOOKUPS_PER_HOUR: point lookups (consNSU + consChNFe) per CNPJ an hour, at most the authority's 20. */
  lookupsPerHour: number
}

export function loadGatewayConfig (env: NodeJS.ProcessEnv, shared: Pick<SharedConfig, 'environment'>, cwd = process.cwd()): GatewayConfig {
  const read = new EnvReader(env)
  const tpAmb = read.oneOf('GATEWAY_TP_AMB', ['1', '2'], '2') === '1' ? 1 : 2
  const caFile = read.string('GATEWAY_CA_FILE', '')
  const config: GatewayConfig = {
    host: read.string('GATEWAY_HOST', '127.0.0.1'),
    port: read.integer('GATEWAY_PORT', 8084, 0, 65_535),
    adminToken: read.optionalSecret('GATEWAY_ADMIN_TOKEN', 16),
    apiKey: read.optionalSecret('GATEWAY_API_KEY', 16),
    masterKey: undefined,
    tpAmb,
    nfeUrl: read.optionalUrl('GATEWAY_NFE_URL', ['https:']) ?? OFFICIAL_ENDPOINTS[tpAmb].nfe,
    adnUrl: read.optionalUrl('GATEWAY_ADN_URL', ['https:']) ?? OFFICIAL_ENDPOINTS[tpAmb].adn,
    eventoUrl: read.optionalUrl('GATEWAY_EVENTO_URL', ['https:']) ?? OFFICIAL_ENDPOINTS[tpAmb].evento,
    caFile: caFile === '' ? undefined : resolve(cwd, caFile),
    timeoutMs: read.integer('GATEWAY_TIMEOUT_MS', 20_000, 100, 300_000),
    cooldownMs: read.integer('GATEWAY_COOLDOWN_MS', 3_600_000, 0, 86_400_000),
    cUFAutor: undefined,
    feed: {
      enabled: read.oneOf('GATEWAY_FEED', ['on', 'off'], 'on') === 'on',
      concurrency: read.integer('GATEWAY_FEED_CONCURRENCY', 8, 1, 256),
      callsPerTurn: read.integer('GATEWAY_FEED_CALLS_PER_TURN', 20, 1, 1000),
      idleMs: read.integer('GATEWAY_FEED_IDLE_MS', 5000, 50, 600_000),
      retryMs: read.integer('GATEWAY_FEED_RETRY_MS', 300_000, 1000, 86_400_000),
      lookupsPerHour: read.integer('GATEWAY_FEED_LOOKUPS_PER_HOUR', 20, 0, 20)
    },
    notifications: {
      deliver: read.oneOf('GATEWAY_WEBHOOKS', ['on', 'off'], 'on') === 'on',
      retryLimit: read.integer('GATEWAY_WEBHOOK_RETRIES', 8, 0, 20),
      retryDelaySeconds: read.integer('GATEWAY_WEBHOOK_RETRY_DELAY_S', 30, 1, 3600),
      timeoutMs: read.integer('GATEWAY_WEBHOOK_TIMEOUT_MS', 10_000, 100, 120_000),
      concurrency: read.integer('GATEWAY_WEBHOOK_CONCURRENCY', 8, 1, 64),
      pollMs: read.integer('GATEWAY_WEBHOOK_POLL_MS', 1000, 500, 60_000),
      keepDays: read.integer('GATEWAY_WEBHOOK_KEEP_DAYS', 7, 1, 365),
      eventsPollMs: read.integer('GATEWAY_EVENTS_POLL_MS', 1000, 100, 60_000)
    }
  }
  const cUF = read.integer('GATEWAY_CUF_AUTOR', 0, 0, 99)
  if (cUF !== 0) config.cUFAutor = cUF
  if (cUF !== 0 && (cUF < 11 || cUF > 53)) throw new ConfigError('GATEWAY_CUF_AUTOR', `must be a state's IBGE code from 11 to 53, got ${cUF}`)
  const masterKeyText = read.optionalSecret('GATEWAY_MASTER_KEY', 1)
  read.throwIfInvalid()
  if (masterKeyText !== undefined) {
    config.masterKey = parseMasterKey(masterKeyText)
    if (config.masterKey === undefined) throw new ConfigError('GATEWAY_MASTER_KEY', 'must be 32 bytes written as 64 hexadecimal characters or in base64 (openssl rand -hex 32)')
  } else if (shared.environment === 'production') {
    throw new ConfigError('GATEWAY_MASTER_KEY', 'must be set when NODE_ENV=production: the generated development key file would sit beside the certificates it protects (openssl rand -hex 32)')
  }
  if (config.caFile !== undefined && !existsSync(config.caFile)) {
    throw new ConfigError('GATEWAY_CA_FILE', 'names a file that does not exist')
  }
  return config
}
