/**
 * `razao verify FILE [--trust DIR]`: the signatures of a PDF, checked in this process as
 * POST /api/v1/verify checks them (the same core, the same trust store: --trust, else
 * SIGN_TRUST_DIR, else the shipped ICP-Brasil roots). The route's `data` goes to stdout
 * as JSON, one line per signature to stderr. Exit 0: every signature VALID; 1: a
 * signature INVALID or INDETERMINATE, a file without signatures, or a file that is not a
 * readable PDF; 2: wrong usage or an unreadable trust store.
 */
import { readFile, stat } from 'node:fs/promises'
import { basename, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { X509Certificate } from 'node:crypto'
import { isSignError } from '../../core/sign/index.js'
import { verifyPdf } from '../../core/sign/verify/index.js'
import { ConfigError } from '../config.js'
import { loadVerifyTrustStore } from './trust.js'
import { reportToWire, verdictSentence } from './verify-route.js'

export const VERIFY_HELP = `Usage: razao verify FILE [--trust DIR]

Checks every signature of the PDF FILE: integrity, signer (name, CPF/CNPJ), certificate
chain and trust, validity at signing time and now, time-stamp, PAdES level and policy,
and what changed after each signature. The report (JSON) goes to stdout.

  --trust DIR   folder of trusted root certificates (.pem, .crt, .cer, .der); default
                SIGN_TRUST_DIR, else the ICP-Brasil roots shipped with razao

Exit status: 0 every signature valid; 1 a signature invalid or not trustworthy, no
signature, or not a PDF; 2 wrong usage.
`

function fail (status: 1 | 2, message: string): number {
  process.stderr.write(`razao verify: ${message}\n`)
  return status
}

/** Runs the command; returns the exit status. */
export async function verifyCommand (argv: string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  let parsed
  try {
    parsed = parseArgs({ args: argv, allowPositionals: true, options: { trust: { type: 'string' }, help: { type: 'boolean', short: 'h' } } })
  } catch (err) {
    return fail(2, `${(err as Error).message}; see razao verify --help`)
  }
  const { values, positionals } = parsed
  if (values.help === true) {
    process.stdout.write(VERIFY_HELP)
    return 0
  }
  if (positionals.length !== 1) return fail(2, positionals.length === 0 ? 'missing FILE; see razao verify --help' : 'give one FILE; see razao verify --help')
  const path = positionals[0]!
  const trustDir = values.trust ?? (env.SIGN_TRUST_DIR === undefined || env.SIGN_TRUST_DIR.trim() === '' ? undefined : env.SIGN_TRUST_DIR.trim())
  let store
  try {
    store = loadVerifyTrustStore(trustDir === undefined ? undefined : resolve(trustDir))
  } catch (err) {
    if (err instanceof ConfigError) return fail(2, err.message.replace(/^SIGN_TRUST_DIR /, ''))
    throw err
  }
  const facts = await stat(path).catch(() => undefined)
  if (facts === undefined || !facts.isFile()) return fail(2, `cannot read ${path}: not a file`)
  const bytes = await readFile(path)
  let report
  try {
    report = await verifyPdf(bytes, { anchors: store.anchors.map((a) => ({ cert: new X509Certificate(a.der), source: a.source })) })
  } catch (err) {
    if (isSignError(err)) return fail(1, `${path}: ${err.message}`)
    throw err
  }
  const timeZone = env.SIGN_TIME_ZONE?.trim() || 'America/Sao_Paulo'
  const data = { fileName: basename(path), sizeBytes: bytes.length, trustStore: { description: store.trustStore, anchors: store.anchors.map((a) => a.source) }, ...reportToWire(report, timeZone) }
  process.stdout.write(`${JSON.stringify(data, null, 2)}\n`)
  for (const s of report.signatures) {
    const who = s.signer === null ? '' : ` ${s.signer.name}${s.signer.document === '' ? '' : ` (${s.signer.documentKind ?? ''} ${s.signer.document})`}`
    const level = s.pades.level === null ? '' : ` PAdES-${s.pades.level}`
    process.stderr.write(`${s.index}. ${s.kind === 'signature' ? 'signature' : 'document time-stamp'}${who}${level}: ${s.verdict}${s.problems.length > 0 ? ` - ${s.problems[0]}` : ''}\n`)
  }
  process.stderr.write(`${basename(path)}: ${report.verdict}. ${verdictSentence(report.verdict)}\n`)
  return report.verdict === 'VALID' ? 0 : 1
}
