/**
 * The gateway's operational API key (`X-API-Key`), stored only as its SHA-256 (spec 3
 * §1 A.4). A key is 32 random bytes, base64url; it is shown once, when generated or
 * rotated, and cannot be read back. The SHA-256 needs no salt or slow hash: the key is
 * random and long, not a password a dictionary could find.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto'
import type { ClientBase, Pool } from 'pg'

type Db = Pool | ClientBase

const SERVICE = 'gateway'

export function hashApiKey (key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex')
}

export function newApiKey (): string {
  return randomBytes(32).toString('base64url')
}

/** Constant-time comparison of a presented key against the stored hash. */
export function apiKeyMatchesHash (storedHash: string, given: string | undefined): boolean {
  if (given === undefined || given === '') return false
  return timingSafeEqual(Buffer.from(hashApiKey(given), 'hex'), Buffer.from(storedHash, 'hex'))
}

export async function readApiKeyHash (db: Db): Promise<string | undefined> {
  const { rows } = await db.query<{ sha256: string }>('SELECT sha256 FROM chaves_api WHERE servico = $1', [SERVICE])
  return rows[0]?.sha256
}

export interface InitialApiKey {
  hash: string
  /** Set when this call generated the key: the caller prints it once. */
  generatedKey: string | undefined
  /** True when a configured seed key was given but another key is stored (it was rotated since). */
  configuredIgnored: boolean
}

/**
 * The stored key, or a first one: `configured` (GATEWAY_API_KEY) when given, else a new
 * random key. Once a hash is stored the database is the truth: a rotation survives a
 * restart with the same environment.
 */
export async function ensureApiKey (db: Db, configured: string | undefined): Promise<InitialApiKey> {
  const stored = await readApiKeyHash(db)
  if (stored !== undefined) {
    return { hash: stored, generatedKey: undefined, configuredIgnored: configured !== undefined && hashApiKey(configured) !== stored }
  }
  const key = configured ?? newApiKey()
  const { rows } = await db.query<{ sha256: string }>(
    `INSERT INTO chaves_api (servico, sha256) VALUES ($1, $2) ON CONFLICT (servico) DO NOTHING RETURNING sha256`,
    [SERVICE, hashApiKey(key)])
  // Another process stored one first: keep theirs.
  if (rows[0] === undefined) return await ensureApiKey(db, configured)
  return { hash: rows[0].sha256, generatedKey: configured === undefined ? key : undefined, configuredIgnored: false }
}

/** Replaces the key; the old one stops working at once. Returns the new key (to show once) and its hash. */
export async function rotateApiKey (db: Db): Promise<{ key: string, hash: string }> {
  const key = newApiKey()
  const hash = hashApiKey(key)
  await db.query(
    `INSERT INTO chaves_api (servico, sha256) VALUES ($1, $2)
     ON CONFLICT (servico) DO UPDATE SET sha256 = EXCLUDED.sha256, atualizado_em = now()`,
    [SERVICE, hash])
  return { key, hash }
}

/**
 * The stored hash, read again once it is older than `ttlMs`, so that a query costs no
 * round trip for its key. A rotation made through this instance replaces it at once
 * (`set`); one made through another instance on the same database applies here within
 * `ttlMs`: that is the bound docs/scaling.md states.
 */
export class ApiKeyHashCache {
  private hash: string | undefined
  private readAt = 0

  constructor (private readonly read: () => Promise<string | undefined>, readonly ttlMs: number, private readonly now: () => number = Date.now) {}

  set (hash: string): void {
    this.hash = hash
    this.readAt = this.now()
  }

  async current (): Promise<string | undefined> {
    if (this.hash === undefined || this.now() - this.readAt > this.ttlMs) {
      const stored = await this.read()
      if (stored !== undefined) this.set(stored)
      else this.hash = undefined
    }
    return this.hash
  }
}
