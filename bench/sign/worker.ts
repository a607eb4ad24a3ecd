/**
 * Benchmark worker thread: one signature per task, by our signer (as the service's pool
 * task runs it) or by the @signpdf baseline. The certificate is opened once per thread
 * for ours, as workers/sign-pdf.ts does; the baseline opens it per call, as P12Signer does.
 */
import { loadPkcs12, newDocumentIdentifier, signPdf } from '../../core/sign/index.js'
import type { SigningMaterial, VisualMode } from '../../core/sign/index.js'
import { signWithBaseline } from './baseline.js'

export interface BenchTask {
  contender: 'baseline' | VisualMode
  pdf: Uint8Array
  p12: Uint8Array
  password: string
}

let material: SigningMaterial | undefined

/** Output size and the time spent inside the worker (without queueing or the thread hop). */
export interface BenchOutcome { outputBytes: number, workerMs: number }

export default async function run (task: BenchTask): Promise<BenchOutcome> {
  const started = performance.now()
  if (task.contender === 'baseline') {
    const outputBytes = (await signWithBaseline(task.pdf, Buffer.from(task.p12), task.password)).length
    return { outputBytes, workerMs: performance.now() - started }
  }
  material ??= loadPkcs12(task.p12, task.password)
  const out = await signPdf(task.pdf, {
    material, visualMode: task.contender, validatorUrl: 'https://validar.iti.gov.br/', timeZone: 'America/Sao_Paulo',
    documentIdentifier: newDocumentIdentifier(), signedAt: new Date()
  })
  return { outputBytes: out.pdf.length, workerMs: performance.now() - started }
}
