/**
 * The signature service's configuration (spec 2), read once at start-up with the shared
 * EnvReader so a bad value stops the process naming the variable. Secrets (the API key,
 * the certificate password) are never echoed in messages.
 */
import { resolve } from 'node:path'
import { ConfigError, EnvReader } from '../config.js'
import type { SharedConfig } from '../config.js'

export const VISUAL_MODES = ['NONE', 'STAMP_ONLY', 'PAGE_ONLY', 'STAMP_AND_PAGE'] as const
export type SignVisualMode = typeof VISUAL_MODES[number]

/** ICP-Brasil PAdES policies, version 1.3 (LPA_PAdES); override the OID with SIGN_POLICY_OID. */
export const POLICY_OIDS = { 'AD-RB': '2.16.76.1.7.1.11.1.3', 'AD-RT': '2.16.76.1.7.1.12.1.3' } as const

export interface SignConfig {
  host: string
  port: number
  /** Undefined: generated once and kept in the data folder (`sign-api-key`). */
  apiKey: string | undefined
  /** Undefined: the development chain in `<dataDir>/sign-dev/` (never in production). */
  certPath: string | undefined
  certPassword: string
  /** A PEM file of issuer certificates that completes the chain the PKCS#12 holds. */
  certChainPath: string | undefined
  /** A PEM file of ICP-Brasil root certificates: a chain reaching one is called ICP-Brasil on the stamp and page. */
  icpRootsPath: string | undefined
  /** Set: PAdES-T with tokens from this RFC 3161 authority. */
  tsaUrl: string | undefined
  tsaTimeoutMs: number
  /** PAdES-B-LT/LTA: longest one OCSP request or CRL download may take. */
  revocationTimeoutMs: number
  /** PAdES-B-LT/LTA: largest OCSP answer or CRL accepted, bytes. */
  revocationMaxBytes: number
  /** Longest a signature may take in the pool (queueing included) before its thread is stopped. */
  taskTimeoutMs: number
  /**
   * Sign requests let in at once (0: twice the pool's threads). The others wait before
   * their body is read, so memory is bounded by this times the largest body.
   */
  maxInFlight: number
  /** Longest a client may take to send a whole request (headers and body); past it the connection is dropped. */
  requestTimeoutMs: number
  /** Longest a request's body may send nothing while it holds a place, ms: past it the answer is 408. */
  bodyTimeoutMs: number
  visualMode: SignVisualMode
  maxPdfBytes: number
  validatorUrl: string
  /** IANA zone for signedAt, /M and the printed time. */
  timeZone: string
  /** Who may read /actuator/*: anyone, or only callers with the API key. */
  actuatorAuth: 'none' | 'api-key'
  /** Status for a missing or wrong key: 401 (default) or 403 (spec 2, section 5). */
  unauthorizedStatus: 401 | 403
  policy: { name: 'AD-RB' | 'AD-RT', oid: string, hashHex: string, uri: string | undefined } | undefined
  /** The verification trust store: a folder of root certificates; undefined: the ICP-Brasil roots shipped in core/sign/verify/anchors. */
  trustDir: string | undefined
}

const MIB = 1024 * 1024

function isIanaZone (zone: string): boolean {
  try { new Intl.DateTimeFormat('en-US', { timeZone: zone }); return true } catch { return false }
}

function policyHash (value: string): string | undefined {
  if (/^[0-9a-fA-F]{64}$/.test(value)) return value.toLowerCase()
  const b = Buffer.from(value, 'base64')
  return b.length === 32 && /^[A-Za-z0-9+/]+={0,2}$/.test(value) ? b.toString('hex') : undefined
}

