/**
 * Verification benchmark (issue 34): verifying a signed PDF (workers/verify-pdf.ts, as
 * POST /api/v1/verify runs it: the PDF moved into the pool, the shipped ICP-Brasil roots
 * plus the test root as the trust store) beside our NONE signature of the same file
 * (workers/sign-pdf.ts, as POST /api/v1/sign runs it), one after the other in the same
 * pool and run, for a 1-page and a 100-page text PDF. The file verified is the NONE
 * signature's own output. Target: verification of the 100-page file at most 2× its NONE
 * signature (median latency at concurrency 1).
 *
 *   node --import tsx bench/verify.bench.ts [--runs 30] [--threads 2] [--pages 1,100] [--warmup-ms 2000]
 *
 * `benchVerify` and `verifyTable` are exported for bench/run.ts.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { fromWire } from '../core/errors.js'
import { createDevChain } from '../core/sign/index.js'
import { loadTrustStore, shippedAnchorsDir } from '../core/sign/verify/index.js'
import { makeTextPdf } from '../fixtures/pdf/samples.js'
import { createPool } from '../workers/pool.js'
import { transferPdf } from '../workers/sign-pdf.js'
import type { SignPdfInput } from '../workers/sign-pdf.js'
import { transferVerifyPdf } from '../workers/verify-pdf.js'
import type { VerifyPdfInput } from '../workers/verify-pdf.js'
import type { TimedSignResult } from './sign/timed-sign-pdf.js'
import type { TimedVerifyResult } from './sign/timed-verify-pdf.js'

export interface VerifyBenchOptions { runs: number, threads: number, pages: number[], warmupMs: number }

export interface VerifyBenchRow {
  pages: number
  inputBytes: number
  signedBytes: number
  signMedianMs: number
  verifyMedianMs: number
  signWorkerMedianMs: number
  verifyWorkerMedianMs: number
  /** Every run's verdict (VALID when the test root is trusted): a broken verifier is not a fast one. */
  verdicts: string[]
}

export interface VerifyBenchResult { rows: VerifyBenchRow[], threads: number }

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!

export async function benchVerify (options: Partial<VerifyBenchOptions> = {}, log: (line: string) => void = () => {}): Promise<VerifyBenchResult> {
  const o: VerifyBenchOptions = { runs: 30, threads: 2, pages: [1, 100], warmupMs: 2000, ...options }
  const chain = createDevChain({ password: 'bench' })
  const dir = await mkdtemp(join(tmpdir(), 'razao-bench-verify-'))
  const p12 = join(dir, 'bench.p12')
  await writeFile(p12, chain.pkcs12)
  const rootDer = new Uint8Array(Buffer.from(chain.root.certPem.replace(/-----[^-]+-----|\s/g, ''), 'base64'))
  const anchors = [...loadTrustStore(shippedAnchorsDir()).map((a) => ({ der: new Uint8Array(a.cert.raw), source: a.source })), { der: rootDer, source: 'bench-root.pem' }]
  const pool = createPool({ maxThreads: o.threads })
  const signFile = fileURLToPath(new URL('./sign/timed-sign-pdf.ts', import.meta.url))
  const verifyFile = fileURLToPath(new URL('./sign/timed-verify-pdf.ts', import.meta.url))
  const rows: VerifyBenchRow[] = []
  try {
    for (const pages of o.pages) {
      const pdf = await makeTextPdf(pages)
      let signed: Uint8Array = new Uint8Array()
      const sign = async (): Promise<{ ms: number, workerMs: number }> => {
        const input: SignPdfInput = { pdf: Buffer.from(pdf), certificate: { path: p12, password: chain.password }, visualMode: 'NONE', tsa: undefined, policy: undefined, validatorUrl: 'https://validar.iti.gov.br/', timeZone: 'America/Sao_Paulo' }
        const t0 = performance.now()
        const { result, workerMs } = await pool.run(transferPdf(input), { filename: signFile }) as TimedSignResult
        const ms = performance.now() - t0
        if (!result.ok) throw fromWire(result.error)
        if (result.value.outcome !== 'signed') throw new Error(`NONE refused the benchmark PDF: ${result.value.message}`)
        signed = result.value.pdf
        return { ms, workerMs }
      }
      const verify = async (): Promise<{ ms: number, workerMs: number, verdict: string }> => {
        // A fresh copy per request, as the HTTP thread decodes one; the transfer takes it away.
        const input: VerifyPdfInput = { pdf: Buffer.from(signed), anchors }
        const t0 = performance.now()
        const { result, workerMs } = await pool.run(transferVerifyPdf(input), { filename: verifyFile }) as TimedVerifyResult
        const ms = performance.now() - t0
        if (!result.ok) throw fromWire(result.error)
        return { ms, workerMs, verdict: result.value.outcome === 'verified' ? result.value.report.verdict : `refused: ${result.value.message}` }
      }
      // Warm both on every thread (JIT, pdf-lib, pkijs), then alternate them so load moves both alike.
      const started = performance.now()
      while (performance.now() - started < o.warmupMs) await Promise.all(Array.from({ length: o.threads }, async () => { await sign(); await verify() }))
      const s: number[] = []; const v: number[] = []; const sw: number[] = []; const vw: number[] = []; const verdicts = new Set<string>()
      const runs = pages >= 100 ? Math.ceil(o.runs / 2) : o.runs
      for (let i = 0; i < runs; i++) {
        const a = await sign(); s.push(a.ms); sw.push(a.workerMs)
        const b = await verify(); v.push(b.ms); vw.push(b.workerMs); verdicts.add(b.verdict)
      }
      const row: VerifyBenchRow = { pages, inputBytes: pdf.length, signedBytes: signed.length, signMedianMs: median(s), verifyMedianMs: median(v), signWorkerMedianMs: median(sw), verifyWorkerMedianMs: median(vw), verdicts: [...verdicts] }
      rows.push(row)
      log(`  ${pages} p: NONE signature median ${row.signMedianMs.toFixed(1)} ms, verification median ${row.verifyMedianMs.toFixed(1)} ms (${(row.verifyMedianMs / row.signMedianMs).toFixed(2)}×), verdicts ${row.verdicts.join(', ')}`)
    }
  } finally {
    await pool.destroy()
    await rm(dir, { recursive: true, force: true })
  }
  return { rows, threads: o.threads }
}

