/**
 * `razao sign IN.pdf -o OUT.pdf [--level L] [--stamp MODE]` and `razao sign --check`: the
 * signature service's own request, run in this process (no service needs to run), with the
 * SIGN_* configuration. The request goes through the service's app (buildSignApp, injected,
 * never listening), so a file signed here gets exactly what POST /api/v1/sign gives: the same
 * checks, certificate, refusals and warnings. The signed file is written beside OUT and renamed
 * over it, so OUT is never left half-written.
 *
 * Exit codes as the rest of the CLI: 0 signed (or, with --check, a usable certificate), 1 the
 * file could not be signed (or the certificate is unusable), 2 wrong usage or configuration
 * (an expired certificate refuses to start, as the service does).
 */
import { randomBytes } from 'node:crypto'
import { readFile, rename, rm, writeFile } from 'node:fs/promises'
import { basename, dirname, join } from 'node:path'
import dotenv from 'dotenv'
import type { FastifyInstance } from 'fastify'
import { createPool } from '../../workers/pool.js'
import { loadConfig } from '../config.js'
import { buildSignApp } from './app.js'
import { VISUAL_MODES, loadSignConfig } from './config.js'
import type { SignVisualMode } from './config.js'

/** PAdES levels the request's `level` field names (B-B, B-T, B-LT, B-LTA). */
export const SIGN_LEVELS = ['B', 'T', 'LT', 'LTA'] as const

class Usage extends Error {}

async function readInput (path: string): Promise<Buffer> {
  if (path !== '-') return await readFile(path)
  const chunks: Buffer[] = []
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks)
}

async function writeOutput (path: string, pdf: Buffer): Promise<void> {
  if (path === '-') {
    await new Promise<void>((resolve, reject) => process.stdout.write(pdf, (err) => { if (err == null) resolve(); else reject(err) }))
    return
  }
  const temporary = join(dirname(path), `.${basename(path)}.${randomBytes(6).toString('hex')}.tmp`)
  try {
    await writeFile(temporary, pdf, { flag: 'wx' })
    await rename(temporary, path)
  } finally {
    await rm(temporary, { force: true })
  }
}

const warned = new Set<string>()

/** Each warning once on stderr (the development certificate's is in both health and the signature). */
function warn (lines: string[]): void {
  for (const line of lines) {
    if (warned.has(line)) continue
    warned.add(line)
    process.stderr.write(`razao: warning: ${line}\n`)
  }
}

interface Health { data: { status: string, certificateValidUntil: string | null, certificateDaysLeft: number | null }, warnings: string[] }

async function health (app: FastifyInstance): Promise<Health> {
  return (await app.inject({ method: 'GET', url: '/api/v1/health' })).json<Health>()
}

/** Options as the command table (server/cli.ts) parsed them; usage beyond them is checked here. */
export interface SignCommandValues { output?: string | undefined, level?: string | undefined, stamp?: string | undefined, check?: boolean | undefined }

export async function signCommand (positionals: string[], values: SignCommandValues): Promise<void> {
  try {
    const request = values.check === true ? undefined : checkedRequest(positionals, values)
    dotenv.config({ quiet: true })
    const shared = loadConfig(process.env).shared
    const config = loadSignConfig(process.env, shared)
    if (request?.stamp !== undefined) config.visualMode = request.stamp
    const pool = createPool({ maxThreads: 1 })
    let app: FastifyInstance | undefined
    try {
      const apiKey = randomBytes(24).toString('base64url')
      app = await buildSignApp({ shared, config, apiKey, pool, logger: false })
      const state = await health(app)
      if (request === undefined) {
        process.stdout.write(`${JSON.stringify({ status: state.data.status, validUntil: state.data.certificateValidUntil, daysLeft: state.data.certificateDaysLeft, warnings: state.warnings }, null, 2)}\n`)
        if (state.data.status !== 'UP') process.exitCode = 1
        return
      }
      warn(state.warnings)
      await signFile(app, apiKey, request)
    } finally {
      await app?.close()
      await pool.destroy()
    }
  } catch (err) {
    if (err instanceof Usage) return usage(err.message)
    throw err
  }
}

interface FileRequest { input: string, output: string, level: string | undefined, stamp: SignVisualMode | undefined }

function checkedRequest (positionals: string[], values: { output?: string | undefined, level?: string | undefined, stamp?: string | undefined }): FileRequest {
  const [input, ...extra] = positionals
  if (input === undefined) throw new Usage('missing IN.pdf; see razao sign --help')
  if (extra.length > 0) throw new Usage(`one file at a time; unexpected "${extra[0]}"`)
  if (values.output === undefined || values.output === '') throw new Usage('missing -o OUT.pdf (the signed file; - for standard output)')
  const level = values.level?.toUpperCase()
  if (level !== undefined && !(SIGN_LEVELS as readonly string[]).includes(level)) throw new Usage(`--level must be one of ${SIGN_LEVELS.join(', ')}, got "${values.level}"`)
  const stamp = values.stamp?.toUpperCase()
  if (stamp !== undefined && !(VISUAL_MODES as readonly string[]).includes(stamp)) throw new Usage(`--stamp must be one of ${VISUAL_MODES.join(', ')}, got "${values.stamp}"`)
  return { input, output: values.output, level, stamp: stamp as SignVisualMode | undefined }
}

function usage (message: string): void {
  process.stderr.write(`razao: ${message}\n`)
  process.exitCode = 2
}

async function signFile (app: FastifyInstance, apiKey: string, request: FileRequest): Promise<void> {
  let pdf: Buffer
  try {
    pdf = await readInput(request.input)
  } catch (err) {
    process.stderr.write(`razao: cannot read ${request.input}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}\n`)
    process.exitCode = 1
    return
  }
  const body: Record<string, string> = { pdfBase64: pdf.toString('base64') }
  if (request.input !== '-') body.originalFileName = basename(request.input)
  if (request.level !== undefined) body.level = request.level
  const res = await app.inject({
    method: 'POST',
    url: '/api/v1/sign',
    headers: { 'content-type': 'application/json', accept: 'application/pdf', 'x-api-key': apiKey },
    payload: JSON.stringify(body)
  })
  if (res.statusCode !== 200) {
    const failure = res.json<{ errors: Array<{ code: string, message: string }> }>()
    const first = failure.errors[0]
    process.stderr.write(`razao: ${request.input} was not signed: ${first?.code ?? res.statusCode}: ${first?.message ?? res.body}\n`)
    process.exitCode = 1
    return
  }
  const signed = res.rawPayload
  const warnings = JSON.parse(String(res.headers['x-signature-warnings'] ?? '[]')) as string[]
  warn(warnings)
  await writeOutput(request.output, signed)
  const summary = {
    input: request.input,
    output: request.output,
    documentIdentifier: res.headers['x-document-identifier'],
    signedAt: res.headers['x-signed-at'],
    signatureStandard: res.headers['x-signature-standard'],
    ...(request.level === undefined ? {} : { level: request.level }),
    sizeBytes: signed.length,
    sha256: res.headers['x-document-sha256'],
    warnings
  }
  const text = `${JSON.stringify(summary, null, 2)}\n`
  if (request.output === '-') process.stderr.write(text)
  else process.stdout.write(text)
}
