/**
 * The gateway's master key: 32 bytes that seal every stored certificate and password
 * (AES-256-GCM, see seal.ts). From GATEWAY_MASTER_KEY (64 hex characters or base64 of
 * 32 bytes), or else, outside production, a key generated once into the data folder
 * (`gateway-master-key`, mode 0600) so that development needs no set-up. Production
 * refuses to start without a configured key: a key file beside the database it
 * protects would protect nothing once both are copied together.
 */
import { createHash, randomBytes } from 'node:crypto'
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'

export interface MasterKey {
  /** 32 bytes; never logged, never returned. */
  key: Buffer
  /** 16 hex characters naming the key (a hash of it): stored beside each sealed row to tell a wrong key from a damaged row. */
  id: string
}

export interface MasterKeySource {
  masterKey: MasterKey
  /** True when this call generated the development key file. */
  generated: boolean
  /** The key file, when the key came from one. */
  file: string | undefined
}

export const MASTER_KEY_FILE = 'gateway-master-key'

/** The key's id: not the key, and no use without it (SHA-256 over a label and the key). */
export function masterKeyId (key: Buffer): string {
  return createHash('sha256').update('razao-gateway-master-key-id\0').update(key).digest('hex').slice(0, 16)
}

/** Reads a configured key: 64 hex characters, or base64/base64url of exactly 32 bytes; undefined otherwise. */
export function parseMasterKey (text: string): MasterKey | undefined {
  const t = text.trim()
  let key: Buffer | undefined
  if (/^[0-9a-fA-F]{64}$/.test(t)) key = Buffer.from(t, 'hex')
  else if (/^[A-Za-z0-9+/_-]{43}={0,1}$/.test(t)) key = Buffer.from(t.replace(/-/g, '+').replace(/_/g, '/'), 'base64')
  if (key === undefined || key.length !== 32) return undefined
  return { key, id: masterKeyId(key) }
}

/**
 * The configured key, or the development key file (created when missing). Callers
 * refuse the missing key in production before calling this (server/gateway/config.ts).
 */
export async function loadMasterKey (configured: MasterKey | undefined, dataDir: string): Promise<MasterKeySource> {
  if (configured !== undefined) return { masterKey: configured, generated: false, file: undefined }
  const file = join(dataDir, MASTER_KEY_FILE)
  const read = async (): Promise<MasterKey> => {
    const parsed = parseMasterKey(await readFile(file, 'utf8'))
    if (parsed === undefined) throw new Error(`The gateway key file ${file} does not hold a 32-byte key (64 hex characters); restore it from a backup or set GATEWAY_MASTER_KEY.`)
    return parsed
  }
  try {
    return { masterKey: await read(), generated: false, file }
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err
  }
  await mkdir(dataDir, { recursive: true, mode: 0o700 })
  const key = randomBytes(32)
  try {
    // 'wx': when another process created it meanwhile, keep theirs.
    await writeFile(file, `${key.toString('hex')}\n`, { mode: 0o600, flag: 'wx' })
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return { masterKey: await read(), generated: false, file }
    throw err
  }
  return { masterKey: { key, id: masterKeyId(key) }, generated: true, file }
}
