/**
 * The keys of `razao gateway rekey`. The new key comes from GATEWAY_NEW_MASTER_KEY or
 * `--new-key-file`; the old one from GATEWAY_OLD_MASTER_KEY or `--old-key-file`, else the
 * key the gateway runs with (GATEWAY_MASTER_KEY, or the development key file in the data
 * folder, read and never created here). A key file holds the key as GATEWAY_MASTER_KEY
 * does: 64 hex characters or base64 of 32 bytes. A key file `-` is read from standard input.
 */
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { readRegularFile } from '../../core/files/index.js'
import { MASTER_KEY_FILE, parseMasterKey } from '../../core/gateway/index.js'
import type { MasterKey } from '../../core/gateway/index.js'
import { ConfigError } from '../config.js'
import { readStdin } from '../cli-stdin.js'
import { UsageError } from '../cli-usage.js'

export interface RekeyKeys { oldKey: MasterKey, newKey: MasterKey }

/** A key file is one line; anything past this is not one. */
const MAX_KEY_FILE_BYTES = 1024

async function fromFile (option: string, path: string): Promise<MasterKey> {
  let text: string
  try {
    text = (path === '-' ? await readStdin(MAX_KEY_FILE_BYTES) : await readRegularFile(path, MAX_KEY_FILE_BYTES)).toString('utf8')
  } catch (err) {
    if (err instanceof UsageError) throw err
    throw new ConfigError(option, `cannot be read from ${path === '-' ? 'standard input' : path} (${(err as NodeJS.ErrnoException).code ?? 'error'})`)
  }
  const key = parseMasterKey(text)
  if (key === undefined) throw new ConfigError(option, `${path === '-' ? 'standard input' : path} does not hold a 32-byte key (64 hexadecimal characters or base64)`)
  return key
}

function fromVariable (name: string, value: string): MasterKey {
  const key = parseMasterKey(value)
  if (key === undefined) throw new ConfigError(name, 'must be 32 bytes written as 64 hexadecimal characters or in base64')
  return key
}

/** One of a variable and a file option; undefined when neither is given. */
async function oneOf (env: NodeJS.ProcessEnv, variable: string, option: string, file: string | undefined): Promise<MasterKey | undefined> {
  const value = env[variable]
  const set = value !== undefined && value.trim() !== ''
  if (set && file !== undefined) throw new ConfigError(variable, `and ${option} are both given; give one`)
  if (file !== undefined) return await fromFile(option, file)
  return set ? fromVariable(variable, value) : undefined
}

export async function rekeyKeys (env: NodeJS.ProcessEnv, files: { oldKeyFile?: string | undefined, newKeyFile?: string | undefined }, dataDir: string): Promise<RekeyKeys> {
  if (files.oldKeyFile === '-' && files.newKeyFile === '-') throw new UsageError('--old-key-file - and --new-key-file - cannot both read standard input; give one of them as a file')
  const newKey = await oneOf(env, 'GATEWAY_NEW_MASTER_KEY', '--new-key-file', files.newKeyFile)
  if (newKey === undefined) throw new ConfigError('GATEWAY_NEW_MASTER_KEY', 'or --new-key-file must give the new master key (openssl rand -hex 32)')
  const oldKey = await oneOf(env, 'GATEWAY_OLD_MASTER_KEY', '--old-key-file', files.oldKeyFile) ?? await currentKey(env, dataDir)
  return { oldKey, newKey }
}

/** The key the gateway runs with: GATEWAY_MASTER_KEY, else the development key file. */
async function currentKey (env: NodeJS.ProcessEnv, dataDir: string): Promise<MasterKey> {
  const configured = env.GATEWAY_MASTER_KEY
  if (configured !== undefined && configured.trim() !== '') return fromVariable('GATEWAY_MASTER_KEY', configured)
  const file = join(dataDir, MASTER_KEY_FILE)
  if (!existsSync(file)) throw new ConfigError('GATEWAY_OLD_MASTER_KEY', `or --old-key-file must give the old master key: GATEWAY_MASTER_KEY is not set and there is no development key file ${file}`)
  return await fromFile('GATEWAY_OLD_MASTER_KEY', file)
}