export function loadSignConfig (env: NodeJS.ProcessEnv, shared: SharedConfig, cwd = process.cwd()): SignConfig {
  const read = new EnvReader(env)
  const extra: ConfigError[] = []
  const production = shared.environment === 'production'
  const certPathRaw = read.string('SIGN_CERT_PATH', '')
  const chainPathRaw = read.string('SIGN_CERT_CHAIN_PATH', '')
  const trustDirRaw = read.string('SIGN_TRUST_DIR', '')
  const icpRootsRaw = read.string('SIGN_ICP_BRASIL_ROOTS_PATH', '')
  const tsaUrl = read.optionalUrl('SIGN_TSA_URL', ['http:', 'https:'])
  const timeZone = read.string('SIGN_TIME_ZONE', 'America/Sao_Paulo')
  if (!isIanaZone(timeZone)) extra.push(new ConfigError('SIGN_TIME_ZONE', `must be an IANA time zone such as America/Sao_Paulo, got "${timeZone}"`))
  const validatorUrl = read.optionalUrl('SIGN_VALIDATOR_URL', ['http:', 'https:']) ?? 'https://validar.iti.gov.br/'
  const policyName = read.oneOf('SIGN_SIGNATURE_POLICY', ['NONE', 'AD-RB', 'AD-RT'], 'NONE') as 'NONE' | 'AD-RB' | 'AD-RT'
  const config: SignConfig = {
    host: read.string('SIGN_HOST', '127.0.0.1'),
    port: read.integer('SIGN_PORT', 8082, 0, 65_535),
    apiKey: read.optionalSecret('SIGN_API_KEY', 32),
    certPath: certPathRaw === '' ? undefined : resolve(cwd, certPathRaw),
    // A PKCS#12 may have an empty password; keep surrounding spaces out of the EnvReader's trim.
    certPassword: env.SIGN_CERT_PASSWORD ?? '',
    certChainPath: chainPathRaw === '' ? undefined : resolve(cwd, chainPathRaw),
    icpRootsPath: icpRootsRaw === '' ? undefined : resolve(cwd, icpRootsRaw),
    tsaUrl,
    tsaTimeoutMs: read.integer('SIGN_TSA_TIMEOUT_MS', 30_000, 100, 600_000),
    revocationTimeoutMs: read.integer('SIGN_REVOCATION_TIMEOUT_MS', 15_000, 100, 600_000),
    revocationMaxBytes: read.integer('SIGN_REVOCATION_MAX_BYTES', 32 * MIB, 1024, 512 * MIB),
    taskTimeoutMs: read.integer('SIGN_TASK_TIMEOUT_MS', 120_000, 10, 3_600_000),
    maxInFlight: read.integer('SIGN_MAX_IN_FLIGHT', 0, 0, 10_000),
    requestTimeoutMs: read.integer('SIGN_REQUEST_TIMEOUT_MS', 120_000, 1000, 3_600_000),
    bodyTimeoutMs: read.integer('SIGN_BODY_TIMEOUT_MS', 30_000, 100, 3_600_000),
    visualMode: read.oneOf('SIGN_VISUAL_MODE', [...VISUAL_MODES], 'STAMP_AND_PAGE') as SignVisualMode,
    maxPdfBytes: read.integer('SIGN_MAX_PDF_BYTES', 50 * MIB, 1024, 512 * MIB),
    validatorUrl,
    timeZone,
    actuatorAuth: read.oneOf('SIGN_ACTUATOR_AUTH', ['none', 'api-key'], production ? 'api-key' : 'none') as 'none' | 'api-key',
    unauthorizedStatus: Number(read.oneOf('SIGN_UNAUTHORIZED_STATUS', ['401', '403'], '401')) as 401 | 403,
    policy: undefined,
    trustDir: trustDirRaw === '' ? undefined : resolve(cwd, trustDirRaw)
  }
  if (production && config.certPath === undefined) {
    extra.push(new ConfigError('SIGN_CERT_PATH', 'must name the PKCS#12 certificate file when NODE_ENV=production (the development certificate is never used in production)'))
  }
  if (policyName !== 'NONE') {
    const hashRaw = read.string('SIGN_POLICY_HASH', '')
    const hashHex = policyHash(hashRaw)
    if (hashHex === undefined) {
      extra.push(new ConfigError('SIGN_POLICY_HASH', 'must be the SHA-256 the policy document declares (64 hex digits or Base64) when SIGN_SIGNATURE_POLICY is set'))
    }
    if (policyName === 'AD-RT' && tsaUrl === undefined) extra.push(new ConfigError('SIGN_SIGNATURE_POLICY', 'AD-RT needs a timestamp authority: set SIGN_TSA_URL (or use AD-RB)'))
    if (policyName === 'AD-RB' && tsaUrl !== undefined) extra.push(new ConfigError('SIGN_SIGNATURE_POLICY', 'AD-RB is the policy of PAdES-B; with SIGN_TSA_URL set (PAdES-T) use AD-RT'))
    const oid = read.string('SIGN_POLICY_OID', POLICY_OIDS[policyName])
    if (!/^\d+(\.\d+)+$/.test(oid)) extra.push(new ConfigError('SIGN_POLICY_OID', `must be a dotted OID, got "${oid}"`))
    const uri = read.optionalUrl('SIGN_POLICY_URI', ['http:', 'https:'])
    config.policy = { name: policyName, oid, hashHex: hashHex ?? '', uri }
  }
  read.throwIfInvalid()
  if (extra.length === 1) throw extra[0]!
  if (extra.length > 1) throw new ConfigError(extra.map((e) => e.variable).join(', '), `invalid configuration: ${extra.map((e) => e.message).join('; ')}`)
  return config
}
