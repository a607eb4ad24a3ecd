import { describe, expect, it } from 'vitest'
import { loadConfig } from '../config.js'
import { loadSignConfig } from './config.js'

const load = (env: Record<string, string>) => loadSignConfig(env, loadConfig(env, '/srv').shared, '/srv')

describe('loadSignConfig', () => {
  it('has embedded defaults for every variable', () => {
    expect(load({})).toEqual({
      host: '127.0.0.1', port: 8082, apiKey: undefined, certPath: undefined, certPassword: '', certChainPath: undefined, tsaUrl: undefined, tsaTimeoutMs: 30_000, revocationTimeoutMs: 15_000, revocationMaxBytes: 32 * 1024 * 1024, taskTimeoutMs: 120_000, maxInFlight: 0, requestTimeoutMs: 120_000, bodyTimeoutMs: 30_000,
      visualMode: 'STAMP_AND_PAGE', maxPdfBytes: 50 * 1024 * 1024, validatorUrl: 'https://validar.iti.gov.br/', timeZone: 'America/Sao_Paulo',
      actuatorAuth: 'none', unauthorizedStatus: 401, policy: undefined
    })
  })

  it('reads every SIGN_ variable', () => {
    const c = load({
      SIGN_HOST: '0.0.0.0', SIGN_PORT: '9000', SIGN_API_KEY: 'k'.repeat(32), SIGN_CERT_PATH: 'certs/a1.pfx', SIGN_CERT_PASSWORD: ' s3nha ', SIGN_CERT_CHAIN_PATH: 'certs/cadeia.pem',
      SIGN_TSA_URL: 'https://act.example/tsa', SIGN_VISUAL_MODE: 'NONE', SIGN_MAX_PDF_BYTES: '2048', SIGN_VALIDATOR_URL: 'https://example.com/v',
      SIGN_TIME_ZONE: 'America/Manaus', SIGN_ACTUATOR_AUTH: 'api-key', SIGN_UNAUTHORIZED_STATUS: '403',
      SIGN_SIGNATURE_POLICY: 'AD-RT', SIGN_POLICY_HASH: 'ab'.repeat(32), SIGN_TASK_TIMEOUT_MS: '90000', SIGN_MAX_IN_FLIGHT: '3', SIGN_REQUEST_TIMEOUT_MS: '30000', SIGN_BODY_TIMEOUT_MS: '5000',
      SIGN_REVOCATION_TIMEOUT_MS: '4000', SIGN_REVOCATION_MAX_BYTES: '1048576'
    })
    expect(c).toMatchObject({
      host: '0.0.0.0', port: 9000, certPath: '/srv/certs/a1.pfx', certPassword: ' s3nha ', certChainPath: '/srv/certs/cadeia.pem', tsaUrl: 'https://act.example/tsa', visualMode: 'NONE',
      maxPdfBytes: 2048, revocationTimeoutMs: 4000, revocationMaxBytes: 1_048_576, taskTimeoutMs: 90_000, maxInFlight: 3, requestTimeoutMs: 30_000, bodyTimeoutMs: 5000, timeZone: 'America/Manaus', actuatorAuth: 'api-key', unauthorizedStatus: 403,
      policy: { name: 'AD-RT', oid: '2.16.76.1.7.1.12.1.3', hashHex: 'ab'.repeat(32) }
    })
  })

  it('refuses to start in production without a certificate, naming SIGN_CERT_PATH, and protects the actuator there', () => {
    expect(() => load({ NODE_ENV: 'production' })).toThrow(/SIGN_CERT_PATH/)
    expect(load({ NODE_ENV: 'production', SIGN_CERT_PATH: '/c.pfx' }).actuatorAuth).toBe('api-key')
  })

  it('names each bad variable and never echoes the key', () => {
    expect(() => load({ SIGN_API_KEY: 'curta-demais' })).toThrow(/SIGN_API_KEY must be at least 32 characters/)
    expect(() => load({ SIGN_API_KEY: 'curta-demais' })).not.toThrow(/curta-demais/)
    expect(() => load({ SIGN_VISUAL_MODE: 'STAMP' })).toThrow(/SIGN_VISUAL_MODE/)
    expect(() => load({ SIGN_TSA_URL: 'ftp://x' })).toThrow(/SIGN_TSA_URL/)
    expect(() => load({ SIGN_TIME_ZONE: 'Brasil/Lua' })).toThrow(/SIGN_TIME_ZONE/)
    expect(() => load({ SIGN_SIGNATURE_POLICY: 'AD-RB' })).toThrow(/SIGN_POLICY_HASH/)
    expect(() => load({ SIGN_SIGNATURE_POLICY: 'AD-RT', SIGN_POLICY_HASH: 'ab'.repeat(32) })).toThrow(/SIGN_TSA_URL/)
  })
})
