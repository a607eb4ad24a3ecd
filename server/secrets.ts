import { randomBytes, timingSafeEqual, createHash } from 'node:crypto'
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'

export interface ApiKeySource {
  key: string
  /** True when this call generated the key (first start): the caller prints it once. */
  generated: boolean
  /** Where a generated key is kept. */
  file: string | undefined
}

/**
 * The service's API key: from configuration, or else the development key kept in the
 * data folder, generated (32 random bytes, base64url) on first use with mode 0600.
 */
export async function resolveApiKey (configured: string | undefined, dataDir: string, service: string): Promise<ApiKeySource> {
  if (configured !== undefined) return { key: configured, generated: false, file: undefined }
  const file = join(dataDir, `${service}-api-key`)
  try {
    const stored = (await readFile(file, 'utf8')).trim()
    if (stored !== '') return { key: stored, generated: false, file }
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err
  }
  await mkdir(dataDir, { recursive: true, mode: 0o700 })
  const key = randomBytes(32).toString('base64url')
  try {
    // 'wx': if another process created it meanwhile, keep theirs.
    await writeFile(file, `${key}\n`, { mode: 0o600, flag: 'wx' })
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return { key: (await readFile(file, 'utf8')).trim(), generated: false, file }
    throw err
  }
  return { key, generated: true, file }
}

/**
 * Constant-time key check. Both sides are hashed first so that the comparison has
 * the same length whatever the caller sent, and the length of the key never leaks.
 */
export function keyMatches (expected: string, given: string | undefined): boolean {
  if (given === undefined) return false
  const a = createHash('sha256').update(expected).digest()
  const b = createHash('sha256').update(given).digest()
  return timingSafeEqual(a, b)
}

/**
 * What a 401 adds after the spec's sentence: the header to send and where the key is found
 * (the variable, or the file generated in the data folder). It names places, never a value.
 */
export function keyHelp (header: string, variable: string, service: string): string {
  return `Send the key in the ${header} header. The key is the value of ${variable} where the service runs or, when that is not set, the one generated in .data/${service}-api-key (in RAZAO_DATA_DIR when that is set).`
}
