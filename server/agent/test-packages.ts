/**
 * Small real automation packages the agent's tests and benchmark install into a
 * temporary AUTOMATIONS_ROOT: node scripts speaking the package contract (docs/agent.md).
 */
import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'

export interface PackageSpec {
  id: string
  /** main.mjs; the descriptor runs `node main.mjs` unless `command` is given. */
  script?: string
  command?: string[]
  enabled?: boolean
  timeoutMs?: number
  singleton?: boolean
}

export async function installPackage (root: string, spec: PackageSpec): Promise<string> {
  const dir = join(root, spec.id)
  await mkdir(dir, { recursive: true })
  const descriptor: Record<string, unknown> = {
    schemaVersion: '1.0',
    id: spec.id,
    name: `Test package ${spec.id}`,
    version: '1.0.0',
    enabled: spec.enabled ?? true,
    command: spec.command ?? ['node', 'main.mjs']
  }
  if (spec.timeoutMs !== undefined) descriptor.timeoutMs = spec.timeoutMs
  if (spec.singleton !== undefined) descriptor.singleton = spec.singleton
  await writeFile(join(dir, 'automation.json'), JSON.stringify(descriptor, null, 2))
  if (spec.script !== undefined) await writeFile(join(dir, 'main.mjs'), spec.script)
  return dir
}

/** Reads stdin and echoes it with what the agent set in the environment. */
export const ECHO = `
import { readFileSync, existsSync } from 'node:fs'
let stdin = ''
for await (const chunk of process.stdin) stdin += chunk
const fromFile = readFileSync(process.env.AGENT_JOB_INPUT, 'utf8')
console.log('working')
console.log('AGENT_RESULT_JSON=' + JSON.stringify({ stage: 'early' }))
console.log('AGENT_RESULT_JSON=' + JSON.stringify({
  input: JSON.parse(stdin),
  sameAsFile: fromFile === stdin,
  jobId: process.env.AGENT_JOB_ID,
  jobDirExists: existsSync(process.env.AGENT_JOB_DIR),
  sawApiKey: Object.keys(process.env).some((k) => k.endsWith('API_KEY'))
}))
`

/** Waits until the file named by input.release exists, then succeeds. */
export const WAIT_FOR_RELEASE = `
import { existsSync } from 'node:fs'
let stdin = ''
for await (const chunk of process.stdin) stdin += chunk
const { release } = JSON.parse(stdin)
while (!existsSync(release)) await new Promise((r) => setTimeout(r, 20))
console.log('AGENT_RESULT_JSON={"released":true}')
`

/**
 * Starts a grandchild that runs for ever, writes its PID to input.pidFile, ignores
 * SIGTERM itself and never ends: only killing the whole tree stops it.
 */
export const TREE = `
import { spawn } from 'node:child_process'
import { writeFileSync } from 'node:fs'
let stdin = ''
for await (const chunk of process.stdin) stdin += chunk
const { pidFile } = JSON.parse(stdin)
process.on('SIGTERM', () => {})
const child = spawn(process.execPath, ['-e', 'process.on("SIGTERM", () => {}); setInterval(() => {}, 1000)'], { stdio: 'ignore' })
writeFileSync(pidFile, String(child.pid))
setInterval(() => {}, 1000)
`

/** Prints a partial result and crashes. */
export const CRASH = `
console.log('AGENT_RESULT_JSON={"processed":1}')
console.error('something broke')
process.exit(3)
`

export const NO_RESULT = `console.log('done, but no result line')`

/** Writes input.bytes bytes to stdout and as much to stderr, then a result. */
export const CHATTY = `
let stdin = ''
for await (const chunk of process.stdin) stdin += chunk
const { bytes } = JSON.parse(stdin)
const line = 'x'.repeat(1023) + '\\n'
for (let i = 0; i < bytes / 1024; i++) { process.stdout.write(line); process.stderr.write(line) }
process.stdout.write('AGENT_RESULT_JSON={"ok":true}\\n')
`

/**
 * Registers its outputs: a PDF in the job folder (plain name), a text file under a
 * non-ASCII name, and three it should not get: a path climbing out with "..", a link
 * from the job folder to a file outside the roots, and a file that does not exist.
 */
export const FILES = `
import { writeFileSync, symlinkSync } from 'node:fs'
import { join } from 'node:path'
let stdin = ''
for await (const chunk of process.stdin) stdin += chunk
const { outside } = JSON.parse(stdin)
const dir = process.env.AGENT_JOB_DIR
writeFileSync(join(dir, 'report.pdf'), '%PDF-1.4 test')
writeFileSync(join(dir, 'notes.txt'), 'ção')
symlinkSync(outside, join(dir, 'escape.txt'))
const register = (claim) => console.log('AGENT_FILE_JSON=' + JSON.stringify(claim))
register({ path: join(dir, 'report.pdf') })
register({ path: join(dir, 'notes.txt'), fileName: 'Declaração março.txt', mimeType: 'text/plain; charset=utf-8' })
// Not joined: the agent must see the ".." segments itself.
register({ path: dir + '/../../../outside/secret.txt' })
register({ path: join(dir, 'escape.txt') })
register({ path: join(dir, 'missing.pdf') })
console.log('AGENT_FILE_JSON=not json')
console.log('AGENT_RESULT_JSON={"files":2}')
`

/** The benchmark's trivial package: prints its result and exits. */
export const TRIVIAL_SH = 'echo \'AGENT_RESULT_JSON={"ok":true}\'\n'
