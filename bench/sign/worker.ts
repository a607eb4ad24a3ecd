/**
 * Benchmark pool task for the @signpdf baseline: one signature of the file by
 * bench/sign/baseline.ts, which opens the PKCS#12 on every call, as P12Signer does.
 * Our signer is measured through the service's own task instead (timed-sign-pdf.ts).
 */
import { signWithBaseline } from './baseline.js'

export interface BaselineTask {
  pdf: Uint8Array
  p12: Uint8Array
  password: string
}

/** Output size and the time spent inside the worker (without queueing or the thread hop). */
export interface BaselineOutcome { outputBytes: number, workerMs: number }

export default async function run (task: BaselineTask): Promise<BaselineOutcome> {
  const started = performance.now()
  const outputBytes = (await signWithBaseline(task.pdf, Buffer.from(task.p12), task.password)).length
  return { outputBytes, workerMs: performance.now() - started }
}
