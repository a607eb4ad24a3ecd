/**
 * The package descriptor, `automation.json` (the package contract of issue 16, docs/agent.md):
 * read and checked field by field, so a broken one is reported with every problem named
 * and skipped, never thrown at the agent.
 */
import { join } from 'node:path'
import { readRegularFile } from '../files/index.js'
import { ENV_NAME, RESERVED_ENV } from './environment.js'
import { compileInputSchema } from './input-schema.js'
import type { InputCheck } from './input-schema.js'

export const DESCRIPTOR_FILE = 'automation.json'
/** The only descriptor schema this agent reads (spec 3 §9 C). */
export const SCHEMA_VERSION = '1.0'
/** Longest a package may ask for: a day. */
export const MAX_TIMEOUT_MS = 86_400_000
/** A descriptor is a few hundred bytes; anything near this is not one. */
const MAX_DESCRIPTOR_BYTES = 64 * 1024
/** Variables a package may declare; a real one needs a handful. */
const MAX_DECLARED_ENV = 100
/** Ids appear in URLs (`/api/v1/automations/:id/run`), so they stay plain tokens. */
const ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/

/** An installed automation package, as discovered. */
export interface AutomationPackage {
  schemaVersion: string
  id: string
  name: string
  version: string
  enabled: boolean
  /** Program and arguments, run without a shell. */
  command: string[]
  /** Undefined: the agent's DEFAULT_AUTOMATION_TIMEOUT_MS. */
  timeoutMs: number | undefined
  /** At most one job of this package runs at a time, whatever MAX_CONCURRENT_JOBS allows. */
  singleton: boolean
  /** Names of the agent's environment variables the package receives beyond the allowed ones (`env`). */
  env: string[]
  /** The package directory: the process's working directory. */
  dir: string
  /** The declared shape of its input (`inputSchema`), as given; undefined: any object. */
  inputSchema: Record<string, unknown> | undefined
  /** Checks an input against `inputSchema` before it is queued: a message naming the field, or undefined when it fits. */
  checkInput: InputCheck | undefined
}

export type DescriptorOutcome =
  | { ok: true, pkg: AutomationPackage }
  | { ok: false, problems: string[] }

export async function readDescriptor (dir: string): Promise<DescriptorOutcome> {
  let text: string
  try {
    // Only a regular file, read up to the cap: a FIFO named automation.json would block a plain read for ever.
    text = (await readRegularFile(join(dir, DESCRIPTOR_FILE), MAX_DESCRIPTOR_BYTES)).toString('utf8')
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code
    if (code === 'EFBIG') return { ok: false, problems: [`${DESCRIPTOR_FILE} is larger than ${MAX_DESCRIPTOR_BYTES} bytes`] }
    if (code === 'EFTYPE') return { ok: false, problems: [`${DESCRIPTOR_FILE} is not a regular file`] }
    return { ok: false, problems: [`${DESCRIPTOR_FILE} cannot be read (${code ?? 'error'})`] }
  }
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch {
    return { ok: false, problems: [`${DESCRIPTOR_FILE} is not valid JSON`] }
  }
  return checkDescriptor(json, dir)
}

export function checkDescriptor (json: unknown, dir: string): DescriptorOutcome {
  if (typeof json !== 'object' || json === null || Array.isArray(json)) return { ok: false, problems: ['the descriptor must be a JSON object'] }
  const d = json as Record<string, unknown>
  const problems: string[] = []
  const text = (field: string): string => {
    const value = d[field]
    if (typeof value !== 'string' || value.trim() === '') {
      problems.push(`"${field}" must be a non-empty string`)
      return ''
    }
    return value
  }
  const schemaVersion = text('schemaVersion')
  if (schemaVersion !== '' && schemaVersion !== SCHEMA_VERSION) problems.push(`"schemaVersion" must be "${SCHEMA_VERSION}", got "${schemaVersion}"`)
  const id = text('id')
  if (id !== '' && !ID.test(id)) problems.push('"id" must be 1 to 100 letters, digits, ".", "_" or "-", starting with a letter or digit')
  const name = text('name')
  const version = text('version')
  if (typeof d.enabled !== 'boolean') problems.push('"enabled" must be true or false')
  const command = d.command
  const commandOk = Array.isArray(command) && command.length > 0 && command.every((part) => typeof part === 'string') && (command[0] as string).trim() !== ''
  if (!commandOk) problems.push('"command" must be a non-empty array of strings: the program, then its arguments')
  const timeoutMs = d.timeoutMs
  if (timeoutMs !== undefined && (typeof timeoutMs !== 'number' || !Number.isSafeInteger(timeoutMs) || timeoutMs < 1 || timeoutMs > MAX_TIMEOUT_MS)) {
    problems.push(`"timeoutMs" must be a whole number of milliseconds from 1 to ${MAX_TIMEOUT_MS}`)
  }
  if (d.singleton !== undefined && typeof d.singleton !== 'boolean') problems.push('"singleton" must be true or false')
  const env = d.env ?? []
  if (!Array.isArray(env) || env.length > MAX_DECLARED_ENV || !env.every((name) => typeof name === 'string' && ENV_NAME.test(name))) {
    problems.push(`"env" must be an array of at most ${MAX_DECLARED_ENV} environment variable names`)
  } else {
    const reserved = (env as string[]).filter((name) => RESERVED_ENV.test(name))
    if (reserved.length > 0) problems.push(`"env" names variables no package receives (the services' settings and secrets, the database, AGENT_*): ${reserved.join(', ')}`)
  }
  let checkInput: InputCheck | undefined
  if (d.inputSchema !== undefined) {
    const compiled = compileInputSchema(d.inputSchema)
    if (compiled.ok) checkInput = compiled.check
    else problems.push(compiled.problem)
  }
  if (problems.length > 0) return { ok: false, problems }
  return {
    ok: true,
    pkg: {
      schemaVersion,
      id,
      name,
      version,
      enabled: d.enabled as boolean,
      command: [...(command as string[])],
      timeoutMs: timeoutMs as number | undefined,
      singleton: d.singleton === true,
      env: [...new Set(env as string[])],
      dir,
      inputSchema: checkInput === undefined ? undefined : d.inputSchema as Record<string, unknown>,
      checkInput
    }
  }
}