export function verifyTable (result: VerifyBenchResult): string {
  const lines = [
    `### PDF verification beside our NONE signature of the same file (${result.threads} worker threads, concurrency 1, same run)`,
    '',
    '| input | signed KB | NONE signature median ms | verification median ms | in-worker sign / verify ms | verification ÷ signature | verdicts |',
    '|---|---:|---:|---:|---:|---:|---|'
  ]
  for (const r of result.rows) {
    lines.push(`| ${r.pages} page${r.pages === 1 ? '' : 's'} | ${Math.round(r.signedBytes / 1024)} | ${r.signMedianMs.toFixed(1)} | ${r.verifyMedianMs.toFixed(1)} | ${r.signWorkerMedianMs.toFixed(1)} / ${r.verifyWorkerMedianMs.toFixed(1)} | ${(r.verifyMedianMs / r.signMedianMs).toFixed(2)}× | ${r.verdicts.join(', ')} |`)
  }
  const hundred = result.rows.find((r) => r.pages === 100)
  if (hundred !== undefined) {
    const ratio = hundred.verifyMedianMs / hundred.signMedianMs
    const ok = ratio <= 2 && hundred.verdicts.length === 1 && hundred.verdicts[0] === 'VALID'
    lines.push('', '| target | measured | result |', '|---|---|---|', `| verifying a 100-page signed PDF ≤ 2× our NONE signature of it | ${ratio.toFixed(2)}× (${hundred.verifyMedianMs.toFixed(1)} vs ${hundred.signMedianMs.toFixed(1)} ms) | ${ok ? 'PASS' : 'FAIL'} |`)
  }
  return lines.join('\n')
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const { values } = parseArgs({ options: { runs: { type: 'string' }, threads: { type: 'string' }, pages: { type: 'string' }, 'warmup-ms': { type: 'string' } } })
  const result = await benchVerify({
    ...(values.runs === undefined ? {} : { runs: Number(values.runs) }),
    ...(values.threads === undefined ? {} : { threads: Number(values.threads) }),
    ...(values.pages === undefined ? {} : { pages: values.pages.split(',').map(Number) }),
    ...(values['warmup-ms'] === undefined ? {} : { warmupMs: Number(values['warmup-ms']) })
  }, (line) => process.stderr.write(`${line}\n`))
  process.stdout.write(`${verifyTable(result)}\n`)
}
