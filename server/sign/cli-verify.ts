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
import { X509Certificate } from 'node:crypto'
import { isSignError } from '../../core/sign/index.js'
import { verifyPdf } from '../../core/sign/verify/index.js'
import { ConfigError } from '../config.js'
import { loadVerifyTrustStore } from './trust.js'
import { reportToWire, verdictSentence } from './verify-route.js'

function fail (status: 1 | 2, message: string): number {
  process.stderr.write(`razao verify: ${message}\n`)
  return status
}

/**
 * Checks the PDF at `path` (shown as `name`: standard input's copy is `stdin`) against the
 * trust store of `trust`; returns the exit status. Usage (the file argument, unknown options,
 * --help) is the command table's (server/cli.ts).
 */
export async function verifyFile (path: string, options: { trust?: string | undefined, name?: string | undefined }, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const shown = options.name ?? path
  const name = options.name ?? basename(path)
  const trustDir = options.trust ?? (env.SIGN_TRUST_DIR === undefined || env.SIGN_TRUST_DIR.trim() === '' ? undefined : env.SIGN_TRUST_DIR.trim())
  let store
  try {
    store = loadVerifyTrustStore(trustDir === undefined ? undefined : resolve(trustDir))
  } catch (err) {
    if (err instanceof ConfigError) return fail(2, err.message.replace(/^SIGN_TRUST_DIR /, ''))
    throw err
  }
  const facts = await stat(path).catch(() => undefined)
  if (facts === undefined || !facts.isFile()) return fail(2, `cannot read ${shown}: not a file`)
  const bytes = await readFile(path)
  let report
  try {
    report = await verifyPdf(bytes, { anchors: store.anchors.map((a) => ({ cert: new X509Certificate(a.der), source: a.source })) })
  } catch (err) {
    if (isSignError(err)) return fail(1, `${shown}: ${err.message}`)
    throw err
  }
  const timeZone = env.SIGN_TIME_ZONE?.trim() || 'America/Sao_Paulo'
  const data = { fileName: name, sizeBytes: bytes.length, trustStore: { description: store.trustStore, anchors: store.anchors.map((a) => a.source) }, ...reportToWire(report, timeZone) }
  process.stdout.write(`${JSON.stringify(data, null, 2)}\n`)
  for (const s of report.signatures) {
    const who = s.signer === null ? '' : ` ${s.signer.name}${s.signer.document === '' ? '' : ` (${s.signer.documentKind ?? ''} ${s.signer.document})`}`
    const level = s.pades.level === null ? '' : ` PAdES-${s.pades.level}`
    process.stderr.write(`${s.index}. ${s.kind === 'signature' ? 'signature' : 'document time-stamp'}${who}${level}: ${s.verdict}${s.problems.length > 0 ? ` - ${s.problems[0]}` : ''}\n`)
  }
  process.stderr.write(`${name}: ${report.verdict}. ${verdictSentence(report.verdict)}\n`)
  return report.verdict === 'VALID' ? 0 : 1
}
